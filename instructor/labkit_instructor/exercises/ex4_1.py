"""Exercise 4.1: the importance-weighted counterfactual values of outcome sampling, unbiased on Kuhn poker."""
from labkit_instructor.exercises.common import SETUP, how_to
from labkit.grading.notebooks import Exercise, answer, check, md, setup, written

KUHN_SETUP = setup("""
    kuhn = lk.games.load("kuhn_poker")
    CHANCE, TERMINAL = lk.games.CHANCE, lk.games.TERMINAL
""")

ESTIMATOR_TEMPLATE = '''
def sampled_cf_values(policy, player, uniforms, exploration=0.6):
    """(12, 2) sampled counterfactual action values of one outcome-sampling episode for
    `player` at the joint `policy` (12, 2), using the numbers of `uniforms` in order."""
    ...
'''

ESTIMATOR_SOLUTION = '''
first_child = np.searchsorted(kuhn.parent, np.arange(kuhn.num_histories))
num_children = np.bincount(kuhn.parent[1:], minlength=kuhn.num_histories)


def pick(probs, u):
    """The first k whose cumulative probability exceeds u."""
    return min(int(np.searchsorted(np.cumsum(probs), u, side="right")), len(probs) - 1)


def sampled_cf_values(policy, player, uniforms, exploration=0.6):
    policy, draw = np.asarray(policy), iter(uniforms).__next__
    h, others, sampled, path = 0, 1.0, 1.0, []
    while kuhn.player[h] != TERMINAL:
        if kuhn.player[h] == CHANCE:
            p = kuhn.chance_prob[first_child[h]:first_child[h] + num_children[h]]
            k = pick(p, draw())
            others, sampled = others * p[k], sampled * p[k]
        else:
            I = kuhn.infoset[h]
            sigma = policy[I]                # both actions are always legal in Kuhn
            if kuhn.player[h] == player:
                s = exploration / 2 + (1 - exploration) * sigma
                k = pick(s, draw())
                path.append((I, sigma, s, k, others, sampled))
                sampled *= s[k]
            else:
                k = pick(sigma, draw())
                others, sampled = others * sigma[k], sampled * sigma[k]
        h = first_child[h] + k
    value = kuhn.returns[h, player]          # the sampled value, walking back
    q = np.zeros((kuhn.num_infosets, 2))
    for I, sigma, s, k, others, sampled in reversed(path):
        action_value = value / s[k]                  # u~(h a*) / s(a*)
        q[I, k] = others / sampled * action_value    # pi_-i(h) / q(h) times it
        value = sigma[k] * action_value
    return q


rng = np.random.default_rng(0)
policy = lk.uniform_policy(kuhn).probs
print(sampled_cf_values(policy, 0, rng.random(6)))
'''

MEAN_TEMPLATE = '''
def mean_sampled_cf_values(policy, player, streams, exploration=0.6):
    """(12, 2) mean of sampled_cf_values over the list of streams."""
    ...
'''

MEAN_SOLUTION = '''
def mean_sampled_cf_values(policy, player, streams, exploration=0.6):
    values = [sampled_cf_values(policy, player, u, exploration) for u in streams]
    return np.mean(values, axis=0)


# a policy that is not uniform, so that the importance weights matter
weights = np.random.default_rng(4).gamma(0.5, size=(kuhn.num_infosets, 2)) + 1e-3
policy = weights / weights.sum(axis=1, keepdims=True)
exact = lk.counterfactual_values(kuhn, policy)
mine = kuhn.infoset_player == 0
streams = [rng.random(6) for _ in range(40_000)]
samples = np.array([sampled_cf_values(policy, 0, u) for u in streams])
mean = samples.mean(axis=0)
standard_error = samples.std(axis=0) / np.sqrt(len(samples))
sampled = mine[:, None] & (standard_error > 0)      # values an episode can change
z = (mean - exact)[sampled] / standard_error[sampled]
print("largest |mean - exact| in standard errors, over player 1's 6 x 2 values:",
      round(float(np.abs(z).max()), 1))
print("standard deviation of one estimate / |exact value|, median:",
      round(float(np.median(samples.std(axis=0)[mine] / np.abs(exact[mine]))), 1))
'''

PROOF = r'''
Fix an information set $I$ of player $i$ and an action $a$, and let $Z_{I,a}$ be the terminal
histories that pass through $I$, at the history $h_z \in I$ (unique by perfect recall), and take
$a$ there. The exact value is
$q(I, a) = \sum_{z \in Z_{I,a}} \pi_{-i}(h_z)\, \pi^\sigma(h_z a \to z)\, u_i(z)$.

An episode samples one terminal history $z$, with probability $q(z) = \pi_{-i}(z)\, \pi^s_i(z)$:
chance and the other player by their own probabilities, player $i$ by $s$. The estimate is zero
unless $z \in Z_{I,a}$; then, with $q(h_z) = \pi_{-i}(h_z)\,\pi^s_i(h_z)$,

$$\tilde q(I, a) = \frac{\pi_{-i}(h_z)}{\pi_{-i}(h_z)\,\pi^s_i(h_z)}\cdot
\frac{u_i(z)\,\pi^\sigma_i(h_z a \to z)}{s(a)\,\pi^s_i(h_z a \to z)}
= \frac{\pi^\sigma_i(h_z a \to z)\, u_i(z)}{\pi^s_i(z)} .$$

So $\mathbb E[\tilde q(I, a)] = \sum_{z \in Z_{I,a}} \pi_{-i}(z)\,\pi^s_i(z)\,
\frac{\pi^\sigma_i(h_z a\to z)\, u_i(z)}{\pi^s_i(z)} = \sum_{z \in Z_{I,a}} \pi_{-i}(h_z)\,
\pi_{-i}(h_z \to z)\, \pi^\sigma_i(h_z a \to z)\, u_i(z) = q(I, a)$, since
$\pi_{-i}(z) = \pi_{-i}(h_z)\,\pi_{-i}(h_z \to z)$ and the others' part of
$\pi^\sigma(h_z a \to z)$ is $\pi_{-i}(h_z \to z)$. Each term of the exact sum is collected with
probability $q(z)$ and divided by it: on average exactly once. This needs $\pi^s_i(z) > 0$, which
the exploration guarantees, $s(a) \ge \varepsilon / |A(I)|$.

The price is variance. A line that is rarely sampled gets, when it is, a large weight; one estimate
is typically several times larger than the value it estimates (the experiment prints the ratio)
and only the mean of many settles. More exploration keeps the weights of one's own moves small but
spends episodes on lines the strategy would not play; less exploration concentrates the samples on
the strategy's own lines but lets the weights of the others explode.
'''

EXERCISE = Exercise("4.1", "4_1_sampled_counterfactual_values",
                    "The sampled counterfactual values of outcome sampling", (
    md(r"""
        # Exercise 4.1 — The sampled counterfactual values of outcome sampling

        This exercise belongs to [Scaling up: sampling, networks and search](../chapters/04_scaling_up.ipynb),
        whose section on Monte Carlo CFR defines the estimator. You write it for Kuhn poker and show
        that it is unbiased. Lab 15 uses the same estimator on Leduc hold'em.

        **Kuhn poker's tree.** `kuhn = lk.games.load("kuhn_poker")` is a `GameTree` of 58
        histories numbered breadth first, with the arrays `parent`, `player` (`0`, `1`, `CHANCE`
        or `TERMINAL`), `infoset`, `chance_prob` (of the edge into a child of a chance node) and
        `returns` `(58, 2)`; the children of a history are contiguous and in the order of its
        actions (`pass`, `bet`) or chance outcomes. A joint policy is a `(12, 2)` array over
        `kuhn.infoset_keys`.
    """),
    how_to("4.1"),
    SETUP,
    KUHN_SETUP,
    md(r"""
        ## (a) One episode
        Write `sampled_cf_values(policy, player, uniforms, exploration=0.6)`. It plays one hand from
        the root, using the numbers of `uniforms` in order, one per chance node and per decision,
        and picking the first outcome whose cumulative probability exceeds the number: chance and
        the other player by their probabilities, `player` by the exploratory policy
        $s = \varepsilon\cdot\text{uniform} + (1-\varepsilon)\,\sigma$. Then it walks back from the
        terminal history $z$ and returns, at each of `player`'s information sets $I$ on the path,
        with history $h \in I$ and sampled action $a^*$,

        $$\tilde q(I, a^*) = \frac{\pi_{-i}(h)}{q(h)}\cdot\frac{\tilde u(h a^*)}{s(a^*)},
        \qquad \tilde q(I, a) = 0 \text{ for } a \ne a^*,$$

        where $q(h)$ is the probability that the sampling reached $h$ and
        $\tilde u(h a^*) = u_i(z)\prod \sigma(a)/s(a)$ over `player`'s moves after $a^*$. Every
        other entry of the `(12, 2)` array is 0. The grader feeds your function its own policies
        and random numbers and compares with the estimator exactly.
    """),
    answer("4.1(a)", ESTIMATOR_TEMPLATE, ESTIMATOR_SOLUTION),
    check("4.1(a)"),
    md(r"""
        ## (b) Unbiased
        Prove that $\mathbb E[\tilde q(I, a)] = q(I, a)$, the exact counterfactual value
        (`lk.counterfactual_values`), and say what the exploration $\varepsilon$ buys and costs.
        Then write `mean_sampled_cf_values(policy, player, streams, exploration=0.6)`, the mean of
        your estimates over a list of streams; the grader runs it on thousands of its own streams
        and checks that the mean lies within a few standard errors of the exact values. Run the
        experiment yourself at a policy that is not uniform.
    """),
    written("4.1(b)", PROOF, points=2),
    answer("4.1(b)", MEAN_TEMPLATE, MEAN_SOLUTION),
    check("4.1(b)"),
))
