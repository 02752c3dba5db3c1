r"""Behavioral policies: one probability table over (infoset, action) for all players.

A `TabularPolicy` holds ``probs``, an array of shape (num_infosets, num_actions): row I is
the distribution the acting player uses at infoset I, zero on illegal actions. It is a
*joint* policy: every player's infosets are in it, so evaluation never has to guess what
the other players do.

What counts as a policy (`check_probs`, `validate_probs`), row by row, with tolerances that do
not depend on the size of the game:

* every entry finite and at least ``-TOLERANCE`` (1e-9);
* at most ``TOLERANCE`` in absolute value on every illegal action;
* every row summing to 1 over its actions within `row_sum_tolerance` (1e-6 for float64 arrays;
  a little more for float32 and float16 arrays of games with many actions, whose own rounding
  is larger).

A bad array is refused with the first offending infoset named. A policy belongs to its game: it
is accepted by another compiled tree only if the two have the same information structure
(`labkit.tree.GameTree.fingerprint`), never because the arrays happen to have the same shape.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from labkit._messages import show
from labkit.tree import GameTree

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from labkit.games import GameLike

TOLERANCE = 1e-9                 # per entry: negative values, mass on illegal actions
ROW_SUM_TOLERANCE = 1e-6         # per row: |sum - 1| for float64 arrays


class TabularPolicy:
    r"""A behavioral strategy profile: every player's action distribution at every infoset.

    Parameters
    ----------
    game : GameTree
        The compiled game (`labkit.games.load`).
    probs : (num_infosets, num_actions) array_like or TabularPolicy
        Nonnegative, zero on illegal actions, each row summing to 1: row I is
        :math:`\pi(\cdot \mid I)`. Any real dtype (float64, float32, integers, booleans) is
        accepted and stored as float64.
    check : bool
        Validate `probs` now (default). ``check=False`` skips it for arrays known to be valid
        (the solvers' own); such a policy is still validated once, the first time an evaluator
        or a solver receives it.

    Attributes
    ----------
    game : GameTree
    probs : (num_infosets, num_actions) float array
    checked : bool
        Whether `probs` has been validated.

    Raises
    ------
    TypeError
        If `game` is not a GameTree or `probs` is not an array of real numbers.
    ValueError
        If `probs` has the wrong shape or a row is not a distribution over the legal actions
        (the message names the first such infoset), or `probs` is a policy of another game.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> always_bet = lk.TabularPolicy(kuhn, [[0.0, 1.0]] * kuhn.num_infosets)
    >>> always_bet["Q|p"]
    {'pass': 0.0, 'bet': 1.0}
    >>> lk.TabularPolicy(kuhn, [[0.5, 0.6]] * kuhn.num_infosets)
    Traceback (most recent call last):
      ...
    ValueError: policy: invalid policy at infoset 'J|': probabilities that do not sum to 1 ...
    """

    def __init__(self, game: GameTree, probs: ArrayLike | TabularPolicy, check: bool = True):
        if not isinstance(game, GameTree):
            raise TypeError(f"game must be a GameTree (labkit.games.load(...)), got {type(game).__name__}")
        self.game = game
        if check:
            self.probs = probability_array(game, probs)
            self.checked = True
        else:
            self.probs = np.asarray(probs.probs if isinstance(probs, TabularPolicy) else probs, dtype=float)
            self.checked = False

    @classmethod
    def _trusted(cls, game: GameTree, probs: np.ndarray) -> TabularPolicy:
        """A policy of an array built valid by labkit itself (marked checked, not validated)."""
        policy = cls(game, probs, check=False)
        policy.checked = True
        return policy

    # ------------------------------------------------------------ constructors
    @classmethod
    def uniform(cls, game: GameTree) -> TabularPolicy:
        r"""Every legal action equally likely at every infoset: :math:`\pi(a \mid I) = 1 / |A(I)|`.

        Parameters
        ----------
        game : GameTree

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> leduc = lk.games.load("leduc_poker")
        >>> lk.TabularPolicy.uniform(leduc)["Ks||r|"]
        {'fold': 0.3333333333333333, 'call': 0.3333333333333333, 'raise': 0.3333333333333333}
        """
        mask = game.legal_mask
        return cls._trusted(game, mask / mask.sum(axis=1, keepdims=True))

    @classmethod
    def pure(cls, game: GameTree, actions: Sequence[int] | Mapping[str, int]) -> TabularPolicy:
        """A deterministic policy.

        Parameters
        ----------
        game : GameTree
        actions : sequence of int, or dict {infoset key: action id}
            One action per infoset; with a dict, infosets missing from it play their first legal
            action.

        Returns
        -------
        TabularPolicy

        Raises
        ------
        ValueError
            If a chosen action is not legal at its infoset, or the sequence does not have one
            action per infoset.

        Examples
        --------
        >>> import labkit as lk
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> bluff = lk.TabularPolicy.pure(kuhn, {"J|": 1})
        >>> bluff["J|"], bluff["K|"]
        ({'pass': 0.0, 'bet': 1.0}, {'pass': 1.0, 'bet': 0.0})
        """
        choice = np.argmax(game.legal_mask, axis=1)
        if isinstance(actions, Mapping):
            for key, a in actions.items():
                choice[game.infoset_index(key)] = a
        else:
            choice = np.asarray(actions, dtype=np.int64)
            if choice.shape != (game.num_infosets,):
                raise ValueError(f"pure() needs one action per infoset ({game.num_infosets}), got shape {choice.shape}")
        rows = np.arange(game.num_infosets)
        if np.any(choice < 0) or np.any(choice >= game.num_actions) or not np.all(game.legal_mask[rows, choice]):
            bad = next(i for i in rows if not (0 <= choice[i] < game.num_actions and game.legal_mask[i, choice[i]]))
            raise ValueError(f"action {choice[bad]} is not legal at infoset {game.infoset_keys[bad]!r}; "
                             f"legal: {list(game.legal_actions(bad))}")
        probs = np.zeros(game.legal_mask.shape)
        probs[rows, choice] = 1.0
        return cls._trusted(game, probs)

    @classmethod
    def from_dict(cls, game: GameTree, table: Mapping[str, Mapping[Any, float] | Sequence[float]],
                  default: TabularPolicy | None = None) -> TabularPolicy:
        """Build a policy from {infoset key: distribution}.

        Parameters
        ----------
        game : GameTree
        table : dict
            {infoset key: distribution}, a distribution being a dict {action id or action name:
            probability} or a list of probabilities over the infoset's legal actions.
        default : TabularPolicy, optional
            Where the rows of the infosets not listed come from (uniform if None).

        Returns
        -------
        TabularPolicy
            Validated like any other.

        Raises
        ------
        KeyError
            For an unknown infoset key.
        ValueError
            For an action that is not legal, a list of the wrong length, or rows that are not
            distributions.

        Examples
        --------
        >>> import labkit as lk
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> policy = lk.TabularPolicy.from_dict(kuhn, {"K|": {"bet": 1.0, "pass": 0.0}, "J|": [2 / 3, 1 / 3]})
        >>> policy["K|"], policy["Q|"]
        ({'pass': 0.0, 'bet': 1.0}, {'pass': 0.5, 'bet': 0.5})
        """
        base = (default if default is not None else cls.uniform(game)).probs.copy()
        names = {name: a for a, name in enumerate(game.action_names)}
        for key, dist in table.items():
            i = game.infoset_index(key)
            legal = game.legal_actions(i)
            row = np.zeros(game.num_actions)
            if isinstance(dist, Mapping):
                for a, p in dist.items():
                    a = names.get(a, a) if isinstance(a, str) else a
                    if a not in legal:
                        raise ValueError(f"action {show(a)} is not legal at infoset {key!r}; legal: {list(legal)}")
                    row[a] = p
            else:
                values = np.asarray(dist, dtype=float)
                if values.shape != (len(legal),):
                    raise ValueError(f"infoset {key!r} has {len(legal)} legal actions, got "
                                     f"{values.shape[0] if values.ndim else 1} probabilities")
                row[legal] = values
            base[i] = row
        return cls(game, base)

    @classmethod
    def mixture(cls, policies: Iterable[TabularPolicy], weights: ArrayLike | None = None) -> TabularPolicy:
        r"""The behavioral policy that plays like picking policy k with probability w_k once,
        before the game, and following it throughout.

        Per player and infoset (Kuhn's theorem), with :math:`x_k(I)` the acting player's own
        reach of I under policy k,

        .. math:: \pi(a \mid I) = \frac{\sum_k w_k\, x_k(I)\, \pi_k(a \mid I)}{\sum_k w_k\, x_k(I)}.

        Infosets no policy reaches get the plain weighted average.

        Parameters
        ----------
        policies : iterable of TabularPolicy
            Policies of one game.
        weights : (K,) array_like, optional
            Nonnegative, summing to 1 (uniform by default).

        Returns
        -------
        TabularPolicy

        Raises
        ------
        ValueError
            With no policy, policies of different games, or weights that are not a distribution.

        References
        ----------
        H. W. Kuhn (1953), "Extensive games and the problem of information", Contributions to the
        Theory of Games 2.

        Examples
        --------
        Half "always bet with K, else pass", half "always pass": at "K|" the mixture bets half of
        the time, and at the infosets only the betting policy reaches after its own bet it follows
        that policy.

        >>> import labkit as lk
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> passive = lk.TabularPolicy.pure(kuhn, {})
        >>> aggressive = lk.TabularPolicy.pure(kuhn, {"K|": 1})
        >>> lk.TabularPolicy.mixture([passive, aggressive])["K|"]
        {'pass': 0.5, 'bet': 0.5}
        """
        policies = list(policies)
        if not policies:
            raise ValueError("mixture() needs at least one policy")
        if not all(isinstance(p, TabularPolicy) for p in policies):
            raise TypeError("mixture() takes TabularPolicy objects")
        game = policies[0].game
        for k, pol in enumerate(policies[1:], start=1):
            if pol.game is not game and pol.game.fingerprint != game.fingerprint:
                raise ValueError(f"all policies of a mixture must belong to the same game: policy {k} belongs to "
                                 f"{pol.game.name}, policy 0 to {game.name}")
            if not pol.checked:
                check_probs(game, pol.probs, f"policy {k}")
                pol.checked = True
        if not policies[0].checked:
            check_probs(game, policies[0].probs, "policy 0")
            policies[0].checked = True
        w = np.full(len(policies), 1.0 / len(policies)) if weights is None else np.asarray(weights, float)
        if (w.shape != (len(policies),) or not np.all(np.isfinite(w)) or np.any(w < 0)
                or not np.isclose(w.sum(), 1.0)):
            raise ValueError("mixture weights must be nonnegative, one per policy, and sum to 1")
        num = np.zeros(game.legal_mask.shape)
        den = np.zeros(game.num_infosets)
        plain = np.zeros(game.legal_mask.shape)
        for wk, pol in zip(w, policies, strict=True):
            reach = infoset_own_reach(game, pol.probs)
            num += wk * reach[:, None] * pol.probs
            den += wk * reach
            plain += wk * pol.probs
        probs = np.where(den[:, None] > 0, num / np.where(den > 0, den, 1.0)[:, None], plain)
        return cls._trusted(game, normalize_rows(game, probs))

    # ------------------------------------------------------------ access
    def __getitem__(self, key: str) -> dict[str, float]:
        """{action name: probability} over the legal actions of the infoset `key`."""
        i = self.game.infoset_index(key)
        return {self.game.action_names[a]: float(self.probs[i, a]) for a in self.game.legal_actions(i)}

    def action_probabilities(self, key: str) -> dict[int, float]:
        """{action id: probability} over the legal actions of the infoset `key`.

        Parameters
        ----------
        key : str
            An infoset key (``policy[key]`` gives the same with action names).

        Returns
        -------
        dict

        Raises
        ------
        KeyError
            For an unknown key.

        Examples
        --------
        >>> import labkit as lk
        >>> lk.uniform_policy("kuhn_poker").action_probabilities("K|pb")
        {0: 0.5, 1: 0.5}
        """
        i = self.game.infoset_index(key)
        return {int(a): float(self.probs[i, a]) for a in self.game.legal_actions(i)}

    def copy(self) -> TabularPolicy:
        """A policy of the same game with its own copy of ``probs``.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> policy = lk.uniform_policy("kuhn_poker")
        >>> other = policy.copy()
        >>> other.probs[0] = [1.0, 0.0]
        >>> policy["J|"]
        {'pass': 0.5, 'bet': 0.5}
        """
        policy = TabularPolicy(self.game, self.probs.copy(), check=False)
        policy.checked = self.checked
        return policy

    def to_dict(self) -> dict[str, dict[str, float]]:
        """{infoset key: {action name: probability}} for every infoset.

        Returns
        -------
        dict

        Examples
        --------
        >>> import labkit as lk
        >>> table = lk.uniform_policy("kuhn_poker").to_dict()
        >>> len(table), table["Q|pb"]
        (12, {'pass': 0.5, 'bet': 0.5})
        """
        return {key: self[key] for key in self.game.infoset_keys}

    def table(self, player: int | None = None, digits: int = 3, max_rows: int = 60) -> str:
        """The policy as a text table, one row per infoset.

        Parameters
        ----------
        player : int, optional
            Only this player's infosets (all by default).
        digits : int
            Decimals shown.
        max_rows : int
            Infosets shown before "... (k more infosets)".

        Returns
        -------
        str

        Examples
        --------
        >>> import labkit as lk
        >>> print(lk.uniform_policy("kuhn_poker").table(player=0, max_rows=2))
        player  infoset    pass     bet
             0  J|        0.500   0.500
             0  Q|        0.500   0.500
        ... (4 more infosets)
        """
        game = self.game
        rows = range(game.num_infosets) if player is None else game.infosets_of(player)
        actions = [a for a in range(game.num_actions) if game.legal_mask[list(rows), a].any()] if len(rows) else []
        width = max([len("infoset")] + [len(game.infoset_keys[i]) for i in rows])
        col = max(digits + 3, *(len(game.action_names[a]) for a in actions)) if actions else digits + 3
        lines = ["player  " + "infoset".ljust(width) + "".join(game.action_names[a].rjust(col + 2) for a in actions)]
        for k, i in enumerate(rows):
            if k == max_rows:
                lines.append(f"... ({len(rows) - max_rows} more infosets)")
                break
            cells = "".join((f"{self.probs[i, a]:.{digits}f}" if game.legal_mask[i, a] else "-").rjust(col + 2)
                            for a in actions)
            lines.append(f"{game.infoset_player[i]:>6d}  " + game.infoset_keys[i].ljust(width) + cells)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"TabularPolicy({self.game.name}, {self.game.num_infosets} infosets)\n" + self.table(max_rows=24)


def uniform_policy(game: GameLike) -> TabularPolicy:
    r"""The policy that plays every legal action with equal probability, :math:`1 / |A(I)|`.

    Parameters
    ----------
    game : str or GameTree
        Anything `labkit.games.load` accepts.

    Returns
    -------
    TabularPolicy

    Examples
    --------
    >>> import labkit as lk
    >>> round(lk.nash_conv("kuhn_poker", lk.uniform_policy("kuhn_poker")), 12)      # 11/12
    0.916666666667
    """
    from labkit.games import load
    return TabularPolicy.uniform(load(game))


def row_sum_tolerance(dtype: np.dtype | type, num_actions: int) -> float:
    r"""How far a row of a policy array of this dtype may sum from 1.

    ``ROW_SUM_TOLERANCE`` (1e-6) for float64 and exact types, and
    :math:`4 A \varepsilon` when that is larger (:math:`\varepsilon` the dtype's machine epsilon,
    A the number of actions): what normalizing a row in that precision can leave. It does not
    depend on the number of infosets.

    Parameters
    ----------
    dtype : numpy dtype
        The dtype of the array as given (before conversion to float64).
    num_actions : int

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> row_sum_tolerance(np.float64, 3), row_sum_tolerance(np.float32, 3)
    (1e-06, 1.430511474609375e-06)
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        return ROW_SUM_TOLERANCE
    return max(ROW_SUM_TOLERANCE, 4 * num_actions * float(np.finfo(dtype).eps))


def validate_probs(game: GameTree, probs: np.ndarray, tolerance: float = ROW_SUM_TOLERANCE) -> None:
    """Raise ValueError naming the first infoset whose row is not a distribution over legal actions.

    Checks row by row, in this order: non-finite or negative entries (below ``-TOLERANCE``),
    mass on illegal actions (above ``TOLERANCE``), and a sum over the legal actions more than
    `tolerance` away from 1.

    Parameters
    ----------
    game : GameTree
    probs : (num_infosets, num_actions) float array
    tolerance : float
        The row-sum tolerance (`row_sum_tolerance`).

    Raises
    ------
    ValueError
        If the shape is wrong or a row is invalid.

    Examples
    --------
    >>> import numpy as np
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> probs = np.full((12, 2), 0.5)
    >>> validate_probs(kuhn, probs)
    >>> probs[5] = [np.nan, 0.5]
    >>> validate_probs(kuhn, probs)
    Traceback (most recent call last):
      ...
    ValueError: invalid policy at infoset 'K|p': a negative or non-finite probability ...
    """
    expected = game.legal_mask.shape
    if probs.shape != expected:
        raise ValueError(f"policy array has shape {probs.shape}; expected (num_infosets, num_actions) = {expected}")
    with np.errstate(invalid="ignore"):
        bad_value = ~np.isfinite(probs) | (probs < -TOLERANCE)
        illegal = (~game.legal_mask) & (np.abs(probs) > TOLERANCE)
        sums = np.where(game.legal_mask, probs, 0.0).sum(axis=1)
        bad_sum = ~(np.abs(sums - 1.0) <= tolerance)
    for name, mask in (("a negative or non-finite probability", bad_value.any(axis=1)),
                       ("probability on an illegal action", illegal.any(axis=1)),
                       ("probabilities that do not sum to 1", bad_sum)):
        if mask.any():
            i = int(np.flatnonzero(mask)[0])
            legal = {game.action_names[a]: round(float(probs[i, a]), 6) for a in range(game.num_actions)
                     if game.legal_mask[i, a] or probs[i, a] != 0}
            raise ValueError(f"invalid policy at infoset {game.infoset_keys[i]!r}: {name} ({legal}, sum {sums[i]:.6g})")


def check_probs(game: GameTree, probs: np.ndarray, name: str = "policy",
                tolerance: float = ROW_SUM_TOLERANCE) -> None:
    """Raise ValueError unless `probs` (of the game's shape) is a valid joint policy.

    The conditions of `validate_probs`, row by row and to the same tolerances, from a few
    whole-array reductions: the smallest entry, the largest deviation of a row sum from 1, and
    the largest entry on an illegal action. NaN fails every comparison and an infinity makes a
    deviation infinite, so both are caught. Only an invalid array pays for `validate_probs`, which
    finds the first bad infoset for the message.

    Parameters
    ----------
    game : GameTree
    probs : (num_infosets, num_actions) float array
    name : str
        The argument's name, first in the message.
    tolerance : float
        The row-sum tolerance (`row_sum_tolerance`).

    Raises
    ------
    ValueError
        If a row is not a distribution over the legal actions; the message names the argument
        and the first offending infoset.

    Examples
    --------
    >>> import numpy as np
    >>> import labkit as lk
    >>> leduc = lk.games.load("leduc_poker")
    >>> probs = lk.uniform_policy(leduc).probs.copy()
    >>> check_probs(leduc, probs.astype(np.float32).astype(float), tolerance=row_sum_tolerance(np.float32, 3))
    >>> probs[0] = [0.5, 0.25, 0.25]                  # fold is illegal at the first decision
    >>> check_probs(leduc, probs, "opponents")
    Traceback (most recent call last):
      ...
    ValueError: opponents: invalid policy at infoset 'Js|||': probability on an illegal action ...
    """
    flat = probs.reshape(-1)
    if not flat.size:
        return
    ones, illegal_slots = _check_vectors(game)
    # np.dot and ufunc reductions: the cheapest numpy calls for these (the check guards every
    # evaluation of a raw array, so its few microseconds count; benchmarks/bench_validation.py)
    deviation = _dot(probs, ones)
    deviation -= 1.0
    np.abs(deviation, out=deviation)
    # in this order, so that a NaN or an infinity stops the test before it could meet a 0
    ok = (_minimum(flat) >= -TOLERANCE                    # NaN fails every comparison here; so does -inf
          and _maximum(deviation) <= tolerance)            # every row sum within tolerance of 1; +inf fails
    if ok and len(illegal_slots):
        ok = _maximum(np.abs(flat[illegal_slots])) <= TOLERANCE
    if not ok:
        try:
            validate_probs(game, probs, tolerance)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
        # validate_probs sums the legal entries only; the whole-row sum differs only through mass
        # on illegal actions, each entry of which was within TOLERANCE
        raise ValueError(f"{name}: invalid policy: a row sums to 1 only without its illegal actions "
                         f"(largest deviation {float(_maximum(deviation)):.3g})")


_dot = np.dot
_minimum = np.minimum.reduce
_maximum = np.maximum.reduce


def _check_vectors(game: GameTree) -> tuple[np.ndarray, np.ndarray]:
    """Cached per game: a vector of ones (num_actions,) and the flat indices of illegal slots."""
    cached = game.__dict__.get("_check_vectors")
    if cached is None:
        cached = game.__dict__["_check_vectors"] = (np.ones(game.num_actions),
                                                    np.flatnonzero(~game.legal_mask.reshape(-1)))
    return cached


def _structure_difference(mine: GameTree, other: GameTree) -> str:
    """Where two trees' information structures first differ, in words."""
    if mine.num_infosets != other.num_infosets or mine.num_actions != other.num_actions:
        return (f"{other.num_infosets} infosets and {other.num_actions} actions there, "
                f"{mine.num_infosets} and {mine.num_actions} here")
    for i, (a, b) in enumerate(zip(other.infoset_keys, mine.infoset_keys, strict=True)):
        if a != b:
            return f"infoset {i} is {a!r} there and {b!r} here"
    if other.action_names != mine.action_names:
        return f"the actions are {other.action_names} there and {mine.action_names} here"
    rows = np.flatnonzero((other.legal_mask != mine.legal_mask).any(axis=1)
                          | (other.infoset_player != mine.infoset_player)
                          | (other.infoset_parent_seq != mine.infoset_parent_seq))
    i = int(rows[0]) if len(rows) else 0
    return f"infoset {mine.infoset_keys[i]!r} has other legal actions, another player or another history"


def probability_array(game: GameTree, policy: ArrayLike | TabularPolicy, name: str = "policy") -> np.ndarray:
    """The (num_infosets, num_actions) float64 probability array of `policy`, validated.

    A `TabularPolicy` is accepted if it belongs to `game` or to a tree with the same information
    structure (`GameTree.fingerprint`), and is validated here if it was made with ``check=False``
    and not validated since. Any other value must be an array of real numbers of the game's shape
    whose rows pass `check_probs`, with the row-sum tolerance of its dtype.

    Parameters
    ----------
    game : GameTree
    policy : TabularPolicy or (num_infosets, num_actions) array_like
    name : str
        The argument's name in error messages.

    Returns
    -------
    (num_infosets, num_actions) float array
        The policy's own array (not a copy) for a TabularPolicy; a float64 array otherwise.

    Raises
    ------
    TypeError
        For anything but a policy or an array of real numbers.
    ValueError
        For a policy of another game, a wrong shape, or an invalid row.

    Examples
    --------
    >>> import numpy as np
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> probability_array(kuhn, np.full((12, 2), 0.5, dtype=np.float32)).dtype
    dtype('float64')
    >>> ascending = lk.games.load("goofspiel(num_cards=3,points_order=ascending)")
    >>> descending = lk.games.load("goofspiel(num_cards=3,points_order=descending)")
    >>> probability_array(ascending, lk.uniform_policy(descending))
    Traceback (most recent call last):
      ...
    ValueError: policy belongs to goofspiel(...descending...), not to goofspiel(...ascending...):
    infoset 0 is 'P0 | prizes 3 | bids - | won -' there and 'P0 | prizes 1 | bids - | won -' here
    """
    if isinstance(policy, TabularPolicy):
        if policy.game is not game and policy.game.fingerprint != game.fingerprint:
            raise ValueError(f"{name} belongs to {policy.game.name}, not to {game.name}: "
                             f"{_structure_difference(game, policy.game)}")
        if not policy.checked:
            check_probs(game, policy.probs, name, row_sum_tolerance(policy.probs.dtype, game.num_actions))
            policy.checked = True
        return policy.probs
    if not isinstance(policy, (np.ndarray, list, tuple)):
        raise TypeError(f"{name} must be a TabularPolicy or a (num_infosets, num_actions) = "
                        f"{game.legal_mask.shape} array of probabilities, got {type(policy).__name__}")
    try:
        raw = np.asarray(policy)
    except (TypeError, ValueError):                  # ragged nested lists
        raw = np.empty(0, dtype=object)
    if raw.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be an array of real numbers of shape (num_infosets, num_actions) = "
                        f"{game.legal_mask.shape}, got an array of {raw.dtype} (dtype kind {raw.dtype.kind!r})")
    if raw.shape != game.legal_mask.shape:
        raise ValueError(f"{name} array has shape {raw.shape}; expected {game.legal_mask.shape} "
                         "(num_infosets, num_actions). Pass a joint policy covering every player.")
    probs = np.asarray(raw, dtype=float)
    check_probs(game, probs, name, row_sum_tolerance(raw.dtype, game.num_actions))
    return probs


def normalize_rows(game: GameTree, probs: ArrayLike) -> np.ndarray:
    """Renormalize each row over the legal actions; rows with zero mass become uniform.

    Negative entries and entries on illegal actions are set to 0 first.

    Parameters
    ----------
    game : GameTree
    probs : (num_infosets, num_actions) array_like
        Nonnegative weights.

    Returns
    -------
    (num_infosets, num_actions) float array

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> print(normalize_rows(kuhn, [[1, 3]] + [[0, 0]] * 11)[:2])
    [[0.25 0.75]
     [0.5  0.5 ]]
    """
    p = np.where(game.legal_mask, np.maximum(probs, 0.0), 0.0)
    total = p.sum(axis=1, keepdims=True)
    uniform = game.legal_mask / game.legal_mask.sum(axis=1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), uniform)


def realization_weights(game: GameTree, probs: np.ndarray) -> np.ndarray:
    r"""The sequence-form strategy: :math:`x(I, a) = x(I)\, \pi(a \mid I)`, the acting player's own
    probability of the sequence (I, a), the product of its own action probabilities on the way.

    Parameters
    ----------
    game : GameTree
    probs : (num_infosets, num_actions) float array

    Returns
    -------
    (num_infosets, num_actions) float array

    References
    ----------
    D. Koller, N. Megiddo and B. von Stengel (1994), "Fast algorithms for finding randomized
    strategies in game trees", STOC.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> x = realization_weights(kuhn, lk.uniform_policy(kuhn).probs)
    >>> float(x[kuhn.infoset_index("Q|pb"), 1])            # pass at "Q|" (1/2), then call (1/2)
    0.25
    """
    reach = infoset_own_reach(game, probs)
    return reach[:, None] * probs


def infoset_own_reach(game: GameTree, probs: np.ndarray) -> np.ndarray:
    r"""The acting player's own probability of playing to each infoset (1 at first decisions).

    .. math:: x(I) = x(I')\, \pi(a' \mid I'),

    where (I', a') is the player's previous sequence; infosets are numbered parents first, so one
    vectorized step per own depth suffices.

    Parameters
    ----------
    game : GameTree
    probs : (num_infosets, num_actions) float array

    Returns
    -------
    (num_infosets,) float array

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> always_bet = lk.TabularPolicy(kuhn, [[0.0, 1.0]] * 12)
    >>> float(infoset_own_reach(kuhn, always_bet.probs)[kuhn.infoset_index("K|pb")])   # needs a pass first
    0.0
    """
    reach = np.ones(game.num_infosets)
    flat = probs.reshape(-1)
    for idx, parent_infoset, parent_seq in _own_depth_levels(game):
        reach[idx] = reach[parent_infoset] * flat[parent_seq]
    return reach


def _own_depth_levels(game: GameTree) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Cached per game: for own depths 1, 2, ...: the infosets there, their parent infoset and
    parent sequence."""
    levels = game.__dict__.get("_own_depth_levels")
    if levels is None:
        levels = []
        for d in range(1, int(game.infoset_own_depth.max(initial=0)) + 1):
            idx = _own_depth_index(game, d)
            seq = game.infoset_parent_seq[idx]
            levels.append((idx, seq // game.num_actions, seq))
        game.__dict__["_own_depth_levels"] = levels
    return levels


def _own_depth_index(game: GameTree, d: int) -> np.ndarray:
    cache = game.__dict__.setdefault("_own_depth_cache", {})
    if d not in cache:
        cache[d] = np.flatnonzero(game.infoset_own_depth == d)
    return cache[d]
