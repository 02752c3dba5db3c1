r"""Every learner against every learner: the experiments of Morrill et al., "Efficient Deviation
Types and Learning for Hindsight Rationality in Extensive-Form Games" (ICML 2021), Figure E.5
and Table 2.

A learner is an EFR instance of one deviation type (``labkit.efr.EFR(game, deviations=name)``);
it plays its current strategy, and ``update(opponents)`` moves every seat's strategy using the
regrets of that seat against ``opponents`` in all other seats. The value of a learner x against
a profile y is averaged over seats: :math:`\frac{1}{n} \sum_p u_p(x_p, y_{-p})`.

Fixed regime (the column variant C replays its own self-play), one round t = 0..T-1:
  1. y^t = C's self-play profile at time t (C updates against itself: y^{t+1} = EFR_C(y^t)).
  2. Record the row's value (1/n) sum_p u_p(x_p^t, y^t_{-p}) of its pre-update strategy.
  3. The row learner updates each seat against y^t (one independent learner per seat).
Simultaneous regime (two fresh learners R and C meet), one round:
  1. Freeze x^t = R's and y^t = C's current profiles.
  2. Record [R][C] = (1/n) sum_p u_p(x_p^t, y^t_{-p}) and [C][R] the same with the roles swapped.
  3. R updates against y^t, C against x^t.
No update follows the last round. The table entry is the mean of the recorded values over rounds.

Work units are picklable and carry the game's spec string; a worker rebuilds the tree once
(``labkit.games.load`` caches it). Fixed regime: one unit per column and chunk of rows, which
computes the column's self-play once and steps all of its rows in lockstep with it, so the
self-play sequence is never stored or shipped. Simultaneous regime: one unit per unordered
pair {R, C}.
"""
from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import Any
from dataclasses import dataclass

import numpy as np

from labkit import games
from labkit._messages import show
from labkit.evaluate import PolicyLike, _reach, edge_probabilities, policy_array
from labkit.experiments.executors import resolve_executor, run_units
from labkit.experiments.results import TournamentResult
from labkit.tree import GameTree

REGIMES = ("fixed", "simultaneous")

# the eleven variants of the paper's Figure E.5, in its order
FIGURE_E5_VARIANTS = (
    "act_in",                       # informed action deviations
    "cf", "cf_in", "cf_ex+in",      # counterfactual: blind, informed, both
    "bps", "cfps", "cfps_ex+in",    # partial sequences: blind, counterfactual, both
    "csps",                         # causal partial sequences
    "tips", "tips_ex+in",           # twice-informed partial sequences, then with external ones too
    "bhv",                          # behavioral deviations
)
# the eight variants of the paper's Table 2 (goofspiel)
TABLE_2_VARIANTS = ("act_in", "cf", "cf_in", "bps", "cfps", "csps", "tips", "bhv")


# ---------------------------------------------------------------------- learners and games
def efr_learner(game: Any, name: str, fixed_point: str = "exact") -> Any:
    """The default learner: ``labkit.efr.EFR(game, deviations=name)`` (names are case-insensitive).

    ``functools.partial(efr_learner, fixed_point="lstsq")`` plays with the authors' floating-point
    least-squares fixed point instead of labkit's exact one (see `labkit.efr.fixed_point`).

    Parameters
    ----------
    game : str or GameTree
    name : str
        A deviation type (`labkit.efr.DEVIATION_NAMES`), any case.
    fixed_point : {"exact", "lstsq", "paper"}

    Returns
    -------
    EFR
        Without a record of its past profiles (the runner copies what it needs).

    Raises
    ------
    ValueError
        For an unknown type or fixed point.

    Examples
    --------
    >>> efr_learner("kuhn_poker", "TIPS")
    EFR(kuhn_poker, deviations='tips', iteration=0)
    """
    from labkit.efr import EFR
    # the runner copies the profiles it needs; the learner need not keep its history
    return EFR(game, deviations=name.lower() if isinstance(name, str) else name, record_profiles=False,
               fixed_point=fixed_point)


@functools.lru_cache(maxsize=8)
def _load_openspiel(spec: str) -> GameTree:
    return games.from_openspiel(spec)


def load_game(spec: Any) -> GameTree:
    """A GameTree from a spec; strings are compiled once per process.

    Parameters
    ----------
    spec : str or GameTree
        A GameTree itself, a labkit game string, or "openspiel:<game string>" for any OpenSpiel
        game (needs OpenSpiel).

    Returns
    -------
    GameTree

    Raises
    ------
    TypeError, ValueError
        For anything else, an unknown game, or a game too large to compile.

    Examples
    --------
    >>> load_game("kuhn_poker") is load_game("kuhn_poker")
    True
    """
    if isinstance(spec, GameTree):
        return spec
    if isinstance(spec, str) and spec.startswith("openspiel:"):
        return _load_openspiel(spec[len("openspiel:"):])
    return games.load(spec)


def game_spec(game: Any) -> str | GameTree:
    """What a work unit carries: the spec string when there is one, else the tree itself.

    Parameters
    ----------
    game : str or GameTree
        A paper game's key or name is resolved to its spec (`resolve_game`).

    Returns
    -------
    str or GameTree

    Raises
    ------
    TypeError, ValueError
        For anything but a string or a tree, or a string that names no game.

    Examples
    --------
    >>> game_spec("goofspiel5_2p")
    'goofspiel(num_cards=5,players=2,points_order=ascending,imp_info=True)'
    >>> game_spec(load_game("kuhn_poker"))
    'kuhn_poker'
    """
    if isinstance(game, str):
        from labkit.experiments.games import resolve_game
        game = resolve_game(game)     # "sheriff" -> "openspiel:sheriff", the paper's games by key
        load_game(game)   # fail early, in this process, on an unknown game
        return game
    if isinstance(game, GameTree):
        try:
            same = games.load(game.name)     # a loaded game's name is its canonical spec
        except (ValueError, TypeError):
            return game
        if same is game or (same.num_histories == game.num_histories
                            and same.num_infosets == game.num_infosets
                            and np.array_equal(same.returns, game.returns)):
            return game.name
        return game
    raise TypeError(f"game must be a game string (e.g. 'leduc_poker') or a GameTree, got {type(game).__name__}")


def _profile(learner: Any) -> np.ndarray:
    """A copy of the learner's current joint profile as a (num_infosets, num_actions) array;
    a copy, because the learner may update its arrays in place afterwards."""
    policy = learner.current_policy()
    return np.array(getattr(policy, "probs", policy), dtype=float, copy=True)


def seat_values(game: GameTree, own: PolicyLike, others: PolicyLike) -> np.ndarray:
    r"""The value of a learner in every seat: :math:`u_p(\text{own}_p, \text{others}_{-p})` for each p.

    The learner takes seat p and `others` fills the rest.

    Parameters
    ----------
    game : GameTree
    own, others : TabularPolicy or (num_infosets, num_actions) arrays
        Joint profiles of the game.

    Returns
    -------
    (n,) float array
        Its mean is the seat-averaged value the tables report.

    Raises
    ------
    TypeError, ValueError
        For profiles that are not valid policies of the game.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = load_game("kuhn_poker")
    >>> always_bet = lk.TabularPolicy.pure(kuhn, {key: 1 for key in kuhn.infoset_keys})
    >>> seat_values(kuhn, always_bet, lk.uniform_policy(kuhn)).round(4).tolist()
    [0.5, 0.25]
    """
    return _seat_values(game, terminal_reach(game, own), terminal_reach(game, others))


def terminal_reach(game: GameTree, policy: PolicyLike) -> np.ndarray:
    r"""Every player's (and chance's) contribution to the reach of every terminal.

    Parameters
    ----------
    game : GameTree
    policy : TabularPolicy or (num_infosets, num_actions) array

    Returns
    -------
    (n + 1, Z) float array
        Row p is :math:`\pi_p(z)` for the terminals z in `game.terminals` order; the last row is
        chance's.

    Raises
    ------
    TypeError, ValueError
        For a policy that is not a valid policy of the game.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = load_game("kuhn_poker")
    >>> reach = terminal_reach(kuhn, lk.uniform_policy(kuhn))
    >>> reach.shape, round(float(reach.prod(axis=0).sum()), 12)        # the terminals' reaches sum to 1
    ((3, 30), 1.0)
    """
    return _terminal_reach(game, policy_array(game, policy))


def _terminal_reach(game: GameTree, probs: np.ndarray) -> np.ndarray:
    """`terminal_reach` of a probability array taken as it is (the runner's unvalidated path,
    see `FixedUnit`)."""
    return _reach(game, edge_probabilities(game, probs))[:, game.terminals]


def _reach_of(unit: Any, game: GameTree, probs: np.ndarray, scratch: np.ndarray | None = None) -> np.ndarray:
    """Terminal reaches of a profile the unit's learner played: validated unless the unit
    replays the authors' numerics (`FixedUnit.validate_profiles`). Those runs have the paper
    mode's compiled loops loaded (fixed_point "paper"), which compute the same bits in one pass
    over the tree; `scratch` (from `_reach_scratch`) is their work array."""
    if unit.validate_profiles:
        return terminal_reach(game, probs)
    if scratch is not None:
        from labkit.efr import paper_numerics
        return paper_numerics.terminal_reach_compiled(game, probs, scratch)
    return _terminal_reach(game, probs)


def _reach_scratch(unit: Any, game: GameTree) -> np.ndarray | None:
    """A work array for `_reach_of`, one per unit (units may run in threads), or None where the
    compiled pass is not loaded: only for the authors' numerics, and only without building the
    library here ("lstsq" needs no compiler)."""
    from labkit.efr import eigen
    if unit.validate_profiles or eigen._library is None:
        return None
    return np.empty(game.num_histories * (game.num_players + 1))


def _learn(unit: Any, learner: Any, opponents: np.ndarray) -> None:
    """learner.update(opponents), or, for the authors' numerics, EFR's unvalidated update."""
    if unit.validate_profiles:
        learner.update(opponents)
    else:
        learner._update_unchecked(opponents)


def _seat_values(game: GameTree, reach_own: np.ndarray, reach_others: np.ndarray) -> np.ndarray:
    """sum_z pi_p^own(z) pi_{-p}^others(z) u_p(z) for every seat p, from terminal reaches."""
    payoffs = _terminal_payoffs(game)
    values = np.empty(game.num_players)
    for p in range(game.num_players):
        rows = reach_others.copy()
        rows[p] = reach_own[p]    # only seat p's own reach comes from the learner
        # an elementwise sum, not a BLAS dot: BLAS threads stall on a busy machine
        values[p] = (rows.prod(axis=0) * payoffs[p]).sum()
    return values


def _terminal_payoffs(game: GameTree) -> np.ndarray:
    """(n, Z) contiguous payoffs at the terminals, cached on the tree."""
    cache = game.__dict__.setdefault("_experiments_cache", {})
    if "payoffs" not in cache:
        cache["payoffs"] = np.ascontiguousarray(game.returns[game.terminals].T)
    return cache["payoffs"]


# ---------------------------------------------------------------------- work units
@dataclass(frozen=True)
class FixedUnit:
    """Rows `rows` against the replayed self-play of `column` (one unit of the fixed regime).

    validate_profiles : bool
        Check every played profile as the evaluators do (default). `efr_tournament` switches it
        off only for its own EFR learners with the authors' numerics (fixed_point "paper" or
        "lstsq"): their strategies are clipped least-squares solutions that the authors play and
        evaluate without renormalizing, and a row may sum to 1 +- 1e-3 (`labkit.efr.EFR.update`,
        Notes). The tables must evaluate exactly those strategies.

    Attributes
    ----------
    game : str or GameTree
        The spec string (or the tree when the game has none).
    column : str
        The column variant, whose self-play is replayed.
    rows : tuple of str
        The row variants stepped in lockstep with it.
    rounds : int
    learner : callable (game, name) -> learner

    Examples
    --------
    >>> unit = FixedUnit("kuhn_poker", "cf", ("cf", "bps"), rounds=3)
    >>> {row: values.round(4).tolist() for row, values in run_fixed_unit(unit).items()}
    {'cf': [0.0, 0.0, 0.0], 'bps': [0.0, 0.0, 0.0]}
    """
    game: object      # spec string (or a GameTree when the game has none)
    column: str
    rows: tuple
    rounds: int
    learner: Callable[..., Any] = efr_learner
    validate_profiles: bool = True


@dataclass(frozen=True)
class PairUnit:
    """Two fresh learners `row` and `column` learning against each other (simultaneous regime).

    Attributes
    ----------
    game : str or GameTree
    row, column : str
        The two variants.
    rounds : int
    learner : callable (game, name) -> learner
    validate_profiles : bool
        As in `FixedUnit`.

    Examples
    --------
    >>> row_values, column_values = run_pair_unit(PairUnit("kuhn_poker", "act_in", "cf", rounds=3))
    >>> row_values.round(4).tolist(), column_values.round(4).tolist()
    ([0.0, 0.0, -0.1042], [0.0, 0.0, 0.1042])
    """
    game: object
    row: str
    column: str
    rounds: int
    learner: Callable[..., Any] = efr_learner
    validate_profiles: bool = True      # as in `FixedUnit`


def run_fixed_unit(unit: FixedUnit) -> dict[str, np.ndarray]:
    """Play one unit of the fixed regime.

    Parameters
    ----------
    unit : FixedUnit

    Returns
    -------
    dict of str to (rounds,) float array
        {row: the seat-averaged values of the row against the column's self-play, round by round}.

    Examples
    --------
    >>> values = run_fixed_unit(FixedUnit("leduc_poker", "cf", ("act_in",), rounds=3))
    >>> (1000 * values["act_in"]).round(1).tolist()           # milli-big-blinds
    [0.0, -746.7, -1843.7]
    """
    game = load_game(unit.game)
    column = unit.learner(game, unit.column)
    # a fresh row learner of the column's own variant would repeat the column's self-play
    # update for update (same state, same opponents), so the column learner plays that row
    rows = [column if name == unit.column else unit.learner(game, name) for name in unit.rows]
    values = np.zeros((len(rows), unit.rounds))
    scratch = _reach_scratch(unit, game)
    for t in range(unit.rounds):
        y = _profile(column)
        reach_y = _reach_of(unit, game, y, scratch)     # shared by every row of this round
        for k, learner in enumerate(rows):
            reach_x = reach_y if learner is column else _reach_of(unit, game, _profile(learner), scratch)
            values[k, t] = _seat_values(game, reach_x, reach_y).mean()
        if t + 1 < unit.rounds:
            _learn(unit, column, y)      # self-play: every seat against the frozen y^t
            for learner in rows:
                if learner is not column:
                    _learn(unit, learner, y)
    return dict(zip(unit.rows, values, strict=True))


def run_pair_unit(unit: PairUnit) -> tuple[np.ndarray, np.ndarray]:
    """Play one unit of the simultaneous regime.

    Parameters
    ----------
    unit : PairUnit

    Returns
    -------
    row_values, column_values : (rounds,) float arrays
        The row's seat-averaged values against the column, and the column's against the row.

    Examples
    --------
    >>> ab, ba = run_pair_unit(PairUnit("leduc_poker", "act_in", "cf", rounds=3))
    >>> (1000 * ab).round(1).tolist(), (1000 * (ab + ba)).round(6).tolist()     # zero-sum
    ([0.0, -746.7, -1421.6], [0.0, 0.0, 0.0])
    """
    game = load_game(unit.game)
    a = unit.learner(game, unit.row)
    if unit.row == unit.column:
        # two fresh copies of one deterministic learner stay identical: self-play of one
        # instance gives both (equal) value sequences
        b = a
    else:
        b = unit.learner(game, unit.column)
    ab, ba = np.zeros(unit.rounds), np.zeros(unit.rounds)
    scratch = _reach_scratch(unit, game)
    for t in range(unit.rounds):
        x, y = _profile(a), _profile(b)
        reach_x, reach_y = _reach_of(unit, game, x, scratch), _reach_of(unit, game, y, scratch)
        ab[t] = _seat_values(game, reach_x, reach_y).mean()
        ba[t] = ab[t] if b is a else _seat_values(game, reach_y, reach_x).mean()
        if t + 1 < unit.rounds:
            _learn(unit, a, y)
            if b is not a:
                _learn(unit, b, x)
    return ab, ba


# ---------------------------------------------------------------------- the tournament
def _authors_numerics(learner: Any) -> bool:
    """Whether `learner` is this module's EFR learner with the authors' clipped least squares
    (fixed_point "paper" or "lstsq"), whose profiles are played without renormalizing."""
    if isinstance(learner, functools.partial) and learner.func is efr_learner and not learner.args:
        return learner.keywords.get("fixed_point", "exact") in ("lstsq", "paper")
    return False


def _check_names(kind: str, names: Any, check_types: bool = False) -> list[str]:
    if isinstance(names, str) or not hasattr(names, "__iter__"):
        raise TypeError(f"{kind} must be a list of variant names, got {show(names)}")
    names = list(names)
    if not names:
        raise ValueError(f"{kind} must name at least one variant")
    if check_types:            # EFR learners: each name must be a deviation type, checked here, not in a worker
        from labkit.efr.deviations import parse_deviation_type
        for name in names:
            try:
                parse_deviation_type(name)
            except ValueError as err:
                raise ValueError(f"{kind}: {err}") from None
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{kind} lists {dup} more than once")
    return names


def efr_tournament(game: Any, rows: Sequence[str] = FIGURE_E5_VARIANTS, columns: Sequence[str] = FIGURE_E5_VARIANTS,
                   regime: str = "fixed", rounds: int = 500, executor: Any = None, *, progress: bool = True,
                   learner: Callable[..., Any] = efr_learner, rows_per_unit: int | None = None,
                   fixed_point: str = "exact") -> TournamentResult:
    """Play every row variant against every column variant, as in the paper's experiments.

    Parameters
    ----------
    game : str or GameTree
        A labkit game string ("leduc_poker", "goofspiel(num_cards=5,points_order=ascending,
        imp_info=True)"), "openspiel:<game string>", one of the paper's nine games by name
        ("sheriff", "goofspiel4_3p_descending"; `labkit.experiments.PAPER_GAMES`), or a
        compiled tree.
    rows, columns : sequences of deviation names ("act_in", "cf", ..., "bhv"; any case)
    regime : "fixed" or "simultaneous"
        fixed: each row learns against the column's replayed self-play sequence;
        simultaneous: a fresh row learner and a fresh column learner learn against each other.
    rounds : int
        T; rounds t = 0..T-1 are recorded (t = 0 is the uniform start), T - 1 updates.
    executor : None, "serial", int or executor object
        None: a process pool with os.cpu_count() workers; "serial" or 1: this process;
        an int: that many processes; or any ``concurrent.futures``-style executor, e.g. a Dask
        cluster's ``client.get_executor()``.
    progress : bool
        tqdm progress bar over table entries.
    learner : callable (game, name) -> learner
        Builds a learner with ``current_policy()`` and ``update(opponents)``; default EFR.
        Must be picklable (a module-level function) for worker processes.
    fixed_point : {"exact", "lstsq", "paper"}
        The default learner's numerics (`labkit.efr.EFR`): "paper" replays the authors'
        floating-point computation and reproduces their tables to the printed decimal (it needs a
        C++ compiler and Eigen's headers, `labkit.efr.eigen`); "exact" (default) needs neither.
        Ignored with a custom `learner`.
    rows_per_unit : int, optional
        Fixed regime only: rows stepped together with one replay of a column's self-play
        (default: all rows, so each column's self-play is computed exactly once; the diagonal
        row reuses it). Smaller
        chunks give more parallel units at the price of recomputing the self-play per chunk.

    Returns
    -------
    TournamentResult
        ``.mean[row][col]`` (raw game units, averaged over seats and rounds),
        ``.per_round[row][col]`` ((rounds,) array), ``.table()``, ``.to_csv()``, ``.to_json()``,
        ``.heatmap()``.

    Raises
    ------
    TypeError, ValueError
        For an unknown game, regime, variant or fixed point, rounds or rows_per_unit below 1, rows
        or columns that repeat, or a bad executor; each names the argument.

    References
    ----------
    D. Morrill, R. D'Orazio, M. Lanctot, J. R. Wright, M. Bowling and A. R. Greenwald (2021),
    "Efficient deviation types and learning for hindsight rationality in extensive-form games", ICML,
    Appendix E.

    Examples
    --------
    >>> result = efr_tournament("leduc_poker", ["act_in", "cf"], ["act_in", "cf"], rounds=3,
    ...                         executor="serial", progress=False)
    >>> print(result.table())
    leduc_poker, fixed regime, mean over rounds 0..2, milli-big-blinds
    row \\ column  ACT_IN      CF     avg
    ACT_IN           0.0  -863.5  -431.7
    CF             717.9     0.0   359.0
    avg            359.0  -431.7   -36.4
    """
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}, got {regime!r}")
    if isinstance(rounds, (bool, np.bool_)) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {show(rounds)}")
    if rows_per_unit is not None and (isinstance(rows_per_unit, (bool, np.bool_))
                                      or not isinstance(rows_per_unit, (int, np.integer)) or rows_per_unit < 1):
        raise ValueError(f"rows_per_unit must be None or a positive integer, got {show(rows_per_unit)}")
    if not callable(learner):
        raise TypeError(f"learner must be a callable (game, name) -> learner, got {type(learner).__name__}")
    rows = _check_names("rows", rows, learner is efr_learner)
    columns = _check_names("columns", columns, learner is efr_learner)
    spec = game_spec(game)
    if learner is efr_learner:
        from labkit.efr import EFR  # noqa: F401  (fail here, not in a worker, if EFR is missing)
        from labkit.efr.fixed_point import FIXED_POINT_RULES
        if fixed_point not in FIXED_POINT_RULES:
            raise ValueError(f"fixed_point must be one of {FIXED_POINT_RULES}, got {fixed_point!r}")
        if fixed_point == "paper":
            from labkit.efr.eigen import require
            require()                      # build the solver once, here, before the workers start
        if fixed_point != "exact":
            learner = functools.partial(efr_learner, fixed_point=fixed_point)
    # the authors' numerics are evaluated as they play (FixedUnit.validate_profiles)
    validate = not _authors_numerics(learner)
    rounds = int(rounds)
    start = time.perf_counter()
    if regime == "fixed":
        per_round = _fixed(spec, rows, columns, rounds, executor, progress, learner, rows_per_unit, validate)
    else:
        per_round = _simultaneous(spec, rows, columns, rounds, executor, progress, learner, validate)
    metadata = {"seconds": round(time.perf_counter() - start, 2), "executor": _describe(executor),
                "labkit_version": _version()}
    name = spec if isinstance(spec, str) else spec.name
    return TournamentResult(name, regime, rounds, rows, columns, per_round, metadata)


def _fixed(spec: Any, rows: list[str], columns: list[str], rounds: int, executor: Any, progress: bool,
           learner: Any, rows_per_unit: int | None, validate: bool = True) -> dict[str, dict[str, np.ndarray]]:
    size = len(rows) if rows_per_unit is None else int(rows_per_unit)
    if size < 1:
        raise ValueError(f"rows_per_unit must be at least 1, got {rows_per_unit!r}")
    chunks = [tuple(rows[k:k + size]) for k in range(0, len(rows), size)]
    units = [FixedUnit(spec, c, chunk, rounds, learner, validate) for c in columns for chunk in chunks]
    outputs = run_units(run_fixed_unit, units, executor, progress, desc="fixed regime",
                        weights=[len(u.rows) for u in units])
    per_round: dict[str, dict[str, np.ndarray]] = {r: {} for r in rows}
    for unit, out in zip(units, outputs, strict=True):
        for r in unit.rows:
            per_round[r][unit.column] = out[r]
    return per_round


def _simultaneous(spec: Any, rows: list[str], columns: list[str], rounds: int, executor: Any, progress: bool,
                  learner: Any, validate: bool = True) -> dict[str, dict[str, np.ndarray]]:
    # one unit per unordered pair that the table needs; a pair gives both [R][C] and [C][R]
    pairs = []
    for r in rows:
        for c in columns:
            if (r, c) not in pairs and (c, r) not in pairs:
                pairs.append((r, c))
    units = [PairUnit(spec, r, c, rounds, learner, validate) for r, c in pairs]
    weights = [1 + (r != c and c in rows and r in columns) for r, c in pairs]
    outputs = run_units(run_pair_unit, units, executor, progress, desc="simultaneous regime", weights=weights)
    per_round: dict[str, dict[str, np.ndarray]] = {r: {} for r in rows}
    for (r, c), (rc, cr) in zip(pairs, outputs, strict=True):
        if r in per_round and c in columns:
            per_round[r][c] = rc
        if c in per_round and r in columns:
            per_round[c][r] = cr
    return per_round


def _describe(executor: Any) -> str:
    if executor is None:
        import os
        return f"process pool ({os.cpu_count()} workers)"
    if isinstance(executor, (str, int)):
        return str(executor)
    return type(executor).__name__


def _version() -> str:
    import labkit
    return labkit.__version__


__all__ = ["efr_tournament", "seat_values", "efr_learner", "load_game", "FixedUnit", "PairUnit",
           "run_fixed_unit", "run_pair_unit", "FIGURE_E5_VARIANTS", "TABLE_2_VARIANTS", "REGIMES",
           "resolve_executor"]
