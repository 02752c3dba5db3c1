"""labkit's games and evaluation against OpenSpiel, computed in the same run.

1. Structure: a native game and the same game read from OpenSpiel compile to identical trees
   (histories, chance probabilities, returns, information partition).
2. Values: expected payoffs, each player's best-response value and NashConv of the uniform
   policy and of seeded random policies agree with OpenSpiel's C++ and Python evaluators,
   for trees built with `load` and with `from_openspiel`.
"""
import functools
import re

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python import policy as os_policy                      # noqa: E402
from open_spiel.python.algorithms import best_response as os_best_response  # noqa: E402
from open_spiel.python.algorithms import exploitability as os_exploitability  # noqa: E402

import labkit as lk                                                    # noqa: E402
from labkit.evaluate import best_response_values                       # noqa: E402
from labkit.games.openspiel_adapter import OpenSpielDefinition, tree_differences  # noqa: E402

STRUCTURE_SPECS = [
    "kuhn_poker",
    "kuhn_poker(players=3)",
    "kuhn_poker(players=4)",
    "leduc_poker",
] + [
    f"goofspiel(num_cards={cards},players={players},points_order={order},imp_info={imp},returns_type={returns})"
    for cards, players, order, imp, returns in [
        (3, 2, "random", True, "win_loss"),
        (3, 2, "random", False, "point_difference"),
        (3, 3, "ascending", False, "win_loss"),
        (3, 3, "random", True, "total_points"),
        (4, 2, "ascending", True, "win_loss"),
        (4, 2, "descending", True, "total_points"),
        (4, 3, "descending", True, "win_loss"),
        (5, 2, "descending", True, "win_loss"),
        (1, 2, "random", True, "win_loss"),
        (2, 3, "random", False, "win_loss"),
    ]
]


@pytest.mark.parametrize("spec", STRUCTURE_SPECS)
def test_native_tree_is_openspiels_tree(spec):
    native, reference = lk.games.load(spec), lk.games.from_openspiel(spec)
    assert tree_differences(native, reference) == []
    assert (native.num_histories, native.num_infosets) == (reference.num_histories, reference.num_infosets)


class _Restricted:
    """A game definition seen through two changes: the first chance outcomes are fixed to
    `deal` (probability 1), so that a huge game can be compared on a slice of its tree, and
    every infoset key passes through `relabel`."""

    def __init__(self, definition, deal=(), relabel=None):
        self.inner, self.deal, self.relabel = definition, tuple(deal), relabel or (lambda key: key)
        self.name, self.num_players = definition.name, definition.num_players
        self.num_distinct_actions = definition.num_distinct_actions

    def initial_state(self):
        return _RestrictedState(self, self.inner.initial_state(), self.deal)


class _RestrictedState:
    def __init__(self, game, state, deal):
        self.game, self.state, self.deal = game, state, deal

    def current_player(self):
        return self.state.current_player()

    def legal_actions(self):
        return self.state.legal_actions()

    def returns(self):
        return self.state.returns()

    def infoset_key(self):
        return self.game.relabel(self.state.infoset_key())

    def chance_outcomes(self):
        return [(self.deal[0], 1.0)] if self.deal else self.state.chance_outcomes()

    def child(self, action):
        rest = self.deal[1:] if self.deal and self.state.current_player() == lk.games.CHANCE else self.deal
        return _RestrictedState(self.game, self.state.child(action), rest)



@pytest.mark.parametrize("deal", [(0, 2, 4), (5, 1, 3), (0, 1, 7), (6, 7, 2)])
def test_three_player_leduc_matches_openspiel_deal_by_deal(deal):
    # the whole 3-player tree has 1,831,601 histories (40 s to compile both); one deal of the
    # private cards is a subtree with every betting sequence and every public card
    from labkit.games.leduc import LeducPoker
    native = lk.games.compile_game(_Restricted(LeducPoker(players=3), deal))
    reference = lk.games.compile_game(_Restricted(OpenSpielDefinition("leduc_poker(players=3)"), deal))
    assert native.num_histories > 5000
    assert tree_differences(native, reference) == []


def test_tree_differences_reports_a_changed_partition_and_payoff():
    native = lk.games.load("kuhn_poker")
    other = lk.games.from_openspiel("kuhn_poker")
    assert tree_differences(native, other) == []
    # player 1 no longer tells the jack from the queen after a pass
    merged = lk.games.compile_game(_Restricted(lk.games.KuhnPoker(),
                                               relabel=lambda key: re.sub(r"^[JQ]\|p$", "J or Q|p", key)))
    assert merged.num_infosets == 11
    assert any("split into 2 infosets" in p for p in tree_differences(merged, other))
    changed = lk.games.from_openspiel("kuhn_poker")
    changed.returns[changed.terminals[0]] += 1.0
    assert any("returns differ" in p for p in tree_differences(native, changed))
    assert any("histories" in p for p in tree_differences(native, lk.games.load("kuhn_poker(players=3)")))


def test_goofspiel_counts_its_histories():
    for spec in STRUCTURE_SPECS:
        if spec.startswith("goofspiel"):
            game = lk.games.load(spec)
            assert game.definition.count_histories() == game.num_histories


# ---------------------------------------------------------------- values against OpenSpiel

VALUE_SPECS = [
    "kuhn_poker",
    "kuhn_poker(players=3)",
    "leduc_poker",
    "goofspiel(num_cards=4,players=2,points_order=descending,imp_info=True,returns_type=win_loss)",
    "goofspiel(num_cards=3,players=3,points_order=random,imp_info=True,returns_type=point_difference)",
]


def _openspiel_game(spec):
    game = pyspiel.load_game(spec)
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)
    return game


@functools.lru_cache(maxsize=None)
def _reference_tree(spec):
    return lk.games.from_openspiel(spec)


def _openspiel_keys(game, spec):
    """OpenSpiel's information state string of each infoset of `game` (native or adapted).

    The two trees have the same histories in the same order, so the infoset of a decision
    history in one tree names the infoset of the same history in the other."""
    reference = _reference_tree(spec)
    assert tree_differences(game, reference) == []
    keys = [None] * game.num_infosets
    for h in np.flatnonzero(game.infoset >= 0):
        keys[game.infoset[h]] = reference.infoset_keys[reference.infoset[h]]
    return keys


def _as_openspiel(game, probs, keys, os_game):
    """The labkit policy `probs` as an OpenSpiel python TabularPolicy and as the dict
    {information state: [(action, probability)]} that OpenSpiel's C++ functions take."""
    python_policy = os_policy.TabularPolicy(os_game)
    as_dict = {}
    for i, key in enumerate(keys):
        python_policy.policy_for_key(key)[:] = probs[i]
        # OpenSpiel's C++ check is probability <= 1, exactly
        as_dict[key] = [(int(a), float(min(probs[i, a], 1.0))) for a in game.legal_actions(i)]
    return python_policy, as_dict


def _random_policy(game, seed):
    rng = np.random.default_rng(seed)
    raw = rng.exponential(size=game.legal_mask.shape) * game.legal_mask
    return lk.TabularPolicy(game, raw / raw.sum(axis=1, keepdims=True))


@pytest.mark.parametrize("loader", ["load", "from_openspiel"])
@pytest.mark.parametrize("spec", VALUE_SPECS)
def test_nash_conv_and_best_response_values_match_openspiel(spec, loader):
    game = getattr(lk.games, loader)(spec)
    os_game = _openspiel_game(spec)
    keys = _openspiel_keys(game, spec)
    root = os_game.new_initial_state()
    for policy in (lk.TabularPolicy.uniform(game), _random_policy(game, 7)):
        _, as_dict = _as_openspiel(game, policy.probs, keys, os_game)
        expected = pyspiel.nash_conv(os_game, as_dict)
        assert lk.nash_conv(game, policy) == pytest.approx(expected, abs=1e-10)
        assert lk.exploitability(game, policy) == pytest.approx(expected / game.num_players, abs=1e-10)
        br_values = best_response_values(game, policy)
        for p in range(game.num_players):
            reference = pyspiel.TabularBestResponse(os_game, p, as_dict).value(root.history_str())
            assert br_values[p] == pytest.approx(reference, abs=1e-10)
            assert lk.best_response(game, policy, p).value == pytest.approx(reference, abs=1e-10)


@pytest.mark.parametrize("spec", ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker", VALUE_SPECS[3]])
def test_best_responses_match_openspiels_python_evaluation(spec):
    game = lk.games.load(spec)
    os_game = _openspiel_game(spec)
    policy = _random_policy(game, 3)
    keys = _openspiel_keys(game, spec)
    python_policy, _ = _as_openspiel(game, policy.probs, keys, os_game)
    result = os_exploitability.nash_conv(os_game, python_policy, return_only_nash_conv=False)
    assert lk.nash_conv(game, policy) == pytest.approx(result.nash_conv, abs=1e-10)
    # improvement of each player = its best-response value - its on-policy value
    np.testing.assert_allclose(best_response_values(game, policy) - lk.expected_payoffs(game, policy),
                               result.player_improvements, atol=1e-10)
    for p in range(game.num_players if game.num_histories < 5000 else 0):
        reference = os_best_response.BestResponsePolicy(os_game, p, python_policy)
        ours = lk.best_response(game, policy, p)
        assert ours.value == pytest.approx(reference.value(os_game.new_initial_state()), abs=1e-10)
        # OpenSpiel's best-response action at every infoset of p is optimal for labkit too
        for i in game.infosets_of(p):
            theirs = reference.best_response_action(keys[i])
            q = ours.action_values[i]
            assert q[theirs] == pytest.approx(q[game.legal_mask[i]].max(), abs=1e-12)


def test_lp_equilibrium_has_zero_nash_conv_in_openspiel():
    game = lk.games.load("leduc_poker")
    policy, value = lk.zero_sum_equilibrium(game)
    os_game = _openspiel_game("leduc_poker")
    _, as_dict = _as_openspiel(game, policy.probs, _openspiel_keys(game, "leduc_poker"), os_game)
    assert pyspiel.nash_conv(os_game, as_dict) < 1e-8
    assert value == pytest.approx(-0.085606424078, abs=1e-9)


def test_perfect_information_goofspiel_differs_from_openspiel_only_where_openspiel_forgets():
    # OpenSpiel's information state for imp_info=False shows hands and points but not the order
    # of one's own bids: from 4 cards on two orders give one string (imperfect recall), which
    # labkit refuses; labkit's native keys list every bid, a perfect-recall refinement
    spec = "goofspiel(num_cards=4,points_order=ascending,imp_info=False)"
    with pytest.raises(lk.games.GameError, match="perfect recall"):
        lk.games.from_openspiel(spec)
    native = lk.games.load(spec)
    imperfect = lk.games.load(spec.replace("imp_info=False", "imp_info=True"))
    assert native.num_histories == imperfect.num_histories == 1077


@pytest.mark.parametrize("ours, theirs", [
    (lk.games.rock_paper_scissors(), "matrix_rps"),
    # OpenSpiel's matrix_pd pays reward 5, sucker 0, temptation 10, punishment 1
    (lk.games.prisoners_dilemma(reward=5, sucker=0, temptation=10, punishment=1), "matrix_pd"),
])
def test_matrix_games_match_openspiels_turn_based_matrix_games(ours, theirs):
    assert tree_differences(lk.games.load(ours), lk.games.from_openspiel(theirs)) == []


@pytest.mark.parametrize("spec", ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"])
def test_policies_convert_both_ways_and_keep_their_nash_conv(spec):
    from open_spiel.python.algorithms import exploitability as os_exploitability

    from labkit.games.openspiel_adapter import from_openspiel_policy, to_openspiel_policy
    game = lk.games.load(spec)
    policy = _random_policy(game, seed=3)
    theirs = to_openspiel_policy(policy)
    np.testing.assert_array_equal(from_openspiel_policy(game, theirs).probs, policy.probs)
    assert os_exploitability.nash_conv(pyspiel.load_game(spec), theirs) == pytest.approx(
        lk.nash_conv(game, policy), abs=1e-12)


# ---------------------------------------------------------------- more OpenSpiel games
UNIVERSAL_LEDUC = ("universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=1 1,raiseSize=2 4,"
                   "firstPlayer=1 1,maxRaises=2 2,numSuits=2,numRanks=3,numHoleCards=1,numBoardCards=0 1)")
MORE_GAMES = ["sheriff", "tiny_hanabi", "blotto", "dark_hex(num_rows=2,num_cols=2)", UNIVERSAL_LEDUC,
              pytest.param("tiny_bridge_2p", marks=pytest.mark.slow),          # 107 k histories, ~45 s
              pytest.param("liars_dice(numdice=1)", marks=pytest.mark.slow)]   # 295 k histories, ~90 s


@pytest.mark.parametrize("spec", MORE_GAMES)
def test_more_openspiel_games_load_and_evaluate_as_openspiel_does(spec, capfd):
    from open_spiel.python.algorithms import expected_game_score
    game = lk.games.from_openspiel(spec)
    assert capfd.readouterr().err == ""                       # OpenSpiel's exception prints are captured
    os_game = game.definition.os_game
    # infosets per player: OpenSpiel's own tabular policy lists them
    counts = [len(states) for states in os_policy.TabularPolicy(os_game).states_per_player]
    assert np.bincount(game.infoset_player, minlength=game.num_players).tolist() == counts
    uniform = lk.TabularPolicy.uniform(game)
    theirs = os_policy.UniformRandomPolicy(os_game)
    values = expected_game_score.policy_value(os_game.new_initial_state(), [theirs] * game.num_players)
    np.testing.assert_allclose(lk.expected_payoffs(game, uniform), values, rtol=0, atol=1e-12)
    if game.num_histories < 50_000:                           # OpenSpiel's Python best response is slow
        assert lk.nash_conv(game, uniform) == pytest.approx(os_exploitability.nash_conv(os_game, theirs), abs=1e-10)


def test_universal_poker_leduc_configuration_is_leduc():
    game = lk.games.from_openspiel(UNIVERSAL_LEDUC)
    assert game.num_histories == lk.games.load("leduc_poker").num_histories
    assert lk.nash_conv(game, lk.TabularPolicy.uniform(game)) == pytest.approx(4.747222222222222, abs=1e-12)


def test_phantom_tic_tac_toe_is_refused_for_its_size_only():
    with pytest.raises(lk.games.GameError, match=r"phantom_ttt\(\) has 1\.\d+e\+10 histories \(estimated\).*"
                                                 r"max_histories=20,000,000"):
        lk.games.from_openspiel("phantom_ttt")
    # a slice of it (the game after five moves) compiles; the limit is an argument
    start = "start_at(game=phantom_ttt(),history=0;0;4;8;2;6)"
    assert lk.games.from_openspiel(start).num_histories == 80005
    with pytest.raises(lk.games.GameError, match="max_histories=1,000"):
        lk.games.from_openspiel(start, max_histories=1000)


def test_infoset_strings_shared_by_two_players_are_two_infosets():
    # Kuhn poker relabelled so that player 1's "0p" reads "0", the string of player 0's first infoset:
    # the same tree and the same values as OpenSpiel's, with (player, string) keys
    relabelled = lk.games.compile_game(_Restricted(OpenSpielDefinition("kuhn_poker"),
                                                   relabel=lambda key: re.sub(r"^(\d)p$", r"\1", key)))
    assert sum(key.endswith("(player 1)") for key in relabelled.infoset_keys) == 3
    assert tree_differences(relabelled, lk.games.from_openspiel("kuhn_poker")) == []
    assert lk.nash_conv(relabelled, lk.TabularPolicy.uniform(relabelled)) == pytest.approx(11 / 12, abs=1e-12)


def test_openspiel_errors_are_clear(capfd):
    with pytest.raises(TypeError, match="spec_or_game must be an OpenSpiel game string or a pyspiel.Game, got int 3"):
        lk.games.from_openspiel(3)
    with pytest.raises(ValueError, match="OpenSpiel cannot load 'no_such_game': Unknown game 'no_such_game'"):
        lk.games.from_openspiel("no_such_game")
    assert capfd.readouterr().err == ""
