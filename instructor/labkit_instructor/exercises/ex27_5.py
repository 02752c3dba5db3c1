"""Exercise 27.5: the two reach weightings of CFR, and what breaks when they are swapped."""
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, written

CFR_TEMPLATE = '''
kuhn = lk.games.load("kuhn_poker")  # for lk.nash_conv; the rules: lk.games.KuhnPoker()


def run_cfr(iterations, regret_weight="opponents", average_weight="own"):
    """Vanilla CFR on Kuhn poker. Returns the average policy
    {infoset key: [p_pass, p_bet]}.

    regret_weight, average_weight: "own" (the acting player's reach probability) or
    "opponents" (the reach probability of the other player and chance)."""
    ...


average_policy_cfr = ...  # run_cfr(1000)
average_policy_swapped = ...  # run_cfr(1000) with the two weightings swapped
'''

CFR_SOLUTION = '''
kuhn = lk.games.load("kuhn_poker")  # for lk.nash_conv; the rules: lk.games.KuhnPoker()
rules = lk.games.KuhnPoker()
CHANCE, TERMINAL = lk.games.CHANCE, lk.games.TERMINAL


def regret_matching(regret):
    positive = np.maximum(regret, 0.0)
    return positive / positive.sum() if positive.sum() > 0 else np.full(2, 0.5)


def run_cfr(iterations, regret_weight="opponents", average_weight="own"):
    regrets, strategy_sums = {}, {}
    policy = {}  # this iteration's strategies, fixed during the pass

    def current(key):
        if key not in policy:
            policy[key] = regret_matching(regrets.setdefault(key, np.zeros(2)))
        return policy[key]

    def walk(state, reach):  # reach = [player 1, player 2, chance]
        player = state.current_player()
        if player == TERMINAL:
            return np.array(state.returns())
        if player == CHANCE:
            value = np.zeros(2)
            for card, p in state.chance_outcomes():
                value += p * walk(state.child(card), reach * np.array([1.0, 1.0, p]))
            return value
        key, sigma = state.infoset_key(), current(state.infoset_key())
        action_values = np.array(
            [
                walk(
                    state.child(a),
                    np.where(np.arange(3) == player, reach * sigma[a], reach),
                )
                for a in (0, 1)
            ]
        )
        value = sigma @ action_values
        weight = {"own": reach[player], "opponents": reach[1 - player] * reach[2]}
        regrets[key] += weight[regret_weight] * (
            action_values[:, player] - value[player]
        )
        strategy_sums[key] = (
            strategy_sums.get(key, 0.0) + weight[average_weight] * sigma
        )
        return value

    for _ in range(iterations):
        policy.clear()  # simultaneous updates: every infoset uses sigma^t
        walk(rules.initial_state(), np.ones(3))
    return {
        key: list(s / s.sum()) if s.sum() > 0 else [0.5, 0.5]
        for key, s in strategy_sums.items()
    }


def nash_conv(table):
    return lk.nash_conv(kuhn, lk.TabularPolicy.from_dict(kuhn, table))


average_policy_cfr = run_cfr(1000)
average_policy_swapped = run_cfr(1000, regret_weight="own", average_weight="opponents")
for name, table in [("CFR", average_policy_cfr), ("swapped", average_policy_swapped)]:
    gap = nash_conv(table)
    print(f"{name:>8}: NashConv of the average after 1000 iterations = {gap:.4f}")
print(
    "average by opponents' reach, regrets as in CFR:",
    round(nash_conv(run_cfr(1000, average_weight="opponents")), 4),
)

# scratch, then library: labkit's vectorized CFR (simultaneous updates) gives the
# same average
solver = lk.CFR(kuhn)
solver.run(1000)
library = solver.average_policy()
difference = max(
    abs(np.array(p) - library.probs[kuhn.infoset_index(k)]).max()
    for k, p in average_policy_cfr.items()
)
print(
    "largest difference from lk.CFR's average policy:",
    f"{difference:.1e}" if difference > 1e-12 else "below 1e-12",
)
'''

PURE_STRATEGIES = '''
# two pure strategies of player 1: bet every card; check every card, then call any bet
always_bet = {"J|": [0, 1], "Q|": [0, 1], "K|": [0, 1],
              "J|pb": [1, 0], "Q|pb": [1, 0], "K|pb": [1, 0]}
check_call = {"J|": [1, 0], "Q|": [1, 0], "K|": [1, 0],
              "J|pb": [0, 1], "Q|pb": [0, 1], "K|pb": [0, 1]}
'''

MIXTURE_TEMPLATE = PURE_STRATEGIES + '''
# player 1's behavioral policy equal to flipping a coin between the two
mixture_policy = ...
# value of the plain average of the two tables minus the coin flip's value
plain_average_error = ...
'''

MIXTURE_SOLUTION = PURE_STRATEGIES + '''

def own_reach(table, key):
    """Player 1's own probability of reaching `key`: checking first if the key
    ends in 'pb'."""
    return table[key[0] + "|"][0] if key.endswith("pb") else 1.0


mixture_policy = {}
for key in always_bet:
    w = np.array([own_reach(always_bet, key), own_reach(check_call, key)])
    rows = np.array([always_bet[key], check_call[key]], dtype=float)
    mixture_policy[key] = list(w @ rows / w.sum())
plain = {
    key: list((np.array(always_bet[key]) + np.array(check_call[key])) / 2)
    for key in always_bet
}


def value(table):  # player 1's expected payoff against a uniformly random player 2
    return lk.expected_payoffs(kuhn, lk.TabularPolicy.from_dict(kuhn, table))[0]


coin_flip = (value(always_bet) + value(check_call)) / 2
plain_average_error = value(plain) - coin_flip
print(
    "at J|pb the mixture plays",
    [float(p) for p in mixture_policy["J|pb"]],
    "and the plain average",
    [float(p) for p in plain["J|pb"]],
)
print(
    f"coin flip {coin_flip:.4f}, reach-weighted {value(mixture_policy):.4f},",
    f"plain {value(plain):.4f}",
)
'''

ANSWER_A = r'''
At an information set $I$ of player $i$, every history $h \in I$ has the same own reach $\pi_i(h)$:
by perfect recall, player $i$ took the same actions on the way to all of them. So $\pi_i$ only scales
all of $I$'s regrets by one common factor, which regret matching ignores anyway -- except when it is
zero or tiny. The regret at $I$ has to answer the question "if I played to reach $I$, what should I do
there?"; that is what the counterfactual value $\sum_{h\in I}\pi_{-i}(h)\,v_i(h)$ measures. Weighting by
$\pi_i$ instead would make the regrets at $I$ vanish whenever the current strategy avoids $I$, so the
play at $I$ would never improve, and the values that earlier decisions compare would stay wrong.
The regret bound of CFR, overall regret $\le \sum_I$ (positive immediate counterfactual regret), also
needs exactly the $\pi_{-i}$ weights. The first cell shows it: with the weights swapped, the average
stays far from equilibrium.
'''

ANSWER_B = r'''
The average strategy has to be the behavioral strategy that plays like the *mixture* of the iterates
(pick an iteration $t$ at random, then follow $\sigma^t$), because that mixture is what the regret
bound controls. Mixtures average linearly in realization weights, not in behavior probabilities:
the mixture plays $a$ at $I$ with probability $\sum_t \pi_i^t(I)\,\sigma^t(I,a) / \sum_t \pi_i^t(I)$.

Take an information set that player $i$ reaches only after an earlier unlikely move. In most
iterations $\sigma^t(I)$ is never used, since player $i$ does not go there, and whatever it says must
not count; the few iterations that do go there decide how the mixture plays at $I$. An unweighted
(or opponent-weighted) average lets the irrelevant iterations drown them out. The second cell shows
this with two pure strategies: the reach-weighted average reproduces the coin flip's value, the
plain average does not. (In Kuhn poker CFR with the average weighted by the opponents' reach still
ends up close to equilibrium, as the first cell shows, but nothing guarantees it.)
'''

EXERCISE = Exercise("27.5", "27_5_cfr_weightings", "The two weightings of CFR", (
    md(r"""
        # Exercise 27.5 — The two weightings of CFR

        This exercise goes with the chapter [Imperfect information and counterfactual
        regret](../chapters/03_counterfactual_regret.ipynb).

        CFR uses two different reach probabilities. At an information set $I$ of player $i$, the
        *regrets* are weighted by $\pi_{-i}$, the probability that chance and the other players bring
        the game to $I$; the *average strategy* is weighted by $\pi_i$, player $i$'s own probability of
        playing toward $I$.
    """),
    how_to("27.5"),
    SETUP,
    md(r"""
        ## (a) Regrets ignore one's own reach
        Explain why the regrets should not depend on player $i$'s own reach probability.

        **Experiment.** Write `run_cfr(iterations, regret_weight, average_weight)`: vanilla CFR on Kuhn
        poker (`lk.games.KuhnPoker()` gives the rules as states with `current_player()`,
        `legal_actions()`, `chance_outcomes()`, `child(a)`, `returns()`, `infoset_key()`), returning the
        average policy as `{infoset key: [p_pass, p_bet]}`. Store the average after 1000 iterations in
        `average_policy_cfr`, and the average with both weightings swapped (regrets by own reach,
        average by the opponents' reach) in `average_policy_swapped`. The check measures NashConv.
    """),
    written("27.5(a)", ANSWER_A, points=1),
    answer("27.5(a)", CFR_TEMPLATE, CFR_SOLUTION),
    check("27.5(a)"),
    md(r"""
        ## (b) The average needs one's own reach
        Explain why the average strategy must be weighted by $\pi_i$. Think of an information set that
        player $i$ reaches only after making an unlikely move earlier.

        **Experiment.** Player 1 flips a fair coin before the game and plays one of the two pure
        strategies below. Store in `mixture_policy` the behavioral policy (player 1's six information
        sets) that plays exactly like this coin flip, and in `plain_average_error` how far the value of
        the plain, unweighted average of the two tables is from the coin flip's value, both against a
        player 2 who plays uniformly at random.
    """),
    written("27.5(b)", ANSWER_B, points=1),
    answer("27.5(b)", MIXTURE_TEMPLATE, MIXTURE_SOLUTION),
    check("27.5(b)"),
))
