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
