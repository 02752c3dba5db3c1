"""labkit.evaluate against a plain recursion over the game definition (no compiled tree), and
against Kuhn poker's closed-form equilibria."""
import numpy as np
import pytest

import labkit as lk
from labkit.evaluate import _best_response_tables, _reach, best_response_values, edge_probabilities
from labkit.games import CHANCE, TERMINAL
from labkit.policy import normalize_rows

SPECS = ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker",
         "goofspiel(num_cards=3,players=3,points_order=random,imp_info=True,returns_type=point_difference)",
         "climbing_game"]


def _random_policy(game, seed):
    rng = np.random.default_rng(seed)
    return lk.TabularPolicy(game, normalize_rows(game, rng.random(game.legal_mask.shape) ** 3))


class Recursion:
    """Walks the definition's states depth first, carrying each player's and chance's reach."""

    def __init__(self, game, probs):
        self.game, self.probs = game, probs
        n = game.num_players
        self.q = np.zeros(game.legal_mask.shape)           # counterfactual action values
        self.terminal_reach = []                          # (reach row per player + chance) per terminal
        self.value = self.visit(game.definition.initial_state(), np.ones(n + 1))

    def visit(self, state, reach):
        p = state.current_player()
        if p == TERMINAL:
            self.terminal_reach.append(reach)
            return np.asarray(state.returns(), dtype=float)
        if p == CHANCE:
            value = 0.0
            for a, q in state.chance_outcomes():
                child_reach = reach.copy()
                child_reach[-1] *= q
                value = value + q * self.visit(state.child(a), child_reach)
            return value
        i = self.game.infoset_index(state.infoset_key())
        others = np.prod(np.delete(reach, p))
        value = 0.0
        for a in state.legal_actions():
            child_reach = reach.copy()
            child_reach[p] *= self.probs[i, a]
            child_value = self.visit(state.child(a), child_reach)
            self.q[i, a] += others * child_value[p]
            value = value + self.probs[i, a] * child_value
        return value


@pytest.mark.parametrize("spec", SPECS)
def test_evaluation_equals_a_recursion_over_the_definition(spec):
    game = lk.games.load(spec)
    policy = _random_policy(game, 5)
    reference = Recursion(game, policy.probs)
    np.testing.assert_allclose(lk.expected_payoffs(game, policy), reference.value, atol=1e-13)
    np.testing.assert_allclose(lk.history_values(game, policy)[0], reference.value, atol=1e-13)
    np.testing.assert_allclose(lk.counterfactual_values(game, policy), reference.q, atol=1e-13)
    # the recursion meets the terminals depth first, the tree numbers them breadth first:
    # compare the two sets of reach rows, each sorted
    F = lk.reach_probabilities(game, policy)[:, game.terminals].T
    ours = F[np.lexsort(F.T[::-1])]
    theirs = np.array(reference.terminal_reach)
    theirs = theirs[np.lexsort(theirs.T[::-1])]
    np.testing.assert_allclose(ours, theirs, atol=1e-14)
    assert F.prod(axis=1).sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("spec", SPECS)
def test_the_two_best_response_routes_agree(spec):
    # from the full reach array (used by solvers) and from terminal realization weights
    game = lk.games.load(spec)
    policy = _random_policy(game, 9)
    F = _reach(game, edge_probabilities(game, policy.probs))
    values = best_response_values(game, policy)
    for p in range(game.num_players):
        root, q = _best_response_tables(game, F, p)
        br = lk.best_response(game, policy, p)
        assert root == pytest.approx(values[p], abs=1e-12)
        assert br.value == pytest.approx(values[p], abs=1e-12)
        mine = game.infoset_player == p
        np.testing.assert_allclose(br.action_values[mine], q[mine], atol=1e-12)
        assert np.all(br.action_values[~mine] == 0)
        # the best response is pure on the player's infosets and leaves the others' rows alone
        assert np.all(np.isin(br.policy.probs[mine], (0.0, 1.0)))
        np.testing.assert_array_equal(br.policy.probs[~mine], policy.probs[~mine])
    assert lk.exploitability(game, policy) == pytest.approx(lk.nash_conv(game, policy) / game.num_players)


@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.25, 1 / 3])
def test_kuhn_closed_form_equilibria(alpha):
    # Kuhn (1950): player 0 bets the jack with alpha, the king with 3 alpha, and calls a bet with
    # the queen with alpha + 1/3; player 1 bets after a pass with the jack 1/3 and the king
    # always, calls with the queen 1/3 and the king always. Every alpha in [0, 1/3] is an
    # equilibrium worth -1/18 to player 0.
    game = lk.games.load("kuhn_poker")
    bet = {"J|": alpha, "Q|": 0.0, "K|": 3 * alpha, "J|pb": 0.0, "Q|pb": alpha + 1 / 3, "K|pb": 1.0,
           "J|p": 1 / 3, "Q|p": 0.0, "K|p": 1.0, "J|b": 0.0, "Q|b": 1 / 3, "K|b": 1.0}
    policy = lk.TabularPolicy.from_dict(game, {key: [1 - b, b] for key, b in bet.items()})
    assert lk.expected_payoffs(game, policy)[0] == pytest.approx(-1 / 18, abs=1e-12)
    assert lk.nash_conv(game, policy) == pytest.approx(0.0, abs=1e-12)
    # leaving the family is exploitable: player 0 betting the queen
    bet["Q|"] = 0.5
    off = lk.TabularPolicy.from_dict(game, {key: [1 - b, b] for key, b in bet.items()})
    assert lk.nash_conv(game, off) > 1e-3


def test_evaluation_refuses_bad_arguments():
    game = lk.games.load("kuhn_poker")
    policy = lk.uniform_policy(game)
    with pytest.raises(ValueError, match="player must be an integer in 0..1"):
        lk.best_response(game, policy, 2)
    with pytest.raises(ValueError, match="leduc_poker"):
        lk.nash_conv(lk.games.load("leduc_poker"), policy)
    with pytest.raises(ValueError, match="joint policy"):
        lk.expected_payoffs(game, policy.probs[:6])


class _EntryGame:
    """Player 0 stays out (0: the game ends, payoffs (1, -1)) or enters (1); then player 1,
    not knowing the chance card, fights (0) or yields (1). A terminal before player 1's first
    move exercises the empty sequence."""

    name, num_players, num_distinct_actions = "entry", 2, 2

    def initial_state(self):
        return _EntryState(())


class _EntryState:
    PAYOFF = {(0, 1, 0): (-2, 3), (0, 1, 1): (2, 0), (1, 1, 0): (0, 1), (1, 1, 1): (4, -1)}

    def __init__(self, history):
        self.history = history

    def current_player(self):
        h = self.history
        if not h:
            return CHANCE
        if len(h) == 2 and h[1] == 0 or len(h) == 3:
            return TERMINAL
        return len(h) - 1

    def chance_outcomes(self):
        return [(0, 0.25), (1, 0.75)]

    def legal_actions(self):
        return [0, 1]

    def child(self, action):
        return _EntryState(self.history + (action,))

    def returns(self):
        return (1.0, -1.0) if len(self.history) == 2 else self.PAYOFF[self.history]

    def infoset_key(self):
        return f"card {self.history[0]}" if len(self.history) == 1 else "entered"


def test_best_response_with_a_terminal_before_a_players_first_move():
    game = lk.games.load(_EntryGame())
    enter = {"card 0": 0.4, "card 1": 0.8}
    policy = lk.TabularPolicy.from_dict(game, {"card 0": [0.6, 0.4], "card 1": [0.2, 0.8], "entered": [0.5, 0.5]})
    stay_out = 0.25 * 0.6 + 0.75 * 0.2
    # player 1's value: -1 when player 0 stays out; after an entry, fight or yield, whichever pays more
    fight = 0.25 * enter["card 0"] * 3 + 0.75 * enter["card 1"] * 1
    yield_ = 0.25 * enter["card 0"] * 0 + 0.75 * enter["card 1"] * -1
    assert lk.best_response(game, policy, 1).value == pytest.approx(-stay_out + max(fight, yield_), abs=1e-14)
    # player 0 against a 50/50 player 1: entering is worth 0 with card 0 (stay out: 1), 2 with card 1
    card0_enter = 0.5 * -2 + 0.5 * 2
    card1_enter = 0.5 * 0 + 0.5 * 4
    expected0 = 0.25 * max(1.0, card0_enter) + 0.75 * max(1.0, card1_enter)
    assert lk.best_response(game, policy, 0).value == pytest.approx(expected0, abs=1e-14)
    reference = Recursion(game, policy.probs)
    np.testing.assert_allclose(lk.expected_payoffs(game, policy), reference.value, atol=1e-14)


@pytest.mark.parametrize("spec", SPECS)
def test_terminal_reach_is_the_reach_at_terminals(spec):
    from labkit.evaluate import terminal_reach_probabilities
    game = lk.games.load(spec)
    policy = _random_policy(game, 13)
    np.testing.assert_allclose(terminal_reach_probabilities(game, policy),
                               lk.reach_probabilities(game, policy)[:, game.terminals], rtol=1e-13, atol=1e-16)
