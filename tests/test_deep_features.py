"""labkit.deep's infoset features and the conversion of networks into TabularPolicy objects.

Known values come from the games' rules (the layout of each encoding), not from the code under test;
the conversion is checked against evaluating the network at one infoset at a time."""
import functools
import subprocess
import sys

import numpy as np
import pytest

import labkit as lk

jax = pytest.importorskip("jax")
from labkit import deep  # noqa: E402
from labkit.deep import networks  # noqa: E402

GAMES = ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker", "goofspiel(num_cards=4,imp_info=True,points_order=descending)",
         "goofspiel(num_cards=3,imp_info=False)", "goofspiel(num_cards=3,players=3,imp_info=True)",
         "goofspiel(num_cards=3,imp_info=True)", "rock_paper_scissors", "climbing_game"]


@pytest.mark.parametrize("spec", GAMES)
def test_encoding_is_injective_and_zero_one(spec):
    features = deep.infoset_features(spec)
    matrix = features.matrix
    assert matrix.shape == (features.game.num_infosets, features.size) == (features.game.num_infosets, len(features.names))
    assert set(np.unique(matrix)) <= {0.0, 1.0}
    assert len(np.unique(matrix, axis=0)) == features.game.num_infosets


def test_kuhn_layout_from_the_rules():
    features = deep.infoset_features("kuhn_poker")
    assert features.encoding == "kuhn" and features.size == 3 + 2 * 2      # card, two betting slots
    expected = np.zeros(7)
    expected[[1, 3 + 0, 3 + 3]] = 1            # Q; slot 1 pass; slot 2 bet
    np.testing.assert_array_equal(features.encode("Q|pb"), expected)


def test_leduc_layout_from_the_rules():
    features = deep.infoset_features("leduc_poker")
    assert features.size == 6 + 6 + 3 * 4 + 3 * 3
    vector = features.encode("Ks|Qh|cc|r")
    on = [features.names[k] for k in np.flatnonzero(vector)]
    assert on == ["private=Ks", "public=Qh", "round 1 slot 1=call", "round 1 slot 2=call", "round 2 slot 1=raise"]


def test_goofspiel_layout_from_the_rules():
    features = deep.infoset_features("goofspiel(num_cards=3,imp_info=False)")
    key = "P1 | prizes 3,2 | bids 3:3 | won tie"
    on = [features.names[k] for k in np.flatnonzero(features.encode(key))]
    assert on == ["player=P1", "round 1 prize=3", "round 2 prize=2", "round 1 P0 bid=3", "round 1 P1 bid=3",
                  "round 1 won=tie"]


def test_unknown_keys_and_encodings_are_refused():
    features = deep.infoset_features("kuhn_poker")
    with pytest.raises(KeyError):
        features.encode("X|pb")
    with pytest.raises(ValueError, match="encoding must be one of"):
        deep.infoset_features("kuhn_poker", encoding="bag of words")
    with pytest.raises(ValueError, match="is for LeducPoker"):
        deep.infoset_features("kuhn_poker", encoding="leduc")


def _random_network(game, seed, hidden=(8,)):
    features = deep.infoset_features(game)
    model = deep.MLP(features.size, hidden, game.num_actions, last_scale=3.0)
    return features, model, model.init(jax.random.PRNGKey(seed))


@pytest.mark.parametrize("kind", networks.OUTPUT_KINDS)
@pytest.mark.parametrize("spec", ["kuhn_poker", "leduc_poker", "goofspiel(num_cards=3,imp_info=True)"])
def test_conversion_agrees_with_direct_evaluation(spec, kind):
    game = lk.games.load(spec)
    features, model, params = _random_network(game, seed=1)
    policy = deep.network_policy(game, functools.partial(model.apply, params), kind=kind)
    for i in range(0, game.num_infosets, max(1, game.num_infosets // 40)):
        key = game.infoset_keys[i]
        y = np.asarray(model.apply(params, features.encode(key)[None]), dtype=float)[0]
        legal = game.legal_actions(i)
        if kind == "logits":
            expected = np.exp(y[legal] - y[legal].max())
            expected /= expected.sum()
        elif kind == "q_values":
            expected = np.eye(len(legal))[np.argmax(y[legal])]
        else:
            positive = np.maximum(y[legal], 0)
            if positive.sum() > 0:
                expected = positive / positive.sum()
            elif kind == "probabilities":
                expected = np.full(len(legal), 1 / len(legal))
            else:
                expected = np.eye(len(legal))[np.argmax(y[legal])]
        np.testing.assert_allclose(policy.probs[i, legal], expected, rtol=0, atol=1e-6)
        assert np.all(policy.probs[i][~game.legal_mask[i]] == 0)
    lk.TabularPolicy(game, policy.probs)                     # a valid policy: validation passes
    assert lk.nash_conv(game, policy) >= 0


def test_per_player_networks_and_bad_outputs():
    game = lk.games.load("kuhn_poker")
    zero = lambda x: np.zeros((len(x), 2))                   # noqa: E731
    bet = lambda x: np.tile([0.0, 5.0], (len(x), 1))         # noqa: E731
    policy = deep.network_policy(game, [zero, bet], kind="logits")
    assert np.allclose(policy.probs[game.infosets_of(0)], 0.5)
    assert np.all(policy.probs[game.infosets_of(1), 1] > 0.99)
    with pytest.raises(ValueError, match="one output per distinct action"):
        deep.network_policy(game, lambda x: np.zeros((len(x), 3)))
    with pytest.raises(TypeError, match="one per player"):
        deep.network_policy(game, [zero])
    with pytest.raises(ValueError, match="kind must be one of"):
        deep.policy_from_outputs(game, np.zeros((12, 2)), kind="values")


def test_import_labkit_does_not_import_jax():
    code = "import sys, labkit; labkit.nash_conv; import labkit.games; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_import_without_jax_says_how_to_install():
    code = ("import sys; sys.modules['jax'] = None\n"
            "try:\n    import labkit.deep\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    from labkit.deep._install import INSTALL_HINT
    assert INSTALL_HINT in out.stdout and 'labkit-marl[deep]' in out.stdout


def test_docstring_examples_run():
    import doctest
    from labkit.deep import networks as module_networks, nfsp
    for module in (module_networks, nfsp):
        assert doctest.testmod(module, verbose=False).failed == 0


def test_a_game_with_its_features_computed_can_still_be_pickled_and_copied():
    # the features are cached on the game with local functions, which pickle cannot write; a
    # pickled or copied game leaves labkit's caches out and builds them again
    import copy
    import pickle
    game = lk.games.load("kuhn_poker(players=3)")
    features = deep.infoset_features(game)
    for other in (pickle.loads(pickle.dumps(game)), copy.deepcopy(game)):
        assert "_deep_features" not in other.__dict__
        assert np.array_equal(deep.infoset_features(other).matrix, features.matrix)
        last = game.infoset_keys[-1]                         # the key index is kept
        assert other.infoset_keys == game.infoset_keys and other.infoset_index(last) == game.num_infosets - 1
