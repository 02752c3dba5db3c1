"""The chapters' own exercises, 4.1 (sampled counterfactual values), 5.1 (meta-game and double oracle)
and 6.1 (deviation counts and regrets): their hidden checks give the worked solutions full marks,
the blank templates nothing, and a wrong-but-plausible answer its specific hint; their references
are tested against labkit's solvers, exact enumeration and the formulas of chapter 6's table."""
import numpy as np
import pytest

import labkit as lk
from exercise_harness import Harness

from labkit_instructor.exercises import ex4_1 as hidden4, ex5_1 as hidden5, ex6_1 as hidden6  # noqa: E402
from labkit_instructor.exercises import ex4_1, ex5_1, ex6_1  # noqa: E402

HARNESSES = {"4.1": Harness(ex4_1.EXERCISE, hidden4.PARTS), "5.1": Harness(ex5_1.EXERCISE, hidden5.PARTS),
             "6.1": Harness(ex6_1.EXERCISE, hidden6.PARTS)}
ALL_PARTS = [(number, part) for number, h in HARNESSES.items() for part in h.parts]


@pytest.fixture(scope="module")
def solutions():
    short = {"4.1(b)": [("range(40_000)", "range(2000)")]}
    return {number: h.run(h.cells(lambda part: True, edits=short)) for number, h in HARNESSES.items()}


@pytest.mark.parametrize("number, part", ALL_PARTS)
def test_the_solutions_score_full_marks(solutions, number, part):
    points, hints = HARNESSES[number].grade(part, solutions[number])
    assert points == HARNESSES[number].specs[part].max_points and not hints, hints


@pytest.mark.parametrize("number, part", ALL_PARTS)
def test_the_blank_templates_score_zero_with_a_hint(number, part):
    h = HARNESSES[number]
    points, hints = h.grade(part, h.run(h.cells(lambda p: True, solution=False)))
    assert points == 0 and hints


@pytest.mark.parametrize("number", list(HARNESSES))
def test_each_exercise_links_back_to_its_chapter(number):
    chapter = {"4.1": "04_scaling_up", "5.1": "05_self_play_and_populations",
               "6.1": "06_hindsight_rationality"}[number]
    assert f"(../chapters/{chapter}.ipynb)" in HARNESSES[number].exercise.cells[0].source


# ------------------------------------------------------------------ 4.1
def _kuhn_episode_from_labkit(policy, player, uniforms, exploration):
    """labkit's outcome-sampling regret increments for one stream of numbers at `policy`."""
    game = lk.games.load("kuhn_poker")
    with lk.kernels.using("numpy"):                   # its Python episode draws through _draw
        solver = lk.MCCFR(game, sampling="outcome", seed=0, exploration=exploration)
    solver.regrets = [[float(x) for x in row] for row in policy]
    solver._sigma = [None] * game.num_infosets
    solver._draw = iter(uniforms).__next__
    return solver.sampled_regrets(player)


def test_the_sampled_values_imply_labkits_regrets():
    for seed in range(60):
        policy, player = hidden4.POLICIES[seed % 2], seed % 2
        eps = (0.6, 0.3, 1.0)[seed % 3]
        u = hidden4.stream(seed)
        q = hidden4.sampled_values(policy, player, u, eps)
        np.testing.assert_allclose(q - (policy * q).sum(axis=1, keepdims=True) * (q != 0).any(axis=1, keepdims=True),
                                   _kuhn_episode_from_labkit(policy, player, u, eps), atol=1e-12)


def _all_outcomes(policy, player, exploration):
    """Every terminal history as (its sampling probability, uniform numbers that sample it)."""
    game = lk.games.load("kuhn_poker")
    first = np.searchsorted(game.parent, np.arange(game.num_histories))
    out = []

    def walk(h, probability, numbers):
        if game.player[h] == lk.games.TERMINAL:
            out.append((probability, numbers + [0.5] * 6))
            return
        if game.player[h] == lk.games.CHANCE:
            p = game.chance_prob[first[h]:first[h] + np.count_nonzero(game.parent == h)]
        else:
            sigma = policy[game.infoset[h]]
            p = exploration / 2 + (1 - exploration) * sigma if game.player[h] == player else sigma
        edges = np.r_[0.0, np.cumsum(p)]
        for k in range(len(p)):
            if p[k] > 0:
                walk(first[h] + k, probability * p[k], numbers + [(edges[k] + edges[k + 1]) / 2])

    walk(0, 1.0, [])
    return out


def test_the_sampled_values_are_unbiased_exactly():
    # the expectation over every outcome, weighted by its sampling probability, is the exact value
    for policy, player, eps in [(hidden4.POLICIES[0], 0, 0.6), (hidden4.POLICIES[1], 1, 0.3)]:
        outcomes = _all_outcomes(policy, player, eps)
        assert sum(p for p, _ in outcomes) == pytest.approx(1.0)
        mean = sum(p * hidden4.sampled_values(policy, player, u, eps) for p, u in outcomes)
        np.testing.assert_allclose(mean, hidden4.exact_values(policy, player), atol=1e-12)
        biased = sum(p * hidden4.sampled_values(policy, player, u, eps, importance=False) for p, u in outcomes)
        assert np.abs(biased - hidden4.exact_values(policy, player)).max() > 0.05


def test_sampled_values_without_importance_weights_get_their_hint():
    h = HARNESSES["4.1"]
    edits = {"4.1(a)": [("action_value = value / s[k]", "action_value = value"),
                        ("q[I, k] = others / sampled * action_value", "q[I, k] = others * action_value")],
             "4.1(b)": [("range(40_000)", "range(100)")]}
    wrong = h.run(h.cells(lambda p: True, edits=edits))
    points, hints = h.grade("4.1(a)", wrong)
    assert points == 0 and all("leave out the importance weights" in hint for hint in hints)
    points, hints = h.grade("4.1(b)", wrong)
    assert points == 0 and "biased" in hints[0]


# ------------------------------------------------------------------ 5.1
def test_the_meta_game_of_pure_strategies_has_kuhns_known_entries():
    kuhn = lk.games.load("kuhn_poker")
    bet = lk.TabularPolicy.pure(kuhn, [1] * 12).probs
    check = lk.TabularPolicy.pure(kuhn, [0] * 12).probs
    # always bet against always bet: every hand is called, the higher card wins 2 either way
    # always pass against always pass: a showdown for the antes
    assert np.allclose(hidden5.meta_game([bet, check], [bet, check]), [[0.0, 1.0], [-1.0, 0.0]])


def test_double_oracle_reaches_kuhns_value(solutions):
    run = solutions["5.1"]["double_oracle"](lk.uniform_policy(lk.games.load("kuhn_poker")).probs)
    assert lk.expected_payoffs(lk.games.load("kuhn_poker"), run["policy"])[0] == pytest.approx(-1 / 18, abs=1e-9)


def test_a_plain_average_of_the_population_gets_its_hint():
    h = HARNESSES["5.1"]
    plain = {"5.1(b)": [("    return lk.TabularPolicy.mixture(policies, weights).probs",
                         "    return sum(w * p.probs for w, p in zip(weights, policies))")]}
    points, hints = h.grade("5.1(b)", h.run(h.cells(lambda p: True, edits=plain)))
    assert points == 0
    assert "averages the population's tables" in hints[0]


def test_a_meta_game_of_the_wrong_player_gets_its_hint():
    h = HARNESSES["5.1"]
    wrong = {"5.1(a)": [("lk.expected_payoffs(kuhn, joint(a, b))[0]", "lk.expected_payoffs(kuhn, joint(a, b))[1]")]}
    points, hints = h.grade("5.1(a)", h.run(h.cells(lambda p: p == "5.1(a)", edits=wrong)))
    assert points == 0 and all("player 1's payoffs" in hint for hint in hints)


# ------------------------------------------------------------------ 6.1
def _table_formulas(n, sizes):
    """Regrets per information set, from the table of chapter 6 (shared/EFR.md)."""
    d, internal = len(sizes), n * (n - 1)
    return {"act": n, "act_in": internal, "cf": n, "cf_in": internal, "bps": (d + 1) * n,
            "cfps": (d + 1) * internal, "csps": n * (d + sum(k - 1 for k in sizes)) + internal,
            "tips": (1 + sum(sizes)) * internal, "bhv": int(np.prod(sizes)) * internal}


@pytest.mark.parametrize("key, n, sizes", [("Ks|||", 2, []), ("Js||cr|", 3, [2]), ("Jh|Ks|rrc|r", 3, [3]),
                                           ("Qs|Kh|cc|rr", 2, [2, 2]), ("Ks|Jh|crc|crr", 2, [2, 2]),
                                           ("Kh|Ks|crrc|cr", 3, [2, 3, 2])])
def test_the_reference_counts_follow_the_chapters_table(key, n, sizes):
    # n and the n_k read off the key by hand: the acting player's earlier decisions and their actions
    assert hidden6.reference_counts(key) == _table_formulas(n, sizes)


def test_the_reference_regrets_come_from_applying_each_deviation():
    from labkit import hindsight
    kuhn = lk.games.load("kuhn_poker")
    profiles, player = hidden6.RECORDINGS[1], 0
    gains, deviations = hindsight.deviation_gains(kuhn, profiles, player, "cf")
    k = int(np.argmax(gains.sum(axis=1)))
    brute = sum(lk.expected_payoffs(kuhn, hindsight.deviated_strategy(kuhn, p, deviations[k]))[player]
                - lk.expected_payoffs(kuhn, p)[player] for p in profiles)
    assert hidden6.reference_regrets("cf")[2] == pytest.approx(brute, abs=1e-12)


def test_a_counterfactual_deviation_that_does_not_reroute_gets_its_hint():
    h = HARNESSES["6.1"]
    wrong = {"6.1(b)": [("route = predecessors(kuhn, I) if counterfactual else []", "route = []")]}
    points, hints = h.grade("6.1(b)", h.run(h.cells(lambda p: True, edits=wrong)))
    assert points == 1 and len(hints) == 1 and "the other type" in hints[0]


@pytest.mark.parametrize("number, part", ALL_PARTS)
def test_the_public_check_passes_the_solution_and_flags_the_template(solutions, number, part):
    h = HARNESSES[number]
    assert h.public(part, solutions[number]).ok
    blank = h.public(part, h.run(h.cells(lambda p: True, solution=False)))
    assert not blank.ok and blank.hints


@pytest.mark.parametrize("chapter, exercise", [("05_self_play_and_populations", "5_1_double_oracle"),
                                               ("09_lab15_leduc", "lab15_leduc_solvers")])
def test_the_chapters_link_to_their_exercises(chapter, exercise):
    # chapters 4 and 6 get their links (to 4.1 and 6.1) from the helpers who own those chapters
    import nbformat
    from exercise_harness import ROOT
    nb = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    assert any(f"(../exercises/{exercise}.ipynb)" in c.source for c in nb.cells if c.cell_type == "markdown")
