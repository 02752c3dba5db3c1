"""Invariants of policies and evaluation, checked on random policies (hypothesis).

NashConv is never negative and vanishes at the LP equilibrium; a best response is at least
as good as every pure strategy and as good as the best of them; a reach-weighted mixture
pays the weighted average; invalid tables and ill-formed games are refused by name.
"""
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit as lk
from labkit.evaluate import best_response_values
from labkit.games import CHANCE, TERMINAL, GameError, MatrixGame, compile_game
from labkit.policy import normalize_rows

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GAMES = [
    "kuhn_poker",
    "kuhn_poker(players=3)",
    "goofspiel(num_cards=3,players=2,points_order=random,imp_info=True,returns_type=win_loss)",
    "goofspiel(num_cards=3,players=3,points_order=descending,imp_info=False,returns_type=point_difference)",
    "biased_rock_paper_scissors",
    "climbing_game",
    "prisoners_dilemma",
]
ZERO_SUM_GAMES = ["kuhn_poker", GAMES[2], "rock_paper_scissors", "biased_rock_paper_scissors",
                  "preference_game", "goofspiel(num_cards=4,points_order=ascending,imp_info=True)"]


@st.composite
def policies(draw, game):
    """Random joint policies, many of them with pure or nearly pure rows: weights drawn from
    {0} and (0, 1], raised to a random power, renormalized over the legal actions."""
    seed = draw(st.integers(0, 2**32 - 1))
    zeros = draw(st.floats(0.0, 0.8))
    sharpness = draw(st.sampled_from([0.5, 1.0, 4.0, 20.0]))
    rng = np.random.default_rng(seed)
    raw = rng.random(game.legal_mask.shape) ** sharpness * (rng.random(game.legal_mask.shape) >= zeros)
    return lk.TabularPolicy(game, normalize_rows(game, raw))


def _game(spec):
    return lk.games.load(spec)


# ------------------------------------------------------------------ NashConv

@pytest.mark.parametrize("spec", GAMES)
@PROPERTY
@given(data=st.data())
def test_nash_conv_is_never_negative(spec, data):
    game = _game(spec)
    policy = data.draw(policies(game))
    gains = best_response_values(game, policy) - lk.expected_payoffs(game, policy)
    assert np.all(gains >= -1e-12)
    assert lk.nash_conv(game, policy) == pytest.approx(gains.sum(), abs=1e-12)


@pytest.mark.parametrize("spec", ZERO_SUM_GAMES)
def test_nash_conv_vanishes_at_the_lp_equilibrium(spec):
    game = _game(spec)
    policy, value = lk.zero_sum_equilibrium(game)
    assert lk.nash_conv(game, policy) == pytest.approx(0.0, abs=1e-9)
    assert lk.expected_payoffs(game, policy)[0] == pytest.approx(value, abs=1e-9)


@PROPERTY
@given(st.integers(2, 4), st.integers(2, 4), st.integers(0, 2**32 - 1))
def test_random_zero_sum_matrix_games_lp_is_an_equilibrium(rows, cols, seed):
    A = np.random.default_rng(seed).integers(-5, 6, size=(rows, cols))
    game = lk.games.load(MatrixGame(A))
    policy, value = lk.zero_sum_equilibrium(game)
    assert lk.nash_conv(game, policy) == pytest.approx(0.0, abs=1e-9)
    # von Neumann: the value lies between the pure maximin and minimax
    assert A.min(axis=1).max() - 1e-9 <= value <= A.max(axis=0).min() + 1e-9


# ------------------------------------------------------------------ best response vs pure strategies

def _pure_strategy_values(game, policy, player):
    """The player's expected return for every pure strategy (one legal action per own infoset)
    while the others keep `policy`."""
    mine = game.infosets_of(player)
    values = []
    for choice in itertools.product(*(game.legal_actions(i) for i in mine)):
        probs = policy.probs.copy()
        probs[mine] = 0.0
        probs[mine, list(choice)] = 1.0
        values.append(lk.expected_payoffs(game, probs)[player])
    return np.array(values)


@pytest.mark.parametrize("spec", ["kuhn_poker", "biased_rock_paper_scissors", "climbing_game"])
@PROPERTY
@given(data=st.data())
def test_best_response_is_the_best_pure_strategy(spec, data):
    game = _game(spec)
    policy = data.draw(policies(game))
    for player in range(game.num_players):
        pure = _pure_strategy_values(game, policy, player)
        if spec == "kuhn_poker":
            assert len(pure) == 64
        br = lk.best_response(game, policy, player)
        assert np.all(br.value >= pure - 1e-12)
        assert br.value == pytest.approx(pure.max(), abs=1e-12)
        # the returned policy realizes that value
        assert lk.expected_payoffs(game, br.policy)[player] == pytest.approx(br.value, abs=1e-12)


# ------------------------------------------------------------------ mixtures

def _with_rows_of(game, player, own, others):
    probs = others.probs.copy()
    mine = game.infosets_of(player)
    probs[mine] = own.probs[mine]
    return lk.TabularPolicy(game, probs)


@pytest.mark.parametrize("spec", ["kuhn_poker", "kuhn_poker(players=3)", GAMES[2]])
@PROPERTY
@given(data=st.data(), weight=st.floats(0.0, 1.0))
def test_mixture_pays_the_weighted_average(spec, data, weight):
    game = _game(spec)
    first, second, others = (data.draw(policies(game)) for _ in range(3))
    player = data.draw(st.integers(0, game.num_players - 1))
    a = _with_rows_of(game, player, first, others)
    b = _with_rows_of(game, player, second, others)
    mixed = lk.TabularPolicy.mixture([a, b], [weight, 1 - weight])
    expected = weight * lk.expected_payoffs(game, a) + (1 - weight) * lk.expected_payoffs(game, b)
    np.testing.assert_allclose(lk.expected_payoffs(game, mixed), expected, atol=1e-12)
    # the other players' rows are untouched
    others_rows = game.infoset_player != player
    np.testing.assert_allclose(mixed.probs[others_rows], others.probs[others_rows], atol=1e-12)


def test_plain_average_of_behavioral_policies_is_not_the_mixture():
    # Kuhn: "always bet" and "always pass" for player 0 against a uniform player 1
    game = _game("kuhn_poker")
    uniform = lk.TabularPolicy.uniform(game)
    bet = _with_rows_of(game, 0, lk.TabularPolicy.pure(game, [1] * game.num_infosets), uniform)
    check = _with_rows_of(game, 0, lk.TabularPolicy.pure(game, [0] * game.num_infosets), uniform)
    target = 0.5 * (lk.expected_payoffs(game, bet) + lk.expected_payoffs(game, check))
    mixed = lk.TabularPolicy.mixture([bet, check])
    np.testing.assert_allclose(lk.expected_payoffs(game, mixed), target, atol=1e-12)
    plain = lk.TabularPolicy(game, 0.5 * (bet.probs + check.probs))
    assert abs(lk.expected_payoffs(game, plain)[0] - target[0]) > 1e-3


# ------------------------------------------------------------------ invalid probabilities

CORRUPTIONS = ["negative", "sum", "illegal", "nan"]


@PROPERTY
@given(data=st.data(), kind=st.sampled_from(CORRUPTIONS),
       spec=st.sampled_from(["kuhn_poker", "leduc_poker", GAMES[2]]))
def test_invalid_probabilities_are_refused_naming_the_infoset(data, kind, spec):
    game = _game(spec)
    probs = data.draw(policies(game)).probs.copy()
    if kind == "illegal":
        rows = np.flatnonzero(~game.legal_mask.all(axis=1))
        if len(rows) == 0:
            return                                     # every action is legal everywhere
        i = int(data.draw(st.sampled_from(list(rows))))
        a = int(np.flatnonzero(~game.legal_mask[i])[0])
        probs[i, a] = 0.3
        probs[i] *= 1 / probs[i].sum()                 # still sums to 1: only the support is wrong
    else:
        i = data.draw(st.integers(0, game.num_infosets - 1))
        a = int(game.legal_actions(i)[0])
        probs[i, a] = {"negative": -0.25, "sum": probs[i, a] + 0.5, "nan": np.nan}[kind]
    with pytest.raises(ValueError) as err:
        lk.TabularPolicy(game, probs)
    assert repr(game.infoset_keys[i]) in str(err.value)


@pytest.mark.parametrize("shape", [(12, 3), (11, 2), (12,), (2, 6, 2)])
def test_wrong_shape_is_refused(shape):
    game = _game("kuhn_poker")
    with pytest.raises(ValueError, match=r"shape"):
        lk.TabularPolicy(game, np.full(shape, 0.5))
    with pytest.raises(ValueError, match=r"shape"):
        lk.nash_conv(game, np.full(shape, 0.5))


# ------------------------------------------------------------------ ill-formed games

class _ToyGame:
    """A tiny game from a table {history (tuple of actions): (player, legal actions, infoset key)};
    histories not in the table are terminals paying (len(history), -len(history))."""

    name = "toy"
    num_players = 2
    num_distinct_actions = 3

    def __init__(self, nodes):
        self.nodes = nodes

    def initial_state(self):
        return _ToyState(self.nodes, ())


class _ToyState:
    def __init__(self, nodes, history):
        self.nodes, self.history = nodes, history

    def current_player(self):
        return self.nodes[self.history][0] if self.history in self.nodes else TERMINAL

    def legal_actions(self):
        return self.nodes[self.history][1]

    def chance_outcomes(self):
        actions = self.nodes[self.history][1]
        return [(a, 1 / len(actions)) for a in actions]

    def child(self, action):
        return _ToyState(self.nodes, self.history + (action,))

    def returns(self):
        return [len(self.history), -len(self.history)]

    def infoset_key(self):
        return self.nodes[self.history][2]


def test_forgetting_ones_own_move_is_refused():
    # player 0 moves, then moves again without remembering the first move
    nodes = {(): (0, [0, 1], "start"), (0,): (0, [0, 1], "forgetful"), (1,): (0, [0, 1], "forgetful")}
    with pytest.raises(GameError, match="'forgetful'.*perfect recall"):
        compile_game(_ToyGame(nodes))


def test_forgetting_what_one_saw_is_refused():
    # chance deals, player 0 sees it and moves, then later forgets what it saw
    nodes = {(): (CHANCE, [0, 1], None),
             (0,): (0, [0, 1], "saw 0"), (1,): (0, [0, 1], "saw 1"),
             **{(c, a): (1, [0, 1], "p1") for c in (0, 1) for a in (0, 1)},
             **{(c, a, b): (0, [0, 1], f"moved {a}") for c in (0, 1) for a in (0, 1) for b in (0, 1)}}
    with pytest.raises(GameError, match="'moved 0'.*perfect recall"):
        compile_game(_ToyGame(nodes))


def test_absent_minded_driver_is_refused():
    nodes = {(): (0, [0, 1], "junction"), (0,): (0, [0, 1], "junction")}
    with pytest.raises(GameError, match="'junction'.*perfect recall"):
        compile_game(_ToyGame(nodes))


def test_inconsistent_actions_at_an_infoset_are_refused():
    nodes = {(): (0, [0, 1], "first"), (0,): (1, [0, 1], "guess"), (1,): (1, [0, 1, 2], "guess")}
    with pytest.raises(GameError, match="'guess'.*inconsistent legal actions"):
        compile_game(_ToyGame(nodes))


def test_players_may_share_an_infoset_string():
    # infosets are (player, string) pairs, as in OpenSpiel: player 0's "same" is not player 1's
    nodes = {(): (0, [0, 1], "same"), (0,): (1, [0, 1], "same"), (1,): (1, [0, 1], "same")}
    game = compile_game(_ToyGame(nodes))
    assert game.num_infosets == 2
    assert game.infoset_keys == ["same (player 0)", "same (player 1)"]
    assert game.infoset_player.tolist() == [0, 1]


def test_a_well_formed_toy_game_compiles():
    nodes = {(): (0, [0, 1], "first"), (0,): (1, [0, 1], "guess"), (1,): (1, [0, 1], "guess")}
    game = compile_game(_ToyGame(nodes))
    assert (game.num_histories, game.num_infosets) == (7, 2)
    assert issubclass(GameError, ValueError)
