"""Exercise 5.1: the exact meta-game of a population, and double oracle to NashConv 0 on Kuhn poker.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex5_1.py).

The hidden checks. Chapter 5 (Self-play and populations) defines PSRO and double oracle. The
references are labkit's exact evaluation (`lk.expected_payoffs` for the meta-game entries,
`lk.nash_conv`, `lk.TabularPolicy.mixture` for mixing a population).
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import Grader, Wrong, as_array, kind_of, part_spec, probe_results
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, setup, written

KUHN_SETUP = setup("""
    kuhn = lk.games.load("kuhn_poker")
    player_rows = [kuhn.infoset_player == p for p in (0, 1)]
""")

META_GAME_TEMPLATE = '''
def meta_game(population_1, population_2):
    """(K1, K2) array: entry [k, l] is player 1's expected payoff when player 1 follows
    population_1[k] and player 2 follows population_2[l] (each a (12, 2) policy)."""
    ...
'''

META_GAME_SOLUTION = '''
def joint(policy_1, policy_2):
    """Player 1's rows of policy_1 with player 2's rows of policy_2."""
    return np.where(player_rows[0][:, None], policy_1, policy_2)


def meta_game(population_1, population_2):
    return np.array([[lk.expected_payoffs(kuhn, joint(a, b))[0] for b in population_2]
                     for a in population_1])


always_bet = lk.TabularPolicy.pure(kuhn, [1] * kuhn.num_infosets).probs
always_pass = lk.TabularPolicy.pure(kuhn, [0] * kuhn.num_infosets).probs
print(meta_game([always_bet, always_pass], [always_bet, always_pass]))
'''

DOUBLE_ORACLE_TEMPLATE = '''
def double_oracle(start):
    """Double oracle on Kuhn poker from populations {start}: returns a dict with the
    final "policy" (the mixture, (12, 2)), "population_1", "population_2" (lists of
    (12, 2) policies) and "meta_strategies" (two probability vectors)."""
    ...
'''

DOUBLE_ORACLE_SOLUTION = '''
from scipy.optimize import linprog


def maximin(M):
    """The row player's maximin strategy of the zero-sum matrix game M, by linear
    programming."""
    m, k = M.shape
    # maximize v subject to x^T M[:, b] >= v for every column b, x on the simplex;
    # the variables are x (m of them, >= 0) and v (free)
    cost = np.r_[np.zeros(m), -1.0]
    limits = [(0, None)] * m + [(None, None)]
    result = linprog(cost, A_ub=np.c_[-M.T, np.ones(k)], b_ub=np.zeros(k),
                     A_eq=np.r_[np.ones(m), 0.0][None], b_eq=[1.0], bounds=limits)
    x = np.maximum(result.x[:m], 0.0)
    return x / x.sum()


def mix(population, weights):
    """The behavioral policy that plays population[k] with probability weights[k]."""
    policies = [lk.TabularPolicy(kuhn, p) for p in population]
    return lk.TabularPolicy.mixture(policies, weights).probs


def double_oracle(start, max_iterations=50):
    populations = [[np.asarray(start, dtype=float)], [np.asarray(start, dtype=float)]]
    nash_convs = []
    for _ in range(max_iterations):
        M = meta_game(*populations)
        sigma = [maximin(M), maximin(-M.T)]      # an equilibrium of the meta-game
        policy = joint(mix(populations[0], sigma[0]), mix(populations[1], sigma[1]))
        nash_convs.append(lk.nash_conv(kuhn, policy))
        new = False
        for p in (0, 1):
            response = lk.best_response(kuhn, policy, p).policy.probs
            known = any(np.array_equal(response[player_rows[p]], old[player_rows[p]])
                        for old in populations[p])
            if not known:
                populations[p].append(response)
                new = True
        if not new:                      # both best responses known: an equilibrium
            break
    return {"policy": policy, "population_1": populations[0],
            "population_2": populations[1], "meta_strategies": sigma,
            "nash_convs": nash_convs}


run = double_oracle(lk.uniform_policy(kuhn).probs)
print("NashConv after each iteration:")
print(np.round(run["nash_convs"], 4))
print("population sizes:", len(run["population_1"]), len(run["population_2"]))
value = lk.expected_payoffs(kuhn, run["policy"])[0]
print(f"value for player 1: {value:.6f} (-1/18 = {-1 / 18:.6f})")
'''

WHY_IT_STOPS = r'''
Let $(\sigma_1, \sigma_2)$ be the meta-game's equilibrium and $\pi_1, \pi_2$ the two mixtures. If the
best response $b_1$ to $\pi_2$ is already in player 1's population, then $u_1(b_1, \pi_2)$ is one of
the entries of $M\sigma_2$, and the meta-game's equilibrium condition says that no member does
better against $\sigma_2$ than $\pi_1$ does: $u_1(b_1, \pi_2) \le u_1(\pi_1, \pi_2)$. So player 1
gains nothing by best-responding in the whole game; the same holds for player 2, and NashConv is
0. Otherwise a new pure strategy joins a population. A finite game has finitely many pure
strategies, so this happens only finitely often, and double oracle stops at an equilibrium.

It stops early because the restricted game only needs the strategies in the support of an
equilibrium together with enough others to rule out every profitable deviation; on Kuhn poker a
handful of pure strategies per player out of 64 is enough. The mixture has to be computed with
reach weights, since a plain average of behavioral tables is not the policy that draws a member
at the start and follows it.
'''

EXERCISE = Exercise("5.1", "5_1_double_oracle", "The exact meta-game and double oracle", (
    md(r"""
        # Exercise 5.1 — The exact meta-game and double oracle

        This exercise belongs to [Self-play and populations](../chapters/05_self_play_and_populations.ipynb),
        which introduces PSRO and, with a Nash meta-solver and exact best responses, the double oracle
        algorithm. Here you build both pieces yourself on Kuhn poker, using `lk.best_response` as the
        oracle, and run double oracle until NashConv is 0.

        A policy is a `(12, 2)` array over `kuhn.infoset_keys` (actions `pass`, `bet`); a member of
        player $i$'s population is used only at player $i$'s rows (`player_rows[i]`).
    """),
    how_to("5.1"),
    SETUP,
    KUHN_SETUP,
    md(r"""
        ## (a) The meta-game
        Write `meta_game(population_1, population_2)`, the matrix $M[k, l] = u_1(\pi_1^k, \pi_2^l)$
        of player 1's exact expected payoffs (`lk.expected_payoffs` of the joint policy made of
        player 1's rows of $\pi_1^k$ and player 2's rows of $\pi_2^l$). Kuhn poker is zero-sum, so
        player 2's meta-game is $-M$.
    """),
    answer("5.1(a)", META_GAME_TEMPLATE, META_GAME_SOLUTION),
    check("5.1(a)"),
    md(r"""
        ## (b) Double oracle
        Write `double_oracle(start)`: both populations start as `[start]`; in every iteration solve
        the meta-game for an equilibrium $(\sigma_1, \sigma_2)$ (a linear program), form each
        player's mixture (the behavioral policy that draws member $k$ with probability
        $\sigma_i(k)$ before the game and follows it), add `lk.best_response` to the other player's
        mixture to each population, and stop when neither best response is new. Return the final
        mixture, both populations and the meta-strategies. The grader runs it from starting policies
        of its own and checks that NashConv reaches 0.

        Then explain why double oracle must stop at an equilibrium, and why it needs so few of
        Kuhn poker's 64 pure strategies per player.
    """),
    answer("5.1(b)", DOUBLE_ORACLE_TEMPLATE, DOUBLE_ORACLE_SOLUTION),
    check("5.1(b)"),
    written("5.1(b)", WHY_IT_STOPS, points=1),
))


# ------------------------------------------------------------------ the hidden checks
def kuhn():
    import labkit as lk
    return lk.games.load("kuhn_poker")


def pure_policy(seed):
    import labkit as lk
    game = kuhn()
    return lk.TabularPolicy.pure(game, np.random.default_rng(seed).integers(0, 2, game.num_infosets)).probs


def mixed_policy(seed):
    weights = np.random.default_rng(seed).gamma(0.6, size=kuhn().legal_mask.shape) + 1e-3
    return weights / weights.sum(axis=1, keepdims=True)


META_GAME_PROBES = [
    ([pure_policy(s) for s in (1, 2, 3)], [pure_policy(s) for s in (4, 5)]),
    ([mixed_policy(6), pure_policy(7)], [mixed_policy(8), mixed_policy(9), pure_policy(10)]),
]
DOUBLE_ORACLE_PROBES = [(mixed_policy(11),), (pure_policy(12),)]


def joint(policy_1, policy_2):
    """Player 1's rows of `policy_1` and player 2's rows of `policy_2`."""
    game = kuhn()
    rows = game.infoset_player == 0
    return np.where(rows[:, None], policy_1, policy_2)


def meta_game(population_1, population_2):
    import labkit as lk
    return np.array([[lk.expected_payoffs(kuhn(), joint(a, b))[0] for b in population_2] for a in population_1])


def _grade_a(value):
    g = Grader(value)

    def at(k, label):
        def test():
            results = probe_results(value, "meta_game", len(META_GAME_PROBES))
            pop_1, pop_2 = META_GAME_PROBES[k]
            got = as_array(results[k], "meta_game(...)", (len(pop_1), len(pop_2)))
            expected = meta_game(pop_1, pop_2)
            if np.allclose(got, expected, rtol=0, atol=1e-9):
                return None
            if np.allclose(got, -expected, rtol=0, atol=1e-9):
                return "the entries are player 1's payoffs (the row player's), not player 2's"
            return (f"wrong entries for {label}: entry [k, l] is player 1's expected payoff when player 1 follows "
                    "population_1[k] (its rows) and player 2 follows population_2[l] (its rows)")
        return test

    g.item("pure policies", 1, at(0, "pure policies"))
    g.item("behavioral policies", 1, at(1, "behavioral policies"))
    return g.items


def _population(v, name):
    if not isinstance(v, list) or not v:
        raise Wrong(f"`{name}` should be a non-empty list of (12, 2) policies, got {kind_of(v)}")
    return [as_array(p, f"{name}[k]", kuhn().legal_mask.shape) for p in v]


def _read_run(r):
    if not isinstance(r, dict):
        raise Wrong(f"`double_oracle(start)` should return a dict, got {kind_of(r)}")
    for key in ("policy", "population_1", "population_2", "meta_strategies"):
        if key not in r:
            raise Wrong(f"`double_oracle(start)` should return the entry {key!r}")
    policy = as_array(r["policy"], "double_oracle(start)['policy']", kuhn().legal_mask.shape)
    pops = _population(r["population_1"], "population_1"), _population(r["population_2"], "population_2")
    sigma = r["meta_strategies"]
    if not isinstance(sigma, list) or len(sigma) != 2:
        raise Wrong("`meta_strategies` should be a pair of probability vectors, one per population")
    sigma = [as_array(s, "meta_strategies[i]", (len(p),)) for s, p in zip(sigma, pops)]
    if any(np.any(s < -1e-9) or abs(s.sum() - 1) > 1e-6 for s in sigma):
        raise Wrong("each meta-strategy should be a probability vector over its population")
    return policy, pops, sigma


def _mixture(population, weights, player):
    import labkit as lk
    game = kuhn()
    mixed = lk.TabularPolicy.mixture([lk.TabularPolicy(game, p, check=False) for p in population],
                                     np.clip(weights, 0, None) / np.clip(weights, 0, None).sum())
    return mixed.probs[game.infoset_player == player]


def _grade_b(value):
    import labkit as lk
    g = Grader(value)
    game = kuhn()
    rows = [game.infoset_player == p for p in (0, 1)]

    def solved():
        for r in probe_results(value, "double_oracle", len(DOUBLE_ORACLE_PROBES)):
            policy, pops, sigma = _read_run(r)
            if lk.nash_conv(game, policy) < 1e-9:
                continue
            plain = np.where(rows[0][:, None], sum(w * p for w, p in zip(sigma[0], pops[0])),
                             sum(w * p for w, p in zip(sigma[1], pops[1])))
            if np.allclose(policy, plain, atol=1e-9):
                return ("your policy averages the population's tables; a mixture of policies weights each one's "
                        "action probabilities by how likely that member is to reach the infoset")
            return "the NashConv of your final policy is not 0: run double oracle until no best response is new"
        return None

    def equilibrium():
        for r in probe_results(value, "double_oracle", len(DOUBLE_ORACLE_PROBES)):
            policy, pops, sigma = _read_run(r)
            M = meta_game(*pops)
            gain = (M @ sigma[1]).max() - (sigma[0] @ M).min()     # NashConv of the meta-game
            if gain > 1e-7:
                return "the meta-strategies are not an equilibrium of the populations' meta-game"
            for p in (0, 1):
                if not np.allclose(policy[rows[p]], _mixture(pops[p], sigma[p], p), atol=1e-7):
                    return "`policy` should be the mixture of the populations under the meta-strategies"
            if max(len(pops[0]), len(pops[1])) > 30:
                return "double oracle stops as soon as both best responses are already in the populations"
        return None

    g.item("NashConv 0 from the grader's starts", 1, solved)
    g.item("an equilibrium of the final meta-game", 1, equilibrium)
    return g.items


PARTS = [
    part_spec("5.1(a)", ["meta_game"], _grade_a, 2, {"meta_game": META_GAME_PROBES}),
    part_spec("5.1(b)", ["double_oracle"], _grade_b, 2, {"double_oracle": DOUBLE_ORACLE_PROBES}),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = r'''
"""Public checks of exercise 5.1 (meta-game and double oracle): shapes, probability vectors, the
form of the returned run, a meta-game worked out by hand and the equilibrium property of the run's
result (the grader's populations and starting policies are other ones).

The hand-worked meta-game: player 1 always bets (or always passes), player 2 always bets. Bet
against bet is a showdown for 2 whose expected payoff is 0 (each deal and its swap cancel); pass
against bet is pass, bet, fold: player 1 loses its ante, -1, on every deal. So the matrix is
[[0], [-1]]; weighting each of the 6 deals by 1 instead of 1/6 gives [[0], [-6]].
"""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, expect, kind_of, probe_results

UNIFORM = np.full((12, 2), 0.5)
ALWAYS_BET = np.tile([0.0, 1.0], (12, 1))
ALWAYS_PASS = np.tile([1.0, 0.0], (12, 1))


BET_VS_BET_AND_PASS_VS_BET = [[0.0], [-1.0]]


def _meta_game(value):
    as_array(probe_results(value, "meta_game", 1)[0], "meta_game(...)", (2, 1))


def _meta_game_case(value):
    got = as_array(probe_results(value, "meta_game", 1)[0], "meta_game(...)", (2, 1))
    expect(got, BET_VS_BET_AND_PASS_VS_BET, "meta_game([always bet, always pass], [always bet])",
           "entry (i, j) is player 1's expected payoff when its policy i meets player 2's policy j, every deal "
           "weighted by its probability 1/6")


def _equilibrium(value):
    """The run's mixture is an equilibrium of Kuhn poker: no player gains by deviating from it."""
    import labkit as lk
    r = probe_results(value, "double_oracle", 1)[0]
    game = lk.games.load("kuhn_poker")
    policy = lk.TabularPolicy(game, as_array(r["policy"], "policy", (12, 2)))
    gain = lk.nash_conv(game, policy)
    if gain > 1e-6:
        raise Wrong(f"the returned policy is not an equilibrium of Kuhn poker: deviating gains the two players "
                    f"{gain:.4f} together; double oracle stops when neither best response beats the meta-Nash "
                    "mixture, and the policy returned is that mixture (each player's policies weighted by its "
                    "meta-strategy and by how often each reaches an information set)")


def _run(value):
    r = probe_results(value, "double_oracle", 1)[0]
    if not isinstance(r, dict):
        raise Wrong(f"`double_oracle(start)` should return a dict, got {kind_of(r)}")
    for key in ("policy", "population_1", "population_2", "meta_strategies"):
        if key not in r:
            raise Wrong(f"`double_oracle(start)` should return the entry {key!r}")
    policy = as_array(r["policy"], "policy", (12, 2))
    if np.any(policy < -1e-9) or np.any(np.abs(policy.sum(axis=1) - 1) > 1e-6):
        raise Wrong("every row of the returned policy should be a probability distribution")
    sizes = [len(r["population_1"]), len(r["population_2"])] if isinstance(r["population_1"], list) \
        and isinstance(r["population_2"], list) else None
    sigma = r["meta_strategies"]
    if sizes is None or not isinstance(sigma, list) or len(sigma) != 2:
        raise Wrong("return the two populations as lists and the two meta-strategies")
    for s, k in zip(sigma, sizes, strict=False):
        s = as_array(s, "meta_strategies[i]", (k,))
        if np.any(s < -1e-9) or abs(s.sum() - 1) > 1e-6:
            raise Wrong("each meta-strategy should be a probability vector over its population")


PARTS = [
    public_part("5.1(a)", ["meta_game"], 2,
                lambda value: FormatChecks(value).item("meta_game gives a (K1, K2) matrix", lambda: _meta_game(value))
                .item("[[0], [-1]] for bet/pass against bet", lambda: _meta_game_case(value)),
                {"meta_game": [([ALWAYS_BET, ALWAYS_PASS], [ALWAYS_BET])]}),
    public_part("5.1(b)", ["double_oracle"], 2,
                lambda value: FormatChecks(value).item("double_oracle returns its populations, meta-strategies "
                                                       "and mixture", lambda: _run(value))
                .item("the mixture is an equilibrium of Kuhn poker", lambda: _equilibrium(value)),
                {"double_oracle": [(UNIFORM,)]}),
]
'''
