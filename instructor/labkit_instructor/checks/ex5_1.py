"""Hidden checks of exercise 5.1, the exact meta-game of a population and double oracle on Kuhn poker.

The exercise itself is labkit_instructor/exercises/ex5_1.py; chapter 5 (Self-play and populations)
defines PSRO and double oracle. The references are labkit's exact evaluation (`lk.expected_payoffs`
for the meta-game entries, `lk.nash_conv`, `lk.TabularPolicy.mixture` for mixing a population).
"""
from __future__ import annotations

import numpy as np

from labkit_instructor.checks.base import Grader, Wrong, as_array, kind_of, part_spec, probe_results


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
