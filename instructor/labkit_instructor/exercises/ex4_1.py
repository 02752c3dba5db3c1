"""Exercise 4.1: the importance-weighted counterfactual values of outcome sampling, unbiased on Kuhn poker.

The whole exercise in one file: the text and worked solutions (`EXERCISE`), the hidden checks
(`PARTS`) and the public checks shipped to students (`PUBLIC_CHECKS`, which
scripts/build_exercises.py writes to labkit/grading/public/ex4_1.py).

The hidden checks. Chapter 4 (Scaling up) defines the estimator. The reference estimator below is
tested against labkit's MCCFR (the regrets it implies equal `MCCFR.sampled_regrets` fed the same
numbers) and, by enumerating every terminal history with its sampling probability, shown to have the
exact counterfactual values as its expectation.
"""
from __future__ import annotations


import numpy as np

from labkit_instructor.checks import sampling
from labkit_instructor.checks.base import computed_once, Grader, Lazy, as_array, part_spec, probe_results
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


# ------------------------------------------------------------------ the hidden checks
EXPLORATION = 0.6
MEAN_STREAMS = 3000
STREAM_LENGTH = 6                        # Kuhn: two deals and at most three decisions


def kuhn():
    import labkit as lk
    return lk.games.load("kuhn_poker")


def random_policy(seed, concentration=0.5):
    legal = kuhn().legal_mask
    weights = np.random.default_rng(seed).gamma(concentration, size=legal.shape) * legal + 1e-3 * legal
    return weights / weights.sum(axis=1, keepdims=True)


def stream(seed, length=STREAM_LENGTH):
    """Uniform numbers in [0, 1), rounded to 6 digits (shorter on their way into the kernel)."""
    return np.round(np.random.default_rng(seed).random(length), 6).tolist()


def shortened(policy, decimals=10):
    """Rounded to `decimals`, each row's largest entry reset so that the row sums to 1."""
    p = np.round(policy, decimals)
    rows, top = np.arange(len(p)), p.argmax(axis=1)
    p[rows, top] = 0.0
    p[rows, top] = 1.0 - p.sum(axis=1)
    return p


def _policies():
    return [shortened(random_policy(41)), shortened(random_policy(42))]


def _exact_probes():
    return [(POLICIES[0], 0, stream(4100 + k), EXPLORATION) for k in range(4)] + \
           [(POLICIES[1], 1, stream(4110 + k), EXPLORATION) for k in range(4)] + \
           [(POLICIES[0], 1, stream(4120), 0.3), (POLICIES[1], 0, stream(4121), 1.0)]


def _mean_probes():
    return [(POLICIES[0], 0, [stream(seed) for seed in range(10_000, 10_000 + MEAN_STREAMS)], EXPLORATION),
            (POLICIES[1], 1, [stream(seed) for seed in range(20_000, 20_000 + MEAN_STREAMS)], 0.3)]


# computed when 4.1 is first graded, not at import (6,000 streams of random numbers)
POLICIES = Lazy(_policies)
EXACT_PROBES = Lazy(_exact_probes)
MEAN_PROBES = Lazy(_mean_probes)


def sampled_values(policy, player, uniforms, exploration=EXPLORATION, importance=True):
    """(I, A) sampled counterfactual action values of one outcome-sampling episode on Kuhn poker
    (`labkit_instructor.checks.sampling.sampled_values`; importance=False leaves the weights out)."""
    return sampling.sampled_values(kuhn(), policy, player, uniforms, exploration, importance)


def exact_values(policy, player):
    """The exact counterfactual action values at `player`'s infosets (0 elsewhere)."""
    import labkit as lk
    q = lk.counterfactual_values(kuhn(), policy)
    q[kuhn().infoset_player != player] = 0.0
    return q


@computed_once
def _references():
    return ([sampled_values(*args) for args in EXACT_PROBES],
            [sampled_values(*args, importance=False) for args in EXACT_PROBES])


@computed_once
def _standard_errors():
    """Per probe: the standard error of the mean estimate, entry by entry, from the reference."""
    errors = []
    for policy, player, streams, eps in MEAN_PROBES:
        samples = np.array([sampled_values(policy, player, u, eps) for u in streams])
        errors.append(samples.std(axis=0, ddof=1) / np.sqrt(len(streams)))
    return errors


def _grade_a(value):
    g = Grader(value)
    exact, plain = _references()
    shape = kuhn().legal_mask.shape

    def on(indices):
        def test():
            results = probe_results(value, "sampled_cf_values", len(EXACT_PROBES))
            got = {k: as_array(results[k], "sampled_cf_values(...)", shape) for k in indices}
            if all(np.allclose(got[k], exact[k], rtol=1e-9, atol=1e-12) for k in indices):
                return None
            if all(np.allclose(got[k], plain[k], rtol=1e-9, atol=1e-12) for k in indices):
                return ("your values leave out the importance weights: divide by the probability q(h) of having "
                        "sampled the history and by s(a*) for the sampled action")
            return ("with the grader's random numbers your values differ from the estimator's: one number per node on "
                    "the path, in order; the sampled action's value divided by s(a*), the others 0")
        return test

    g.item("episodes at the default exploration", 1, on(range(8)))
    g.item("other explorations", 1, on(range(8, len(EXACT_PROBES))))
    return g.items


def _grade_b(value):
    g = Grader(value)

    def unbiased():
        results = probe_results(value, "mean_sampled_cf_values", len(MEAN_PROBES))
        for r, (policy, player, _, _), se in zip(results, MEAN_PROBES, _standard_errors()):
            mean = as_array(r, "mean_sampled_cf_values(...)", kuhn().legal_mask.shape)
            exact = exact_values(policy, player)
            spread = se > 0                      # entries some episode changes
            if np.max(np.abs(mean - exact)[spread] / se[spread]) > 4.5:
                return ("over the grader's episodes your mean is more than 4.5 standard errors from the exact "
                        "counterfactual values somewhere: the estimator is biased")
        return None

    g.item("the mean over many episodes is the exact value", 1, unbiased)
    return g.items


PARTS = [
    part_spec("4.1(a)", ["sampled_cf_values"], _grade_a, 2, {"sampled_cf_values": EXACT_PROBES}),
    part_spec("4.1(b)", ["mean_sampled_cf_values"], _grade_b, 1, {"mean_sampled_cf_values": MEAN_PROBES}),
]


# ------------------------------------------------------------------ the public checks (shipped to students)
PUBLIC_CHECKS = '''
"""Public checks of exercise 4.1 (sampled counterfactual values): shapes, where an episode can put a
nonzero value, and the values of public episodes worked out by hand (the grader's policies and
streams are other ones).

With the uniform policy and exploration 0.6 the sampling policy is uniform too. The stream
(0.954, 0.768, 0.126, 0.827, 0.849, ...) deals player 1 the K and player 2 the Q, then samples
pass, bet, bet: player 1 wins 2 at the showdown. The chance and player-2 probability of that
history is 1/6 * 1/2 = 1/12 and its sampling probability 1/6 * 1/8 = 1/48, so the sampled value
of betting at K|pb is 2 * (1/12) / (1/48) = 8, and that of passing at K| is 8 times player 1's own
probability of going on from there (betting at K|pb, 1/2): 4. The mean over three streams for
player 2 is a third of each episode's values added up.
"""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, expect, probe_results

UNIFORM = np.full((12, 2), 0.5)
STREAMS = np.random.default_rng(41).random((3, 6)).tolist()
WEIGHT_HINT = ("an episode's sampled value of an action is the terminal payoff times the probability of the others "
               "(chance and the opponent) reaching it and the player's own probability from after the action, over "
               "the sampling probability of the whole history")


def _table(entries):
    """A (12, 2) table of zeros with the given {(infoset, action): value}."""
    table = np.zeros((12, 2))
    for (row, col), v in entries.items():
        table[row, col] = v
    return table


def _key(name, action):
    import labkit as lk
    return lk.games.load("kuhn_poker").infoset_index(name), ("pass", "bet").index(action)


def _episode_case(value):
    q = as_array(probe_results(value, "sampled_cf_values", 1)[0], "sampled_cf_values(...)", (12, 2))
    expect(q, _table({_key("K|", "pass"): 4.0, _key("K|pb", "bet"): 8.0}),
           "sampled_cf_values(uniform, 0, public stream, 0.6)", WEIGHT_HINT)


def _mean_case(value):
    q = as_array(probe_results(value, "mean_sampled_cf_values", 1)[0], "mean_sampled_cf_values(...)", (12, 2))
    expect(q, _table({_key("Q|p", "bet"): -4 / 3, _key("K|p", "bet"): 4 / 3, _key("J|b", "bet"): -4 / 3}),
           "mean_sampled_cf_values(uniform, 1, three public streams, 0.6)",
           "the mean is over the streams, a third of the three episodes' values added up; " + WEIGHT_HINT)


def _player_rows(player):
    import labkit as lk
    return lk.games.load("kuhn_poker").infoset_player == player


def _one_episode(value):
    q = as_array(probe_results(value, "sampled_cf_values", 1)[0], "sampled_cf_values(...)", (12, 2))
    if np.any(q[~_player_rows(0)] != 0):
        raise Wrong("an episode for player 1 gives values only at player 1's information sets")
    if np.any((q != 0).sum(axis=1) > 1):
        raise Wrong("an episode samples one action per information set: the other action's value is 0")


def _mean(value):
    q = as_array(probe_results(value, "mean_sampled_cf_values", 1)[0], "mean_sampled_cf_values(...)", (12, 2))
    if np.any(q[~_player_rows(1)] != 0):
        raise Wrong("episodes for player 2 give values only at player 2's information sets")


def _feedback(*items):
    def feedback(value):
        f = FormatChecks(value)
        for label, test in items:
            f.item(label, lambda test=test: test(value))
        return f
    return feedback


PARTS = [
    public_part("4.1(a)", ["sampled_cf_values"], 2,
                _feedback(("sampled_cf_values gives a (12, 2) array with one sampled action per infoset", _one_episode),
                          ("the values of a public episode (4 and 8)", _episode_case)),
                {"sampled_cf_values": [(UNIFORM, 0, STREAMS[0], 0.6)]}),
    public_part("4.1(b)", ["mean_sampled_cf_values"], 1,
                _feedback(("mean_sampled_cf_values gives a (12, 2) array", _mean),
                          ("the mean of three public episodes", _mean_case)),
                {"mean_sampled_cf_values": [(UNIFORM, 1, STREAMS, 0.6)]}),
]
'''
