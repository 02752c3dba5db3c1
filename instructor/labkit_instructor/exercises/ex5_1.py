"""Exercise 5.1: the exact meta-game of a population, and double oracle to NashConv 0 on Kuhn poker."""
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
