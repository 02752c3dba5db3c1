"""The paper mode's fused round equals the block loop it replaces, bit for bit, on all nine games.

``EFR(..., fixed_point="paper")`` runs steps 3 and 4 of each player in one compiled call
(`labkit.efr.paper_numerics.player_update`: weights, fused regret update, the authors' solver per
reached infoset, a memory of the last solve per infoset), and the tournament evaluates the
authors'-numerics runs with a compiled terminal-reach pass. The reference is the code that
produced the cached tables in labkit/data/efr/: the learner's numpy block loop
(``EFR._fused_paper_round = False``) and the numpy reach (`labkit.evaluate`), run here in the
same process; every comparison is of the bits, signed zeros included.
"""
from unittest import mock

import numpy as np
import pytest

import labkit as lk
from labkit.efr import EFR, eigen, paper_numerics
from labkit.evaluate import _reach, edge_probabilities
from labkit.experiments import tournament
from labkit.experiments.games import PAPER_GAMES
from labkit.policy import normalize_rows

eigen_ok, eigen_reason = eigen.available()
pytestmark = pytest.mark.skipif(not eigen_ok, reason=eigen_reason)

ROUNDS = 4


def same_bits(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def reference_path():
    """The code path of the cached runs: the block loop and the numpy evaluation."""
    return mock.patch.multiple(EFR, _fused_paper_round=False), \
        mock.patch.object(tournament, "_reach_scratch", lambda unit, game: None)


def row_variant(game):
    # a type with internal transformations (the solver's least squares runs) where there is one
    return "tips" if "tips" in game.variants else game.variants[-1]


@pytest.fixture(scope="module", params=PAPER_GAMES, ids=lambda game: game.stem("fixed"))
def paper_game(request):
    return request.param


def test_fused_learner_state_is_the_block_loops(paper_game):
    """Regrets, strategies, cached weights and the average's numerator after each round against
    the column's self-play (both seats, every block, solves reused from the second round on)."""
    game = tournament.load_game(paper_game.spec)
    column = EFR(game, "cf", fixed_point="paper", record_profiles=False)
    fused = EFR(game, row_variant(paper_game), fixed_point="paper", record_profiles=False)
    loop = EFR(game, row_variant(paper_game), fixed_point="paper", record_profiles=False)
    loop._fused_paper_round = False
    for _ in range(ROUNDS):
        y = column._probs.copy()
        column._update_unchecked(y)
        fused._update_unchecked(y)
        loop._update_unchecked(y)
        assert same_bits(fused.regrets, loop.regrets)
        assert same_bits(fused._flat, loop._flat)
        assert same_bits(fused._average_numerator, loop._average_numerator)
        assert all(same_bits(fused._weights[p], loop._weights[p]) for p in loop._weights)
    assert any(plan.solved.any() for plan in fused._paper_plans.values())


@pytest.mark.parametrize("regime", ["fixed", "simultaneous"])
def test_tournament_values_are_the_cached_runs_code(paper_game, regime):
    """One row against one column for a few rounds: the per-round values the old code path
    computes in this process, bit for bit."""
    row, column = row_variant(paper_game), "cf"
    rows, columns = [row, column], [column]

    def play():
        return tournament.efr_tournament(paper_game.spec, rows, columns, regime=regime, rounds=ROUNDS,
                                         executor="serial", progress=False, fixed_point="paper")
    fast = play()
    patches = reference_path()
    with patches[0], patches[1]:
        reference = play()
    for r in rows:
        assert same_bits(fast.per_round[r][column], reference.per_round[r][column]), r


@pytest.mark.parametrize("game_name", [
    "kuhn_poker(players=3)", "goofspiel(num_cards=4,players=2,points_order=random,imp_info=True)"])
def test_compiled_terminal_reach_equals_numpy(game_name):
    game = lk.games.load(game_name)
    rng = np.random.default_rng(3)
    probs = rng.random(game.legal_mask.shape) * game.legal_mask
    probs[rng.random(probs.shape) < 0.2] = 0.0
    probs = normalize_rows(game, probs)
    probs[0, 0] = -0.0 if game.legal_mask[0, 0] else probs[0, 0]     # a signed zero travels down
    expected = _reach(game, edge_probabilities(game, probs))[:, game.terminals]
    assert same_bits(paper_numerics.terminal_reach_compiled(game, probs), expected)
    scratch = np.empty(game.num_histories * (game.num_players + 1))
    assert same_bits(paper_numerics.terminal_reach_compiled(game, probs, scratch), expected)
    with pytest.raises(ValueError, match="scratch"):
        paper_numerics.terminal_reach_compiled(game, probs, scratch[:-1])


@pytest.mark.parametrize("game_name", ["kuhn_poker(players=3)", "leduc_poker"])
def test_split_counterfactual_pass_equals_the_merged_profile(game_name):
    game = lk.games.load(game_name)
    rng = np.random.default_rng(4)
    own, others = (normalize_rows(game, rng.random(game.legal_mask.shape) * game.legal_mask
                                  * (rng.random(game.legal_mask.shape) > 0.2)) for _ in range(2))
    q, v = np.zeros(game.legal_mask.shape), np.zeros(game.num_infosets)
    reached = np.zeros(game.num_infosets, dtype=np.uint8)
    for player in range(game.num_players):      # one set of arrays collects every player
        paper_numerics.counterfactual_values_into(game, own, others, player, q, v, reached)
    for player in range(game.num_players):
        mine = game.infoset_player == player
        expected_q, expected_v, expected_reached = paper_numerics.counterfactual_values(
            game, np.where(mine[:, None], own, others), player)
        assert same_bits(q[mine], expected_q[mine]) and same_bits(v[mine], expected_v[mine])
        assert np.array_equal(reached[mine].astype(bool), expected_reached[mine])
    with pytest.raises(ValueError, match="C-contiguous"):
        paper_numerics.counterfactual_values_into(game, own[:, ::-1], others, 0, q, v, reached)


@pytest.mark.parametrize("kind", ["act", "cf_ex+in", "tips_ex+in"])
def test_immediate_regrets_of_constant_action_values_equal_numpy(kind):
    """Rows where q(I, .) is one value (unreached infosets: +0.0) take the kernel's shortcut."""
    from labkit.efr.deviations import deviation_structure
    game = lk.games.load("leduc_poker")
    structure = deviation_structure(game, kind)
    rng = np.random.default_rng(5)
    q = rng.normal(size=game.legal_mask.shape)
    v = rng.normal(size=game.num_infosets)
    constants = rng.choice([0.0, -0.0, 1.5, -2.25e-17], size=game.num_infosets)
    constant = rng.random(game.num_infosets) < 0.6
    q[constant] = constants[constant, None]
    v[constant & (rng.random(game.num_infosets) < 0.5)] = 0.0
    probs = normalize_rows(game, rng.random(game.legal_mask.shape) * game.legal_mask)
    probs[probs < 0.1] = -0.0                 # signed zeros in the products
    assert same_bits(paper_numerics.immediate_regrets_compiled(game, structure, q, v, probs,
                                                               constant_rows=True),
                     paper_numerics.immediate_regrets(game, structure, q, v, probs))


def test_copies_of_a_learner_keep_their_own_memory():
    """The fused round caches array addresses and its last solves; a deep copy or a pickled copy
    continues exactly as the original does, and neither writes into the other's arrays."""
    import copy
    import pickle
    game = lk.games.load("goofspiel(num_cards=3,players=2,points_order=descending,imp_info=True)")
    original = EFR(game, "tips", fixed_point="paper")
    for _ in range(2):
        original.step()
    copies = [copy.deepcopy(original), pickle.loads(pickle.dumps(original))]
    for _ in range(3):
        original.step()
    for twin in copies:
        for _ in range(3):
            twin.step()
        assert same_bits(twin.regrets, original.regrets) and same_bits(twin._flat, original._flat)


def test_a_subset_of_players_learns_as_in_the_block_loop():
    game = lk.games.load("kuhn_poker(players=3)")
    rng = np.random.default_rng(6)
    fused, loop = (EFR(game, "tips_ex+in", fixed_point="paper") for _ in range(2))
    loop._fused_paper_round = False
    for players in ([1], [2, 0], [0, 1, 2]):
        opponents = normalize_rows(game, rng.random(game.legal_mask.shape) * game.legal_mask)
        fused.update(opponents, players=players)
        loop.update(opponents, players=players)
        assert same_bits(fused.regrets, loop.regrets) and same_bits(fused._flat, loop._flat)
        assert same_bits(fused.average_policy().probs, loop.average_policy().probs)
