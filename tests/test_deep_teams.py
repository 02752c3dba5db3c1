"""The cooperative learners trained by TD (independent Q-learning, VDN, QMIX, COMA, MAPPO) on the climbing
game and the messenger game: exact team values from outside the learners (the climbing game's payoff
matrix, the optimum 11), representational limits (exercise 27.7), and seeded reproducibility."""
import numpy as np
import pytest

pytest.importorskip("jax")
from labkit import cooperative  # noqa: E402
from labkit.deep import COMA, MAPPO, QMIX, VDN, IndependentQ, TeamConfig  # noqa: E402
from labkit.deep import teams  # noqa: E402

A = np.array([[11, -30, 0], [-30, 7, 6], [0, 0, 5]], dtype=float)          # Claus and Boutilier's payoffs


def test_exact_values_of_the_games():
    climbing, messenger = teams.climbing_team_game(), teams.messenger_game()
    np.testing.assert_array_equal(climbing.reward[0], A)
    for a in range(3):
        for b in range(3):
            assert teams.team_value(climbing, [np.array([a]), np.array([b])]) == A[a, b]
    assert teams.optimal_team_value(climbing)[0] == 11
    # messenger: honest message (x=0 -> a, x=1 -> c), agent 2 answers the summit the message names
    value, (first, second) = teams.optimal_team_value(messenger)
    assert value == 11
    assert teams.team_value(messenger, [np.array(first), np.array(second)]) == 11
    # without listening agent 2 plays one action whatever the message; the best is c, answered by b
    # at x = 0 (payoff 6) and by c at x = 1 (the summit, 11): (6 + 11) / 2
    deaf = max(teams.team_value(messenger, [teams._best_response_of_agent_1(messenger, np.array([b] * 4)),
                                            np.array([b] * 4)]) for b in range(3))
    assert deaf == 8.5
    uniform = [np.full((n, 3), 1 / 3) for n in messenger.num_observations]
    assert teams.team_value(messenger, uniform) == pytest.approx(A.mean())


def test_sampled_episodes_follow_the_policies():
    game = teams.messenger_game()
    batch = teams.play(game, [np.eye(3)[[0, 2, 0, 1, 2, 0, 1, 2]], np.eye(3)[[1, 0, 1, 2]]], 200,
                       np.random.default_rng(0))
    assert len(batch.state) == 400                         # two steps per episode
    first = batch.next_state >= 0
    assert set(batch.actions[first, 0][batch.state[first] == 0]) == {0}
    assert set(batch.actions[first, 0][batch.state[first] == 1]) == {2}
    assert np.all(batch.reward[first] == 0)


@pytest.mark.parametrize("learner", [IndependentQ, VDN, QMIX, COMA, MAPPO])
def test_additive_game_is_solved_by_every_learner(learner):
    """A payoff that is a sum of one term per agent: every method represents it and finds the optimum."""
    payoff = np.add.outer([0.0, 2.0, 1.0], [1.0, 0.0, 3.0])             # optimum (b, c) = 5
    game = teams.TeamGame("additive", np.ones(1), payoff[None], -np.ones((1, 3, 3), dtype=int),
                          np.zeros((2, 1), dtype=int), [["-"], ["-"]])
    solver = learner(game, TeamConfig(epsilon_decay=200), seed=0)
    solver.run(400)
    assert [int(g[0]) for g in solver.greedy_actions()] == [1, 2]
    assert solver.team_value() == 5


def test_vdn_and_qmix_miss_the_climbing_optimum():
    """Exercise 27.7: the climbing game is neither additive nor monotonic, so VDN's and QMIX's greedy
    joint actions are not the optimum (a, a)."""
    assert not cooperative.monotonic_representable(A)
    for learner in (VDN, QMIX):
        solver = learner("climbing game", seed=0)
        solver.run(1500)
        greedy = tuple(int(g[0]) for g in solver.greedy_actions())
        assert greedy != (0, 0) and solver.team_value() < 11
        joint = solver.joint_values()
        assert np.unravel_index(joint.argmax(), joint.shape) == greedy     # decentralized argmax = joint argmax


@pytest.mark.parametrize("learner", [COMA, MAPPO])
def test_same_seed_same_learner(learner):
    runs = [learner("messenger game", TeamConfig(episodes=8), seed=3) for _ in range(2)]
    for solver in runs:
        solver.run(50)
    for a, b in zip(runs[0].tables(), runs[1].tables()):
        np.testing.assert_array_equal(a, b)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown team game"):
        VDN("prisoners dilemma")
    with pytest.raises(ValueError, match="policy must be one distribution"):
        teams.team_value(teams.climbing_team_game(), [np.ones((1, 3)), np.ones((1, 3))])


def test_mappo_shares_one_actor_and_reaches_the_climbing_equilibrium():
    solver = MAPPO("climbing game", seed=0)
    # one actor for both agents: its input says which agent is asking (id one-hot, then the observation)
    assert set(solver.params) == {"actor", "critic"}
    np.testing.assert_array_equal(solver.actor_inputs(1), [[0, 1, 0, 1]])
    probs = solver.tables()
    np.testing.assert_allclose([p.sum(axis=1) for p in probs], 1.0, rtol=1e-6)
    solver.run(1500)
    # (b, b), worth 7, is the climbing game's best equilibrium short of the summit (a, a): a policy
    # gradient on a state value cannot see that (a, a) pays 11 only when both move together
    assert tuple(int(g[0]) for g in solver.greedy_actions()) == (1, 1)
    assert solver.team_value() == A[1, 1] == 7
    with pytest.raises(ValueError, match="ppo_clip"):
        TeamConfig(ppo_clip=1.5)
    with pytest.raises(ValueError, match="ppo_epochs"):
        TeamConfig(ppo_epochs=0)
