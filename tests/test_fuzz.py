"""Bad inputs to labkit's core, sorted into clear errors, unclear errors and silent results.

Every case is a call that must be refused, with what a clear message must say (a regular
expression: the argument's name, the infoset, what was expected). A case's outcome is

* clear: a ValueError, TypeError, KeyError (or FileNotFoundError, for a stored file) whose
  message matches;
* unclear: any other exception, or one whose message does not say what was wrong;
* silent: no exception at all (a number computed from garbage).

The goal is 0 unclear and 0 silent. ``python tests/test_fuzz.py`` prints the tally. The cases of
issue 24 come first (a policy of another game with the same shape, float32 policies, PSRO from a
NaN policy made with check=False, the tie tolerance), then more of the same kind. A few calls that
must be *accepted* (float32 and integer policies, a policy of the same game compiled twice) are
checked beside them, with their numbers.
"""
from __future__ import annotations

import importlib.util
import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labkit as lk
from labkit.games import GameError

KUHN = lk.games.load("kuhn_poker")
LEDUC = lk.games.load("leduc_poker")
ASCENDING = lk.games.load("goofspiel(num_cards=4,points_order=ascending,imp_info=True)")
DESCENDING = lk.games.load("goofspiel(num_cards=4,points_order=descending,imp_info=True)")
RANDOM4 = lk.games.load("goofspiel(num_cards=4,points_order=random,imp_info=True)")
RPS = lk.games.rock_paper_scissors()


def uniform(game):
    return lk.uniform_policy(game).probs.copy()


def nan_policy(game):
    probs = uniform(game)
    probs[3, 0] = np.nan
    return lk.TabularPolicy(game, probs, check=False)


def rows_summing_to(game, total):
    return uniform(game) * total


def row_changed(game, row, values):
    probs = uniform(game)
    probs[row] = values
    return probs


def illegal_mass(game):
    probs = uniform(game)
    i = int(np.flatnonzero(~game.legal_mask.all(axis=1))[0])
    probs[i] = 1.0 / game.num_actions
    return probs


# name -> (call, regex a clear message matches)
CASES = {
    # --- issue 24: a policy of another game with the same shape
    "nash_conv: goofspiel descending policy on ascending":
        (lambda: lk.nash_conv(ASCENDING, lk.uniform_policy(DESCENDING)), r"policy belongs to .*descending.*infoset 0"),
    "expected_payoffs: policy of another game":
        (lambda: lk.expected_payoffs(ASCENDING, lk.uniform_policy(DESCENDING)), r"policy belongs to"),
    "best_response: policy of another game":
        (lambda: lk.best_response(ASCENDING, lk.uniform_policy(DESCENDING), 0), r"policy belongs to"),
    "exploitability: policy of another game":
        (lambda: lk.exploitability(ASCENDING, lk.uniform_policy(DESCENDING)), r"policy belongs to"),
    "counterfactual_values: policy of another game":
        (lambda: lk.counterfactual_values(ASCENDING, lk.uniform_policy(DESCENDING)), r"policy belongs to"),
    "TabularPolicy(game, policy of another game)":
        (lambda: lk.TabularPolicy(ASCENDING, lk.uniform_policy(DESCENDING)), r"policy belongs to"),
    "mixture of policies of two games":
        (lambda: lk.TabularPolicy.mixture([lk.uniform_policy(ASCENDING), lk.uniform_policy(DESCENDING)]),
         r"same game: policy 1 belongs to .*descending"),
    "MMD initial_policy of another game":
        (lambda: lk.MMD(ASCENDING, alpha=0.1, stepsize=0.1, initial_policy=lk.uniform_policy(DESCENDING)),
         r"initial_policy belongs to"),
    "PSRO initial_policy of another game":
        (lambda: lk.PSRO(ASCENDING, meta_solver="uniform", initial_policy=lk.uniform_policy(DESCENDING)),
         r"initial_policy belongs to"),
    "nash_conv: Kuhn policy on Leduc":
        (lambda: lk.nash_conv(LEDUC, lk.uniform_policy(KUHN)), r"policy belongs to kuhn_poker, not to leduc_poker"),
    # --- issue 24: check=False paths validate the start policy
    "PSRO from a NaN policy made with check=False":
        (lambda: lk.PSRO(KUHN, initial_policy=nan_policy(KUHN)), r"initial_policy: invalid policy at infoset 'Q\|p'"),
    "MMD from a NaN policy made with check=False":
        (lambda: lk.MMD(KUHN, alpha=0.1, initial_policy=nan_policy(KUHN)), r"initial_policy: invalid policy"),
    "MMD magnet: a NaN policy made with check=False":
        (lambda: lk.MMD(KUHN, alpha=0.1, magnet=nan_policy(KUHN)), r"magnet: invalid policy"),
    "nash_conv of a NaN policy made with check=False":
        (lambda: lk.nash_conv(KUHN, nan_policy(KUHN)), r"policy: invalid policy at infoset"),
    "best_response to a NaN policy made with check=False":
        (lambda: lk.best_response(KUHN, nan_policy(KUHN), 1), r"policy: invalid policy at infoset"),
    "mixture with a NaN policy made with check=False":
        (lambda: lk.TabularPolicy.mixture([lk.uniform_policy(KUHN), nan_policy(KUHN)]), r"policy 1: invalid policy"),
    # --- issue 24: the tie tolerance can be set, and is validated
    "CFR tie_tolerance negative": (lambda: lk.CFR(KUHN, tie_tolerance=-1e-10), r"tie tolerance .* \[0, 1\)"),
    "CFR tie_tolerance NaN": (lambda: lk.CFR(KUHN, tie_tolerance=float("nan")), r"tie tolerance"),
    "CFRPlus tie_tolerance a string": (lambda: lk.CFRPlus(KUHN, tie_tolerance="small"), r"tie tolerance"),
    "DCFR tie_tolerance 1": (lambda: lk.DCFR(KUHN, tie_tolerance=1.0), r"tie tolerance"),
    # --- rows: each row checked on its own, the first bad infoset named
    "rows summing to 2": (lambda: lk.nash_conv(LEDUC, rows_summing_to(LEDUC, 2.0)),
                          r"policy: invalid policy at infoset 'Js\|\|\|': probabilities that do not sum to 1"),
    "one row summing to 1 + 1e-5 in goofspiel":
        (lambda: lk.nash_conv(RANDOM4, row_changed(RANDOM4, 7, uniform(RANDOM4)[7] * (1 + 1e-5))),
         r"infoset .*: probabilities that do not sum to 1"),
    "a negative probability": (lambda: lk.expected_payoffs(KUHN, row_changed(KUHN, 4, [-0.25, 1.25])),
                               r"infoset 'Q\|b': a negative or non-finite"),
    "an infinite probability": (lambda: lk.expected_payoffs(KUHN, row_changed(KUHN, 0, [np.inf, 0.0])),
                                r"infoset 'J\|': a negative or non-finite"),
    "mass on an illegal action": (lambda: lk.nash_conv(LEDUC, illegal_mass(LEDUC)), r"illegal action"),
    "float32 row summing to 2": (lambda: lk.nash_conv(RANDOM4, rows_summing_to(RANDOM4, 2.0).astype(np.float32)),
                                 r"do not sum to 1"),
    "an array of strings": (lambda: lk.nash_conv(KUHN, np.full((12, 2), "0.5")), r"policy must be an array of real"),
    "an object array": (lambda: lk.nash_conv(KUHN, np.array([[0.5, None]] * 12, dtype=object)),
                        r"policy must be an array of real"),
    "a complex array": (lambda: lk.nash_conv(KUHN, uniform(KUHN).astype(complex)), r"policy must be an array of real"),
    "ragged lists": (lambda: lk.nash_conv(KUHN, [[0.5, 0.5], [1.0]] + [[0.5, 0.5]] * 10),
                     r"policy must be an array of real"),
    "one player's rows only": (lambda: lk.nash_conv(KUHN, uniform(KUHN)[:6]), r"policy array has shape \(6, 2\)"),
    "a dict instead of a policy": (lambda: lk.nash_conv(KUHN, {"J|": [0.5, 0.5]}), r"policy must be a TabularPolicy"),
    "TabularPolicy of a non-game": (lambda: lk.TabularPolicy("kuhn_poker", uniform(KUHN)), r"game must be a GameTree"),
    "pure policy with an illegal action": (lambda: lk.TabularPolicy.pure(LEDUC, {"Js|||": 0}),
                                           r"action 0 is not legal at infoset 'Js\|\|\|'"),
    "from_dict with an unknown infoset":
        (lambda: lk.TabularPolicy.from_dict(KUHN, {"X|": [1, 0]}), r"no infoset 'X\|'"),
    "from_dict with too many probabilities": (lambda: lk.TabularPolicy.from_dict(KUHN, {"J|": [0.2, 0.3, 0.5]}),
                                              r"infoset 'J\|' has 2 legal actions, got 3"),
    "mixture weights with a NaN":
        (lambda: lk.TabularPolicy.mixture([lk.uniform_policy(KUHN)] * 2, [np.nan, 1.0]), r"mixture weights"),
    "mixture weights not summing to 1":
        (lambda: lk.TabularPolicy.mixture([lk.uniform_policy(KUHN)] * 2, [0.7, 0.7]), r"mixture weights"),
    "mixture of arrays": (lambda: lk.TabularPolicy.mixture([uniform(KUHN)]), r"TabularPolicy"),
    # --- players
    "best_response player 2 of 2":
        (lambda: lk.best_response(KUHN, uniform(KUHN), 2), r"player must be .* 0\.\.1, got 2"),
    "best_response player True": (lambda: lk.best_response(KUHN, uniform(KUHN), True), r"player must be an integer"),
    "best_response player '0'": (lambda: lk.best_response(KUHN, uniform(KUHN), "0"), r"player must be an integer"),
    "best_response player 0.5": (lambda: lk.best_response(KUHN, uniform(KUHN), 0.5), r"player must be an integer"),
    "sampled_regrets player -1": (lambda: lk.MCCFR(KUHN).sampled_regrets(-1), r"player must be"),
    # --- games
    "unknown game": (lambda: lk.games.load("kuhn_pokr"), r"unknown game 'kuhn_pokr'"),
    "unknown parameter": (lambda: lk.games.load("kuhn_poker(player=3)"), r"'kuhn_poker\(player=3\)'.*player"),
    "one-player Kuhn": (lambda: lk.games.load("kuhn_poker(players=1)"), r"players >= 2"),
    "Leduc with players='3'": (lambda: lk.games.LeducPoker(players="3"), r"leduc_poker needs players >= 2, got '3'"),
    "Kuhn with players=True": (lambda: lk.games.KuhnPoker(players=True), r"kuhn_poker needs players >= 2"),
    "goofspiel with 0 cards": (lambda: lk.games.load("goofspiel(num_cards=0)"), r"num_cards >= 1"),
    "goofspiel's default 13 cards": (lambda: lk.games.load("goofspiel"), r"histories"),
    "goofspiel points order": (lambda: lk.games.load("goofspiel(num_cards=3,points_order=up)"), r"points_order"),
    "malformed game string": (lambda: lk.games.load("kuhn_poker(players)"), r"not of the form name=value"),
    "max_histories 0": (lambda: lk.games.load("kuhn_poker", max_histories=0), r"max_histories must be a positive"),
    "nine-player Leduc": (lambda: lk.games.load("leduc_poker(players=9)"), r"has more than 20,000,000 histories"),
    "ten-player Leduc": (lambda: lk.games.load("leduc_poker(players=10)"), r"has more than 20,000,000 histories"),
    "names of an unknown kind": (lambda: lk.games.names("board"), r"kind must be None or one of"),
    "load a number": (lambda: lk.games.load(3), r"cannot load a game from int"),
    "matrix game with NaN": (lambda: lk.games.MatrixGame([[0.0, np.nan], [1.0, 0.0]]), r"payoffs must be finite"),
    "matrix game of one dimension": (lambda: lk.games.MatrixGame([1.0, 2.0]), r"non-empty 2-d"),
    "matrix game shapes differ": (lambda: lk.games.MatrixGame([[1.0, 2.0]], [[1.0], [2.0]]), r"must match"),
    "prisoner's dilemma out of order": (lambda: lk.games.prisoners_dilemma(reward=6), r"temptation > reward"),
    "preference game not complementary": (lambda: lk.games.preference_game([[0.5, 0.9], [0.9, 0.5]], ("A", "B")),
                                          r"P\[i\]\[j\] \+ P\[j\]\[i\] = 1"),
    "LP on a three-player game": (lambda: lk.zero_sum_equilibrium("kuhn_poker(players=3)"), r"two-player game"),
    "LP on a general-sum game": (lambda: lk.zero_sum_equilibrium(lk.games.load("climbing_game")), r"not zero-sum"),
    # --- solvers
    "run(-1)": (lambda: lk.CFR(KUHN).run(-1), r"iterations must be a nonnegative integer, got -1"),
    "run(2.5)": (lambda: lk.CFR(KUHN).run(2.5), r"iterations must be a nonnegative integer"),
    "run('10')": (lambda: lk.CFRPlus(KUHN).run("10"), r"iterations must be a nonnegative integer"),
    "run target NaN": (lambda: lk.CFR(KUHN).run(10, target_nash_conv=float("nan")), r"target_nash_conv"),
    "run eval_every -1": (lambda: lk.CFR(KUHN).run(10, eval_every=-1), r"eval_every"),
    "run policy 'best'": (lambda: lk.CFR(KUHN).run(10, policy="best"), r"policy must be one of"),
    "CFR flag a string": (lambda: lk.CFR(KUHN, alternating_updates="yes"), r"alternating_updates must be True or"),
    "DCFR alpha NaN": (lambda: lk.DCFR(KUHN, alpha=float("nan")), r"alpha must be finite"),
    "DCFR gamma a string": (lambda: lk.DCFR(KUHN, gamma="2"), r"gamma must be a number"),
    "MCCFR sampling": (lambda: lk.MCCFR(KUHN, sampling="chance"), r"sampling must be one of"),
    "MCCFR exploration 0": (lambda: lk.MCCFR(KUHN, exploration=0.0), r"exploration must be a number in \(0, 1\]"),
    "MCCFR exploration NaN": (lambda: lk.MCCFR(KUHN, exploration=float("nan")), r"exploration"),
    "MCCFR seed -1": (lambda: lk.MCCFR(KUHN, seed=-1), r"seed must be a nonnegative integer"),
    "MCCFR seed 1.5": (lambda: lk.MCCFR(KUHN, seed=1.5), r"seed must be an integer"),
    "MCCFR regrets of the wrong shape": (lambda: setattr(lk.MCCFR(KUHN), "regrets", [[0.0]] * 3), r"regrets|rows"),
    "MMD alpha negative": (lambda: lk.MMD(KUHN, alpha=-0.1), r"alpha must be a number >= 0"),
    "MMD alpha NaN": (lambda: lk.MMD(KUHN, alpha=float("nan")), r"alpha must be"),
    "MMD alpha a string": (lambda: lk.MMD(KUHN, alpha="0.1"), r"alpha must be a number"),
    "MMD stepsize 0": (lambda: lk.MMD(KUHN, alpha=0.1, stepsize=0.0), r"stepsize must be positive"),
    "MMD magnet name": (lambda: lk.MMD(KUHN, alpha=0.1, magnet="gaussian"), r"magnet must be one of"),
    "MMD magnet without full support":
        (lambda: lk.MMD(KUHN, alpha=0.1, magnet=lk.TabularPolicy.pure(KUHN, {})), r"magnet must give every legal"),
    "MMD both magnet schedules": (lambda: lk.MMD(KUHN, alpha=0.1, magnet_update_every=5, magnet_stepsize=0.1),
                                  r"not both"),
    "MMD magnet_update_every 0": (lambda: lk.MMD(KUHN, alpha=0.1, magnet_update_every=0), r"magnet_update_every"),
    "MMD feedback": (lambda: lk.MMD(KUHN, alpha=0.1, feedback="rewards"), r"feedback must be one of"),
    "MMD regularized game without alpha": (lambda: lk.MMD(KUHN, alpha=0.0, stepsize=0.1).regularized_response(),
                                           r"needs alpha > 0"),
    "PSRO meta_solver": (lambda: lk.PSRO(KUHN, meta_solver="best"), r"unknown meta_solver 'best'; valid"),
    "PSRO oracle": (lambda: lk.PSRO(KUHN, oracle="rl"), r"unknown oracle 'rl'"),
    "PSRO nash on three players": (lambda: lk.PSRO("kuhn_poker(players=3)"), r"two-player zero-sum"),
    "PSRO prd_iterations 0": (lambda: lk.PSRO(KUHN, meta_solver="prd", prd_iterations=0), r"prd_iterations"),
    "PSRO prd_stepsize NaN": (lambda: lk.PSRO(KUHN, meta_solver="prd", prd_stepsize=float("nan")), r"prd_stepsize"),
    "PSRO run eval_every 5": (lambda: lk.PSRO(KUHN).run(2, eval_every=5), r"eval_every must be None or 1"),
    "kernels.use('cuda')": (lambda: lk.kernels.use("cuda"), r"backend must be one of"),
    "hedge learning rate 0": (lambda: lk.regret.hedge(np.zeros((2, 2)), np.ones((2, 2), bool), 0.0),
                              r"learning_rate must be positive"),
    # --- self-play dynamics and the small tools
    "dynamics method": (lambda: lk.dynamics.run(RPS, "gradient"), r"unknown method 'gradient'; valid methods"),
    "dynamics steps -1": (lambda: lk.dynamics.run(RPS, steps=-1), r"steps must be a nonnegative integer"),
    "dynamics eta 0": (lambda: lk.dynamics.run(RPS, eta=0.0), r"eta .* must be positive"),
    "dynamics eta NaN": (lambda: lk.dynamics.run(RPS, eta=float("nan")), r"eta"),
    "dynamics reset 0": (lambda: lk.dynamics.run(RPS, "moving magnet", reset=0), r"reset must be a positive"),
    "dynamics x0 of the wrong size": (lambda: lk.dynamics.run(RPS, x0=[0.5, 0.5]), r"x0 must be a vector of 3"),
    "dynamics x0 with a NaN": (lambda: lk.dynamics.run(RPS, x0=[np.nan, 0.5, 0.5]), r"x0 must be nonnegative"),
    "dynamics x0 with a zero under logs": (lambda: lk.dynamics.run(RPS, "hedge", x0=[0.0, 0.5, 0.5]),
                                           r"strictly positive"),
    "dynamics on a tree": (lambda: lk.dynamics.run(KUHN), r"game must be a labkit.games.MatrixGame"),
    "trajectory step out of range": (lambda: lk.dynamics.run(RPS, steps=3).at(4), r"step must be in 0..3"),
    "IPD logits of the wrong shape": (lambda: lk.social.ipd_values([0.0] * 4, [0.0] * 5), r"theta1 must hold 5"),
    "IPD discount 1": (lambda: lk.social.ipd_values([0.0] * 5, [0.0] * 5, discount=1.0), r"discount must be in"),
    "Nash-MD on a general-sum game": (lambda: lk.social.nash_md(lk.games.climbing_game()), r"symmetric zero-sum"),
    "regularized equilibrium beta 0": (lambda: lk.social.regularized_equilibrium(lk.games.preference_game(), 0.0),
                                       r"beta must be positive"),
    "independent Q exploration": (lambda: lk.cooperative.independent_q_learning(RPS, exploration="greedy"),
                                  r"unknown exploration"),
    "independent Q epsilon 2": (lambda: lk.cooperative.independent_q_learning(RPS, epsilon=2.0), r"epsilon"),
    "independent Q learning rate 0": (lambda: lk.cooperative.independent_q_learning(RPS, learning_rate=0.0),
                                      r"learning_rate"),
    "VDN fit of NaN": (lambda: lk.cooperative.vdn_fit([[np.nan, 1.0]]), r"payoffs must be a finite"),
    "COMA policy not summing to 1": (lambda: lk.cooperative.coma_advantages(np.eye(2), [0.7, 0.7], [0.5, 0.5]),
                                     r"row_policy must be a probability vector"),
}

# ----------------------------------------------------------------------------- hindsight, EFR, experiments
from labkit import hindsight  # noqa: E402
from labkit.experiments import TournamentResult, efr_tournament  # noqa: E402
from labkit.experiments import claims as experiment_claims  # noqa: E402
from labkit.experiments.estimate import Costs, predict_seconds  # noqa: E402

RPS_ROCK = np.array([[1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0]])
TINY_RESULT = dict(game="kuhn_poker", regime="fixed", rounds=2, rows=["cf", "bhv"], columns=["cf", "bhv"],
                   per_round={"cf": {"cf": [0.0, 0.0], "bhv": [-0.1, -0.3]}, "bhv": {"cf": [0.1, 0.3], "bhv": [0.0, 0.0]}})


def tiny_result(**changes):
    return TournamentResult(**{**TINY_RESULT, **changes})


def other_game_deviation():
    return hindsight.enumerate_deviations(LEDUC, 0, "cf")[5]


CASES.update({
    # --- issue 24: labkit.hindsight validates its profiles and arguments
    "hindsight: a NaN profile": (lambda: hindsight.deviation_regret(KUHN, [uniform(KUHN), nan_policy(KUHN)], 0, "cf"),
                                 r"profiles\[1\]: invalid policy at infoset 'Q\|p'"),
    "hindsight: rows summing to 2": (lambda: hindsight.deviation_regret(KUHN, [rows_summing_to(KUHN, 2.0)], 0),
                                     r"profiles\[0\]: invalid policy at infoset 'J\|': probabilities that do not sum"),
    "hindsight: a policy of another game":
        (lambda: hindsight.deviation_regret(ASCENDING, [lk.uniform_policy(DESCENDING)], 0, "cf"),
         r"profiles\[0\] belongs to goofspiel.*descending"),
    "hindsight: theorem1_bound with negative rounds": (lambda: hindsight.theorem1_bound(KUHN, 0, "cf", -5),
                                                       r"rounds must be an integer >= 0.*-5"),
    "hindsight: theorem1_bound with 2.5 rounds": (lambda: hindsight.theorem1_bound(KUHN, 0, "cf", 2.5),
                                                  r"rounds must be an integer"),
    "hindsight: theorem1_bound of player 2": (lambda: hindsight.theorem1_bound(KUHN, 2, "cf", 10),
                                              r"player must be an integer in 0..1, got 2"),
    "hindsight: a negative probability": (lambda: hindsight.deviation_gains(RPS, [row_changed(RPS, 0, [-0.5, 1.0, 0.5])],
                                                                            0, "act"), r"profiles\[0\]: .*negative"),
    "hindsight: no rounds": (lambda: hindsight.deviation_regret(KUHN, [], 0), r"at least one round"),
    "hindsight: a single profile, not a list": (lambda: hindsight.deviation_regret(KUHN, uniform(KUHN), 0),
                                                r"sequence of joint profiles.*wrap a single profile"),
    "hindsight: profiles of the wrong shape": (lambda: hindsight.deviation_regret(KUHN, [np.ones((3, 3))], 0),
                                               r"profiles\[0\] array has shape \(3, 3\)"),
    "hindsight: an unknown type": (lambda: hindsight.deviation_regret(KUHN, [uniform(KUHN)], 0, "informed"),
                                   r"unknown deviation type 'informed'"),
    "hindsight: a type that is a number": (lambda: hindsight.enumerate_deviations(KUHN, 0, 3), r"deviations must be"),
    "hindsight: player -1": (lambda: hindsight.deviation_gains(KUHN, [uniform(KUHN)], -1, "cf"), r"player must be"),
    "hindsight: curve rounds beyond the profiles": (lambda: hindsight.deviation_regret_curve(RPS, [RPS_ROCK] * 3, 0, "act",
                                                                                             rounds=[4]), r"1\.\.3"),
    "hindsight: curve rounds 2.5": (lambda: hindsight.deviation_regret_curve(RPS, [RPS_ROCK] * 3, 0, "act",
                                                                             rounds=[2.5]), r"integers in 1\.\.3"),
    "hindsight: chunk 0": (lambda: hindsight.deviation_gains(RPS, [RPS_ROCK], 0, "act", chunk=0), r"chunk must be"),
    "hindsight: a deviation of another game": (lambda: hindsight.deviated_strategy(KUHN, uniform(KUHN),
                                                                                  other_game_deviation()),
                                               r"deviation does not apply to kuhn_poker \(a deviation of another game"),
    "hindsight: deviated_strategy of a NaN policy":
        (lambda: hindsight.deviated_strategy(KUHN, nan_policy(KUHN), hindsight.enumerate_deviations(KUHN, 0, "cf")[0]),
         r"probs: invalid policy"),
    "hindsight: a tuple that is not a Deviation": (lambda: hindsight.deviated_strategy(KUHN, uniform(KUHN), (0, 0)),
                                                   r"deviation must be a labkit.hindsight.Deviation"),
    "hindsight: decision_path of infoset 99": (lambda: hindsight.decision_path(KUHN, 99), r"infoset must be in 0..11"),
    # --- EFR
    "EFR: an unknown deviation type": (lambda: lk.EFR(KUHN, deviations="informed"), r"unknown deviation type"),
    "EFR: an unknown fixed point": (lambda: lk.EFR(KUHN, fixed_point="svd"), r"fixed_point must be one of"),
    "EFR: record_profiles 'no'": (lambda: lk.EFR(KUHN, record_profiles="no"), r"record_profiles must be True or False"),
    "EFR: update against a NaN profile": (lambda: lk.EFR(KUHN).update(nan_policy(KUHN)), r"opponents: invalid policy"),
    "EFR: update against rows summing to 2": (lambda: lk.EFR(KUHN).update(rows_summing_to(KUHN, 2.0)),
                                              r"opponents: invalid policy at infoset"),
    "EFR: update against a policy of another game":
        (lambda: lk.EFR(ASCENDING).update(lk.uniform_policy(DESCENDING)), r"opponents belongs to"),
    "EFR: update of player 5": (lambda: lk.EFR(KUHN).update(uniform(KUHN), players=[5]), r"player must be"),
    "EFR: update of a repeated player": (lambda: lk.EFR(KUHN).update(uniform(KUHN), players=[0, 0]),
                                         r"players must not repeat"),
    "EFR: players given as a number": (lambda: lk.EFR(KUHN).update(uniform(KUHN), players=1), r"players must be an"),
    "EFR: run(-3)": (lambda: lk.EFR(KUHN).run(-3), r"iterations must be a nonnegative integer"),
    "EFR: regret table of an unknown infoset": (lambda: lk.EFR(KUHN).regret_table("X|"), r"X\|"),
    "EFR: deviation_structure of a string": (lambda: lk.efr.deviation_structure("kuhn_poker", "cf"),
                                             r"game must be a GameTree"),
    "EFR: describe_slot out of range": (lambda: lk.efr.deviations.describe_slot(
        KUHN, lk.efr.deviation_structure(KUHN, "cf"), 7), r"slot must be an integer in 0..1"),
    # --- experiments
    "tournament: an unknown variant": (lambda: efr_tournament(KUHN, ["cf", "tipz"], ["cf"], rounds=2,
                                                              executor="serial", progress=False),
                                       r"rows: unknown deviation type 'tipz'"),
    "tournament: rounds 0": (lambda: efr_tournament(KUHN, ["cf"], ["cf"], rounds=0, executor="serial"),
                             r"rounds must be a positive integer, got 0"),
    "tournament: rounds True": (lambda: efr_tournament(KUHN, ["cf"], ["cf"], rounds=True, executor="serial"),
                                r"rounds must be a positive integer"),
    "tournament: an unknown regime": (lambda: efr_tournament(KUHN, ["cf"], ["cf"], regime="mixed", rounds=2),
                                      r"regime must be one of"),
    "tournament: rows repeated": (lambda: efr_tournament(KUHN, ["cf", "cf"], ["cf"], rounds=2, executor="serial"),
                                  r"rows lists \['cf'\] more than once"),
    "tournament: rows given as one string": (lambda: efr_tournament(KUHN, "cf", ["cf"], rounds=2, executor="serial"),
                                             r"rows must be a list of variant names"),
    "tournament: an unknown game": (lambda: efr_tournament("kuhn_pokr", ["cf"], ["cf"], rounds=2), r"kuhn_pokr"),
    "tournament: a number as the game": (lambda: efr_tournament(3, ["cf"], ["cf"], rounds=2), r"game must be a game"),
    "tournament: rows_per_unit 0": (lambda: efr_tournament(KUHN, ["cf"], ["cf"], rounds=2, rows_per_unit=0),
                                    r"rows_per_unit must be None or a positive integer"),
    "tournament: executor 'threads'": (lambda: efr_tournament(KUHN, ["cf"], ["cf"], rounds=2, executor="threads",
                                                              progress=False), r"executor must be None, 'serial'"),
    "tournament: executor 0 workers": (lambda: efr_tournament(KUHN, ["cf"], ["cf"], rounds=2, executor=0,
                                                              progress=False), r"number of workers must be at least 1"),
    "tournament: fixed point 'svd'": (lambda: efr_tournament(KUHN, ["cf"], ["cf"], rounds=2, fixed_point="svd"),
                                      r"fixed_point must be one of"),
    "tournament: a learner that is not callable": (lambda: efr_tournament(KUHN, ["cf"], ["cf"], rounds=2, learner=3),
                                                   r"learner must be a callable"),
    "seat_values of a NaN profile": (lambda: lk.experiments.seat_values(KUHN, nan_policy(KUHN), uniform(KUHN)),
                                     r"policy: invalid policy"),
    "seat_values of a policy of another game":
        (lambda: lk.experiments.seat_values(ASCENDING, lk.uniform_policy(DESCENDING), uniform(ASCENDING)),
         r"belongs to"),
    "TournamentResult: a NaN value": (lambda: tiny_result(per_round={**TINY_RESULT["per_round"],
                                                                      "cf": {"cf": [np.nan, 0.0], "bhv": [0.0, 0.0]}}),
                                      r"per_round\['cf'\]\['cf'\] holds a value that is not finite"),
    "TournamentResult: a missing entry": (lambda: tiny_result(per_round={"cf": {"cf": [0.0, 0.0]}}),
                                          r"per_round has no entry for \(row, column\)"),
    "TournamentResult: values of another length": (lambda: tiny_result(rounds=3), r"has shape \(2,\), expected \(3,\)"),
    "TournamentResult: an unknown regime": (lambda: tiny_result(regime="mixed"), r"regime must be 'fixed' or"),
    "TournamentResult: rounds 0": (lambda: tiny_result(rounds=0), r"rounds must be a positive integer"),
    "TournamentResult: repeated rows": (lambda: tiny_result(rows=["cf", "cf"]), r"rows must be a non-empty list of distinct"),
    "TournamentResult: unknown units": (lambda: tiny_result().table(units="bb"), r"unknown units 'bb'"),
    "TournamentResult: subset of an unknown row": (lambda: tiny_result().subset(rows=["tips"]), r"cannot take rows"),
    "load_cached: an unknown result": (lambda: lk.experiments.load_cached("leduc_mixed"),
                                       r"no cached result 'leduc_mixed'.*available"),
    "claims: rank of a missing row": (lambda: experiment_claims.rank_of(tiny_result(), "tips"),
                                      r"'tips' is not a row of this result"),
    "claims: a dict instead of a result": (lambda: experiment_claims.best_variant({"cf": 1.0}),
                                           r"result must be a labkit.experiments.TournamentResult"),
    "claims: early rounds out of range": (lambda: experiment_claims.early_and_late(tiny_result(), early=[5]),
                                          r"early must be a non-empty sequence of rounds in 0..1"),
    "claims: late_rounds 0": (lambda: experiment_claims.early_and_late(tiny_result(), early=[0], late_rounds=0),
                              r"late_rounds must be a positive integer"),
    "estimate: a variant without a cost": (lambda: predict_seconds(Costs({"cf": 0.1}, {"cf": 0.1}, 0.1), ["cf", "bhv"],
                                                                   ["cf"], "fixed", 10), r"no measured cost.*bhv"),
    "estimate: workers 0": (lambda: predict_seconds(Costs({"cf": 0.1}, {"cf": 0.1}, 0.1), ["cf"], ["cf"], "fixed", 10,
                                                    workers=0), r"workers must be a positive integer"),
    "estimate: regime 'mixed'": (lambda: predict_seconds(Costs({"cf": 0.1}, {"cf": 0.1}, 0.1), ["cf"], ["cf"], "mixed",
                                                         10), r"regime must be 'fixed' or 'simultaneous'"),
    "run_units: weights of another length": (lambda: lk.experiments.executors.run_units(abs, [1, 2], "serial", False,
                                                                                      weights=[1]),
                                             r"weights must hold one number per unit"),
    "paper game stem of regime 'mixed'": (lambda: lk.experiments.paper_game("leduc").stem("mixed"),
                                          r"regime must be 'fixed' or"),
    # --- plots, widgets, stored data
    "plot: an unknown method's colour": (lambda: lk.plot.method_color("SARSA"), r"no colour for method 'SARSA'"),
    "plot: simplex of NaN": (lambda: lk.plot.simplex_xy([np.nan, 0.5, 0.5]), r"finite probabilities"),
    "plot: simplex of 4 actions": (lambda: lk.plot.simplex_xy([0.25] * 4), r"last axis 3"),
    "plot: simplex grid 0": (lambda: lk.plot.simplex_grid(0), r"resolution must be a positive integer"),
    "plot: policy bars of NaN": (lambda: lk.plot.policy_bars(None, [[np.nan, 1.0]], ["J|"], ["pass", "bet"]),
                                 r"every row of probs must be a probability distribution"),
    "widgets: slider labels of the wrong number": (lambda: lk.widgets.slider_stack([b"a", b"b"], labels=["one"]),
                                                   r"2 frames need 2 labels"),
    "widgets: play interval 0": (lambda: lk.widgets.play_stack([b"a"], interval=0), r"interval is in milliseconds"),
    "widgets: no frames": (lambda: lk.widgets.image_stack([]), r"at least one frame"),
    "data: an unknown folder": (lambda: lk.data.path("results", "x.csv"), r"first part must be one of"),
    "data: a missing file": (lambda: lk.data.read_csv("deep", "team.csv"), r"labkit.data has no deep/team.csv"),
})

if importlib.util.find_spec("jax") is not None:
    from labkit import deep
    from labkit.deep import teams as team_games

    CASES.update({
        "deep: DeepCFR seed -1": (lambda: deep.DeepCFR(KUHN, seed=-1), r"seed must be an integer >= 0, got -1"),
        "deep: DeepCFR config of NFSP": (lambda: deep.DeepCFR(KUHN, deep.NFSPConfig()), r"config must be a DeepCFRConfig"),
        "deep: DeepCFR learning rate NaN": (lambda: deep.DeepCFRConfig(learning_rate=float("nan")),
                                            r"learning_rate must be a finite positive number"),
        "deep: DeepCFR hidden 64": (lambda: deep.DeepCFRConfig(hidden=64), r"hidden must be a sequence of positive"),
        "deep: DeepCFR traversals 0": (lambda: deep.DeepCFRConfig(traversals=0), r"traversals must be a positive integer"),
        "deep: DeepCFR approximator 'tree'": (lambda: deep.DeepCFR(KUHN, approximator="tree"), r"approximator must be"),
        "deep: DeepCFR encoding 'bits'": (lambda: deep.DeepCFRConfig(encoding="bits"), r"encoding must be one of"),
        "deep: NFSP anticipatory NaN": (lambda: deep.NFSPConfig(anticipatory=float("nan")), r"anticipatory must be in"),
        "deep: NFSP optimizer 'rmsprop'": (lambda: deep.NFSPConfig(optimizer="rmsprop"), r"optimizer must be one of"),
        "deep: NFSP hidden with a zero": (lambda: deep.NFSPConfig(hidden=(64, 0)), r"hidden must be a sequence"),
        "deep: neural MMD alpha -1": (lambda: deep.NeuralMMDConfig(alpha=-1.0), r"alpha must be a finite number >= 0"),
        "deep: neural MMD stepsize inf": (lambda: deep.NeuralMMDConfig(stepsize=float("inf")),
                                          r"stepsize must be a finite positive number"),
        "deep: sampled action values of 0 hands": (lambda: deep.NeuralMMD(KUHN, seed=0).sampled_action_values(0),
                                                   r"episodes must be a positive integer"),
        "deep: policy from NaN outputs": (lambda: deep.policy_from_outputs(KUHN, np.full((12, 2), np.nan)),
                                          r"network outputs must be finite"),
        "deep: policy from outputs of the wrong shape": (lambda: deep.policy_from_outputs(KUHN, np.zeros((12, 3))),
                                                         r"outputs have shape \(12, 3\)"),
        "deep: network outputs of the wrong shape": (lambda: deep.networks.network_outputs(KUHN, lambda x: np.zeros((1, 2))),
                                                     r"a network returned shape"),
        "deep: MLP with a width 'wide'": (lambda: deep.MLP(7, ["wide"], 2), r"layer sizes must be positive integers"),
        "deep: features of an unknown encoding": (lambda: deep.infoset_features(KUHN, "bits"), r"encoding must be one of"),
        "deep: team game 'chess'": (lambda: deep.IndependentQ("chess"), r"unknown team game 'chess'"),
        "deep: team config epsilon 2": (lambda: deep.TeamConfig(epsilon_start=2.0), r"epsilon_start and epsilon_end"),
        "deep: team config learning rate 0": (lambda: deep.TeamConfig(learning_rate=0.0), r"learning_rate must be"),
        "deep: team run(0)": (lambda: deep.VDN("climbing game").run(0), r"iterations must be a positive integer"),
        "deep: team run eval_every -1": (lambda: deep.VDN("climbing game").run(2, eval_every=-1), r"eval_every must be"),
        "deep: joint values of state 9": (lambda: deep.VDN("climbing game").joint_values(9), r"state must be an integer"),
        "deep: team value of negative probabilities":
            (lambda: team_games.team_value(team_games.climbing_team_game(), [[[1.5, -0.5, 0.0]], [[1.0, 0.0, 0.0]]]),
             r"agent 1's policy must hold probabilities"),
        "deep: team value of action 5": (lambda: team_games.team_value(team_games.climbing_team_game(), [[5], [0]]),
                                         r"agent 1's actions must be integers in 0..2"),
        "deep: team value of one policy": (lambda: team_games.team_value(team_games.climbing_team_game(), [[0]]),
                                           r"policies must hold two policies"),
        "deep: play 0 episodes": (lambda: team_games.play(team_games.climbing_team_game(), [[0], [0]], 0,
                                                          np.random.default_rng(0)), r"episodes must be a positive"),
    })


def outcome(call, pattern):
    """"clear", "unclear" or "silent", and what happened."""
    try:
        call()
    except (ValueError, TypeError, KeyError, FileNotFoundError) as err:
        return ("clear" if re.search(pattern, str(err)) else "unclear"), f"{type(err).__name__}: {err}"
    except Exception as err:                       # an IndexError, a failure deep inside numpy or scipy
        return "unclear", f"{type(err).__name__}: {err}"
    return "silent", "no error"


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_refused_clearly(name):
    call, pattern = CASES[name]
    kind, what = outcome(call, pattern)
    assert kind == "clear", what


def test_the_game_error_of_the_size_guard_is_a_value_error():
    with pytest.raises(GameError):
        lk.games.load("leduc_poker(players=9)")


# ----------------------------------------------------------------------------- what must be accepted
@pytest.mark.parametrize("game", [RANDOM4, LEDUC, KUHN, lk.games.load("kuhn_poker(players=3)")],
                         ids=lambda g: g.name)
def test_float32_policies_are_accepted_everywhere_and_give_the_float64_numbers(game):
    # the issue: refused on goofspiel(4, random) (a whole-array sum of squares), accepted on Leduc
    rng = np.random.default_rng(0)
    probs = lk.policy.normalize_rows(game, rng.random(game.legal_mask.shape))
    single = probs.astype(np.float32)
    assert lk.nash_conv(game, single) == pytest.approx(lk.nash_conv(game, probs), abs=1e-5)
    assert lk.TabularPolicy(game, single).probs.dtype == np.float64


def test_a_row_tolerance_that_does_not_grow_with_the_game():
    # every row off by 5e-7 (within the per-row tolerance) in a game of 25,800 infosets
    game = lk.games.load("leduc_poker(players=3)")
    probs = lk.uniform_policy(game).probs * (1 + 5e-7)
    assert lk.policy.probability_array(game, probs).shape == game.legal_mask.shape
    with pytest.raises(ValueError, match="do not sum to 1"):
        lk.policy.probability_array(game, lk.uniform_policy(game).probs * (1 + 2e-6))


def test_integer_and_boolean_pure_policies_are_accepted():
    pure = lk.TabularPolicy.pure(KUHN, {})
    for probs in (pure.probs.astype(int), pure.probs.astype(bool)):
        assert lk.nash_conv(KUHN, probs) == lk.nash_conv(KUHN, pure)


def test_a_policy_of_the_same_game_compiled_twice_is_accepted():
    twice = lk.games.compile_game(lk.games.KuhnPoker())
    assert twice is not KUHN
    assert lk.nash_conv(twice, lk.uniform_policy(KUHN)) == lk.nash_conv(KUHN, lk.uniform_policy(KUHN))


def test_the_tie_tolerance_default_keeps_the_numbers_and_zero_breaks_the_tie():
    # a +-1e4-stake game with a 1e-6 decision: a tie by default (as documented), not with 0
    game = lk.games.MatrixGame([[1e-6, 1e4], [0.0, 1e4]], np.zeros((2, 2)))
    default, exact = lk.CFR(game), lk.CFR(game, tie_tolerance=0.0)
    default.run(10)
    exact.run(10)
    assert default.current_policy().probs[0].tolist() == [0.5, 0.5]
    assert exact.current_policy().probs[0].tolist() == [1.0, 0.0]
    with lk.kernels.using("numpy"):
        explicit = lk.CFR(KUHN, tie_tolerance=lk.regret.TIE_TOLERANCE)
    implicit = lk.CFR(KUHN)
    explicit.run(50)
    implicit.run(50)
    assert np.array_equal(explicit.average_policy().probs, implicit.average_policy().probs)


# ----------------------------------------------------------------------------- random corruption
GAMES = [KUHN, LEDUC, RANDOM4]


@settings(max_examples=80, deadline=None)
@given(game=st.sampled_from(GAMES), kind=st.sampled_from(["nan", "inf", "-inf", "negative", "scale", "illegal"]),
       row=st.integers(0, 10**6), size=st.floats(1e-5, 1e6), float32=st.booleans())
def test_any_corrupted_row_is_refused_naming_its_infoset(game, kind, row, size, float32):
    probs = uniform(game)
    row %= game.num_infosets
    legal = np.flatnonzero(game.legal_mask[row])
    if kind == "illegal":
        if game.legal_mask[row].all():
            return
        probs[row, np.flatnonzero(~game.legal_mask[row])[0]] = size
    elif kind == "negative":
        probs[row, legal[0]] = -size
    elif kind == "scale":
        probs[row] *= 1 + size
    else:
        probs[row, legal[0]] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}[kind]
    if float32:
        probs = probs.astype(np.float32)
    with pytest.raises(ValueError, match=re.escape(f"at infoset {game.infoset_keys[row]!r}")):
        lk.nash_conv(game, probs)


def tally():
    counts = {"clear": 0, "unclear": 0, "silent": 0}
    for name in sorted(CASES):
        kind, what = outcome(*CASES[name])
        counts[kind] += 1
        if kind != "clear":
            print(f"{kind:8s} {name}: {what}")
    return counts


if __name__ == "__main__":
    counts = tally()
    print(f"{sum(counts.values())} bad inputs: {counts['clear']} clear errors, {counts['unclear']} unclear, "
          f"{counts['silent']} silent")
    sys.exit(0 if counts["clear"] == sum(counts.values()) else 1)
