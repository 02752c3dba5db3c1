"""Timed probe calls: the reporter measures each call, the hidden checks of Lab 15 grade speed.

A correct but slow answer (the worked solution with a ``time.sleep`` added) keeps its
correctness point, loses the speed point and is told how to be faster; the same answer without
the sleep gets both. The budgets are scaled down where the answers run in this process; once,
end to end, the lab's own budget is enforced through the sandboxed grader.
"""
import dataclasses
import json
import time

import nbformat
import pytest

from exercise_harness import ROOT, Harness
from labkit.grading import reporter, wire
from labkit.grading.checking import part_spec
from labkit.grading.grader import TIMED_CHECK_FACTOR, _check_timeouts

from labkit_instructor.checks import lab15 as hidden  # noqa: E402
from labkit_instructor.exercises import lab15 as lab  # noqa: E402


class Counting:
    """A probe function that sleeps `delays[k]` seconds on its k-th call and returns x + 1."""

    def __init__(self, *delays):
        self.delays, self.calls = list(delays), 0

    def __call__(self, x):
        time.sleep(self.delays[min(self.calls, len(self.delays) - 1)])
        self.calls += 1
        return x + 1


def _spec(timing=None, probes=((1,), (2,))):
    return part_spec("t(a)", ["f"], lambda v: [], 1, {"f": list(probes)}, timing)


def test_every_probe_call_is_timed():
    f = Counting(0.05)
    value = reporter.collect("t(a)", {"f": f}, spec=_spec())
    assert value["f"] == [2, 3] and f.calls == 2                    # untimed names run once
    assert len(value["__seconds__"]["f"]) == 2 and all(0.05 <= t < 1.0 for t in value["__seconds__"]["f"])


def test_a_slow_call_is_run_again_and_the_fastest_run_counts():
    f = Counting(0.3, 0.01, 0.01)          # a busy moment on the first call only
    value = reporter.collect("t(a)", {"f": f}, spec=_spec({"f": (0.1, 3)}, probes=((1,),)))
    assert value["f"] == [2]
    assert f.calls == 2                    # stopped as soon as a run was within the budget
    assert value["__seconds__"]["f"][0] < 0.1


def test_a_fast_call_runs_once_and_a_slow_one_at_most_repeats_times():
    fast, slow = Counting(0.0), Counting(0.2)
    reporter.collect("t(a)", {"f": fast}, spec=_spec({"f": (0.1, 3)}, probes=((1,),)))
    value = reporter.collect("t(a)", {"f": slow}, spec=_spec({"f": (0.1, 3)}, probes=((1,),)))
    assert fast.calls == 1 and slow.calls == 3
    assert value["__seconds__"]["f"][0] >= 0.2


def test_a_raising_probe_has_no_time_and_the_others_still_do():
    def f(x):
        if x == 2:
            raise ValueError("no")
        return x
    value = reporter.collect("t(a)", {"f": f}, spec=_spec({"f": (1.0, 2)}))
    assert value["f"][1] == {"__error__": "ValueError: no"}
    assert value["__seconds__"]["f"][1] is None and value["__seconds__"]["f"][0] >= 0


def test_the_timing_travels_to_the_kernel_with_the_probes():
    spec = _spec({"f": (1.5, 3)})
    names, probes, timing = wire.decode_specs(wire.encode_specs({"t(a)": spec}))["t(a)"]
    assert names == ("f",) and probes == {"f": [(1,), (2,)]} and timing == {"f": (1.5, 3)}
    assert wire.decode_specs({"t(a)": [["f"], {"f": [[1]]}]})["t(a)"][2] == {}     # an older seal


def test_timing_must_name_a_probed_function_with_a_positive_budget():
    with pytest.raises(ValueError, match="has no probes"):
        part_spec("t(a)", ["f"], None, 1, {}, {"f": (1.0, 1)})
    with pytest.raises(ValueError, match="budget > 0"):
        part_spec("t(a)", ["f"], None, 1, {"f": [(1,)]}, {"f": (0, 1)})


def test_the_check_cell_of_a_timed_part_gets_time_for_a_slow_answer():
    specs = {p.part: p for p in hidden.PARTS}
    plan = [("answer", "L15(d)", ""), ("check", "L15(d)", ""), ("answer", "L15(g)", ""), ("check", "L15(g)", "")]
    timeouts = _check_timeouts(plan, specs, 60.0)
    assert timeouts == {"3": TIMED_CHECK_FACTOR * hidden.CFR_PLUS_1000_SECONDS}       # (d) fits in 60 s
    assert TIMED_CHECK_FACTOR * hidden.CFR_PLUS_1000_SECONDS > hidden.SPEED_MARGIN * hidden.CFR_PLUS_1000_SECONDS


# ------------------------------------------------------------------ Lab 15 (d) and (g)
SLEEP = "import time as _t\n    _t.sleep({})\n    "
NASH_HEAD = "def nash_conv(policy):\n    "


def _slowed(source, function, seconds):
    """The solution with a sleep as the first statement of `function`."""
    head = f"def {function}(" + source.split(f"def {function}(", 1)[1].split("\n", 1)[0] + "\n    "
    assert head in source
    return source.replace(head, head + SLEEP.format(seconds), 1)


@pytest.fixture(scope="module")
def namespaces():
    fast = Harness(lab.EXERCISE, hidden.PARTS)
    wanted = ("L15(a)", "L15(b)", "L15(c)", "L15(d)", "L15(e)", "L15(f)")
    good = fast.run(fast.cells(lambda p: p in wanted))
    slow = fast.run(fast.cells(lambda p: p in wanted, edits={"L15(d)": [(NASH_HEAD, NASH_HEAD + SLEEP.format(0.25))]}))
    return good, slow


def _scaled_harness(part, name, budget, repeats):
    specs = [dataclasses.replace(s, timing={name: (budget, repeats)}) if s.part == part else s for s in hidden.PARTS]
    return Harness(lab.EXERCISE, specs)


def test_a_slow_but_correct_nash_conv_loses_only_the_speed_point(namespaces, monkeypatch):
    good, slow = namespaces
    monkeypatch.setattr(hidden, "NASH_CONV_SECONDS", 0.1)             # margin 1.5: too slow beyond 0.15 s
    harness = _scaled_harness("L15(d)", "nash_conv", 0.1, 2)
    points, hints = harness.grade("L15(d)", slow)
    assert points == 1 and len(hints) == 1
    assert "your NashConv is right" in hints[0] and "budget of 0.1 s" in hints[0]
    assert "vectorize over the infosets" in hints[0] and "memoize" in hints[0]
    assert harness.grade("L15(d)", good) == (2, [])


def test_a_fast_nash_conv_is_fast_at_the_labs_own_budget(namespaces):
    good, _ = namespaces
    value = Harness(lab.EXERCISE, hidden.PARTS).collect("L15(d)", good)
    assert max(value["__seconds__"]["nash_conv"]) < hidden.NASH_CONV_SECONDS
    spec = next(s for s in hidden.PARTS if s.part == "L15(d)")
    assert spec.timing == {"nash_conv": (hidden.NASH_CONV_SECONDS, hidden.NASH_CONV_REPEATS)}
    assert sum(i.points for i in spec.grade(value)) == 2


def test_a_slow_but_correct_cfr_plus_loses_the_thousand_iterations_point(namespaces, monkeypatch):
    """(g) with 10 iterations and a 0.5 s budget: the same grading rule at a size this test can run."""
    good, _ = namespaces
    slow = dict(good)
    exec(compile(_slowed(lab.CFR_PLUS_SOLUTION.split("\nfor T in")[0], "cfr_plus", 1.0), "<slow>", "exec"), slow)
    reference = hidden.trajectory("cfr_plus", last=10)[10]
    monkeypatch.setattr(hidden, "CFR_PLUS_1000_SECONDS", 0.5)
    monkeypatch.setattr(hidden, "trajectory", lambda name, last: {1000: reference})
    specs = [dataclasses.replace(s, probes={"cfr_plus": [(10,)]}, timing={"cfr_plus": (0.5, 1)})
             if s.part == "L15(g)" else s for s in hidden.PARTS]
    harness = Harness(lab.EXERCISE, specs)
    points, hints = harness.grade("L15(g)", slow)
    assert points == 0 and "your CFR+ is right" in hints[0] and "one numpy pass per level" in hints[0]
    assert harness.grade("L15(g)", good) == (1, [])


@pytest.mark.slow
def test_the_sandboxed_grader_times_nash_conv_at_the_labs_budget(tmp_path):
    """Through the sandbox, the lab's 1 s budget: 1.7 s per call loses the speed point, the
    solution keeps it (parts after (d) left blank to keep the run short)."""
    from labkit.grading.grader import grade_paths
    wanted = ("L15(a)", "L15(b)", "L15(c)", "L15(d)")
    for student, delay in (("fast", None), ("slow", 1.7)):
        nb = lab.EXERCISE.notebook(solution=True)
        for cell in nb.cells:
            meta = cell.metadata.get("labkit", {})
            if meta.get("role") == "answer" and meta.get("slot") not in wanted:
                cell.source = "pass"
            elif meta.get("role") == "answer" and meta.get("slot") == "L15(d)" and delay:
                assert NASH_HEAD in cell.source
                cell.source = cell.source.replace(NASH_HEAD, NASH_HEAD + SLEEP.format(delay))
        (tmp_path / student).mkdir()
        nbformat.write(nb, tmp_path / student / lab.EXERCISE.filename)
    results = {r["student"]: r for r in grade_paths([tmp_path], instructor=ROOT / "instructor", executor=2)}
    fast = {p["part"]: p for p in results["fast"]["parts"]}["L15(d)"]
    slow = {p["part"]: p for p in results["slow"]["parts"]}["L15(d)"]
    assert (fast["points"], fast["hints"]) == (2, [])
    assert slow["points"] == 1 and "your NashConv is right, but one call took" in slow["hints"][0]
    took = float(slow["hints"][0].split("took ")[1].split(" s")[0])
    assert 1.7 <= took < 10


# ------------------------------------------------------------------ one copy of the probes per job
def test_a_job_holds_one_copy_of_the_probes_shared_by_its_kernels():
    from labkit.grading.grader import MAX_KERNELS, _encoded_specs, build_job
    from labkit.grading.notebooks import Submission, graded_cells
    specs = {p.part: p for p in hidden.PARTS}
    plan = graded_cells(lab.EXERCISE, Submission(lab.EXERCISE.number, {}, {}))
    shared = _encoded_specs(lab.EXERCISE, specs)
    assert _encoded_specs(lab.EXERCISE, specs) is shared           # encoded once, for every submission
    job, nonces = build_job(plan, specs, 60.0, 600.0, shared)
    text = json.dumps(job)
    marker = json.dumps(wire.encode(hidden.OUTCOME_PROBES[0][2]))  # one of the grader's random streams
    assert text.count(marker[1:-1]) == 1
    assert len(nonces) == len(set(nonces)) == len(job["seals"]) == MAX_KERNELS
    assert all(set(seal) == {"nonce"} for seal in job["seals"])
    assert len(text) < 2_000_000                                    # 10 MB with a copy per kernel


def test_the_driver_writes_each_kernels_seal_with_the_shared_probes(tmp_path, monkeypatch):
    from labkit.grading import driver
    written = []

    class FakeKernel:
        restarts = interrupts = 0

        def __init__(self, *args):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def run(self, source, timeout):
            if "seal()" in source:
                written.append(json.loads((tmp_path / ".seal").read_text()))
            return type("Run", (), {"status": "ok", "error": None, "outputs": []})()

    import labkit.grading.runner as runner
    monkeypatch.setattr(runner, "KernelRun", FakeKernel)
    events = type("Events", (), {"sent": [], "send": lambda self, **e: self.sent.append(e)})()
    specs = {"x(a)": [["f"], {"f": [[1]]}, {}]}
    job = {"cells": [["answer", "x(a)", "1"]], "timeout": 5, "setup_timeout": 5, "budget": 60,
           "specs": specs, "seals": [{"nonce": "a" * 32}, {"nonce": "b" * 32}]}
    driver.run_job(job, events, tmp_path)
    assert written == [{"nonce": "a" * 32, "specs": specs}]
