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
