"""The nine benchmark games of the EFR paper's Appendix E (labkit.experiments.games).

1. Every game's compiled tree is OpenSpiel's, position by position: walking pyspiel's own
   states along the tree's edges gives the same player, legal actions, chance probabilities,
   payoffs and information partition at every history. The walk uses pyspiel directly, not the
   adapter that built the trees read from OpenSpiel, so it checks those as well as the native
   Leduc and goofspiel.
2. EFR with blind counterfactual deviations is simultaneous CFR on each game (EFR.md: with
   "cf" every weight is 1 and every transformation external), against labkit's CFR and, where
   it runs in seconds, OpenSpiel's.
3. Tiny Hanabi collapses the eleven variants into the three the paper's tables keep.
"""
import numpy as np
import pytest

import labkit as lk
from labkit.efr import DEVIATION_NAMES, EFR
from labkit.experiments import efr_tournament, load_game
from labkit.experiments.games import PAPER_GAMES, TINY_HANABI_VARIANTS, paper_game, paper_variants, resolve_game
from labkit.tree import CHANCE, TERMINAL

pyspiel = pytest.importorskip("pyspiel")

SPECS = {game.key: game.spec for game in PAPER_GAMES}
# sizes measured with OpenSpiel 2.0.2 (histories, infosets), the turn-based trees
SIZES = {"leduc": (9457, 936), "goofspiel5_2p_descending": (26931, 2124), "goofspiel5_2p": (26931, 2124),
         "goofspiel4_2p_random": (26773, 3608), "goofspiel4_3p_descending": (26773, 414),
         "goofspiel4_3p": (26773, 414), "sheriff": (28085, 4681), "tiny_bridge_2p": (107129, 3584),
         "tiny_hanabi": (55, 8)}
SLOW = {"tiny_bridge_2p"}


def _param(key):
    return pytest.param(key, marks=pytest.mark.slow) if key in SLOW else key


def _openspiel(spec):
    game = pyspiel.load_game(spec.removeprefix("openspiel:"))
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)     # what the authors' LoadGameAsTurnBased does
    return game


def test_the_nine_games_of_appendix_e():
    assert [g.title for g in PAPER_GAMES] == [
        "Leduc hold'em (N = 2)", "goofspiel(5, ↓, N = 2)", "goofspiel(5, ↑, N = 2)", "goofspiel(4, R, N = 2)",
        "goofspiel(4, ↓, N = 3)", "goofspiel(4, ↑, N = 3)", "Sheriff (N = 2)", "tiny bridge (N = 2)",
        "tiny Hanabi (N = 2)"]
    assert [g.units for g in PAPER_GAMES] == ["mbb"] + ["win%"] * 5 + ["raw"] * 3
    assert paper_variants("tiny_hanabi") == TINY_HANABI_VARIANTS
    assert len(paper_variants("sheriff")) == len(paper_variants("leduc_poker")) == 11
    # a goofspiel string names its game whatever the order of its parameters
    assert paper_game("goofspiel(imp_info=True,points_order=random,num_cards=4)").key == "goofspiel4_2p_random"
    assert paper_game("goofspiel(num_cards=4,points_order=random,imp_info=False)") is None
    assert resolve_game("sheriff") == "openspiel:sheriff" and resolve_game("kuhn_poker") == "kuhn_poker"


@pytest.mark.parametrize("key", [_param(k) for k in SPECS])
def test_each_game_is_compiled_once_per_process(key):
    game = load_game(SPECS[key])
    assert load_game(SPECS[key]) is game
    assert (game.num_histories, game.num_infosets) == SIZES[key]


@pytest.mark.parametrize("key", [_param(k) for k in SPECS])
def test_tree_is_openspiels_position_by_position(key):
    tree, os_game = load_game(SPECS[key]), _openspiel(SPECS[key])
    order = np.argsort(tree.parent, kind="stable")       # children grouped by parent, in tree order
    first = np.searchsorted(tree.parent[order], np.arange(tree.num_histories))
    last = np.searchsorted(tree.parent[order], np.arange(tree.num_histories), side="right")
    states = [None] * tree.num_histories
    states[0] = os_game.new_initial_state()
    key_of_infoset = {}
    for h in range(tree.num_histories):
        state = states[h] if h == 0 else states[tree.parent[h]].child(int(tree.action[h]))
        states[h] = state
        children = order[first[h]:last[h]]
        player = state.current_player()
        assert tree.player[h] == player, (h, tree.player[h], player)
        if state.is_terminal():
            assert player == TERMINAL and len(children) == 0
            np.testing.assert_allclose(tree.returns[h], state.returns(), rtol=0, atol=1e-12)
            continue
        if player == CHANCE:
            outcomes = dict(state.chance_outcomes())
            assert sorted(tree.action[children].tolist()) == sorted(outcomes)
            for c in children:
                assert tree.chance_prob[c] == pytest.approx(outcomes[int(tree.action[c])], abs=1e-15)
            continue
        legal = state.legal_actions()
        assert sorted(tree.action[children].tolist()) == legal
        infoset = int(tree.infoset[h])
        assert tree.infoset_player[infoset] == player
        assert np.flatnonzero(tree.legal_mask[infoset]).tolist() == legal
        # one infoset per OpenSpiel information state, and the other way round
        assert key_of_infoset.setdefault(infoset, state.information_state_string()) \
            == state.information_state_string()
        states[h] = state
    assert len(set(key_of_infoset.values())) == len(key_of_infoset) == tree.num_infosets


@pytest.mark.parametrize("key", [k for k in SPECS if SPECS[k].startswith("goofspiel")])
def test_native_goofspiel_is_the_tree_read_from_openspiel(key):
    native, read = lk.games.load(SPECS[key]), lk.games.from_openspiel(SPECS[key])
    assert lk.games.tree_differences(native, read) == []


# ---------------------------------------------------------------------------- EFR "cf" is CFR
CF_ITERATIONS = 10


@pytest.mark.parametrize("key", [_param(k) for k in SPECS])
def test_efr_cf_equals_simultaneous_cfr(key):
    """Exact arithmetic makes the two the same algorithm; they must agree to 1e-12 at every
    iteration, also where chance acts between decisions (goofspiel(4, R): the point deck is
    shuffled at the root and every prize is drawn between the bids)."""
    game = load_game(SPECS[key])
    efr, cfr = EFR(game, "cf", record_profiles=False), lk.CFR(game, alternating_updates=False)
    for t in range(CF_ITERATIONS):
        efr.step()
        cfr.step()
        gap = np.abs(efr.current_policy().probs - cfr.current_policy().probs).max()
        assert gap <= 1e-12, f"{key}: iteration {t + 1}, largest difference {gap:.3g}"


@pytest.mark.parametrize("key,iterations", [("tiny_hanabi", 30), ("sheriff", 3)])
def test_efr_cf_equals_openspiels_cfr(key, iterations):
    from open_spiel.python.algorithms import cfr as os_cfr
    game, os_game = load_game(SPECS[key]), _openspiel(SPECS[key])
    solver = os_cfr._CFRSolver(os_game, regret_matching_plus=False, alternating_updates=False,
                               linear_averaging=False)
    efr = EFR(game, "cf", record_profiles=False)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
        efr.step()
    theirs = solver.current_policy()
    probs = efr.current_policy().probs
    for i, info_key in enumerate(game.infoset_keys):     # from_openspiel keys are OpenSpiel's strings
        expected = theirs.policy_for_key(info_key)
        np.testing.assert_allclose(probs[i, :len(expected)], expected, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------- tiny Hanabi
@pytest.mark.parametrize("regime", ["fixed", "simultaneous"])
def test_tiny_hanabi_has_three_distinct_learners(regime):
    """Each player acts once, with no predecessor (own depth 0 everywhere), so every type's
    only sequence has weight 1 and a type is its action transformations: external only, internal
    only, or both (the paper's Appendix E.1). With the authors' numerics, every variant earns
    what its class's representative earns, round by round, against each of the three."""
    game = load_game(SPECS["tiny_hanabi"])
    assert np.all(game.infoset_own_depth == 0)
    classes = {"cf": ("act", "cf", "bps"), "cf_in": ("act_in", "cf_in", "cfps", "csps", "tips", "bhv"),
               "cf_ex+in": ("cf_ex+in", "cfps_ex+in", "tips_ex+in")}
    assert sorted(n for names in classes.values() for n in names) == sorted(DEVIATION_NAMES)
    result = efr_tournament(SPECS["tiny_hanabi"], DEVIATION_NAMES, TINY_HANABI_VARIANTS, regime=regime,
                            rounds=40, executor="serial", progress=False, fixed_point="paper")
    values = dict(zip(result.rows, result.per_round_array()))
    for representative, members in classes.items():
        for name in members:
            np.testing.assert_allclose(values[name], values[representative], rtol=0, atol=1e-12, err_msg=name)
    for a, b in [("cf", "cf_in"), ("cf", "cf_ex+in"), ("cf_in", "cf_ex+in")]:
        assert np.abs(values[a] - values[b]).max() > 1e-3, (a, b)
