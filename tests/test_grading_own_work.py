"""Own work: a part that asks for an algorithm earns nothing for calling labkit's own.

Three layers are tested. The call monitor (`labkit.grading.own_work.CallMonitor`), which the
sealed reporter runs around every probe call, sees calls into labkit's solvers and evaluators by
whatever route (the package root, the module, getattr, importlib, a reloaded module, a solver
built in another cell, a thread, a trampoline compiled under a labkit file name, a module file of
the student's) and being switched off; it does not see labkit's own internal calls, nor the game,
its arrays and `TabularPolicy`. The static reading of the answer cells
(`labkit_instructor.checks.own_work`) finds the same wrappers in the source. And Lab 15's hidden
checks give each wrapped part 0 with a hint that names the call, while the worked solution keeps
full marks (tests/test_lab15_exercise.py); through the sandboxed grader, the library-wrapper
notebook scores 0 on parts (b) to (j).
"""
import importlib
import importlib.util
import sys
import threading

import nbformat
import numpy as np
import pytest

import labkit as lk
import lab15_submissions as subs
from exercise_harness import ROOT, Harness
from labkit.grading.own_work import CallMonitor, OwnWork
from labkit.grading.public import SPECS

from labkit_instructor.checks import grade_part  # noqa: E402
from labkit_instructor.exercises import lab15 as hidden  # noqa: E402
from labkit_instructor.checks.own_work import static_findings  # noqa: E402
from labkit_instructor.exercises import lab15 as lab  # noqa: E402

GAME = lk.games.load("leduc_poker")
UNIFORM = lk.uniform_policy(GAME).probs
LAB = Harness(lab.EXERCISE, hidden.PARTS)


@pytest.fixture(scope="module")
def monitor():
    return CallMonitor()


def watched(monitor, function, *args):
    with monitor.watch(function.__name__) as found:
        function(*args)
    return found


# ------------------------------------------------------------------ the call monitor
def through_the_root(p):
    return lk.nash_conv(GAME, p)


def through_the_module(p):
    return importlib.import_module("labkit.evaluate").nash_conv(GAME, p)


def through_getattr(p):
    return getattr(lk, "nash" + "_conv")(GAME, p)


def through_a_fresh_copy_of_the_module(p):
    """What importlib.reload does (the file executed again, new function objects), without
    changing the module the other tests use."""
    spec = importlib.util.spec_from_file_location("evaluate_copy", lk.evaluate.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        return module.nash_conv(GAME, p)
    except AttributeError:          # the copy's lazily set globals (its compiled kernels) are unset
        return None


def through_a_best_response(p):
    return lk.best_response(GAME, p, 0).value


def through_cfr_plus(iterations):
    solver = lk.CFRPlus(GAME)
    solver.run(iterations)
    return solver.average_policy().probs


def through_mccfr(iterations):
    solver = lk.MCCFR(GAME, sampling="outcome", seed=0)
    solver.run(iterations)
    return solver.average_policy().probs


SOLVER_FROM_AN_EARLIER_CELL = lk.CFR(GAME)


def through_a_solver_built_earlier(iterations):
    return SOLVER_FROM_AN_EARLIER_CELL.average_policy().probs


def through_a_thread(p):
    out = []
    worker = threading.Thread(target=lambda: out.append(lk.nash_conv(GAME, p)))
    worker.start()
    worker.join()
    return out[0]


def through_a_trampoline_named_like_labkit(p):
    namespace = {}
    source = "def trampoline(p):\n    return nash_conv(game, p)\n"
    exec(compile(source, lk.policy.__file__, "exec"), {"nash_conv": lk.nash_conv, "game": GAME}, namespace)
    return namespace["trampoline"](p)


def honest_with_the_game_and_policies(p):
    policy = lk.TabularPolicy(GAME, p)
    return float(policy.probs[GAME.legal_mask].sum()) + len(GAME.infoset_keys) + lk.uniform_policy(GAME).probs.sum()


def switching_the_monitor_off(p):
    sys.setprofile(None)
    return lk.nash_conv(GAME, p)


@pytest.mark.parametrize("function, argument, called", [
    (through_the_root, UNIFORM, "labkit.nash_conv"),
    (through_the_module, UNIFORM, "labkit.nash_conv"),
    (through_getattr, UNIFORM, "labkit.nash_conv"),
    (through_a_fresh_copy_of_the_module, UNIFORM, "labkit.nash_conv"),
    (through_a_best_response, UNIFORM, "labkit.best_response"),
    (through_cfr_plus, 2, "labkit.CFRPlus"),
    (through_mccfr, 2, "labkit.MCCFR"),
    (through_a_solver_built_earlier, 2, "labkit.CFR.average_policy"),
    (through_a_trampoline_named_like_labkit, UNIFORM, "labkit.nash_conv"),
])
def test_calls_into_labkits_solvers_are_seen_by_any_route(monitor, function, argument, called):
    found = watched(monitor, function, argument)
    assert found and found[0]["called"] == called and found[0]["name"] == function.__name__
    assert not found[0]["thread"] and not found[0].get("tampered")


def test_a_labkit_function_given_as_the_answer_itself_is_seen():
    """A partial of labkit's function has no frame of the student's: the reporter's call is the
    student's call."""
    import functools
    namespace = {"nash_conv": functools.partial(lk.nash_conv, GAME),
                 "expected_payoff": functools.partial(lk.expected_payoffs, GAME)}
    for part, name in (("L15(d)", "nash_conv"), ("L15(b)", "expected_payoff")):
        found = LAB.collect(part, namespace)["__own_work__"]
        assert found and found[0]["name"] == name and found[0]["called"].startswith("labkit."), found


def test_a_call_from_a_thread_is_seen_and_said_to_be_from_a_thread(monitor):
    found = watched(monitor, through_a_thread, UNIFORM)
    assert found == [{"called": "labkit.nash_conv", "thread": True, "name": "through_a_thread"}]


def test_a_module_file_of_the_students_is_the_students(monitor, tmp_path, monkeypatch):
    (tmp_path / "my_solvers.py").write_text("import labkit as lk\n\ndef nash_conv(game, p):\n"
                                            "    return lk.nash_conv(game, p)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import my_solvers
    with monitor.watch("nash_conv") as found:
        my_solvers.nash_conv(GAME, UNIFORM)
    assert [f["called"] for f in found] == ["labkit.nash_conv"]


def test_the_game_its_arrays_and_policies_are_allowed(monitor):
    assert watched(monitor, honest_with_the_game_and_policies, UNIFORM) == []
    assert watched(monitor, lambda p: lk.games.load("kuhn_poker").num_histories, UNIFORM) == []


def test_switching_the_monitor_off_is_seen(monitor):
    found = watched(monitor, switching_the_monitor_off, UNIFORM)
    assert found[0] == {"called": "sys.setprofile", "thread": False, "tampered": True,
                        "name": "switching_the_monitor_off"}
    assert sys.getprofile() is None                    # and the watch put back what was there


def test_starting_another_process_is_seen(monitor):
    import subprocess
    script = "import labkit as lk; g = lk.games.load('kuhn_poker'); print(lk.nash_conv(g, lk.uniform_policy(g)))"
    found = watched(monitor, lambda p: subprocess.run([sys.executable, "-c", script], capture_output=True), UNIFORM)
    assert found and found[0]["called"] == "posixsubprocess.fork_exec" and found[0]["process"]
    assert "started another process" in OwnWork("write NashConv yourself").message("L15(d)", found[0])


def test_openspiel_is_guarded_when_it_is_installed(monitor):
    pyspiel = pytest.importorskip("pyspiel")
    found = watched(monitor, lambda p: pyspiel.load_game("kuhn_poker"), UNIFORM)
    assert found and found[0]["called"] == "pyspiel.load_game"


def test_nothing_is_recorded_outside_a_watch(monitor):
    with monitor.watch("f") as found:
        pass
    lk.nash_conv(GAME, UNIFORM)
    assert found == []


def test_the_hint_names_the_part_the_task_and_the_call():
    rule = OwnWork("write NashConv yourself")
    assert rule.message("L15(d)", {"name": "nash_conv", "called": "labkit.nash_conv"}) == \
        "L15(d) asks you to write NashConv yourself; your `nash_conv` called `labkit.nash_conv`"


def test_the_calls_of_one_function_are_named_in_one_hint():
    rule = OwnWork("write CFR yourself")
    found = [{"name": "cfr", "called": c} for c in ("labkit.CFR", "labkit.CFR.run", "labkit.CFR.run")]
    assert rule.summary("L15(e)", found) == \
        "L15(e) asks you to write CFR yourself; your `cfr` called `labkit.CFR` and `labkit.CFR.run`"


# ------------------------------------------------------------------ the reporter and the checks
def test_the_reporter_records_own_work_for_parts_with_a_rule_only():
    namespace = {"nash_conv": through_the_root, "counts": {"histories": 1, "infosets": 1, "terminal": 1}}
    value = LAB.collect("L15(d)", namespace)
    assert {f["called"] for f in value["__own_work__"]} == {"labkit.nash_conv"}
    assert "__own_work__" not in LAB.collect("L15(a)", namespace)


@pytest.fixture(scope="module")
def wrapped():
    """The worked solution's setup with labkit wrappers as the answers of (b) to (j)."""
    return LAB.run(LAB.cells(lambda p: False) + [subs.WRAPPERS[p] for p in subs.WRAPPED_PARTS
                                                   if p != "L15(g)"])


@pytest.mark.parametrize("part", [p for p in subs.WRAPPED_PARTS if p != "L15(g)"])
def test_a_part_that_wraps_labkit_earns_nothing_and_is_told_why(wrapped, part):
    points, hints = LAB.grade(part, wrapped)
    task = SPECS[part].own_work.task
    assert points == 0 and hints[0].startswith(f"{part} asks you to {task}; your `"), hints
    assert "called `labkit." in hints[0]


def test_the_notebooks_check_says_the_same(wrapped):
    result = LAB.public("L15(d)", wrapped)
    assert not result.ok
    assert ("L15(d) asks you to write NashConv yourself; your `nash_conv` called `labkit.nash_conv`"
            in " ".join(result.hints))


# ------------------------------------------------------------------ the static reading
def _answers(replaced):
    answers = {c.slot: [c.solution] for c in lab.EXERCISE.cells if c.role == "answer"}
    answers.update({slot: [source] for slot, source in replaced.items()})
    return answers


def _static(part, answers):
    spec = SPECS[part]
    slots = list(dict.fromkeys(c.slot for c in lab.EXERCISE.cells if c.role == "answer"))
    sources = [s for slot in slots[:slots.index(part) + 1] for s in answers.get(slot, [])]
    return static_findings([n for n in spec.names if n in spec.probes], sources)


@pytest.mark.parametrize("part", subs.WRAPPED_PARTS)
def test_the_source_of_a_wrapper_reads_as_one(part):
    found = _static(part, _answers(subs.WRAPPERS))
    assert found and found[0]["static"], found


@pytest.mark.parametrize("part", subs.WRAPPED_PARTS)
def test_the_worked_solution_reads_as_its_own_work(part):
    assert _static(part, _answers({})) == []


def test_a_global_computed_by_a_labkit_solver_in_another_cell_is_found():
    precomputed = {"L15(f)": "solver = lk.CFRPlus(leduc)\nsolver.run(100)\nstore = {}\n"
                             "store[100] = solver.average_policy().probs\n",
                   "L15(g)": "def cfr_plus(iterations):\n    return store[iterations]\n"}
    found = _static("L15(g)", _answers(precomputed))
    assert found and "store" in found[0]["called"] and "lk.CFRPlus" in found[0]["called"]


def test_grade_part_with_the_answer_cells_adds_the_static_reading(wrapped):
    value = LAB.collect("L15(e)", LAB.run(LAB.cells(lambda p: p in ("L15(b)", "L15(c)", "L15(d)", "L15(e)"))))
    assert grade_part("L15(e)", value).points == 2
    answers = _answers({"L15(e)": "def cfr(iterations):\n    s = lk.CFR(leduc)\n    s.run(iterations)\n"
                                  "    return s.average_policy().probs\n"})
    graded = grade_part("L15(e)", value, answers=answers)
    assert graded.points == 0 and "your `cfr` uses `lk.CFR`" in graded.hints[0]


# ------------------------------------------------------------------ through the sandboxed grader
@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The library-wrapper, faked-timing and honest notebooks, graded by the sandboxed grader.

    The wall-clock limits are raised (a safety net, not the measure): these tests check what
    the checks decide, which must not depend on how busy the machine is."""
    from labkit.grading.grader import grade_paths
    from labkit.grading.sandbox import SandboxUnavailable, check_available
    try:
        check_available()
    except SandboxUnavailable as exc:         # pragma: no cover - CI installs bubblewrap
        pytest.skip(f"no sandbox here: {exc}")
    folder = tmp_path_factory.mktemp("lab15")
    wrappers = subs.library_wrappers()
    for cell in wrappers.cells:               # (k) is not asked of this notebook
        if cell.metadata.get("labkit", {}).get("slot") == "L15(k)":
            cell.source = "curves = {}"
    for student, nb in (("wrappers", wrappers), ("faked", subs.faked_timing()), ("honest", subs.honest())):
        (folder / student).mkdir()
        nbformat.write(nb, folder / student / lab.EXERCISE.filename)
    results = grade_paths([folder], instructor=ROOT / "instructor", executor=2, timeout=600, budget=3600)
    return {r["student"]: {p["part"]: p for p in r["parts"]} | {"score": r["score"]} for r in results}


@pytest.mark.slow
def test_the_library_wrapper_notebook_scores_zero_on_the_wrapped_parts(graded):
    parts = graded["wrappers"]
    for part in subs.WRAPPED_PARTS:
        assert parts[part]["points"] == 0, (part, parts[part])
        assert parts[part]["hints"][0].split(": ", 1)[1].startswith(f"{part} asks you to "), parts[part]
    assert "your `nash_conv` called `labkit.nash_conv`" in parts["L15(d)"]["hints"][0]
    assert parts["L15(a)"]["points"] == 2 and parts["score"] == 2   # the honest walk of (a) keeps its points


@pytest.mark.slow
def test_speed_bought_before_the_timed_call_earns_no_speed_point(graded):
    parts = graded["faked"]
    nash_conv, thousand = parts["L15(d)"], parts["L15(g)"]
    # the memo misses every new policy (3 CPU s a call), and the thread that (a) started was still
    # busy with the notebook's code when (d) was timed: either withholds the point, with its reason
    assert nash_conv["points"] == 1, nash_conv
    assert "at a policy it had not seen" in nash_conv["hints"][0] or \
        "a thread was running your notebook's code" in nash_conv["hints"][0], nash_conv
    assert thousand["points"] == 0 and "computed before the call" in thousand["hints"][0], thousand
    assert all(parts[p]["points"] == parts[p]["max_points"] for p in ("L15(a)", "L15(b)", "L15(e)", "L15(j)"))


@pytest.mark.slow
def test_the_honest_notebook_scores_full_marks(graded):
    parts = graded["honest"]
    assert parts["score"] == 19, {p: v["hints"] for p, v in parts.items() if p != "score" and v["hints"]}
