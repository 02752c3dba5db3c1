"""The notebook's public checks test values (issue 22, item 1).

For every auto-graded part: the worked solution passes its check cell, a typical wrong answer fails
it with a hint, no hint names the labkit code that answers the part, and every public value worked
out by hand in `labkit.grading.public` agrees with labkit (or the grader's own reference) computed
here. Lab 15's parts are run in tests/test_lab15_exercise.py (its worked solution takes a while).
"""
import importlib
import inspect
import os
import re

import numpy as np
import pytest

from exercise_harness import ROOT, Harness

import labkit as lk
from labkit.grading import public
from labkit.grading.own_work import ALLOWED

MODULES = ["ex27_1", "ex27_2", "ex27_3", "ex27_4", "ex27_5", "ex27_6", "ex27_7", "ex27_8", "ex4_1", "ex5_1", "ex6_1"]


def _harness(name):
    from labkit_instructor import SPECS
    exercise = importlib.import_module(f"labkit_instructor.exercises.{name}").EXERCISE
    return Harness(exercise, [SPECS[part] for part in exercise.parts])


HARNESSES = {name: _harness(name) for name in MODULES}
PART_MODULE = {part: name for name, h in HARNESSES.items() for part in h.parts}


@pytest.fixture(scope="module")
def solutions():
    return {name: h.run(h.cells(lambda part: True)) for name, h in HARNESSES.items()}


def _public(part, namespace):
    return Harness.public(part, namespace)


@pytest.mark.parametrize("part", list(PART_MODULE))
def test_the_worked_solution_passes_its_public_checks(solutions, part):
    result = _public(part, solutions[PART_MODULE[part]])
    assert result.ok, result.lines()
    assert result.line().startswith(f"{part}: public checks pass (")


# ------------------------------------------------------------------ typical wrong answers
def _swap_rows(f):
    def wrong(*args):
        lower, upper = f(*args)
        return upper, lower
    return wrong


def _averaged_regrets(ns):
    return lambda A, xs, ys: tuple(np.array(ns["regrets"](A, xs, ys)) / len(xs))


def _edited(module, part, name, edits):
    """`name` from the part's worked solution with `edits` applied (a typical slip)."""
    h = HARNESSES[module]
    return h.run(h.cells(lambda p: p == part, edits={part: edits}))[name]


WRONG = {
    # part: (why it is wrong, {name: function of the solution's namespace giving the wrong value})
    "27.1(a)": [("regrets averaged over the rounds", {"regrets": _averaged_regrets}),
                ("a gap of max minus max", {"duality_gap": lambda ns: lambda A, x, y: np.max(A @ y) - np.max(x @ A)}),
                ("player 2 climbs A instead of -A", {"learn": lambda ns: _edited("ex27_1", "27.1(a)", "learn", [
                    ("cum_y -= A.T @ xs[t]", "cum_y += A.T @ xs[t]")])})],
    "27.1(b)": [("the ends swapped", {"value_bracket": lambda ns: _swap_rows(ns["value_bracket"])}),
                ("the same learner run too briefly to bracket", {"value_bracket": lambda ns: lambda A, T: (0.2, 0.2)})],
    "27.2(a)": [("the largest payoff", {"value": lambda ns: 2.0})],
    "27.2(b)": [("the uniform strategy with payoffs 0", {"equilibrium": lambda ns: [1 / 3] * 3,
                                                         "payoffs_against_equilibrium": lambda ns: [0.0] * 3})],
    "27.2(c)": [("the worst reply named", {"best_response_to_average": lambda ns: "scissors"
                                          if ns["best_response_to_average"] != "scissors" else "rock"})],
    "27.3(a)": [("player 2 climbs A^T x", {"replicator": lambda ns: lambda t, z, A: np.concatenate(
        [ns["replicator"](t, z, A)[:3], -ns["replicator"](t, z, A)[3:]])})],
    "27.3(b)": [("the divergences in reverse", {"hedge_kl": lambda ns: ns["hedge_kl"][::-1]})],
    "27.3(c)": [("the divergences in reverse", {"kl_regularized": lambda ns: ns["kl_regularized"][::-1]})],
    "27.4(a)": [("the K branch without the call", {"ev_check_queen": lambda ns: lambda c, b:
                                                   ns["ev_check_queen"](c, b) + 0.5 * c})],
    "27.4(b)": [("the Q's fold counted as a loss", {"ev_bet_jack": lambda ns: lambda q: -1.0 + 0.5 * (-2 * q - (1 - q))})],
    "27.5(a)": [("the last iteration's policy, far from the average", {"average_policy_cfr": lambda ns: {
        k: ([1.0, 0.0] if k in ("K|b", "K|pb") else v) for k, v in ns["average_policy_cfr"].items()}})],
    "27.5(b)": [("reach ignored at the first decisions", {"mixture_policy": lambda ns: {
        k: ([0.0, 1.0] if k.endswith("|") else v) for k, v in ns["mixture_policy"].items()}})],
    "27.6(a)": [("the optimum and the safe corner", {"pure_equilibria": lambda ns: [("a", "a"), ("c", "c")]})],
    "27.6(b)": [("the optimum as the favourite", {"favoured_row": lambda ns: "a"})],
    "27.6(c)": [("learners told the optimum", {"independent_learners": lambda ns: lambda seed: ("a", "a")})],
    "27.7(a)": [("the payoff matrix as its own fit", {"q_tot": lambda ns: lk.games.climbing_game().A})],
    "27.7(b)": [("rows compared, columns forgotten", {"monotonic_representable": lambda ns: lambda Q:
                                                      ns["rows_consistent"](np.asarray(Q, dtype=float))})],
    "27.8(a)": [("always consistent", {"bradley_terry_consistent": lambda ns: lambda P: True})],
    "27.8(b)": [("the uniform distribution", {"nash_equilibrium": lambda ns: [1 / 3] * 3})],
    "4.1(a)": [("no importance weights", {"sampled_cf_values": lambda ns: lambda *a: np.sign(
        ns["sampled_cf_values"](*a)) * 2.0})],
    "4.1(b)": [("the sum, not the mean", {"mean_sampled_cf_values": lambda ns: lambda policy, player, streams, eps:
                                          len(streams) * np.asarray(ns["mean_sampled_cf_values"](policy, player,
                                                                                              streams, eps))})],
    "5.1(a)": [("each deal weighted 1", {"meta_game": lambda ns: lambda p1, p2: 6 * np.asarray(ns["meta_game"](p1, p2))}),
               ("player 2's payoffs", {"meta_game": lambda ns: lambda p1, p2: -np.asarray(ns["meta_game"](p1, p2))})],
    "5.1(b)": [("the last best responses, not the mixture", {"double_oracle": lambda ns: lambda start: {
        **ns["double_oracle"](start), "policy": np.where((lk.games.load("kuhn_poker").infoset_player == 0)[:, None],
                                                         ns["double_oracle"](start)["population_1"][-1],
                                                         ns["double_oracle"](start)["population_2"][-1])}})],
    "6.1(a)": [("one regret per legal action", {"count_deviations": lambda ns: lambda key: dict.fromkeys(
        public.ex6_1.TYPES, len(lk.games.load("leduc_poker").legal_actions(lk.games.load("leduc_poker").infoset_index(key))))})],
    "6.1(b)": [("the average over the rounds", {name: (lambda name: lambda ns: lambda profiles, player:
                                                       ns[name](profiles, player) / len(profiles))(name)
                                                for name in ("blind_action_regret", "blind_cf_regret")})],
}


def test_every_part_has_a_wrong_answer():
    assert set(WRONG) == set(PART_MODULE)


def _answer_names():
    """labkit's solvers and evaluators (the names a hint must not give: they answer the parts)."""
    folder = os.path.dirname(lk.__file__)
    names = []
    for name in dir(lk):
        obj = getattr(lk, name)
        try:
            path = os.path.relpath(inspect.getsourcefile(obj), folder)
        except TypeError:
            continue
        if callable(obj) and not name.startswith("_") and not path.startswith(("..",) + ALLOWED):
            names.append(name)
    return names + ["mixture", "deviation_regret", "deviation_structure", "hindsight"]


ANSWERS = _answer_names()


def assert_names_no_answer(part, hints):
    """No hint gives labkit's code: neither `lk.` / `labkit.` nor a solver's or evaluator's name
    (the part's own answer names, such as Lab 15's `nash_conv`, are the student's)."""
    own = set(public.spec_for(part).names)
    for hint in hints:
        assert "lk." not in hint and "labkit." not in hint, hint
        for name in ANSWERS:
            if name not in own:
                assert not re.search(rf"`{name}`|\b{name}\(|\.{name}\b", hint), (name, hint)


def test_the_answer_names_are_the_solvers_and_evaluators():
    assert {"nash_conv", "expected_payoffs", "CFR", "CFRPlus", "MCCFR", "PSRO", "zero_sum_equilibrium",
            "best_response", "counterfactual_values", "mixture"} <= set(ANSWERS)
    assert "TabularPolicy" not in ANSWERS and "uniform_policy" not in ANSWERS


@pytest.mark.parametrize("part,case", [(p, k) for p, cases in WRONG.items() for k in range(len(cases))])
def test_a_typical_wrong_answer_fails_its_public_check(solutions, part, case):
    why, overrides = WRONG[part][case]
    namespace = dict(solutions[PART_MODULE[part]])
    namespace.update({name: make(solutions[PART_MODULE[part]]) for name, make in overrides.items()})
    result = _public(part, namespace)
    assert not result.ok, (why, result.lines())
    assert result.line().startswith(f"{part}: not ready")
    assert_names_no_answer(part, result.hints)
    # the grader agrees that it is wrong
    assert HARNESSES[PART_MODULE[part]].grade(part, namespace)[0] < public.spec_for(part).max_points, why


@pytest.mark.parametrize("part", list(public.SPECS))
def test_no_hint_names_the_code_that_answers(part):
    spec = public.spec_for(part)
    blank = {name: {"__error__": "it still holds the placeholder `...`"} for name in spec.names}
    hints = list(public.feedback(part, blank).hints)
    for junk in [None, 7, "rock", [], [[1, 2], [3]], {"x": 1}, 0.5]:
        hints += public.feedback(part, {name: junk for name in spec.names}).hints
    assert_names_no_answer(part, hints)


# ------------------------------------------------------------------ the hand-worked values, recomputed
def test_the_27_1_cases_follow_from_the_definitions():
    m = public.ex27_1
    A, (xs, ys) = m.PENNIES, m.TWO_ROUNDS
    realized = np.einsum("ti,ij,tj->", xs, A, ys)
    r1 = max(A @ ys.sum(axis=0)) - realized
    r2 = max(-(xs.sum(axis=0) @ A)) + realized
    assert (r1, r2) == m.TWO_ROUND_REGRETS
    assert [max(A @ y) - min(x @ A) for x, y in ((m.FIRST, m.FIRST), (m.HALF, m.HALF))] == m.GAPS
    value = lk.zero_sum_equilibrium(lk.games.load(lk.games.MatrixGame(m.NO_SADDLE)))[1]
    assert value == pytest.approx(m.NO_SADDLE_VALUE, abs=1e-9)
    # the hidden probes are other games
    hidden = importlib.import_module("labkit_instructor.exercises.ex27_1")
    assert hidden.PROBE_A.shape != m.PENNIES.shape and hidden.BRACKET_A.shape != m.NO_SADDLE.shape


def test_the_27_3_velocity_is_the_replicator_field():
    m = public.ex27_3
    x, y = m.POINT[:3], m.POINT[3:]
    u, w = m.GAME @ y, -m.GAME.T @ x
    assert np.allclose(np.concatenate([x * (u - x @ u), y * (w - y @ w)]), m.VELOCITY, atol=1e-12)


def test_the_27_4_values_are_the_graders_references():
    hidden = importlib.import_module("labkit_instructor.exercises.ex27_4")        # written in one file
    m = public.ex27_4
    for (c, b), want in zip(m.CHECK_PROBES, m.CHECK_VALUES):
        assert hidden._ev_check_queen(c, b) == pytest.approx(want, abs=1e-12)
    for (q,), want in zip(m.JACK_PROBES, m.JACK_VALUES):
        assert hidden._ev_bet_jack(q) == pytest.approx(want, abs=1e-12)


def test_the_27_5_dominated_decisions_are_kuhns():
    solver = lk.CFR(lk.games.load("kuhn_poker"))
    solver.run(1000)
    kuhn, average = lk.games.load("kuhn_poker"), solver.average_policy().probs
    for key, act in public.ex27_5.DOMINATED.items():
        assert average[kuhn.infoset_index(key), ("pass", "bet").index(act)] > public.ex27_5.ALMOST_ALWAYS


def test_the_27_7_and_27_8_cases_are_the_worked_solutions(solutions):
    ns7, ns8 = solutions["ex27_7"], solutions["ex27_8"]
    assert [ns7["monotonic_representable"](Q) for (Q,) in public.ex27_7.PROBES] == public.ex27_7.REPRESENTABLE
    assert [ns8["bradley_terry_consistent"](P) for (P,) in public.ex27_8.PROBES] == public.ex27_8.CONSISTENT


def test_the_4_1_episodes_are_the_graders_reference():
    hidden = importlib.import_module("labkit_instructor.exercises.ex4_1")
    m = public.ex4_1
    (policy, player, stream, eps), = m.PARTS[0].probes["sampled_cf_values"]
    want = np.zeros((12, 2))
    want[m._key("K|", "pass")], want[m._key("K|pb", "bet")] = 4.0, 8.0
    assert np.allclose(hidden.sampled_values(policy, player, stream, eps), want, atol=1e-12)
    (policy, player, streams, eps), = m.PARTS[1].probes["mean_sampled_cf_values"]
    mean = np.mean([hidden.sampled_values(policy, player, u, eps) for u in streams], axis=0)
    want = np.zeros((12, 2))
    want[m._key("Q|p", "bet")], want[m._key("K|p", "bet")], want[m._key("J|b", "bet")] = -4 / 3, 4 / 3, -4 / 3
    assert np.allclose(mean, want, atol=1e-12)


def test_the_5_1_meta_game_is_labkits():
    m = public.ex5_1
    (pop_1, pop_2), = m.PARTS[0].probes["meta_game"]
    kuhn = lk.games.load("kuhn_poker")
    rows = (kuhn.infoset_player == 0)[:, None]
    got = [[lk.expected_payoffs(kuhn, np.where(rows, a, b))[0] for b in pop_2] for a in pop_1]
    assert np.allclose(got, m.BET_VS_BET_AND_PASS_VS_BET, atol=1e-12)


def test_the_6_1_cases_are_labkits():
    from labkit import hindsight
    hidden = importlib.import_module("labkit_instructor.exercises.ex6_1")
    m = public.ex6_1
    assert [hidden.reference_counts(key) for (key,) in m.COUNT_KEYS] == m.COUNTS
    kuhn = lk.games.load("kuhn_poker")
    kinds = {"blind_action_regret": "act", "blind_cf_regret": "cf"}
    for name, want in m.UNIFORM_REGRETS.items():
        (profiles, player), = m.PARTS[1].probes[name]
        assert hindsight.deviation_regret(kuhn, profiles, player, kinds[name]) == pytest.approx(want, abs=1e-12)


def test_the_27_1_equilibrium_is_labkits():
    m = public.ex27_1
    policy, _ = lk.zero_sum_equilibrium(lk.games.load(lk.games.MatrixGame(m.NO_SADDLE)))
    assert np.allclose(np.concatenate(policy.probs), m.NO_SADDLE_EQUILIBRIUM, atol=1e-9)


# ------------------------------------------------------------------ book/instructors.md's worked example
def _worked_example():
    """The one file of the "Adding an exercise" example."""
    text = (ROOT / "book" / "instructors.md").read_text()
    section = text[text.index("## Adding an exercise"):text.index("## Practical notes")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    return blocks[0]


def _module(source):
    namespace = {"__name__": "worked_example"}
    exec(compile(source, "<instructors.md>", "exec"), namespace)
    return namespace


def test_the_worked_example_of_a_new_exercise_works():
    from labkit.grading.reporter import collect
    one_file = _module(_worked_example())
    exercise, hidden, shown = one_file["EXERCISE"], one_file["PARTS"], _module(one_file["PUBLIC_CHECKS"])
    harness = Harness(exercise, hidden)
    spec = shown["PARTS"][0]
    assert spec.part == "2.1(a)" and spec.max_points == hidden[0].max_points and spec.names == hidden[0].names
    assert not set(spec.probes["pennies_value"]) & set(one_file["PROBES"])      # other cases than the grader's
    solution = harness.run(harness.cells(lambda part: True))
    assert harness.grade("2.1(a)", solution) == (2, [])
    assert spec.feedback(collect("2.1(a)", solution, spec=spec)).hints == []
    wrong = harness.run(harness.cells(lambda part: True, edits={"2.1(a)": [("(w - 1) / 2", "(w + 1) / 2")]}))
    assert harness.grade("2.1(a)", wrong)[0] == 0
    hints = spec.feedback(collect("2.1(a)", wrong, spec=spec)).hints
    assert hints and "gave 1, this case gives 0" in hints[0]
    # the closed form is the game's value, as labkit's LP finds it
    for w in (1.0, 3.0):
        A = np.array([[w, -1.0], [-1.0, w]])
        value = lk.zero_sum_equilibrium(lk.games.load(lk.games.MatrixGame(A)))[1]
        assert value == pytest.approx(solution["pennies_value"](w), abs=1e-9)


FIND_AND_BUILD = """
import sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import labkit_instructor as m
from build_exercises import write_public_checks
print(m.MODULES)
print(list(m.EXERCISES))
print(m.spec_for('2.1(a)').names)
print([p.name for p in write_public_checks(m.PUBLIC_SOURCES, sys.argv[3])])
"""


def test_a_new_exercise_is_one_file_found_by_its_name(tmp_path):
    """The example's file dropped into a copy of the instructor package: the grader finds its
    hidden checks, and the build writes its public checks as a module of their own."""
    import shutil
    import subprocess
    import sys
    package, public_folder = tmp_path / "labkit_instructor", tmp_path / "public"
    shutil.copytree(ROOT / "instructor" / "labkit_instructor", package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "exercises" / "ex2_1.py").write_text(_worked_example())
    public_folder.mkdir()
    done = subprocess.run([sys.executable, "-c", FIND_AND_BUILD, str(tmp_path), str(ROOT / "scripts"),
                           str(public_folder)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    modules, numbers, names, written = done.stdout.splitlines()[-4:]
    # in the order of the module names: "ex27_8" < "ex2_1" < "ex4_1" ("7" sorts before "_")
    assert eval(modules)[7:10] == ["ex27_8", "ex2_1", "ex4_1"] and "2.1" in eval(numbers)
    # every exercise's public checks, the new one's among them
    assert names == "('pennies_value',)" and eval(written) == [f"{name}.py" for name in eval(modules)]
    generated = (public_folder / "ex2_1.py").read_text()
    assert generated.startswith("# Generated by scripts/build_exercises.py from labkit_instructor.exercises.ex2_1")
    assert _module(generated)["PARTS"][0].part == "2.1(a)"


def test_the_generated_public_checks_are_up_to_date():
    """labkit/grading/public/<name>.py of every exercise is what the build writes from its one
    source (run `make exercises` after editing the exercise)."""
    import sys
    sys.path.insert(0, str(ROOT / "scripts"))
    from build_exercises import GENERATED
    material = importlib.import_module("labkit_instructor")
    for name, source in material.PUBLIC_SOURCES.items():
        path = ROOT / "labkit" / "grading" / "public" / f"{name}.py"
        assert path.read_text() == GENERATED.format(name=name) + source.lstrip("\n"), name
    generated = [p.stem for p in (ROOT / "labkit" / "grading" / "public").glob("*.py")
                 if p.read_text().startswith("# Generated by scripts/build_exercises.py")]
    assert sorted(generated) == sorted(material.PUBLIC_SOURCES)
