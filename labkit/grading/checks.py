"""The checks of exercises 27.1-27.8: pure functions from a reported answer to a verdict.

Each checkable part has a `PartSpec`: the names it reads from the student's notebook, the
probe arguments at which a function-valued answer is evaluated, and a `grade` function.
``grade_part(part_id, value)`` takes the serialized answer -- ``{name: value}`` as produced
by `labkit.grading.reporter.collect` -- and returns a `PartResult` (verdict, points, hints).

These functions run in the grader's process on plain JSON data; the notebook's self-check
calls the same ones in the kernel, for feedback only. Expected values are computed here
from labkit's games and solvers (an LP, exact evaluation, a stiff ODE integration), not
typed in, except where the exercise itself states the number. Hints say where to look,
never what the answer is.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

# --------------------------------------------------------------------- results


@dataclass
class Item:
    """One graded claim inside a part."""
    label: str
    points: float
    max_points: float
    hint: str | None = None        # None when the item passes


@dataclass
class PartResult:
    """The verdict on one part: ``pass``, ``partial`` or ``fail`` from the checks; the grader
    adds ``missing``, ``error``, ``timeout``, ``output-flood`` and ``kernel-died``."""
    part: str
    verdict: str
    points: float
    max_points: float
    hints: list = field(default_factory=list)
    items: list = field(default_factory=list)

    def line(self):
        """The fixed one-line format: ``27.4(a): pass 3/3``."""
        return f"{self.part}: {self.verdict} {self.points:g}/{self.max_points:g}"

    def as_dict(self):
        return {"part": self.part, "verdict": self.verdict, "points": self.points,
                "max_points": self.max_points, "hints": list(self.hints),
                "items": [{"label": i.label, "points": i.points, "max_points": i.max_points} for i in self.items]}


@dataclass(frozen=True)
class PartSpec:
    part: str
    names: tuple
    grade: Callable
    max_points: float
    probes: dict = field(default_factory=dict)


class Wrong(Exception):
    """A reported value of the wrong kind; the message is the hint."""


# ----------------------------------------------------------- reading values


def _get(value, name):
    if not isinstance(value, dict) or name not in value:
        raise Wrong(f"`{name}` was not reported")
    v = value[name]
    if isinstance(v, dict) and "__error__" in v:
        raise Wrong(str(v["__error__"]))
    return v


def _number(v, name):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, list) and len(v) == 1:
            return _number(v[0], name)
        raise Wrong(f"`{name}` should be a number, got {_kind(v)}")
    if not math.isfinite(v):
        raise Wrong(f"`{name}` is not a finite number")
    return float(v)


def _array(v, name, shape=None):
    if isinstance(v, dict) and "__error__" in v:
        raise Wrong(str(v["__error__"]))
    try:
        a = np.array(v, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(f"`{name}` should be an array of numbers, got {_kind(v)}") from None
    if shape is not None and a.shape != tuple(shape):
        raise Wrong(f"`{name}` should have shape {tuple(shape)}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise Wrong(f"`{name}` contains a value that is not a finite number")
    return a


def _kind(v):
    return {dict: "a dict", list: "a list", str: "a string", bool: "a bool",
            type(None): "None (is a `return` missing?)"}.get(
        type(v), type(v).__name__)


ACTIONS3 = ("a", "b", "c")
RPS = ("rock", "paper", "scissors")


def _action(v, name, names):
    """An action given by its index or its name (case-insensitive)."""
    if isinstance(v, str) and v.strip().lower() in names:
        return names.index(v.strip().lower())
    if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() and 0 <= v < len(names):
        return int(v)
    raise Wrong(f"`{name}` should name an action ({', '.join(names)}) or give its index, got {v!r}")


def _pair(v, name, names=ACTIONS3):
    if not isinstance(v, list) or len(v) != 2:
        raise Wrong(f"`{name}` should be a pair (row action, column action), got {_kind(v)}")
    return _action(v[0], name, names), _action(v[1], name, names)


def _probe_results(value, name, count):
    results = _get(value, name)
    if not isinstance(results, list) or len(results) != count:
        raise Wrong(f"`{name}` could not be evaluated")
    for r in results:
        if isinstance(r, dict) and "__error__" in r:
            raise Wrong(f"`{name}` raised {r['__error__']}")
    return results


class _Grader:
    """Collects the items of one part: ``g.item(label, points, test)`` where test() returns
    None (pass) or a hint, or raises Wrong (its message is the hint)."""

    def __init__(self, value):
        self.value, self.items = value, []

    def item(self, label, points, test):
        try:
            hint = test()
        except Wrong as exc:
            hint = str(exc)
        except Exception as exc:        # a malformed value must never crash the grader
            hint = f"could not read your answer ({type(exc).__name__})"
        self.items.append(Item(label, 0.0 if hint else float(points), float(points), hint))


def _close(a, b, tol=1e-6):
    return bool(np.allclose(a, b, rtol=0, atol=tol))


# ------------------------------------------------------------- shared data


def _kl(p, q):
    p, q = np.asarray(p, float), np.asarray(q, float)
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


BIASED_RPS = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -1.0], [-2.0, 1.0, 0.0]])
RPS_EQUILIBRIUM = np.array([0.25, 0.5, 0.25])


def _probe_game(seed, shape):
    return np.round(np.random.default_rng(seed).uniform(-1, 1, size=shape), 2)


def _probe_sequence(seed, T, n):
    return np.random.default_rng(seed).dirichlet(np.ones(n), size=T)


PROBE_A = _probe_game(2701, (3, 4))
PROBE_XS, PROBE_YS = _probe_sequence(1, 40, 3), _probe_sequence(2, 40, 4)
PROBE_XBAR, PROBE_YBAR = PROBE_XS.mean(axis=0), PROBE_YS.mean(axis=0)
BRACKET_A = _probe_game(2702, (4, 3))


def _game_value(A):
    import labkit as lk
    from labkit.games import MatrixGame
    return lk.zero_sum_equilibrium(lk.games.load(MatrixGame(A)))[1]


def _regrets(A, xs, ys):
    realized = np.einsum("ti,ij,tj->", xs, A, ys)
    r1 = float(np.max(A @ ys.sum(axis=0)) - realized)
    r2 = float(np.max(-(xs.sum(axis=0) @ A)) + realized)
    return r1, r2


def _gap(A, xbar, ybar):
    return float(np.max(A @ ybar) - np.min(xbar @ A))


# ------------------------------------------------------------------ 27.1


def _grade_27_1_a(value):
    g = _Grader(value)

    def learner():
        (run,) = _probe_results(value, "learn", 1)
        if not isinstance(run, list) or len(run) != 2:
            raise Wrong("`learn(A, T)` should return a pair (xs, ys)")
        xs, ys = _array(run[0], "xs", (200, 3)), _array(run[1], "ys", (200, 4))
        if np.any(xs < -1e-9) or np.any(ys < -1e-9) or not _close(xs.sum(axis=1), 1, 1e-6) \
                or not _close(ys.sum(axis=1), 1, 1e-6):
            return "every row of xs and ys must be a mixed strategy (nonnegative, summing to 1)"
        r1, r2 = _regrets(PROBE_A, xs, ys)
        if (r1 + r2) / 200 > 0.1:
            return ("your learner's average regret after 200 rounds is large; is it a no-regret "
                    "algorithm (e.g. Hedge with a step size of order 1/sqrt(T))?")
        return None

    def regrets():
        (r,) = _probe_results(value, "regrets", 1)
        r = _array(r, "regrets(A, xs, ys)", (2,))
        if not _close(r, _regrets(PROBE_A, PROBE_XS, PROBE_YS), 1e-6):
            return ("`regrets` disagrees with the definition on a test sequence; the best fixed "
                    "strategy in hindsight is compared with the strategies actually played")
        return None

    def gap():
        (d,) = _probe_results(value, "duality_gap", 1)
        if not _close(_number(d, "duality_gap"), _gap(PROBE_A, PROBE_XBAR, PROBE_YBAR), 1e-6):
            return "`duality_gap` is not max_x x^T A ybar - min_y xbar^T A y on a test pair"
        return None

    g.item("no-regret learner", 2, learner)
    g.item("regrets", 1, regrets)
    g.item("duality gap", 1, gap)
    return g.items


def _grade_27_1_b(value):
    g = _Grader(value)
    v = _game_value(BRACKET_A)

    def bracket():
        (b,) = _probe_results(value, "value_bracket", 1)
        lower, upper = _array(b, "value_bracket(A, T)", (2,))
        if not lower - 1e-7 <= v <= upper + 1e-7:
            return "the game's value must lie between your lower and upper bounds"
        return None

    def tight():
        (b,) = _probe_results(value, "value_bracket", 1)
        lower, upper = _array(b, "value_bracket(A, T)", (2,))
        if upper - lower > 0.05:
            return "after 2000 rounds the bracket should be narrower than 0.05"
        return None

    g.item("bracket holds the value", 1, bracket)
    g.item("bracket is narrow", 1, tight)
    return g.items


# ------------------------------------------------------------------ 27.2


def _grade_27_2_a(value):
    g = _Grader(value)
    g.item("value", 1, lambda: None if abs(_number(_get(value, "value"), "value")) < 1e-6 else
           "compare the game with the one where the players swap roles: A^T = -A")
    return g.items


def _grade_27_2_b(value):
    g = _Grader(value)

    def equilibrium():
        x = _array(_get(value, "equilibrium"), "equilibrium", (3,))
        if not _close(x, RPS_EQUILIBRIUM, 1e-6):
            return ("at an interior equilibrium the opponent must be indifferent between its "
                    "three actions: solve the linear system that says so")
        return None

    def indifference():
        u = _array(_get(value, "payoffs_against_equilibrium"), "payoffs_against_equilibrium", (3,))
        if not _close(u, BIASED_RPS @ RPS_EQUILIBRIUM, 1e-6):
            return "compute A @ y for the equilibrium y: the payoff of each pure strategy against it"
        return None

    g.item("equilibrium", 1, equilibrium)
    g.item("indifference", 1, indifference)
    return g.items


def _grade_27_2_c(value):
    g = _Grader(value)
    average = np.full(3, 1 / 3)
    payoffs = BIASED_RPS @ average

    def cycle():
        a = _array(_get(value, "cycle_average"), "cycle_average", (3,))
        return None if _close(a, average, 1e-6) else "equal time on each pure strategy: what mixed strategy is that?"

    def response():
        a = _action(_get(value, "best_response_to_average"), "best_response_to_average", RPS)
        return None if a == int(np.argmax(payoffs)) else "compare A @ (cycle average) entry by entry"

    def gain():
        v = _number(_get(value, "gain"), "gain")
        return None if abs(v - payoffs.max()) < 1e-6 else \
            "the gain is the best response's payoff minus the average's payoff against itself (0)"

    def nash_conv():
        v = _number(_get(value, "nash_conv_of_average"), "nash_conv_of_average")
        return None if abs(v - 2 * payoffs.max()) < 1e-6 else "NashConv adds up both players' gains"

    g.item("cycle average", 1, cycle)
    g.item("best response", 1, response)
    g.item("gain", 1, gain)
    g.item("NashConv", 1, nash_conv)
    return g.items


# ------------------------------------------------------------------ 27.3

X0, Y0 = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
HEDGE_STEP, HEDGE_ROUNDS = 0.1, 200
ALPHA = 0.2


def _replicator(z, A):
    m = A.shape[0]
    x, y = z[:m], z[m:]
    u, w = A @ y, -A.T @ x
    return np.concatenate([x * (u - x @ u), y * (w - y @ w)])


def _simplex_points(seed, count):
    rng = np.random.default_rng(seed)
    return [np.concatenate([rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))]) for _ in range(count)]


REPLICATOR_PROBES = [(0.0, z, BIASED_RPS) for z in _simplex_points(2703, 3)]


def _hedge_kl():
    x, y = X0.copy(), Y0.copy()
    out = [_kl(RPS_EQUILIBRIUM, x) + _kl(RPS_EQUILIBRIUM, y)]
    for _ in range(HEDGE_ROUNDS):
        x, y = x * np.exp(HEDGE_STEP * BIASED_RPS @ y), y * np.exp(-HEDGE_STEP * BIASED_RPS.T @ x)
        x, y = x / x.sum(), y / y.sum()
        out.append(_kl(RPS_EQUILIBRIUM, x) + _kl(RPS_EQUILIBRIUM, y))
    return np.array(out)


@functools.lru_cache(maxsize=1)
def regularized_equilibrium(alpha=ALPHA):
    """(x_hat, y_hat) of the biased RPS with entropy regularization toward uniform magnets,
    found as the rest point of the regularized replicator dynamics in logit coordinates."""
    from scipy.integrate import solve_ivp
    A, m = BIASED_RPS, 3

    def rhs(_, s):
        x, y = np.exp(s[:m] - s[:m].max()), np.exp(s[m:] - s[m:].max())
        x, y = x / x.sum(), y / y.sum()
        return np.concatenate([A @ y - alpha * np.log(x * m), -A.T @ x - alpha * np.log(y * m)])

    sol = solve_ivp(rhs, (0, 400), np.zeros(2 * m), rtol=1e-11, atol=1e-12, method="LSODA")
    s = sol.y[:, -1]
    x, y = np.exp(s[:m] - s[:m].max()), np.exp(s[m:] - s[m:].max())
    return x / x.sum(), y / y.sum()


def _grade_27_3_a(value):
    g = _Grader(value)

    def rhs():
        results = _probe_results(value, "replicator", len(REPLICATOR_PROBES))
        for r, (_, z, A) in zip(results, REPLICATOR_PROBES):
            if not _close(_array(r, "replicator(t, z, A)", (6,)), _replicator(z, A), 1e-8):
                return ("`replicator(t, z, A)` differs from the dynamics at a test point; z stacks "
                        "x then y, and player 2's payoff vector is -A^T x")
        return None

    def constant():
        d = _array(_get(value, "kl_along_trajectory"), "kl_along_trajectory")
        if d.ndim != 1 or len(d) < 20:
            return "report D at 20 or more times along the trajectory"
        if d.min() < 1e-3:
            return "start the trajectory away from the equilibrium"
        if (d.max() - d.min()) / d.mean() > 1e-5:
            return ("D varies along your trajectory: tighten the integrator's tolerances "
                    "(rtol, atol) or check the dynamics")
        return None

    g.item("replicator dynamics", 1, rhs)
    g.item("D constant along a trajectory", 1, constant)
    return g.items


def _grade_27_3_b(value):
    g = _Grader(value)

    def hedge():
        d = _array(_get(value, "hedge_kl"), "hedge_kl", (HEDGE_ROUNDS + 1,))
        if not np.allclose(d, _hedge_kl(), rtol=1e-6, atol=1e-9):
            return ("your D after the Hedge steps differs from the expected one: both players update "
                    "simultaneously from the previous round's strategies, with step 0.1")
        return None

    g.item("D under discrete Hedge", 1, hedge)
    return g.items


def _grade_27_3_c(value):
    g = _Grader(value)
    x_hat, y_hat = regularized_equilibrium()

    def equilibrium():
        x = _array(_get(value, "x_hat"), "x_hat", (3,))
        y = _array(_get(value, "y_hat"), "y_hat", (3,))
        if not (_close(x, x_hat, 1e-5) and _close(y, y_hat, 1e-5)):
            return ("at the regularized equilibrium each player's regularized payoff vector is constant "
                    "over its actions: x_hat is proportional to rho * exp(A y_hat / alpha)")
        return None

    def decreasing():
        d = _array(_get(value, "kl_regularized"), "kl_regularized")
        if d.ndim != 1 or len(d) < 20:
            return "report the divergence at 20 or more times along the trajectory"
        if np.any(np.diff(d) > 1e-9):
            return "the divergence to (x_hat, y_hat) must never increase along the regularized trajectory"
        if not d[-1] < 0.1 * d[0]:
            return "integrate longer: the divergence should fall below a tenth of its start"
        return None

    g.item("regularized equilibrium", 1, equilibrium)
    g.item("divergence decreases", 1, decreasing)
    return g.items


# ------------------------------------------------------------------ 27.4

CALL_BLUFF_GRID = [(c, b) for c in (0.0, 1 / 3, 2 / 3, 1.0) for b in (0.0, 0.5, 1.0)]
QUEEN_CALL_GRID = [(q,) for q in (0.0, 0.25, 0.5, 1.0)]


def _ev_check_queen(call, bluff):
    """Player 1 holds Q, checks; player 2 bets K, bluffs J with prob `bluff`; player 1 calls a bet
    with prob `call`. Each of J, K is player 2's card with probability 1/2."""
    against_king = call * -2 + (1 - call) * -1
    against_jack = bluff * (call * 2 + (1 - call) * -1) + (1 - bluff) * 1
    return 0.5 * against_king + 0.5 * against_jack


def _ev_bet_jack(call_queen):
    """Player 1 bets J; player 2 calls with K, and with Q with probability `call_queen`."""
    return 0.5 * -2 + 0.5 * (call_queen * -2 + (1 - call_queen) * 1)


def _grade_27_4_a(value):
    g = _Grader(value)
    g.item("betting the Q", 1, lambda: None if abs(_number(_get(value, "ev_bet_queen"), "ev_bet_queen") + 0.5) < 1e-9
           else "list player 2's two possible cards and what each does against a bet")

    def check_fn():
        results = _probe_results(value, "ev_check_queen", len(CALL_BLUFF_GRID))
        for r, (c, b) in zip(results, CALL_BLUFF_GRID):
            if abs(_number(r, "ev_check_queen(call, bluff)") - _ev_check_queen(c, b)) > 1e-9:
                return ("`ev_check_queen(call, bluff)` is wrong for some (call, bluff): after a check, "
                        "player 2 bets the K and bluffs the J with probability bluff")
        return None

    def call():
        c = _number(_get(value, "call_with_queen"), "call_with_queen")
        worst = min(_ev_check_queen(c, b) for b in np.linspace(0, 1, 101))
        if not (0 <= c <= 1) or worst < -1 / 3 - 1e-7:
            return "choose the calling probability that makes player 2 indifferent about bluffing"
        return None

    g.item("checking, as a function", 1, check_fn)
    g.item("calling probability", 1, call)
    return g.items


def _grade_27_4_b(value):
    g = _Grader(value)

    def bet_jack():
        results = _probe_results(value, "ev_bet_jack", len(QUEEN_CALL_GRID))
        for r, (q,) in zip(results, QUEEN_CALL_GRID):
            if abs(_number(r, "ev_bet_jack(q)") - _ev_bet_jack(q)) > 1e-9:
                return "`ev_bet_jack(q)` is wrong for some q: player 2 always calls with the K"
        return None

    def indifference():
        q = _number(_get(value, "call_queen_p2"), "call_queen_p2")
        return None if abs(_ev_bet_jack(q) - (-1.0)) < 1e-7 else \
            "player 1 bets the J only if betting does as well as the -1 it gets after checking"

    g.item("betting the J, as a function", 1, bet_jack)
    g.item("player 2's calling probability", 1, indifference)
    return g.items


# ------------------------------------------------------------------ 27.5

PLAYER1_KEYS = ("J|", "Q|", "K|", "J|pb", "Q|pb", "K|pb")
# two pure strategies of player 1 in Kuhn poker: always bet; always check, then always call
ALWAYS_BET = {k: [0.0, 1.0] if k.endswith("|") else [1.0, 0.0] for k in PLAYER1_KEYS}
CHECK_CALL = {k: [1.0, 0.0] if k.endswith("|") else [0.0, 1.0] for k in PLAYER1_KEYS}


def _kuhn_policy(table, name):
    import labkit as lk
    game = lk.games.load("kuhn_poker")
    if not isinstance(table, dict):
        raise Wrong(f"`{name}` should be a dict {{infoset key: [p_pass, p_bet]}}, got {_kind(table)}")
    unknown = sorted(set(table) - set(game.infoset_keys))
    if unknown:
        raise Wrong(f"`{name}` has keys that are not Kuhn infosets: {unknown[:3]} (keys look like 'Q|pb')")
    rows = {}
    for key, row in table.items():
        if isinstance(row, dict):          # {"pass": p, "bet": q}, as TabularPolicy.to_dict() gives
            row = [row.get("pass", 0.0), row.get("bet", 0.0)]
        row = _array(row, f"{name}[{key!r}]", (2,))
        if np.any(row < -1e-9) or abs(row.sum() - 1) > 1e-6:
            raise Wrong(f"`{name}[{key!r}]` is not a probability distribution")
        rows[key] = list(np.clip(row, 0, None) / np.clip(row, 0, None).sum())
    return lk.TabularPolicy.from_dict(game, rows)


def _nash_conv(table, name):
    import labkit as lk
    policy = _kuhn_policy(table, name)
    if len(table) != policy.game.num_infosets:
        raise Wrong(f"`{name}` should give a distribution at all {policy.game.num_infosets} infosets")
    return lk.nash_conv(policy.game, policy)


def _mixture_answers():
    """Player 1's own-reach-weighted average of ALWAYS_BET and CHECK_CALL, and the error in
    player 1's value (against a uniform player 2) of the plain, unweighted average."""
    import labkit as lk
    a, b = _kuhn_policy(ALWAYS_BET, "always bet"), _kuhn_policy(CHECK_CALL, "check-call")
    game = a.game
    weighted = lk.TabularPolicy.mixture([a, b])
    plain = lk.TabularPolicy(game, (a.probs + b.probs) / 2)
    true_value = (lk.expected_payoffs(game, a)[0] + lk.expected_payoffs(game, b)[0]) / 2
    return weighted, float(lk.expected_payoffs(game, plain)[0] - true_value)


def _grade_27_5_a(value):
    g = _Grader(value)

    def correct():
        nc = _nash_conv(_get(value, "average_policy_cfr"), "average_policy_cfr")
        return None if nc < 0.03 else ("the NashConv of your CFR average after 1000 iterations is too high; "
                                       "check the regret update and the average's weights")

    def swapped():
        table = _get(value, "average_policy_swapped")
        nc = _nash_conv(table, "average_policy_swapped")
        if _close(_kuhn_policy(table, "average_policy_swapped").probs, 0.5, 1e-3):
            return "that is the uniform policy, not the output of CFR with swapped weights"
        return None if nc > 0.2 else ("with the weightings swapped, the average should stay far from "
                                      "equilibrium; did you swap both weights?")

    g.item("CFR converges", 1, correct)
    g.item("swapped weights do not", 1, swapped)
    return g.items


def _grade_27_5_b(value):
    g = _Grader(value)
    weighted, error = _mixture_answers()

    def average():
        policy = _kuhn_policy(_get(value, "mixture_policy"), "mixture_policy")
        keys = [k for k in PLAYER1_KEYS if k not in _get(value, "mixture_policy")]
        if keys:
            return f"`mixture_policy` should cover all of player 1's infosets (missing {keys[0]!r})"
        rows = [policy.game.infoset_index(k) for k in PLAYER1_KEYS]
        return None if _close(policy.probs[rows], weighted.probs[rows], 1e-9) else \
            "weight each policy's action probabilities at an infoset by how often it reaches that infoset"

    def plain_error():
        e = _number(_get(value, "plain_average_error"), "plain_average_error")
        return None if abs(e - error) < 1e-9 else \
            "value of the plain average minus the average of the two policies' values"

    g.item("reach-weighted average", 1, average)
    g.item("error of the plain average", 1, plain_error)
    return g.items


# ------------------------------------------------------------------ 27.6

LEARNER_SEEDS = [(s,) for s in range(10)]


def _climbing():
    from labkit.games import climbing_game
    return climbing_game().A


def pure_equilibria(A, B):
    """Joint actions (a, b) where neither player gains by deviating alone."""
    return {(a, b) for a in range(A.shape[0]) for b in range(A.shape[1])
            if A[a, b] >= A[:, b].max() and B[a, b] >= B[a, :].max()}


def _grade_27_6_a(value):
    g = _Grader(value)
    A = _climbing()

    def equilibria():
        pairs = _get(value, "pure_equilibria")
        if not isinstance(pairs, list):
            raise Wrong("`pure_equilibria` should be a list of pairs such as ('a', 'c')")
        got = {_pair(p, "pure_equilibria") for p in pairs}
        want = pure_equilibria(A, A)
        if got == want:
            return None
        if got - want:
            return "one of your joint actions has a player who gains by deviating alone"
        return "you are missing an equilibrium: check every joint action, including the unattractive ones"

    g.item("pure equilibria", 1, equilibria)
    return g.items


def _grade_27_6_b(value):
    g = _Grader(value)
    A = _climbing()
    row_values, col_values = A.mean(axis=1), A.mean(axis=0)

    def values():
        v = _array(_get(value, "values_uniform_partner"), "values_uniform_partner", (3,))
        return None if _close(v, row_values, 1e-6) else "average each row of the payoffs over the partner's actions"

    def favoured():
        r = _action(_get(value, "favoured_row"), "favoured_row", ACTIONS3)
        c = _action(_get(value, "favoured_column"), "favoured_column", ACTIONS3)
        return None if (r, c) == (int(np.argmax(row_values)), int(np.argmax(col_values))) else \
            "each agent favours the action with the highest value against a uniform partner"

    g.item("values against a uniform partner", 1, values)
    g.item("favoured actions", 1, favoured)
    return g.items


def _grade_27_6_c(value):
    g = _Grader(value)
    A = _climbing()
    best = tuple(int(i) for i in np.unravel_index(np.argmax(A), A.shape))

    def simulation():
        results = _probe_results(value, "independent_learners", len(LEARNER_SEEDS))
        pairs = [_pair(r, "independent_learners(seed)") for r in results]
        wrong = sum(p != best for p in pairs)
        if wrong < 6:
            return ("most of your runs reach the optimum; the pathology shows with value estimates "
                    "averaged over an exploring partner")
        return None

    def name():
        text = str(_get(value, "pathology")).lower().replace("-", "").replace(" ", "")
        return None if "overgeneraliz" in text or "overgeneralis" in text else \
            "the pathology has a name in the cooperative MARL literature (two words)"

    g.item("independent learners miss the optimum", 1, simulation)
    g.item("name of the pathology", 1, name)
    return g.items


# ------------------------------------------------------------------ 27.7


def vdn_fit(Q):
    """Least-squares Q1(a) + Q2(b) over all joint actions, equal weights: row mean + column
    mean - grand mean (the two-way additive model)."""
    Q = np.asarray(Q, float)
    return Q.mean(axis=1, keepdims=True) + Q.mean(axis=0, keepdims=True) - Q.mean()


def monotonic_representable(Q):
    """True when Q(a, b) = f(Q1(a), Q2(b)) for some f non-decreasing in each argument: every two
    rows are ordered the same way in every column, and every two columns in every row."""
    Q = np.asarray(Q, float)

    def consistent(M):
        d = M[:, None, :] - M[None, :, :]          # d[i, j, k] = M[i, k] - M[j, k]
        return not np.any((d > 0).any(axis=2) & (d < 0).any(axis=2))
    return bool(consistent(Q) and consistent(Q.T))


def _monotone_probes():
    rng = np.random.default_rng(2707)
    additive = np.add.outer(rng.normal(size=3), rng.normal(size=4))
    return [np.array([[11.0, -30.0, 0.0], [-30.0, 7.0, 6.0], [0.0, 0.0, 5.0]]),
            additive, np.exp(additive), np.maximum(additive, 0.5),
            np.array([[1.0, 2.0], [2.0, 1.0]]),
            np.array([[0.0, 1.0, 1.0], [0.0, 2.0, 1.0]]),
            np.array([[3.0, 1.0], [2.0, 0.0], [4.0, 5.0]]),
            rng.normal(size=(3, 3))]


MONOTONE_PROBES = [(Q,) for Q in _monotone_probes()]


def _grade_27_7_a(value):
    g = _Grader(value)
    A = _climbing()
    fit = vdn_fit(A)

    def q_tot():
        Q = _array(_get(value, "q_tot"), "q_tot", (3, 3))
        return None if _close(Q, fit, 1e-6) else \
            "minimize the sum of squared errors over all nine joint actions; the fit is unique up to shifting Q1 and Q2"

    def greedy():
        pair = _pair(_get(value, "greedy_joint_action"), "greedy_joint_action")
        return None if pair == tuple(int(i) for i in np.unravel_index(np.argmax(fit), fit.shape)) else \
            "the greedy joint action maximizes the fitted Q_tot, not the true payoffs"

    g.item("least-squares VDN fit", 1, q_tot)
    g.item("greedy joint action of the fit", 1, greedy)
    return g.items


def _grade_27_7_b(value):
    g = _Grader(value)

    def climbing():
        (r,) = _probe_results(value, "monotonic_representable", len(MONOTONE_PROBES))[:1]
        return None if r is False else "look for two rows whose order flips from one column to another"

    def all_probes():
        results = _probe_results(value, "monotonic_representable", len(MONOTONE_PROBES))
        want = [monotonic_representable(Q) for (Q,) in MONOTONE_PROBES]
        if any(not isinstance(r, bool) for r in results):
            return "`monotonic_representable(Q)` should return True or False"
        return None if list(results) == want else \
            "your test disagrees on some test matrices; think of ties and of columns as well as rows"

    g.item("the climbing game", 1, climbing)
    g.item("other matrices", 1, all_probes)
    return g.items


# ------------------------------------------------------------------ 27.8


def _logit(p):
    return math.log(p / (1 - p))


def bradley_terry_consistent(P):
    """For three responses: the logits around the cycle must add up to zero."""
    P = np.asarray(P, float)
    return abs(_logit(P[0, 1]) + _logit(P[1, 2]) + _logit(P[2, 0])) < 1e-9


def _preference_probes():
    s = np.array([0.3, -1.2, 0.5])
    bt = 1 / (1 + np.exp(-(s[:, None] - s[None, :])))
    cyc = np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.6], [0.7, 0.4, 0.5]])
    flat = np.full((3, 3), 0.5)
    skew = np.array([[0.5, 0.9, 0.6], [0.1, 0.5, 0.2], [0.4, 0.8, 0.5]])
    return [cyc, bt, flat, skew, 1 - cyc]


PREFERENCE_PROBES = [(P,) for P in _preference_probes()]


@functools.lru_cache(maxsize=1)
def preference_equilibrium():
    import labkit as lk
    policy, _ = lk.zero_sum_equilibrium(lk.games.load("preference_game"))
    return policy.probs[0].copy()


def _grade_27_8_a(value):
    g = _Grader(value)
    P = PREFERENCE_PROBES[0][0]
    cycle = _logit(P[0, 1]) + _logit(P[1, 2]) + _logit(P[2, 0])

    def cycle_sum():
        v = _number(_get(value, "logit_cycle_sum"), "logit_cycle_sum")
        return None if abs(v - cycle) < 1e-6 else \
            "add s(A)-s(B), s(B)-s(C) and s(C)-s(A) as the preferences would require them"

    def test():
        results = _probe_results(value, "bradley_terry_consistent", len(PREFERENCE_PROBES))
        want = [bradley_terry_consistent(Q) for (Q,) in PREFERENCE_PROBES]
        return None if list(results) == want else "your test disagrees with the cycle condition on some matrices"

    g.item("logits around the cycle", 1, cycle_sum)
    g.item("Bradley-Terry test", 1, test)
    return g.items


def _grade_27_8_b(value):
    g = _Grader(value)
    p = preference_equilibrium()
    from labkit.games import preference_game
    M = preference_game().A

    def equilibrium():
        x = _array(_get(value, "nash_equilibrium"), "nash_equilibrium", (3,))
        return None if _close(x, p, 1e-6) else \
            "at an interior equilibrium every response must do equally well against it"

    def worst_case():
        v = _number(_get(value, "worst_case_payoff"), "worst_case_payoff")
        return None if abs(v - float((p @ M).min())) < 1e-6 else \
            "the worst case is the minimum over the opponent's responses of your expected payoff"

    g.item("Nash equilibrium", 1, equilibrium)
    g.item("worst-case payoff", 1, worst_case)
    return g.items


# ------------------------------------------------------------------ registry


def _spec(part, names, grade, max_points, probes=None):
    return PartSpec(part, tuple(names), grade, float(max_points), dict(probes or {}))


SPECS = {s.part: s for s in [
    _spec("27.1(a)", ["learn", "regrets", "duality_gap"], _grade_27_1_a, 4,
          {"learn": [(PROBE_A, 200)], "regrets": [(PROBE_A, PROBE_XS, PROBE_YS)],
           "duality_gap": [(PROBE_A, PROBE_XBAR, PROBE_YBAR)]}),
    _spec("27.1(b)", ["value_bracket"], _grade_27_1_b, 2, {"value_bracket": [(BRACKET_A, 2000)]}),
    _spec("27.2(a)", ["value"], _grade_27_2_a, 1),
    _spec("27.2(b)", ["equilibrium", "payoffs_against_equilibrium"], _grade_27_2_b, 2),
    _spec("27.2(c)", ["cycle_average", "best_response_to_average", "gain", "nash_conv_of_average"],
          _grade_27_2_c, 4),
    _spec("27.3(a)", ["replicator", "kl_along_trajectory"], _grade_27_3_a, 2,
          {"replicator": REPLICATOR_PROBES}),
    _spec("27.3(b)", ["hedge_kl"], _grade_27_3_b, 1),
    _spec("27.3(c)", ["x_hat", "y_hat", "kl_regularized"], _grade_27_3_c, 2),
    _spec("27.4(a)", ["ev_bet_queen", "ev_check_queen", "call_with_queen"], _grade_27_4_a, 3,
          {"ev_check_queen": CALL_BLUFF_GRID}),
    _spec("27.4(b)", ["ev_bet_jack", "call_queen_p2"], _grade_27_4_b, 2, {"ev_bet_jack": QUEEN_CALL_GRID}),
    _spec("27.5(a)", ["average_policy_cfr", "average_policy_swapped"], _grade_27_5_a, 2),
    _spec("27.5(b)", ["mixture_policy", "plain_average_error"], _grade_27_5_b, 2),
    _spec("27.6(a)", ["pure_equilibria"], _grade_27_6_a, 1),
    _spec("27.6(b)", ["values_uniform_partner", "favoured_row", "favoured_column"], _grade_27_6_b, 2),
    _spec("27.6(c)", ["independent_learners", "pathology"], _grade_27_6_c, 2,
          {"independent_learners": LEARNER_SEEDS}),
    _spec("27.7(a)", ["q_tot", "greedy_joint_action"], _grade_27_7_a, 2),
    _spec("27.7(b)", ["monotonic_representable"], _grade_27_7_b, 2,
          {"monotonic_representable": MONOTONE_PROBES}),
    _spec("27.8(a)", ["logit_cycle_sum", "bradley_terry_consistent"], _grade_27_8_a, 2,
          {"bradley_terry_consistent": PREFERENCE_PROBES}),
    _spec("27.8(b)", ["nash_equilibrium", "worst_case_payoff"], _grade_27_8_b, 2),
]}


def spec_for(part_id):
    """The `PartSpec` of a part such as ``"27.4(a)"`` (ValueError listing the parts if unknown)."""
    try:
        return SPECS[part_id]
    except (KeyError, TypeError):
        raise ValueError(f"unknown part {part_id!r}; the checkable parts are {', '.join(SPECS)}") from None


def grade_part(part_id, value) -> PartResult:
    """The verdict on one part from its serialized answer ``{name: value}``.

    Never raises on a malformed value: every item that cannot be read fails with a hint.
    """
    spec = spec_for(part_id)
    try:
        items = spec.grade(value)
    except Exception as exc:      # a value so malformed that the grade function itself failed
        items = [Item("answer", 0.0, spec.max_points, f"could not read your answer ({type(exc).__name__})")]
    points = sum(i.points for i in items)
    max_points = sum(i.max_points for i in items)
    if max_points != spec.max_points:        # keeps the table's totals honest
        raise AssertionError(f"{part_id}: items add up to {max_points}, spec says {spec.max_points}")
    verdict = "pass" if points == max_points else ("partial" if points > 0 else "fail")
    hints = [f"{i.label}: {i.hint}" for i in items if i.hint]
    return PartResult(part_id, verdict, points, max_points, hints, items)
