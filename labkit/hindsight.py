r"""Hindsight rationality, checked from the outside: the regret of a recorded play sequence for
every deviation of a type, by applying each deviation to the strategies and evaluating the tree.

Morrill, D'Orazio, Lanctot, Wright, Bowling and Greenwald (2021), "Efficient Deviation Types and
Learning for Hindsight Rationality in Extensive-Form Games". A player i is hindsight rational for
a set :math:`\Phi` of deviations if, for every deviation :math:`\phi \in \Phi`, the cumulative
regret

.. math:: \rho^T(\phi) = \sum_{t=1}^{T} \bigl[u_i(\phi(\pi_i^t), \pi_{-i}^t) - u_i(\pi^t)\bigr]

grows sublinearly in T. This module does not use `labkit.efr` (its regret tables or its weights):
it enumerates concrete single-target deviations as transformations of behavioral strategies and
computes the deviated player's expected payoff exactly.

A deviation targets one decision point I of player i (an infoset with >= 2 legal actions). It
has a *mode* at each of i's earlier decision points :math:`I_k` on the way to I (:math:`a_k` the
action toward I):

* ``follow``: keep :math:`\pi(I_k)`;
* ``force``: play :math:`a_k` for sure ("re-route" toward I);
* ``("trigger", b)``: when :math:`\pi` recommends :math:`b \ne a_k`, play :math:`a_k` instead
  (b's probability moves to :math:`a_k`);

and a transformation at I: ``("external", b)`` (play b) or ``("internal", a, b)`` (a's
probability moves to b). Everywhere else the strategy is unchanged. The types:

=========================  ===========================================================  ==========================
type                       modes at :math:`I_1, \dots, I_d`                             transformation at I
=========================  ===========================================================  ==========================
act / act_in               follow everywhere                                            external / internal
cf / cf_in / cf_ex+in      force everywhere                                             external / internal / both
bps / cfps / cfps_ex+in    follow :math:`I_1..I_{k-1}`, force from :math:`I_k` on       external / internal / both
csps                       those patterns, and follow before :math:`I_k`, trigger at    external; internal when
                           :math:`I_k`, force after                                     following everywhere
tips / tips_ex+in          the csps patterns                                            internal / both
bhv                        follow, force or any trigger at every :math:`I_k`            both
=========================  ===========================================================  ==========================

So every type's deviations are behavioral deviations: the bhv set contains all the others. (EFR-bhv
keeps regrets only for follow/trigger memories and internal transformations; by Proposition 1 of
the paper a forced action and an external transformation decompose into one-action moves, so those
regrets bound the rest. The evaluator checks the whole set.)

Steps of `deviation_gains`: (1) the others' and chance's reach of every terminal, per round;
(2) the player's sequence-form payoff :math:`c^t(I, a)` and, bottom-up, the values
:math:`Q^t(I, a)` and :math:`W^t(I) = \sum_a \pi^t(a \mid I) Q^t(I, a)` of the undeviated
strategy; (3) per deviation, from the target up to the first decision, the change D of W caused
by the deviated strategy:

.. math::

   D_I &= \sum_a \phi(\pi)(a)\, Q(I, a) - W(I), \\
   D_{I_k} &= \sum_a \pi'(a \mid I_k)\, Q(I_k, a) + \pi'(a_k \mid I_k)\, D_{I_{k+1}} - W(I_k),

:math:`\pi'` being the strategy after the mode at :math:`I_k`; the payoff gain of the deviation in
round t is D at the first decision (whose own reach is 1). `deviated_strategy` builds
:math:`\phi(\pi)` as a full strategy, so the tests can check every gain against a plain
`labkit.expected_payoffs` evaluation.

Every function validates what it is given: the profiles are probability arrays of the game (a
`TabularPolicy` of another game, a NaN, a row that does not sum to 1 is refused, naming the round
and the infoset), the player is one of the game's, the type is one of `TYPES`.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from labkit._messages import show
from labkit.games import load
from labkit.policy import TabularPolicy, probability_array

if TYPE_CHECKING:
    from labkit.evaluate import PolicyLike
    from labkit.games import GameLike
    from labkit.tree import GameTree

# the deviation types, alphabetically (the module's docstring table orders them by strength)
TYPES = ("act", "act_in", "bhv", "bps", "cf", "cf_ex+in", "cf_in", "cfps", "cfps_ex+in", "csps", "tips",
         "tips_ex+in")
FOLLOW, FORCE, TRIGGER = 0, 1, 2


class Deviation(NamedTuple):
    r"""One single-target deviation :math:`\phi` of player `player` (module docstring).

    Attributes
    ----------
    player : int
        The deviating player.
    target : int
        The infoset I where the transformation applies.
    path : tuple of (int, int)
        :math:`((I_1, a_1), \dots, (I_d, a_d))`, the player's decision points before I and the
        action at each that leads toward I (`decision_path`).
    modes : tuple
        One per path entry: ``"follow"``, ``"force"`` or ``("trigger", b)``.
    transformation : tuple
        ``("external", b)`` or ``("internal", a, b)``, action ids.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> deviation = enumerate_deviations(kuhn, 0, "cf")[0]
    >>> deviation.target, deviation.path, deviation.transformation
    (0, (), ('external', 0))
    """

    player: int
    target: int
    path: tuple
    modes: tuple
    transformation: tuple

    def describe(self, game: GameTree) -> str:
        """The deviation in words, from the first decision to the target.

        Parameters
        ----------
        game : GameTree
            The game the deviation was enumerated on.

        Returns
        -------
        str

        Examples
        --------
        >>> import labkit as lk
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> [d.describe(kuhn) for d in enumerate_deviations(kuhn, 0, "bps")
        ...  if d.target == kuhn.infoset_index("J|pb")]
        ["play pass at 'J|', play pass at 'J|pb'", "play pass at 'J|', play bet at 'J|pb'",
         "follow at 'J|', play pass at 'J|pb'", "follow at 'J|', play bet at 'J|pb'"]
        """
        names = game.action_names
        parts = []
        for (J, a), mode in zip(self.path, self.modes, strict=True):
            if mode == "follow":
                parts.append(f"follow at {game.infoset_keys[J]!r}")
            elif mode == "force":
                parts.append(f"play {names[a]} at {game.infoset_keys[J]!r}")
            else:
                parts.append(f"{names[mode[1]]}->{names[a]} at {game.infoset_keys[J]!r}")
        t = self.transformation
        at_target = (f"play {names[t[1]]}" if t[0] == "external" else f"{names[t[1]]}->{names[t[2]]}")
        return ", ".join(parts + [f"{at_target} at {game.infoset_keys[self.target]!r}"])


def _type_name(deviations: Any) -> str:
    if not isinstance(deviations, str) and not isinstance(getattr(deviations, "value", None), str):
        raise TypeError(f"deviations must be the name of a deviation type ({', '.join(TYPES)}), "
                        f"got {type(deviations).__name__} {show(deviations)}")
    name = str(getattr(deviations, "value", deviations)).strip().lower().replace("_ex_in", "_ex+in")
    if name not in TYPES:
        raise ValueError(f"unknown deviation type {deviations!r}; valid names are {', '.join(TYPES)}")
    return name


def _check_infoset(game: GameTree, infoset: Any) -> int:
    if isinstance(infoset, (bool, np.bool_)) or not isinstance(infoset, (int, np.integer)):
        raise TypeError(f"infoset must be an integer index in 0..{game.num_infosets - 1}, got "
                        f"{type(infoset).__name__} {show(infoset)}")
    if not 0 <= infoset < game.num_infosets:
        raise ValueError(f"infoset must be in 0..{game.num_infosets - 1}, got {show(infoset)}")
    return int(infoset)


def decision_path(game: GameTree, infoset: int) -> tuple[tuple[int, int], ...]:
    r"""The acting player's decision points on the way to `infoset`.

    :math:`((I_1, a_1), \dots, (I_d, a_d))`: the infosets of the player who acts at `infoset`
    with at least two legal actions on the path from the root, each with the action taken there,
    read off one of the infoset's histories (perfect recall makes them all agree).

    Parameters
    ----------
    game : GameTree
    infoset : int
        An infoset index.

    Returns
    -------
    tuple of (int, int)
        (infoset, action) pairs from the first decision down; empty at a first decision.

    Raises
    ------
    TypeError, ValueError
        If `infoset` is not an index of the game.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> path = decision_path(kuhn, kuhn.infoset_index("K|pb"))
    >>> [(kuhn.infoset_keys[I], kuhn.action_names[a]) for I, a in path]
    [('K|', 'pass')]
    """
    infoset = _check_infoset(game, infoset)
    player = game.infoset_player[infoset]
    h = int(np.flatnonzero(game.infoset == infoset)[0])
    path = []
    while game.parent[h] >= 0:
        parent = game.parent[h]
        J = game.infoset[parent]
        if game.player[parent] == player and game.legal_mask[J].sum() >= 2:
            path.append((int(J), int(game.action[h])))
        h = parent
    return tuple(path[::-1])


def _memory_patterns(name: str, path: tuple, game: GameTree) -> list[tuple]:
    """The mode tuples of a type at a target with predecessors `path`."""
    d = len(path)
    partial = [("follow",) * k + ("force",) * (d - k) for k in range(d + 1)]
    triggers = [("follow",) * k + (("trigger", b),) + ("force",) * (d - k - 1)
                for k, (J, a) in enumerate(path) for b in np.flatnonzero(game.legal_mask[J]) if b != a]
    if name in ("act", "act_in"):
        return [("follow",) * d]
    if name in ("cf", "cf_in", "cf_ex+in"):
        return [("force",) * d]
    if name in ("bps", "cfps", "cfps_ex+in"):
        return partial
    if name in ("csps", "tips", "tips_ex+in"):
        return partial + triggers
    # bhv: any transformation at every predecessor: follow, force, or one trigger
    options = [["follow", "force"] + [("trigger", int(b)) for b in np.flatnonzero(game.legal_mask[J]) if b != a]
               for J, a in path]
    return [tuple(m) for m in itertools.product(*options)]


def _transformations(kind: str, legal: np.ndarray) -> list[tuple]:
    if kind == "external":
        return [("external", int(b)) for b in legal]
    return [("internal", int(a), int(b)) for a in legal for b in legal if a != b]


def enumerate_deviations(game: GameLike, player: int, deviations: str) -> list[Deviation]:
    r"""Every deviation of a type for one player.

    For each decision point I of the player (an infoset with at least two legal actions), every
    memory pattern the type allows at I's predecessors (module docstring) paired with every
    transformation it allows at I: ``("external", b)`` for each legal b, ``("internal", a, b)``
    for each ordered pair of distinct legal actions.

    Parameters
    ----------
    game : str or GameTree
    player : int
    deviations : str
        One of `TYPES` (any case; ``"cf_ex_in"`` is read as ``"cf_ex+in"``).

    Returns
    -------
    list of Deviation

    Raises
    ------
    TypeError, ValueError
        For a player that is not one of the game's, or an unknown type.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> {kind: len(enumerate_deviations(kuhn, 0, kind)) for kind in ("act", "cf_in", "bps", "bhv")}
    {'act': 12, 'cf_in': 12, 'bps': 18, 'bhv': 48}
    """
    game = load(game)
    game.check_player(player)
    name = _type_name(deviations)
    result = []
    for I in np.flatnonzero((game.infoset_player == player) & (game.legal_mask.sum(axis=1) >= 2)):
        legal = np.flatnonzero(game.legal_mask[I])
        path = decision_path(game, int(I))
        for modes in _memory_patterns(name, path, game):
            modes = tuple(m if isinstance(m, str) else ("trigger", int(m[1])) for m in modes)
            if name in ("act", "cf", "bps"):
                kinds = ["external"]
            elif name in ("act_in", "cf_in", "cfps", "tips"):
                kinds = ["internal"]
            elif name == "csps":
                kinds = ["internal"] if all(m == "follow" for m in modes) else ["external"]
            else:
                kinds = ["external", "internal"]
            for kind in kinds:
                for t in _transformations(kind, legal):
                    result.append(Deviation(int(player), int(I), path, modes, t))
    return result


def _check_deviation(game: GameTree, deviation: Any) -> Deviation:
    """Raise unless `deviation` is a Deviation that can apply to `game`."""
    if not isinstance(deviation, Deviation):
        raise TypeError(f"deviation must be a labkit.hindsight.Deviation (from enumerate_deviations), "
                        f"got {type(deviation).__name__}")
    problem = _deviation_problem(game, deviation)
    if problem:
        raise ValueError(f"deviation does not apply to {game.name} (a deviation of another game?): {problem}")
    return deviation


def _deviation_problem(game: GameTree, deviation: Deviation) -> str | None:
    """What makes `deviation` inapplicable to `game`, in words, or None."""
    player, target = deviation.player, deviation.target
    if isinstance(player, (bool, np.bool_)) or not isinstance(player, (int, np.integer)) \
            or not 0 <= player < game.num_players:
        return f"player {show(player)} is not one of its {game.num_players} players"
    if isinstance(target, (bool, np.bool_)) or not isinstance(target, (int, np.integer)) \
            or not 0 <= target < game.num_infosets:
        return f"target {show(target)} is not an infoset index in 0..{game.num_infosets - 1}"
    key = game.infoset_keys[target]
    if game.infoset_player[target] != player:
        return f"player {player} does not act at its target {key!r}"
    if tuple(deviation.path) != decision_path(game, target) or len(deviation.modes) != len(deviation.path):
        return f"its path {deviation.path} is not the decision path to {key!r}"
    t = deviation.transformation
    legal = set(np.flatnonzero(game.legal_mask[target]).tolist())
    if not (len(t) in (2, 3) and t[0] in ("external", "internal") and len(t) == (2 if t[0] == "external" else 3)
            and set(t[1:]) <= legal):
        return f"its transformation {t} does not move between the legal actions {sorted(legal)} of {key!r}"
    for (J, a), mode in zip(deviation.path, deviation.modes, strict=True):
        if mode not in ("follow", "force") and not (isinstance(mode, tuple) and len(mode) == 2
                                                    and mode[0] == "trigger" and mode[1] != a
                                                    and game.legal_mask[J, mode[1]]):
            return (f"its mode {mode!r} at {game.infoset_keys[J]!r} is not 'follow', 'force' or ('trigger', b) "
                    "with b another legal action")
    return None


# ------------------------------------------------------------------ a deviation as a strategy
def deviated_strategy(game: GameLike, probs: PolicyLike, deviation: Deviation) -> np.ndarray:
    r""":math:`\phi(\pi)`: the profile `probs` with the deviating player's strategy transformed.

    At every predecessor :math:`I_k` the mode applies (follow: unchanged; force: all mass on
    :math:`a_k`; trigger b: b's probability moves to :math:`a_k`), then the transformation at the
    target. The other players' rows are copied unchanged.

    Parameters
    ----------
    game : str or GameTree
    probs : TabularPolicy or (num_infosets, num_actions) array
        A joint profile of the game.
    deviation : Deviation
        One of `enumerate_deviations` for this game.

    Returns
    -------
    (num_infosets, num_actions) float array
        A new array; `probs` is not modified.

    Raises
    ------
    TypeError, ValueError
        For a profile that is not a valid policy of the game, or a deviation of another game.

    Examples
    --------
    >>> import labkit as lk
    >>> rps = lk.games.load("rock_paper_scissors")
    >>> deviation = enumerate_deviations(rps, 0, "act_in")[0]     # Rock -> Paper
    >>> deviation.transformation
    ('internal', 0, 1)
    >>> print(deviated_strategy(rps, lk.uniform_policy(rps), deviation).round(3))
    [[0.    0.667 0.333]
     [0.333 0.333 0.333]]
    """
    game = load(game)
    deviation = _check_deviation(game, deviation)
    new = np.array(probability_array(game, probs, "probs"), dtype=float, copy=True)
    for (J, a), mode in zip(deviation.path, deviation.modes, strict=True):
        if mode == "force":
            new[J] = 0.0
            new[J, a] = 1.0
        elif mode != "follow":
            b = mode[1]
            new[J, a] += new[J, b]
            new[J, b] = 0.0
    I, t = deviation.target, deviation.transformation
    if t[0] == "external":
        new[I] = 0.0
        new[I, t[1]] = 1.0
    else:
        a, b = t[1], t[2]
        new[I, b] += new[I, a]
        new[I, a] = 0.0
    return new


# ------------------------------------------------------------------ exact evaluation over rounds
def _stack_profiles(game: GameTree, profiles: Any) -> np.ndarray:
    """(T, num_infosets, num_actions) float array of validated profiles, one per round."""
    if isinstance(profiles, TabularPolicy) or (isinstance(profiles, np.ndarray) and profiles.ndim == 2):
        raise TypeError("profiles must be a sequence of joint profiles, one per round (wrap a single profile "
                        "in a list)")
    if isinstance(profiles, (str, bytes)) or not isinstance(profiles, Iterable):
        raise TypeError(f"profiles must be a sequence of joint profiles (TabularPolicy or (num_infosets, "
                        f"num_actions) = {game.legal_mask.shape} arrays), one per round; got {type(profiles).__name__}")
    arrays = [probability_array(game, p, f"profiles[{t}]") for t, p in enumerate(profiles)]
    if not arrays:
        raise ValueError("profiles must hold at least one round's profile, got none")
    return np.asarray(arrays, dtype=float)


def _sequence_payoffs(game: GameTree, profiles: np.ndarray, player: int) -> tuple[np.ndarray, np.ndarray]:
    """c[t, I, a] = sum of pi_-i^t(z) u_i(z) over terminals z whose last own action is (I, a), and
    c0[t] for terminals the player never acts before. Reach computed per round, top-down."""
    T = len(profiles)
    flat = profiles.reshape(T, -1)
    H = game.num_histories
    reach = np.ones((T, H))
    parent = game.parent
    for lv in game.levels[1:]:
        h = np.arange(lv.start, lv.stop)
        p = parent[h]
        mover = game.player[p]
        edge = np.ones((T, len(h)))
        chance = mover == -1
        edge[:, chance] = game.chance_prob[h[chance]]
        others = (mover >= 0) & (mover != player)
        edge[:, others] = flat[:, game.infoset[p[others]] * game.num_actions + game.action[h[others]]]
        reach[:, h] = reach[:, p] * edge
    z = game.terminals
    last = game.own_last_seq[z, player]
    weights = reach[:, z] * game.returns[z, player]
    c = np.zeros((T, game.num_infosets * game.num_actions))
    mine = last >= 0
    for t in range(T):
        c[t] = np.bincount(last[mine], weights=weights[t, mine], minlength=c.shape[1])
    c0 = weights[:, ~mine].sum(axis=1)
    return c.reshape(T, game.num_infosets, game.num_actions), c0


def _undeviated_values(game: GameTree, profiles: np.ndarray, player: int,
                       c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q[t, I, a] and W[t, I] of the player's own infosets, bottom-up (deepest own infosets first)."""
    Q = c.copy()
    W = np.zeros(c.shape[:2])
    mine = np.flatnonzero(game.infoset_player == player)
    order = mine[np.argsort(-game.infoset_own_depth[mine], kind="stable")]
    depth = game.infoset_own_depth[order]
    for d in np.unique(depth)[::-1]:
        rows = order[depth == d]
        W[:, rows] = (profiles[:, rows] * Q[:, rows]).sum(axis=2)
        seq = game.infoset_parent_seq[rows]
        has = seq >= 0
        by_sequence = Q.reshape(len(Q), -1).T            # (I * A, T), a view of Q
        np.add.at(by_sequence, seq[has], W[:, rows[has]].T)
    return Q, W


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {show(value)}")
    return int(value)


def deviation_gains(game: GameLike, profiles: Sequence[PolicyLike], player: int, deviations: str,
                    chunk: int = 2048) -> tuple[np.ndarray, list[Deviation]]:
    r"""Per-round payoff gains of every deviation of the type.

    .. math:: g_k^t = u_i(\phi_k(\pi_i^t), \pi_{-i}^t) - u_i(\pi^t),

    computed for all deviations at once from the undeviated values (module docstring), exactly.

    Parameters
    ----------
    game : str or GameTree
    profiles : sequence of TabularPolicy or (num_infosets, num_actions) arrays
        The joint profile :math:`\pi^t` of every round played, T >= 1 of them.
    player : int
        The player i whose deviations are evaluated.
    deviations : str
        One of `TYPES`.
    chunk : int
        Deviations evaluated per vectorized block (memory: chunk x T x num_actions floats).

    Returns
    -------
    gains : (N, T) float array
        ``gains[k, t]`` is :math:`g_k^t`.
    deviation_list : list of N Deviation
        The deviations, in the order of `enumerate_deviations`.

    Raises
    ------
    TypeError, ValueError
        For profiles that are not valid policies of the game (the message names the round and the
        infoset), an empty sequence, a player not in the game, an unknown type or a chunk < 1.

    Examples
    --------
    >>> import numpy as np
    >>> import labkit as lk
    >>> rps = lk.games.load("rock_paper_scissors")
    >>> rock = np.array([[1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0]])      # the column player plays Rock
    >>> gains, found = deviation_gains(rps, [rock, rock], 0, "act")
    >>> [(rps.action_names[d.transformation[1]], g.tolist()) for d, g in zip(found, gains)]
    [('rock', [0.0, 0.0]), ('paper', [1.0, 1.0]), ('scissors', [-1.0, -1.0])]
    """
    game = load(game)
    chunk = _positive_int("chunk", chunk)
    devs = enumerate_deviations(game, player, deviations)
    stacked = _stack_profiles(game, profiles)
    c, _ = _sequence_payoffs(game, stacked, player)
    Q, W = _undeviated_values(game, stacked, player, c)
    gains = np.zeros((len(devs), len(stacked)))
    # group by path length so that the arrays are rectangular
    by_depth: dict[int, list[int]] = {}
    for k, dev in enumerate(devs):
        by_depth.setdefault(len(dev.path), []).append(k)
    for d, indices in by_depth.items():
        for start in range(0, len(indices), chunk):
            idx = indices[start:start + chunk]
            gains[idx] = _gains_of(stacked, Q, W, [devs[k] for k in idx], d)
    return gains, devs


def _gains_of(profiles: np.ndarray, Q: np.ndarray, W: np.ndarray, devs: list[Deviation], d: int) -> np.ndarray:
    target = np.array([dev.target for dev in devs])
    kind = np.array([dev.transformation[0] == "external" for dev in devs])
    a = np.array([dev.transformation[1] for dev in devs])
    b = np.array([dev.transformation[-1] for dev in devs])
    QI = Q[:, target]                                   # (T, N, A)
    WI = W[:, target]
    n = np.arange(len(devs))
    external_value = QI[:, n, b]
    internal_value = WI + profiles[:, target, a] * (QI[:, n, b] - QI[:, n, a])
    D = np.where(kind, external_value, internal_value) - WI           # (T, N)
    for k in range(d - 1, -1, -1):
        J = np.array([dev.path[k][0] for dev in devs])
        ak = np.array([dev.path[k][1] for dev in devs])
        mode = np.array([FOLLOW if dev.modes[k] == "follow" else FORCE if dev.modes[k] == "force" else TRIGGER
                         for dev in devs])
        bk = np.array([dev.modes[k][1] if mode_k == TRIGGER else 0 for dev, mode_k in zip(devs, mode, strict=True)])
        pa, pb = profiles[:, J, ak], profiles[:, J, bk]
        qa, qb = Q[:, J, ak], Q[:, J, bk]
        WJ = W[:, J]
        follow = pa * D
        force = qa + D - WJ
        trigger = pb * (qa - qb) + (pa + pb) * D
        D = np.where(mode == FOLLOW, follow, np.where(mode == FORCE, force, trigger))
    return D.T


def _rounds_array(rounds: Any, T: int) -> np.ndarray:
    values = list(rounds) if isinstance(rounds, Iterable) and not isinstance(rounds, (str, bytes)) else None
    if values is None or not values or any(isinstance(r, (bool, np.bool_)) or not isinstance(r, (int, np.integer))
                                           for r in values):
        raise ValueError(f"rounds must be a non-empty sequence of integers in 1..{T}, got {show(rounds)}")
    array = np.asarray(values, dtype=int)
    if np.any(array < 1) or np.any(array > T):
        raise ValueError(f"rounds must lie in 1..{T}, got {array.tolist()}")
    return array


def deviation_regret_curve(game: GameLike, profiles: Sequence[PolicyLike], player: int, deviations: str,
                           rounds: Iterable[int] | None = None) -> np.ndarray:
    r"""The type's regret after each number of rounds:
    :math:`\max_{\phi \in \Phi} \sum_{t \le T} g_\phi^t` for every T in `rounds`.

    Parameters
    ----------
    game : str or GameTree
    profiles : sequence of TabularPolicy or (num_infosets, num_actions) arrays
        One joint profile per round played.
    player : int
    deviations : str
        One of `TYPES`.
    rounds : iterable of int, optional
        Round counts T at which to report, each in 1..len(profiles) (default: every one).

    Returns
    -------
    (len(rounds),) float array

    Raises
    ------
    TypeError, ValueError
        As `deviation_gains`, and for round counts that are not integers in 1..len(profiles).

    Examples
    --------
    >>> import numpy as np
    >>> import labkit as lk
    >>> rps = lk.games.load("rock_paper_scissors")
    >>> rock = np.array([[1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0]])
    >>> deviation_regret_curve(rps, [rock] * 4, 0, "act_in", rounds=[1, 4]).round(4).tolist()
    [0.6667, 2.6667]
    """
    game = load(game)
    gains, _ = deviation_gains(game, profiles, player, deviations)
    total = np.cumsum(gains, axis=1)
    T = total.shape[1]
    counts = np.arange(1, T + 1) if rounds is None else _rounds_array(rounds, T)
    return total[:, counts - 1].max(axis=0)


def deviation_regret(game: GameLike, profiles: Sequence[PolicyLike], player: int, deviations: str = "cf") -> float:
    r"""The cumulative regret of `player` for a deviation type over the given rounds,

    .. math:: \max_{\phi \in \Phi} \sum_{t=1}^{T} \bigl[u_i(\phi(\pi_i^t), \pi_{-i}^t) - u_i(\pi^t)\bigr].

    Parameters
    ----------
    game : str or GameTree
    profiles : sequence of TabularPolicy or (num_infosets, num_actions) arrays
        One joint profile per round played (T >= 1).
    player : int
    deviations : str
        One of `TYPES` (default "cf", counterfactual deviations).

    Returns
    -------
    float
        The maximum over the type's deviations; negative when every one of them would have lost.

    Raises
    ------
    TypeError, ValueError
        As `deviation_gains`.

    References
    ----------
    D. Morrill, R. D'Orazio, M. Lanctot, J. R. Wright, M. Bowling and A. R. Greenwald (2021),
    "Efficient deviation types and learning for hindsight rationality in extensive-form games", ICML.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> round(deviation_regret(kuhn, [lk.uniform_policy(kuhn)] * 3, 0, "cf"), 4)    # 0.125 a round
    0.375
    """
    return float(deviation_regret_curve(game, profiles, player, deviations)[-1])


def theorem1_bound(game: GameLike, player: int, deviations: str, rounds: int) -> float:
    r"""Theorem 1 of the EFR paper: a bound on the regret of EFR after `rounds` rounds,

    .. math:: 2 U |\mathcal{I}_i| \sqrt{D T}, \qquad D = \max_I C_I |\Phi_I|,

    with :math:`U = \max_z |u_i(z)|`, :math:`|\mathcal{I}_i|` the player's decision points,
    :math:`\Phi_I` the transformations used at I and :math:`C_I` the largest number of memory
    patterns paired with any one of them. The paper's :math:`\omega(\Phi_I)` is at most
    :math:`|\Phi_I|`, so this D is never smaller than the paper's and the bound still holds.

    Parameters
    ----------
    game : str or GameTree
    player : int
    deviations : str
        One of `TYPES`.
    rounds : int
        T >= 0.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        For a player not in the game, an unknown type, or rounds that is not an integer >= 0.

    References
    ----------
    D. Morrill et al. (2021), ICML, Theorem 1.

    Examples
    --------
    >>> import labkit as lk
    >>> round(theorem1_bound("kuhn_poker", 0, "cf", 100), 3)     # 2 * 2 * 6 * sqrt(2 * 100)
    339.411
    """
    if isinstance(rounds, (bool, np.bool_)) or not isinstance(rounds, (int, np.integer)) or rounds < 0:
        raise ValueError(f"rounds must be an integer >= 0 (the number of rounds T), got {show(rounds)}")
    game = load(game)
    devs = enumerate_deviations(game, player, deviations)
    per_target: dict[int, dict[tuple, int]] = {}
    for dev in devs:
        per_target.setdefault(dev.target, {}).setdefault(dev.transformation, 0)
        per_target[dev.target][dev.transformation] += 1
    if not per_target:                        # the player never decides: no deviation, no regret
        return 0.0
    D = max(max(counts.values()) * len(counts) for counts in per_target.values())
    U = np.abs(game.returns[game.terminals, player]).max()
    return float(2 * U * len(per_target) * np.sqrt(D * int(rounds)))


def deviation_regrets(game: GameLike, profiles: Sequence[PolicyLike], player: int,
                      types: Iterable[str] = TYPES) -> dict[str, float]:
    """{type: cumulative regret of `player` for that type} for the recorded profiles.

    The strength ordering of the types in one table: a type whose deviations contain another's
    never has a smaller regret.

    Parameters
    ----------
    game : str or GameTree
    profiles : sequence of TabularPolicy or (num_infosets, num_actions) arrays
        One joint profile per round.
    player : int
    types : iterable of str
        Deviation types (default: all of `TYPES`).

    Returns
    -------
    dict of str to float

    Raises
    ------
    TypeError, ValueError
        As `deviation_gains`.

    Examples
    --------
    >>> import numpy as np
    >>> import labkit as lk
    >>> rps = lk.games.load("rock_paper_scissors")
    >>> rock = np.array([[1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0]])
    >>> {kind: round(value, 4) for kind, value in deviation_regrets(rps, [rock] * 3, 0, ["act", "act_in"]).items()}
    {'act': 3.0, 'act_in': 2.0}
    """
    game = load(game)
    stacked = list(_stack_profiles(game, profiles))           # validated once, not once per type
    return {str(getattr(t, "value", t)): deviation_regret(game, stacked, player, t) for t in types}
