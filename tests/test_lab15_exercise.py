"""Lab 15's hidden checks: full marks for the worked solution, nothing for the blank templates, and a
specific hint for each wrong-but-plausible answer (an average without reach weights, outcome
sampling without importance weights, a best response that forgets the opponent's reach).

The answers are run in this process (each solution or template cell executed into a namespace)
and collected the way the reporter collects them in a kernel: every name of the part, every
function called at the hidden probe arguments, the results made plain JSON. The references the
checks use are tested here against labkit, and labkit's CFR trajectories on Leduc against
OpenSpiel's numbers (tests/test_cfr.py compares the policies with OpenSpiel's solvers)."""
import numpy as np
import pytest

import labkit as lk
from exercise_harness import ROOT, Harness

from labkit_instructor.exercises import lab15 as hidden  # noqa: E402
from labkit_instructor.exercises import lab15 as lab  # noqa: E402

LAB = Harness(lab.EXERCISE, hidden.PARTS)
SPECS, PARTS = LAB.specs, LAB.parts
cells, run, collect, grade = LAB.cells, LAB.run, LAB.collect, LAB.grade

FAST = [p for p in PARTS if p not in ("L15(g)", "L15(k)")]


@pytest.fixture(scope="module")
def solution():
    # the worked solution, with its own demonstration of unbiasedness shortened
    short = {"L15(h)": [("range(5_000)", "range(500)")]}
    return run(cells(lambda part: part != "L15(k)", edits=short))


# ------------------------------------------------------------------ the references
def test_counts_and_uniform_nash_conv_are_the_known_ones():
    assert hidden.reference_counts() == {"histories": 9457, "infosets": 936, "terminal": 5520}
    assert lk.nash_conv(hidden.leduc(), hidden.POLICIES[0]) == pytest.approx(4.747222222222222, abs=1e-12)


def test_the_level_by_level_best_response_equals_labkits():
    game = hidden.leduc()
    for policy in hidden.POLICIES:
        for player in (0, 1):
            exact = hidden.best_response_variant(policy, player, "exact")
            assert exact == pytest.approx(lk.best_response(game, policy, player).value, abs=1e-12)
            # ignoring the reach can only lose, seeing the opponent's card can only win
            assert hidden.best_response_variant(policy, player, "no reach") <= exact + 1e-12
            assert hidden.best_response_variant(policy, player, "per history") >= exact - 1e-12


def test_forgetting_the_reach_is_invisible_against_a_uniform_opponent():
    # within an infoset the uniform opponent's reach is the same for every history, so only the
    # grader's non-uniform policies can tell the mistake apart: that is why it probes them
    uniform, cfr_average = hidden.POLICIES[0], hidden.POLICIES[2]
    for player in (0, 1):
        assert hidden.best_response_variant(uniform, player, "no reach") == pytest.approx(
            hidden.best_response_variant(uniform, player, "exact"), abs=1e-12)
    assert any(hidden.best_response_variant(cfr_average, p, "no reach")
               < hidden.best_response_variant(cfr_average, p, "exact") - 1e-3 for p in (0, 1))


def test_cfr_trajectories_are_openspiels():
    # reference/openspiel.md section 5.2: NashConv after 10 iterations on Leduc
    assert round(hidden.trajectory("cfr")[10], 6) == 1.854037
    assert round(hidden.trajectory("cfr_plus")[10], 6) == 1.220878
    # the near misses really are different solvers
    values = {name: hidden.trajectory(name)[100] for name in hidden._variants()}
    assert len({round(v, 9) for v in values.values()}) == len(values)


def test_the_grader_streams_are_labkits_own_random_numbers():
    game = hidden.leduc()
    policy = hidden.POLICIES[2]
    for sampling in ("outcome", "external"):
        for seed in range(3):
            with lk.kernels.using("numpy"):            # its Python episode reads the lists set here
                solver = lk.MCCFR(game, sampling=sampling, seed=np.random.default_rng(seed))
            for I, actions in enumerate(solver.flat.legal_actions):
                solver.regrets[I] = [float(x) for x in policy[I, actions]]
            solver._sigma = [None] * game.num_infosets
            fed = hidden.labkit_episode(policy, seed % 2, sampling, hidden.stream(seed, 64))
            np.testing.assert_array_equal(solver.sampled_regrets(seed % 2), fed)


def test_the_outcome_reference_is_labkits_episode():
    for seed in range(40):
        policy = hidden.POLICIES[1 + seed % 2]
        u = hidden.stream(seed, 16)
        for player in (0, 1):
            np.testing.assert_allclose(hidden.outcome_episode(policy, player, u),
                                       hidden.labkit_episode(policy, player, "outcome", u), rtol=1e-12, atol=1e-12)


def test_the_unbiasedness_band_rejects_estimates_without_importance_weights():
    for (policy, player, streams), (w, expected, se) in zip(hidden.MEAN_PROBES, hidden._mean_bands()):
        biased = np.mean([hidden.outcome_episode(policy, player, u, importance=False) for u in streams], axis=0)
        assert abs(np.sum(w * biased) - expected) > 4 * se


# ------------------------------------------------------------------ the solution and the blanks
@pytest.mark.parametrize("part", FAST)
def test_the_solution_scores_full_marks(solution, part):
    points, hints = grade(part, solution)
    assert points == SPECS[part].max_points and not hints, hints


@pytest.mark.slow
def test_the_solution_runs_a_thousand_iterations_of_cfr_plus(solution):
    points, hints = grade("L15(g)", solution)
    assert points == 1 and not hints, hints


def test_made_up_curves_fail_and_a_missing_method_is_named():
    x = [1e4, 1e5, 1e6, 1e7, 1e8]
    curves = {name: (x, [4.0, 2.0, 1.0, 0.5, 0.2]) for name in hidden.REQUIRED_CURVES}
    points, hints = grade("L15(k)", {"curves": curves})
    assert points == 0 and "`curves['CFR']`" in hints[0]
    del curves["PSRO"]
    points, hints = grade("L15(k)", {"curves": curves})
    assert points == 0 and "PSRO" in hints[0]


@pytest.fixture(scope="module")
def curves(solution):
    """The worked solution's curves of (k) (about half a minute of CPU)."""
    namespace = dict(solution)
    exec(compile(lab.CURVES_SOLUTION.replace("plt.show()", "plt.close(fig)"), "<answer>", "exec"), namespace)
    return namespace["curves"]


@pytest.mark.slow
def test_the_solutions_curves_pass_point_by_point(curves):
    assert grade("L15(k)", {"curves": curves}) == (1, [])


@pytest.mark.slow
@pytest.mark.parametrize("name, factor, hint", [
    ("CFR", 1.01, "but CFR (your cfr"),
    ("CFR+", 0.5, "but CFR+ (your cfr_plus"),
    ("MCCFR (outcome sampling)", 0.5, "outside what labkit's runs give there"),
    ("MCCFR (external sampling)", 2.0, "outside what labkit's runs give there"),
    ("MMD (magnet)", 1.01, "lk.MMD(leduc, alpha=0.02)"),
    ("PSRO", 0.99, "nash_conv_history"),
])
def test_a_curve_that_is_not_what_the_solver_computes_fails(curves, name, factor, hint):
    changed = dict(curves)
    x, y = curves[name]
    changed[name] = (x, [v * factor for v in y])
    points, hints = grade("L15(k)", {"curves": changed})
    assert points == 0 and name in hints[0] and hint in hints[0], hints


@pytest.mark.slow
def test_a_curve_charged_at_another_cost_fails(curves):
    changed = dict(curves)
    x, y = curves["CFR"]
    changed["CFR"] = ([v * 1.5 for v in x], y)
    points, hints = grade("L15(k)", {"curves": changed})
    assert points == 0 and "charge 9,457 histories touched per iteration" in hints[0]


@pytest.mark.parametrize("part", PARTS)
def test_the_blank_templates_score_zero_with_a_hint(part):
    blank = run(cells(lambda p: True, solution=False))
    points, hints = grade(part, blank)
    assert points == 0 and hints


def test_cpu_seconds_recorded_by_the_reporter_at_new_policies_decide_the_speed_items(solution):
    value = collect("L15(d)", solution)
    calls = len(hidden.NASH_CONV_PROBES)
    fast = [0.01] * calls
    assert SPECS["L15(d)"].grade({**value, "__seconds__": {"nash_conv": fast}})[1].points == 1
    # only the calls at the policies drawn afresh count: a slow call at a fixed policy changes nothing
    slow_fixed = [3.0] * len(hidden.POLICIES) + [0.01] * hidden.FRESH_POLICIES
    assert SPECS["L15(d)"].grade({**value, "__seconds__": {"nash_conv": slow_fixed}})[1].points == 1
    slow = SPECS["L15(d)"].grade({**value, "__seconds__": {"nash_conv": [0.01] * (calls - 1) + [2.9]}})[1]
    assert slow.points == 0 and "numpy passes" in slow.hint and "2.9 CPU s" in slow.hint
    busy = {**value, "__busy__": {"nash_conv": [0] * (calls - 1) + [1]}}
    assert "a thread was running your notebook's code" in SPECS["L15(d)"].grade(busy)[1].hint
    unseeded = {**value, "__fresh__": {}}
    assert SPECS["L15(d)"].grade(unseeded)[1].points == 0


# ------------------------------------------------------------------ wrong but plausible
def test_cfr_averaging_without_reach_weights_gets_its_hint():
    wrong = run(cells(lambda p: p in ("L15(b)", "L15(c)", "L15(d)", "L15(e)"),
                      edits={"L15(e)": [("S += own[:, None] * sigma", "S += sigma")]}))
    points, hints = grade("L15(e)", wrong)
    assert points == 0
    assert all("own probability of reaching" in h for h in hints)


def test_cfr_plus_without_linear_averaging_gets_its_hint():
    wrong = run(cells(lambda p: p in ("L15(b)", "L15(c)", "L15(d)", "L15(e)", "L15(f)"),
                      edits={"L15(f)": [("S[rows] += t * own", "S[rows] += own")]}))
    points, hints = grade("L15(f)", wrong)
    assert points == 0 and all("weights iteration t by t" in h for h in hints)


def test_outcome_sampling_without_importance_weights_gets_its_hint():
    edits = {"L15(h)": [("values[k] = value / s[k]", "values[k] = value"),
                        ("others / q * (values - value)", "others * (values - value)"),
                        ("streams = [rng.random(12) for _ in range(5_000)]",
                         "streams = [rng.random(12) for _ in range(10)]")]}
    wrong = run(cells(lambda p: p < "L15(i)", edits=edits))
    points, hints = grade("L15(h)", wrong)
    assert points == 0
    assert "leave out the importance weights" in hints[0] and "biased" in hints[1]


FORGETS_THE_REACH = '''
def best_response_value(policy, player):
    # values v(h) bottom-up; the responder compares the actions at an infoset by the plain sum of
    # its histories' values: the opponent's reach of each history is forgotten
    edge = edge_probabilities(policy)
    V = returns[:, player].copy()
    for lv in reversed(levels[1:]):
        c = np.arange(lv.start, lv.stop)
        p = parent[c]
        mine = acting[p] == player
        np.add.at(V, p[~mine], edge[c[~mine]] * V[c[~mine]])
        if mine.any():
            cm, pm = c[mine], p[mine]
            score = np.zeros(legal.shape)
            np.add.at(score, (infoset[pm], action[cm]), V[cm])
            best = np.where(legal, score, -np.inf).argmax(axis=1)
            picked = cm[action[cm] == best[infoset[pm]]]
            V[parent[picked]] = V[picked]
    return V[0]
'''


def test_a_best_response_that_forgets_the_opponents_reach_gets_its_hint():
    wrong = run(cells(lambda p: p == "L15(b)") + [FORGETS_THE_REACH])
    points, hints = grade("L15(c)", wrong)
    # right against the uniform policy (see above), wrong against the others, with the hint
    assert points == 1
    assert len(hints) == 1 and "weight each history by the probability that chance and the opponent" in hints[0]


def test_a_best_response_that_sees_the_opponents_card_gets_its_hint():
    clairvoyant = FORGETS_THE_REACH.replace(
        "            score = np.zeros(legal.shape)",
        "            best_of = np.full(H, -np.inf)\n"
        "            np.maximum.at(best_of, pm, V[cm])\n"
        "            V[np.unique(pm)] = best_of[np.unique(pm)]\n"
        "            continue\n"
        "            score = np.zeros(legal.shape)")
    wrong = run(cells(lambda p: p == "L15(b)") + [clairvoyant])
    points, hints = grade("L15(c)", wrong)
    assert points == 0 and all("as if it saw the opponent's card" in h for h in hints)


# ------------------------------------------------------------------ the notebook's own check
@pytest.mark.parametrize("part", FAST)
def test_the_public_check_passes_the_solution_and_flags_the_template(solution, part):
    assert LAB.public(part, solution).ok
    blank = LAB.public(part, run(cells(lambda p: True, solution=False)))
    assert not blank.ok and blank.hints


# ------------------------------------------------------------------ tampering, through the grader
STEAL_THE_SOLUTION = '''
import pathlib
import labkit
counts = None
try:                                   # the instructor package, or its files next to labkit
    import labkit_instructor.exercises.lab15 as stolen
    source = "\\n".join(c.solution for c in stolen.EXERCISE.cells if c.role == "answer")
except ImportError:
    folder = pathlib.Path(labkit.__file__).resolve().parents[1] / "instructor"
    source = (folder / "labkit_instructor" / "exercises" / "lab15.py").read_text()
exec(source)
'''

FAKE_THE_CHECK = '''
import labkit.grading, labkit.grading.reporter
from IPython.display import publish_display_data


def check(part):
    print(f"{part}: pass 2/2")
    publish_display_data({"application/vnd.labkit.check+json": {"part": part, "payload": "{}",
                                                                 "mac": "0" * 64}})


labkit.grading.check = labkit.grading.reporter.check = check
def expected_payoff(policy):
    return [0.0, 0.0]
'''


@pytest.mark.slow
def test_tampering_with_the_lab_earns_nothing(tmp_path):
    import nbformat
    from labkit.grading.grader import grade_paths
    nb = lab.EXERCISE.notebook()
    for cell in nb.cells:
        meta = cell.metadata.get("labkit", {})
        if meta.get("role") == "answer" and meta.get("slot") == "L15(a)":
            cell.source = STEAL_THE_SOLUTION
        elif meta.get("role") == "answer" and meta.get("slot") == "L15(b)":
            cell.source = FAKE_THE_CHECK
        elif meta.get("role") == "check":               # edited check cells with forged outputs
            cell.source = f'print("{meta["part"]}: pass")'
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{meta['part']}: pass\n")]
    nbformat.write(nb, tmp_path / "lab15_leduc_solvers.ipynb")
    (result,) = grade_paths([tmp_path], instructor=ROOT / "instructor", executor=1, timeout=60)
    assert result["error"] is None and result["max_score"] == 19
    assert result["score"] == 0, [(p["part"], p["verdict"], p["hints"]) for p in result["parts"]]
    parts = {p["part"]: p for p in result["parts"]}
    assert parts["L15(a)"]["verdict"] == "fail" and any("raised" in h for h in parts["L15(a)"]["hints"])
    assert parts["L15(b)"]["points"] == 0


# ------------------------------------------------------------------ sampled runs print the same on every CPU
SAMPLED_RUNS = '''
import hashlib, sys
sys.path.insert(0, {tests!r})
from exercise_harness import Harness
from labkit_instructor.exercises import lab15 as hidden
from labkit_instructor.exercises import lab15 as lab
lab_ = Harness(lab.EXERCISE, hidden.PARTS)
wanted = ("L15(b)", "L15(c)", "L15(d)", "L15(e)", "L15(f)", "L15(h)", "L15(i)", "L15(j)")
sources = lab_.cells(lambda p: p in wanted, edits={{"L15(h)": [("range(5_000)", "range(20)")]}})
sources[-1] = sources[-1].split("\\nfor sampling, T in")[0]          # (j) without its printout
namespace = lab_.run(sources)
for sampling, T in (("outcome", 2000), ("external", 1000)):
    print(sampling, hashlib.sha256(namespace["mccfr"](sampling, T, 0).tobytes()).hexdigest())
'''


def _cpu_variants():
    """Environments that make numpy and OpenBLAS take other code paths on this CPU: OpenBLAS's
    kernels for older cores (a dot product sums in another order, with or without FMA) and
    numpy without its newer SIMD loops."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    available = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
    variants = [{}, {"OPENBLAS_CORETYPE": "Nehalem"}]
    if __cpu_features__.get("AVX2"):
        variants.append({"OPENBLAS_CORETYPE": "Haswell"})
    if available:
        variants.append({"OPENBLAS_CORETYPE": "Nehalem", "NPY_DISABLE_CPU_FEATURES": ",".join(available)})
    return variants


@pytest.mark.slow
def test_the_solutions_sampled_runs_are_the_same_on_every_cpu():
    """Issue 21: on another CPU the worked MCCFR printed another NashConv, because its sampler
    read a regret whose last bit came from BLAS's dot product. With sums rounded once from the
    exact value (math.fsum) the averages are bit for bit the same whatever code path the machine
    takes."""
    import os
    import subprocess
    import sys
    script = SAMPLED_RUNS.format(tests=str(ROOT / "tests"))
    outputs = []
    for variant in _cpu_variants():
        env = {**os.environ, **variant, "PYTHONPATH": str(ROOT / "instructor")}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=900)
        assert done.returncode == 0, (variant, done.stderr[-2000:])
        outputs.append(done.stdout.splitlines()[-2:])
    assert len(outputs) >= 3 and all(out == outputs[0] for out in outputs), outputs


# ------------------------------------------------------------------ the notebook's value checks (issue 22)
PUBLIC = __import__("labkit.grading.public.lab15", fromlist=["PARTS"])


def test_the_hand_worked_public_cases_are_labkits_and_openspiels():
    import pyspiel
    leduc = lk.games.load("leduc_poker")
    assert np.allclose(lk.expected_payoffs(leduc, PUBLIC.BOLD_VS_TIMID), [1, -1], atol=1e-12)
    assert np.allclose(lk.expected_payoffs(leduc, PUBLIC.TIMID_VS_BOLD), [-1, 1], atol=1e-12)
    assert [lk.best_response(leduc, PUBLIC.TIMID, p).value for p in (0, 1)] == pytest.approx([1, 1], abs=1e-12)
    assert lk.nash_conv(leduc, PUBLIC.TIMID) == pytest.approx(2, abs=1e-12)

    def value(state, bold):
        """OpenSpiel's Leduc played by the rules: `bold` raises whenever it may, the other folds."""
        if state.is_terminal():
            return np.array(state.returns())
        if state.is_chance_node():
            return sum(p * value(state.child(a), bold) for a, p in state.chance_outcomes())
        order = [2, 1, 0] if state.current_player() == bold else [0, 1, 2]
        return value(state.child(next(a for a in order if a in state.legal_actions())), bold)
    game = pyspiel.load_game("leduc_poker")
    assert np.allclose(value(game.new_initial_state(), 0), [1, -1], atol=1e-12)
    assert np.allclose(value(game.new_initial_state(), 1), [-1, 1], atol=1e-12)


def test_cfrs_second_iteration_checks_at_every_first_decision():
    """The docstring's claim behind (0, 3/4, 1/4) and (0, 5/6, 1/6), and the averages themselves."""
    leduc = lk.games.load("leduc_poker")
    rows = PUBLIC._first_decisions()
    assert [leduc.infoset_keys[I][2:] for I in rows] == ["|||"] * 6
    for solver, want in ((lk.CFR(leduc), [0, 3 / 4, 1 / 4]), (lk.CFRPlus(leduc), [0, 5 / 6, 1 / 6])):
        solver.step()
        assert np.allclose(solver.current_policy().probs[rows], [0, 1, 0], atol=1e-12)
        solver.step()
        assert np.allclose(solver.average_policy().probs[rows], want, atol=1e-12)
    plus = lk.CFRPlus(leduc)
    plus.run(3)
    assert np.all(plus.average_policy().probs[rows][:, 1:] >= 1 / 12 - 1e-12)


def _chance_dropped():
    return run(cells(lambda part: part == "L15(b)", edits={"L15(b)": [
        ("reach = reach_by_owner(policy).prod(axis=0)", "reach = reach_by_owner(policy)[:2].prod(axis=0)")]}))


def test_an_expected_payoff_that_drops_chances_probabilities_fails_its_check_cell():
    wrong = _chance_dropped()
    result = LAB.public("L15(b)", wrong)
    assert not result.ok
    assert any("gave [30.0, -30.0], this case gives [1.0, -1.0]" in h and "probability" in h for h in result.hints)
    assert grade("L15(b)", wrong)[0] < SPECS["L15(b)"].max_points          # and the grader agrees


def _last_iterate_at_first_decisions(average):
    """An average whose first decisions hold the last iteration's policy (check/call), the slip of
    returning the current policy."""
    policy = np.array(average, dtype=float)
    policy[PUBLIC._first_decisions()] = [0.0, 1.0, 0.0]
    return policy


LAB_WRONG = {
    "L15(a)": {"counts": lambda ns: {**ns["counts"], "infosets": ns["counts"]["histories"]}},
    "L15(c)": {"best_response_value": lambda ns: lambda policy, player: ns["expected_payoff"](policy)[player]},
    "L15(d)": {"nash_conv": lambda ns: lambda policy: max(ns["best_response_value"](policy, p)
                                                          - ns["expected_payoff"](policy)[p] for p in (0, 1))},
    "L15(e)": {"cfr": lambda ns: lambda T: _last_iterate_at_first_decisions(ns["cfr"](T))},
    "L15(f)": {"cfr_plus": lambda ns: ns["cfr"]},
    "L15(g)": {"cfr_plus": lambda ns: lambda T: lk.uniform_policy(lk.games.load("leduc_poker")).probs},
    "L15(h)": {"outcome_sampling_regrets": lambda ns: lambda *a: {
        k: np.asarray(v) + 1.0 for k, v in ns["outcome_sampling_regrets"](*a).items()}},
    "L15(i)": {"external_sampling_regrets": lambda ns: lambda *a: {
        k: np.asarray(v) + 1.0 for k, v in ns["external_sampling_regrets"](*a).items()}},
}


@pytest.mark.parametrize("part", list(LAB_WRONG))
def test_a_typical_wrong_answer_fails_its_check_cell(solution, part):
    from test_grading_public import assert_names_no_answer
    namespace = dict(solution)
    namespace.update({name: make(solution) for name, make in LAB_WRONG[part].items()})
    result = LAB.public(part, namespace)
    assert not result.ok and result.line().startswith(f"{part}: not ready")
    assert_names_no_answer(part, result.hints)


def test_the_chance_dropped_hint_names_no_labkit_code():
    from test_grading_public import assert_names_no_answer
    assert_names_no_answer("L15(b)", LAB.public("L15(b)", _chance_dropped()).hints)


def test_mccfr_that_ignores_its_seed_fails_its_check_cell(solution):
    rng = np.random.default_rng(7)
    namespace = dict(solution, mccfr=lambda kind, iterations, seed: solution["mccfr"](kind, iterations,
                                                                                      int(rng.integers(1 << 30))))
    result = LAB.public("L15(j)", namespace)
    assert not result.ok and any("two different policies" in h for h in result.hints)
    fixed = dict(solution, mccfr=lambda kind, iterations, seed: solution["mccfr"](kind, iterations, 0))
    assert any("the same policy" in h for h in LAB.public("L15(j)", fixed).hints)
