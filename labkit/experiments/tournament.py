"""Every learner against every learner: the experiments of Morrill et al., "Efficient Deviation
Types and Learning for Hindsight Rationality in Extensive-Form Games" (ICML 2021), Figure E.5
and Table 2.

A learner is an EFR instance of one deviation type (``labkit.efr.EFR(game, deviations=name)``);
it plays its current strategy, and ``update(opponents)`` moves every seat's strategy using the
regrets of that seat against ``opponents`` in all other seats. The value of a learner x against
a profile y is averaged over seats: (1/n) sum_p u_p(x_p, y_{-p}).

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
from dataclasses import dataclass

import numpy as np

from labkit import games
from labkit.evaluate import _reach, edge_probabilities, policy_array
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
def efr_learner(game, name, fixed_point="exact"):
    """The default learner: ``labkit.efr.EFR(game, deviations=name)`` (names are case-insensitive).

    ``functools.partial(efr_learner, fixed_point="lstsq")`` plays with the authors' floating-point
    least-squares fixed point instead of labkit's exact one (see `labkit.efr.fixed_point`).
    """
    from labkit.efr import EFR
    # the runner copies the profiles it needs; the learner need not keep its history
    return EFR(game, deviations=name.lower() if isinstance(name, str) else name, record_profiles=False,
               fixed_point=fixed_point)


@functools.lru_cache(maxsize=8)
def _load_openspiel(spec):
    return games.from_openspiel(spec)


def load_game(spec):
    """A GameTree from a spec: a GameTree itself, a labkit game string, or "openspiel:<game string>"
    for any OpenSpiel game. Strings are compiled once per process."""
    if isinstance(spec, GameTree):
        return spec
    if isinstance(spec, str) and spec.startswith("openspiel:"):
        return _load_openspiel(spec[len("openspiel:"):])
    return games.load(spec)


def game_spec(game):
    """What a work unit carries: the spec string when there is one, else the tree itself."""
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


def _profile(learner):
    """A copy of the learner's current joint profile as a (num_infosets, num_actions) array;
    a copy, because the learner may update its arrays in place afterwards."""
    policy = learner.current_policy()
    return np.array(getattr(policy, "probs", policy), dtype=float, copy=True)


def seat_values(game, own, others):
    """u_p(own_p, others_{-p}) for every seat p: the learner takes seat p, `others` fills the rest.

    Parameters
    ----------
    own, others : TabularPolicy or (num_infosets, num_actions) arrays (joint profiles)

    Returns
    -------
    (n,) array; its mean is the seat-averaged value the tables report.
    """
    return _seat_values(game, terminal_reach(game, own), terminal_reach(game, others))


def terminal_reach(game, policy):
    """(n + 1, Z) reach contributions of every player (and chance, last row) at the terminals."""
    return _terminal_reach(game, policy_array(game, policy))


def _terminal_reach(game, probs):
    """`terminal_reach` of a probability array taken as it is (the runner's unvalidated path,
    see `FixedUnit`)."""
    return _reach(game, edge_probabilities(game, probs))[:, game.terminals]


def _reach_of(unit, game, probs, scratch=None):
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


def _reach_scratch(unit, game):
    """A work array for `_reach_of`, one per unit (units may run in threads), or None where the
    compiled pass is not loaded: only for the authors' numerics, and only without building the
    library here ("lstsq" needs no compiler)."""
    from labkit.efr import eigen
    if unit.validate_profiles or eigen._library is None:
        return None
    return np.empty(game.num_histories * (game.num_players + 1))


def _learn(unit, learner, opponents):
    """learner.update(opponents), or, for the authors' numerics, EFR's unvalidated update."""
    if unit.validate_profiles:
        learner.update(opponents)
    else:
        learner._update_unchecked(opponents)


def _seat_values(game, reach_own, reach_others):
    """sum_z pi_p^own(z) pi_{-p}^others(z) u_p(z) for every seat p, from terminal reaches."""
    payoffs = _terminal_payoffs(game)
    values = np.empty(game.num_players)
    for p in range(game.num_players):
        rows = reach_others.copy()
        rows[p] = reach_own[p]    # only seat p's own reach comes from the learner
        # an elementwise sum, not a BLAS dot: BLAS threads stall on a busy machine
        values[p] = (rows.prod(axis=0) * payoffs[p]).sum()
    return values


def _terminal_payoffs(game):
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
    """
    game: object      # spec string (or a GameTree when the game has none)
    column: str
    rows: tuple
    rounds: int
    learner: object = efr_learner
    validate_profiles: bool = True


@dataclass(frozen=True)
class PairUnit:
    """Two fresh learners `row` and `column` learning against each other (simultaneous regime)."""
    game: object
    row: str
    column: str
    rounds: int
    learner: object = efr_learner
    validate_profiles: bool = True      # as in `FixedUnit`


def run_fixed_unit(unit):
    """{row: (rounds,) seat-averaged values of row against the column's self-play}."""
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
    return dict(zip(unit.rows, values))


def run_pair_unit(unit):
    """((rounds,) values of row against column, (rounds,) values of column against row)."""
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
def _authors_numerics(learner):
    """Whether `learner` is this module's EFR learner with the authors' clipped least squares
    (fixed_point "paper" or "lstsq"), whose profiles are played without renormalizing."""
    if isinstance(learner, functools.partial) and learner.func is efr_learner and not learner.args:
        return learner.keywords.get("fixed_point", "exact") in ("lstsq", "paper")
    return False


def _check_names(kind, names):
    names = list(names)
    if not names:
        raise ValueError(f"{kind} must name at least one variant")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{kind} lists {dup} more than once")
    return names


def efr_tournament(game, rows=FIGURE_E5_VARIANTS, columns=FIGURE_E5_VARIANTS, regime="fixed", rounds=500,
                   executor=None, *, progress=True, learner=efr_learner, rows_per_unit=None,
                   fixed_point="exact"):
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
    """
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}, got {regime!r}")
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    rows, columns = _check_names("rows", rows), _check_names("columns", columns)
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


def _fixed(spec, rows, columns, rounds, executor, progress, learner, rows_per_unit, validate=True):
    size = len(rows) if rows_per_unit is None else int(rows_per_unit)
    if size < 1:
        raise ValueError(f"rows_per_unit must be at least 1, got {rows_per_unit!r}")
    chunks = [tuple(rows[k:k + size]) for k in range(0, len(rows), size)]
    units = [FixedUnit(spec, c, chunk, rounds, learner, validate) for c in columns for chunk in chunks]
    outputs = run_units(run_fixed_unit, units, executor, progress, desc="fixed regime",
                        weights=[len(u.rows) for u in units])
    per_round = {r: {} for r in rows}
    for unit, out in zip(units, outputs):
        for r in unit.rows:
            per_round[r][unit.column] = out[r]
    return per_round


def _simultaneous(spec, rows, columns, rounds, executor, progress, learner, validate=True):
    # one unit per unordered pair that the table needs; a pair gives both [R][C] and [C][R]
    pairs = []
    for r in rows:
        for c in columns:
            if (r, c) not in pairs and (c, r) not in pairs:
                pairs.append((r, c))
    units = [PairUnit(spec, r, c, rounds, learner, validate) for r, c in pairs]
    weights = [1 + (r != c and c in rows and r in columns) for r, c in pairs]
    outputs = run_units(run_pair_unit, units, executor, progress, desc="simultaneous regime", weights=weights)
    per_round = {r: {} for r in rows}
    for (r, c), (rc, cr) in zip(pairs, outputs):
        if r in per_round and c in columns:
            per_round[r][c] = rc
        if c in per_round and r in columns:
            per_round[c][r] = cr
    return per_round


def _describe(executor):
    if executor is None:
        import os
        return f"process pool ({os.cpu_count()} workers)"
    if isinstance(executor, (str, int)):
        return str(executor)
    return type(executor).__name__


def _version():
    import labkit
    return labkit.__version__


__all__ = ["efr_tournament", "seat_values", "efr_learner", "load_game", "FixedUnit", "PairUnit",
           "run_fixed_unit", "run_pair_unit", "FIGURE_E5_VARIANTS", "TABLE_2_VARIANTS", "REGIMES",
           "resolve_executor"]
