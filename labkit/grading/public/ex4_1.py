"""Public checks of exercise 4.1 (sampled counterfactual values): shapes, and where an episode can
put a nonzero value. No expected value."""
import numpy as np

from labkit.grading.public.base import FormatChecks, public_part
from labkit.grading.public.helpers import Wrong, as_array, probe_results

UNIFORM = np.full((12, 2), 0.5)
STREAMS = np.random.default_rng(41).random((3, 6)).tolist()


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


def _feedback(label, test):
    def feedback(value):
        return FormatChecks(value).item(label, lambda: test(value))
    return feedback


PARTS = [
    public_part("4.1(a)", ["sampled_cf_values"], 2,
                _feedback("sampled_cf_values gives a (12, 2) array with one sampled action per infoset", _one_episode),
                {"sampled_cf_values": [(UNIFORM, 0, STREAMS[0], 0.6)]}),
    public_part("4.1(b)", ["mean_sampled_cf_values"], 1,
                _feedback("mean_sampled_cf_values gives a (12, 2) array", _mean),
                {"mean_sampled_cf_values": [(UNIFORM, 1, STREAMS, 0.6)]}),
]
