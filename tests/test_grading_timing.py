"""Timed probe calls: the CPU seconds of the call itself, at inputs it has never seen.

The reporter measures every probe call in CPU seconds of the process (every thread counted, so a
thread working meanwhile counts too) and in wall-clock seconds; a fresh marker among a probe's
arguments (`labkit.grading.fresh`) gets a new input for every call, drawn from a seed the record
carries; a timed call notes the threads busy with notebook code when it began. Lab 15's hidden
checks grade speed from these: a correct but slow answer keeps its correctness point and loses the
speed point with a hint that says why; a memo, a result computed before the call or a thread
working in the background earns no speed point; a fast answer gets it.

Slow answers burn CPU in a loop (a sleep costs no CPU time, which is the point of measuring it),
so no assertion depends on the machine's load. Budgets are scaled down where the answers run in
this process; once, end to end, the lab's own budget is enforced through the sandboxed grader.
"""
import dataclasses
import json
import threading
import time

import nbformat
import numpy as np
import pytest

from exercise_harness import ROOT, Harness
from labkit.grading import fresh, reporter, wire
from labkit.grading.checking import part_spec
from labkit.grading.grader import TIMED_CHECK_FACTOR, _check_timeouts

from labkit_instructor.exercises import lab15 as hidden  # noqa: E402
from labkit_instructor.exercises import lab15 as lab  # noqa: E402


def burn(seconds):
    """Work for `seconds` of CPU time."""
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass


class Counting:
    """A probe function that burns `costs[k]` CPU seconds on its k-th call and returns x + 1
    (or, for a fresh policy, its sum); it keeps the arguments it saw."""

    def __init__(self, *costs):
        self.costs, self.calls, self.seen = list(costs), 0, []

    def __call__(self, x):
        burn(self.costs[min(self.calls, len(self.costs) - 1)])
        self.calls += 1
        self.seen.append(x)
        return float(np.sum(x)) + 1


def _spec(timing=None, probes=((1,), (2,))):
    return part_spec("t(a)", ["f"], lambda v: [], 1, {"f": list(probes)}, timing)


FRESH = (fresh.marker("leduc_policy"),)


# ------------------------------------------------------------------ what the reporter measures
def test_every_probe_call_is_measured_in_cpu_and_wall_seconds():
    f = Counting(0.05)
    value = reporter.collect("t(a)", {"f": f}, spec=_spec())
    assert value["f"] == [2, 3] and f.calls == 2                    # untimed names run once
    assert all(0.05 <= t < 1.0 for t in value["__seconds__"]["f"])   # CPU: what the loop burned
    assert all(w >= 0.05 for w in value["__wall__"]["f"])


def test_waiting_is_not_working():
    value = reporter.collect("t(a)", {"f": lambda x: time.sleep(0.3) or x}, spec=_spec(probes=((1,),)))
    assert value["__wall__"]["f"][0] >= 0.3 and value["__seconds__"]["f"][0] < 0.2


def test_a_thread_working_during_the_call_counts():
    """The call waits while a thread does the work: the work is the call's."""
    go = threading.Event()

    def work():
        go.wait()
        burn(0.3)

    worker = threading.Thread(target=work)
    worker.start()

    def f(x):
        go.set()
        worker.join()
        return x

    value = reporter.collect("t(a)", {"f": f}, spec=_spec(probes=((1,),)))
    assert value["__seconds__"]["f"][0] >= 0.25


def test_a_fresh_input_is_drawn_for_every_call_from_the_seed_in_the_record():
    f = Counting(0.0)
    value = reporter.collect("t(a)", {"f": f}, spec=_spec(probes=(FRESH, FRESH, (1,))))
    seeds = value["__fresh__"]["f"]
    assert seeds[2] is None and seeds[0] != seeds[1]
    for seed, seen in zip(seeds[:2], f.seen):
        np.testing.assert_array_equal(fresh.draw("leduc_policy", seed), seen)   # the grader's copy
    again = reporter.collect("t(a)", {"f": Counting(0.0)}, spec=_spec(probes=(FRESH,)))
    assert again["__fresh__"]["f"][0] not in seeds                  # a new secret in every check


def test_a_slow_fresh_call_runs_again_with_a_new_input_and_the_fastest_counts():
    f = Counting(0.3, 0.0, 0.0)
    value = reporter.collect("t(a)", {"f": f}, spec=_spec({"f": (0.1, 3)}, probes=(FRESH,)))
    assert f.calls == 2                    # stopped as soon as a run was within the budget
    assert value["__seconds__"]["f"][0] < 0.1
    assert not np.array_equal(f.seen[0], f.seen[1])
    np.testing.assert_array_equal(fresh.draw("leduc_policy", value["__fresh__"]["f"][0]), f.seen[1])
    assert value["f"][0] == pytest.approx(float(np.sum(f.seen[1])) + 1)   # result and seed of that run


def test_a_slow_call_at_a_fixed_input_runs_once():
    """Running the same input again would time a cache."""
    f = Counting(0.2)
    value = reporter.collect("t(a)", {"f": f}, spec=_spec({"f": (0.1, 3)}, probes=((1,),)))
    assert f.calls == 1 and value["__seconds__"]["f"][0] >= 0.2


def test_a_fast_call_runs_once_and_a_slow_one_at_most_repeats_times():
    fast, slow = Counting(0.0), Counting(0.15)
    reporter.collect("t(a)", {"f": fast}, spec=_spec({"f": (0.1, 3)}, probes=(FRESH,)))
    value = reporter.collect("t(a)", {"f": slow}, spec=_spec({"f": (0.1, 3)}, probes=(FRESH,)))
    assert fast.calls == 1 and slow.calls == 3
    assert value["__seconds__"]["f"][0] >= 0.15


def test_a_raising_probe_has_no_time_and_the_others_still_do():
    def f(x):
        if x == 2:
            raise ValueError("no")
        return x
    value = reporter.collect("t(a)", {"f": f}, spec=_spec({"f": (1.0, 2)}))
    assert value["f"][1] == {"__error__": "ValueError: no"}
    assert value["__seconds__"]["f"][1] is None and value["__seconds__"]["f"][0] >= 0


def test_threads_busy_with_notebook_code_are_recorded_for_timed_calls():
    stop = threading.Event()

    def background():                      # notebook code (this file is not an installed library)
        while not stop.is_set():
            time.sleep(0.01)

    worker = threading.Thread(target=background, daemon=True)
    worker.start()
    try:
        busy = reporter.collect("t(a)", {"f": Counting(0.0)}, spec=_spec({"f": (1.0, 1)}, probes=((1,),)))
    finally:
        stop.set()
        worker.join()
    idle = reporter.collect("t(a)", {"f": Counting(0.0)}, spec=_spec({"f": (1.0, 1)}, probes=((1,),)))
    untimed = reporter.collect("t(a)", {"f": Counting(0.0)}, spec=_spec(probes=((1,),)))
    assert busy["__busy__"]["f"] == [1] and idle["__busy__"]["f"] == [0]
    assert "__busy__" not in untimed


def test_the_timing_travels_to_the_kernel_with_the_probes():
    spec = _spec({"f": (1.5, 3)}, probes=((1,), FRESH))
    names, probes, timing = wire.decode_specs(wire.encode_specs({"t(a)": spec}))["t(a)"]
    assert names == ("f",) and probes == {"f": [(1,), FRESH]} and timing == {"f": (1.5, 3)}
    assert wire.decode_specs({"t(a)": [["f"], {"f": [[1]]}]})["t(a)"][2] == {}     # an older seal


def test_timing_must_name_a_probed_function_with_a_positive_budget():
    with pytest.raises(ValueError, match="has no probes"):
        part_spec("t(a)", ["f"], None, 1, {}, {"f": (1.0, 1)})
    with pytest.raises(ValueError, match="budget > 0"):
        part_spec("t(a)", ["f"], None, 1, {"f": [(1,)]}, {"f": (0, 1)})
    with pytest.raises(ValueError, match="unknown kind of fresh input"):
        fresh.marker("kuhn_policy")


def test_the_check_cells_of_timed_and_heavy_parts_get_time_for_their_budgets():
    specs = {p.part: p for p in hidden.PARTS}
    plan = [("answer", p, "") if k % 2 == 0 else ("check", p, "")
            for p in ("L15(d)", "L15(g)", "L15(h)", "L15(j)") for k in range(2)]
    timeouts = _check_timeouts(plan, specs, 60.0)
    assert "1" not in timeouts                                     # (d) fits in 60 s
    assert timeouts["3"] == TIMED_CHECK_FACTOR * hidden.CFR_PLUS_1000_SECONDS
    assert timeouts["5"] == TIMED_CHECK_FACTOR * hidden.SAMPLED_MEANS_SECONDS * len(hidden.MEAN_PROBES)
    assert timeouts["7"] == TIMED_CHECK_FACTOR * hidden.MCCFR_SECONDS * len(hidden.MCCFR_PROBES)
    assert TIMED_CHECK_FACTOR * hidden.CFR_PLUS_1000_SECONDS > hidden.SPEED_MARGIN * hidden.CFR_PLUS_1000_SECONDS


# ------------------------------------------------------------------ Lab 15 (d) and (g)
BURN = "import time as _t\n    _until = _t.process_time() + {}\n    while _t.process_time() < _until:\n        pass\n    "
NASH_HEAD = "def nash_conv(policy):\n    "

MEMOISED = '''
import hashlib as _hashlib
_memo = {}
_honest_nash_conv = nash_conv


def nash_conv(policy):
    key = _hashlib.sha256(np.asarray(policy).tobytes()).hexdigest()
    if key not in _memo:
        _until = time.process_time() + 0.3
        while time.process_time() < _until:
            pass
        _memo[key] = _honest_nash_conv(policy)
    return _memo[key]
'''


@pytest.fixture(scope="module")
def namespaces():
    fast = Harness(lab.EXERCISE, hidden.PARTS)
    wanted = ("L15(a)", "L15(b)", "L15(c)", "L15(d)", "L15(e)", "L15(f)")
    good = fast.run(fast.cells(lambda p: p in wanted))
    slow = fast.run(fast.cells(lambda p: p in wanted, edits={"L15(d)": [(NASH_HEAD, NASH_HEAD + BURN.format(0.25))]}))
    return good, slow


def _scaled_harness(part, name, budget, repeats, probes=None):
    specs = [dataclasses.replace(s, timing={name: (budget, repeats)}, probes=probes or s.probes)
             if s.part == part else s for s in hidden.PARTS]
    return Harness(lab.EXERCISE, specs)


def test_a_slow_but_correct_nash_conv_loses_only_the_speed_point(namespaces, monkeypatch):
    good, slow = namespaces
    monkeypatch.setattr(hidden, "NASH_CONV_SECONDS", 0.1)             # margin 1.5: too slow beyond 0.15 s
    harness = _scaled_harness("L15(d)", "nash_conv", 0.1, 2)
    points, hints = harness.grade("L15(d)", slow)
    assert points == 1 and len(hints) == 1
    assert "your NashConv is right" in hints[0] and "budget of 0.1 s" in hints[0] and "CPU s" in hints[0]
    assert "vectorize over the infosets" in hints[0] and "memoize" in hints[0]
    assert harness.grade("L15(d)", good) == (2, [])


def test_a_memo_earns_no_speed_point(namespaces, monkeypatch):
    """Every timed policy is new, so a cache of earlier results never answers a timed call."""
    good, _ = namespaces
    memo = dict(good)
    exec(compile(MEMOISED, "<memo>", "exec"), memo)
    monkeypatch.setattr(hidden, "NASH_CONV_SECONDS", 0.1)
    harness = _scaled_harness("L15(d)", "nash_conv", 0.1, 2)
    value = harness.collect("L15(d)", memo)
    assert all(value["__seconds__"]["nash_conv"][k] >= 0.3 for k in hidden.FRESH_INDICES)
    points, hints = harness.grade("L15(d)", memo)
    assert points == 1 and "at a policy it had not seen" in hints[0]


def test_a_nash_conv_that_ignores_its_argument_at_the_timed_policies_loses_the_point(namespaces):
    good, _ = namespaces
    known = {p.tobytes(): good["nash_conv"](p) for p in hidden.POLICIES}
    cheat = dict(good, nash_conv=lambda p: known.get(np.asarray(p).tobytes(), 0.0))
    points, hints = Harness(lab.EXERCISE, hidden.PARTS).grade("L15(d)", cheat)
    assert points == 1 and "not at the new ones it drew for the timing" in hints[0]


def test_a_fast_nash_conv_is_fast_at_the_labs_own_budget(namespaces):
    good, _ = namespaces
    value = Harness(lab.EXERCISE, hidden.PARTS).collect("L15(d)", good)
    assert max(value["__seconds__"]["nash_conv"]) < hidden.NASH_CONV_SECONDS
    spec = next(s for s in hidden.PARTS if s.part == "L15(d)")
    assert spec.timing == {"nash_conv": (hidden.NASH_CONV_SECONDS, hidden.NASH_CONV_REPEATS)}
    assert sum(i.points for i in spec.grade(value)) == 2


def _ten_iterations(monkeypatch, budget):
    """(g) with 10 iterations: the same grading rule at a size this test can run."""
    reference = hidden.trajectory("cfr_plus", last=10)[10]
    monkeypatch.setattr(hidden, "CFR_PLUS_1000_SECONDS", budget)
    monkeypatch.setattr(hidden, "trajectory", lambda name, last: {1000: reference})
    return _scaled_harness("L15(g)", "cfr_plus", budget, 1, probes={"cfr_plus": [(10,)]})


def test_a_slow_but_correct_cfr_plus_loses_the_thousand_iterations_point(namespaces, monkeypatch):
    good, _ = namespaces
    slow = dict(good)
    source = lab.CFR_PLUS_SOLUTION.split("\nfor T in")[0]
    head = "def cfr_plus(iterations):\n    "
    exec(compile(source.replace(head, head + BURN.format(1.0)), "<slow>", "exec"), slow)
    harness = _ten_iterations(monkeypatch, 0.5)
    points, hints = harness.grade("L15(g)", slow)
    assert points == 0 and "your CFR+ is right" in hints[0] and "one numpy pass per level" in hints[0]
    assert harness.grade("L15(g)", good) == (1, [])


def test_cfr_plus_computed_before_the_call_earns_no_point(namespaces, monkeypatch):
    """A thread started earlier computed the iterations; the timed call hands them over."""
    good, _ = namespaces
    stored = {}
    worker = threading.Thread(target=lambda: stored.update({10: good["cfr_plus"](10)}))
    worker.start()
    worker.join()
    precomputed = dict(good, cfr_plus=lambda iterations: stored[iterations])
    points, hints = _ten_iterations(monkeypatch, 0.5).grade("L15(g)", precomputed)
    assert points == 0 and "computed before the call" in hints[0]


def test_cfr_plus_with_a_thread_still_at_work_earns_no_point(namespaces, monkeypatch):
    good, _ = namespaces
    stop = threading.Event()

    def keep_busy():
        while not stop.is_set():
            time.sleep(0.01)

    worker = threading.Thread(target=keep_busy, daemon=True)
    worker.start()
    try:
        points, hints = _ten_iterations(monkeypatch, 0.5).grade("L15(g)", good)
    finally:
        stop.set()
        worker.join()
    assert points == 0 and "a thread was running your notebook's code" in hints[0]


@pytest.mark.slow
def test_the_sandboxed_grader_times_nash_conv_at_the_labs_budget(tmp_path):
    """Through the sandbox, the lab's 1 CPU-second budget: 1.7 CPU s per call loses the speed
    point, the solution keeps it (parts after (d) left blank to keep the run short)."""
    from labkit.grading.grader import grade_paths
    wanted = ("L15(a)", "L15(b)", "L15(c)", "L15(d)")
    for student, cost in (("fast", None), ("slow", 1.7)):
        nb = lab.EXERCISE.notebook(solution=True)
        for cell in nb.cells:
            meta = cell.metadata.get("labkit", {})
            if meta.get("role") == "answer" and meta.get("slot") not in wanted:
                cell.source = "pass"
            elif meta.get("role") == "answer" and meta.get("slot") == "L15(d)" and cost:
                assert NASH_HEAD in cell.source
                cell.source = cell.source.replace(NASH_HEAD, NASH_HEAD + BURN.format(cost))
        (tmp_path / student).mkdir()
        nbformat.write(nb, tmp_path / student / lab.EXERCISE.filename)
    results = {r["student"]: r for r in grade_paths([tmp_path], instructor=ROOT / "instructor", executor=2)}
    fast = {p["part"]: p for p in results["fast"]["parts"]}["L15(d)"]
    slow = {p["part"]: p for p in results["slow"]["parts"]}["L15(d)"]
    assert (fast["points"], fast["hints"]) == (2, [])
    assert slow["points"] == 1 and "your NashConv is right, but one call took" in slow["hints"][0]
    took = float(slow["hints"][0].split("took ")[1].split(" CPU s")[0])
    assert 1.7 <= took < 5                  # CPU seconds: the loop's, at any load


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
