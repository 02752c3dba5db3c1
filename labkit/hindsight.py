"""Hindsight rationality, checked from the outside: the regret of a recorded play sequence for
every deviation of a type, by applying each deviation to the strategies and evaluating the tree.

Morrill et al. (2021), "Efficient Deviation Types and Learning for Hindsight Rationality in
Extensive-Form Games". A player is hindsight rational for a set of deviations if, for every
deviation phi in it, the cumulative regret

    rho^T(phi) = sum_t [ u_i(phi(pi_i^t), pi_-i^t) - u_i(pi^t) ]

grows sublinearly in T. This module does not use `labkit.efr` (its regret tables or its weights):
it enumerates concrete single-target deviations as transformations of behavioral strategies and
computes the deviated player's expected payoff exactly.

A deviation targets one decision point I of player i (an infoset with >= 2 legal actions). It
has a *mode* at each of i's earlier decision points I_k on the way to I (a_k the action toward I):

* ``follow``: keep pi(I_k);
* ``force``: play a_k for sure ("re-route" toward I);
* ``("trigger", b)``: when pi recommends b != a_k, play a_k instead (b's probability moves to a_k);

and a transformation at I: ``("external", b)`` (play b) or ``("internal", a, b)`` (a's probability
moves to b). Everywhere else the strategy is unchanged. The types:

| type | modes at I_1..I_d | transformation at I |
|---|---|---|
| act / act_in | follow everywhere | external / internal |
| cf / cf_in / cf_ex+in | force everywhere | external / internal / both |
| bps / cfps / cfps_ex+in | follow I_1..I_{k-1}, force from I_k on (k = 1..d+1) | external / internal / both |
| csps | those patterns, and follow before I_k, trigger at I_k, force after | external; internal when following everywhere |
| tips / tips_ex+in | the csps patterns | internal / both |
| bhv | follow, force or any trigger at every I_k | both |

So every type's deviations are behavioral deviations: the bhv set contains all the others. (EFR-bhv
keeps regrets only for follow/trigger memories and internal transformations; by Proposition 1 of
the paper a forced action and an external transformation decompose into one-action moves, so those
regrets bound the rest. The evaluator checks the whole set.)

Steps of `deviation_gains`: (1) the others' and chance's reach of every terminal, per round;
(2) the player's sequence-form payoff c^t(I, a) and, bottom-up, the values Q^t(I, a) and
W^t(I) = sum_a pi^t(a | I) Q^t(I, a) of the undeviated strategy; (3) per deviation, from the target
up to the first decision, the change D of W caused by the deviated strategy:

    at I:      D = sum_a phi(pi)(a) Q(I, a) - W(I)
    at I_k:    D <- sum_a pi'(a | I_k) Q(I_k, a) + pi'(a_k | I_k) D - W(I_k),

pi' being the strategy after the mode at I_k; the payoff gain of the deviation in round t is D at
the first decision (whose own reach is 1). `deviated_strategy` builds phi(pi) as a full strategy,
so the tests can check every gain against a plain `expected_payoffs` evaluation.
"""
from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from labkit.games import load
from labkit.policy import TabularPolicy

# the deviation types, alphabetically (the module's docstring table orders them by strength)
TYPES = ("act", "act_in", "bhv", "bps", "cf", "cf_ex+in", "cf_in", "cfps", "cfps_ex+in", "csps", "tips",
         "tips_ex+in")
FOLLOW, FORCE, TRIGGER = 0, 1, 2


class Deviation(NamedTuple):
    """One single-target deviation of player `player`.

    target : the infoset I; path : ((I_1, a_1), ..., (I_d, a_d)), the decision points before it;
    modes : one per path entry, "follow", "force" or ("trigger", b);
    transformation : ("external", b) or ("internal", a, b).
    """
    player: int
    target: int
    path: tuple
    modes: tuple
    transformation: tuple

    def describe(self, game):
        names = game.action_names
        parts = []
        for (J, a), mode in zip(self.path, self.modes):
            if mode == "follow":
                parts.append(f"follow at {game.infoset_keys[J]!r}")
            elif mode == "force":
                parts.append(f"play {names[a]} at {game.infoset_keys[J]!r}")
            else:
                parts.append(f"{names[mode[1]]}->{names[a]} at {game.infoset_keys[J]!r}")
        t = self.transformation
        at_target = (f"play {names[t[1]]}" if t[0] == "external" else f"{names[t[1]]}->{names[t[2]]}")
        return ", ".join(parts + [f"{at_target} at {game.infoset_keys[self.target]!r}"])


def _type_name(deviations):
    name = str(getattr(deviations, "value", deviations)).strip().lower().replace("_ex_in", "_ex+in")
    if name not in TYPES:
        raise ValueError(f"unknown deviation type {deviations!r}; valid names are {', '.join(TYPES)}")
    return name


def decision_path(game, infoset):
    """((I_1, a_1), ..., (I_d, a_d)): the acting player's decision points (>= 2 legal actions) on the
    way to `infoset`, read off one of its histories."""
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


def _memory_patterns(name, path, game):
    """The mode tuples of a type at a target with predecessors `path`, each with a flag saying
    whether it is the all-follow pattern."""
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


def _transformations(kind, legal):
    if kind == "external":
        return [("external", int(b)) for b in legal]
    return [("internal", int(a), int(b)) for a in legal for b in legal if a != b]


def enumerate_deviations(game, player, deviations):
    """Every deviation of the type for `player`, as a list of `Deviation`."""
    game = load(game)
    game.check_player(player)
    name = _type_name(deviations)
    result = []
    for I in np.flatnonzero((game.infoset_player == player) & (game.legal_mask.sum(axis=1) >= 2)):
        legal = np.flatnonzero(game.legal_mask[I])
        path = decision_path(game, I)
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


# ------------------------------------------------------------------ a deviation as a strategy
def deviated_strategy(game, probs, deviation):
    """phi(pi): the profile `probs` with the deviating player's strategy transformed.

    Parameters
    ----------
    probs : (num_infosets, num_actions) array, a joint profile.
    deviation : Deviation

    Returns
    -------
    (num_infosets, num_actions) array.
    """
    new = np.array(probs, dtype=float, copy=True)
    for (J, a), mode in zip(deviation.path, deviation.modes):
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
def _stack_profiles(game, profiles):
    arrays = [p.probs if isinstance(p, TabularPolicy) else np.asarray(p, dtype=float) for p in profiles]
    stacked = np.asarray(arrays, dtype=float)
    if stacked.ndim != 3 or stacked.shape[1:] != game.legal_mask.shape:
        raise ValueError(f"profiles must be a sequence of (num_infosets, num_actions) = {game.legal_mask.shape} "
                         f"joint profiles; got an array of shape {stacked.shape}")
    return stacked


def _sequence_payoffs(game, profiles, player):
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


def _undeviated_values(game, profiles, player, c):
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
        Qflat = Q.reshape(len(Q), -1)
        np.add.at(Qflat, (slice(None), seq[has]), W[:, rows[has]])
    return Q, W


def deviation_gains(game, profiles, player, deviations, chunk=2048):
    """Per-round payoff gains of every deviation of the type.

    Returns
    -------
    gains : (N, T) array, gains[k, t] = u_i(phi_k(pi_i^t), pi_-i^t) - u_i(pi^t)
    deviation_list : list of N `Deviation`
    """
    game = load(game)
    profiles = _stack_profiles(game, profiles)
    devs = enumerate_deviations(game, player, deviations)
    c, _ = _sequence_payoffs(game, profiles, player)
    Q, W = _undeviated_values(game, profiles, player, c)
    gains = np.zeros((len(devs), len(profiles)))
    # group by path length so that the arrays are rectangular
    by_depth = {}
    for k, dev in enumerate(devs):
        by_depth.setdefault(len(dev.path), []).append(k)
    for d, indices in by_depth.items():
        for start in range(0, len(indices), chunk):
            idx = indices[start:start + chunk]
            gains[idx] = _gains_of(profiles, Q, W, [devs[k] for k in idx], d)
    return gains, devs


def _gains_of(profiles, Q, W, devs, d):
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
        bk = np.array([dev.modes[k][1] if mode_k == TRIGGER else 0 for dev, mode_k in zip(devs, mode)])
        pa, pb = profiles[:, J, ak], profiles[:, J, bk]
        qa, qb = Q[:, J, ak], Q[:, J, bk]
        WJ = W[:, J]
        follow = pa * D
        force = qa + D - WJ
        trigger = pb * (qa - qb) + (pa + pb) * D
        D = np.where(mode == FOLLOW, follow, np.where(mode == FORCE, force, trigger))
    return D.T


def deviation_regret_curve(game, profiles, player, deviations, rounds=None):
    """max over the type's deviations of the cumulative regret after each number of rounds.

    Parameters
    ----------
    profiles : sequence of joint profiles (TabularPolicy or arrays), one per round played
    rounds : iterable of int, optional
        Round counts T at which to report (default 1..len(profiles)).

    Returns
    -------
    (len(rounds),) array: max_phi sum_{t < T} gain_phi(t).
    """
    gains, _ = deviation_gains(game, profiles, player, deviations)
    total = np.cumsum(gains, axis=1)
    T = total.shape[1]
    rounds = np.arange(1, T + 1) if rounds is None else np.asarray(list(rounds), dtype=int)
    if np.any(rounds < 1) or np.any(rounds > T):
        raise ValueError(f"rounds must lie in 1..{T}, got {rounds.tolist()}")
    return total[:, rounds - 1].max(axis=0)


def deviation_regret(game, profiles, player, deviations="cf"):
    """The cumulative regret of `player` for the type: the maximum over all its deviations of
    sum_t [u_i(phi(pi_i^t), pi_-i^t) - u_i(pi^t)] over the given profiles (one per round)."""
    return float(deviation_regret_curve(game, profiles, player, deviations)[-1])


def theorem1_bound(game, player, deviations, rounds):
    """Theorem 1 of the EFR paper, with U = max |u_i| and a D that is never smaller than the paper's:

        2 U |I_i| sqrt(D T),   D = max_I C_I |Phi_I|,

    |I_i| the player's decision points, Phi_I the transformations used at I and C_I the largest number
    of memory patterns paired with any one of them (the paper's omega(Phi_I) is at most |Phi_I|).
    """
    game = load(game)
    devs = enumerate_deviations(game, player, deviations)
    per_target = {}
    for dev in devs:
        per_target.setdefault(dev.target, {}).setdefault(dev.transformation, 0)
        per_target[dev.target][dev.transformation] += 1
    D = max(max(counts.values()) * len(counts) for counts in per_target.values())
    U = np.abs(game.returns[game.terminals, player]).max()
    return 2 * U * len(per_target) * np.sqrt(D * rounds)


def deviation_regrets(game, profiles, player, types=TYPES):
    """{type: cumulative regret of `player` for that type} for the recorded profiles: the strength
    ordering of the types in one table (a stronger type's regret is never smaller)."""
    return {str(getattr(t, "value", t)): deviation_regret(game, profiles, player, t) for t in types}
