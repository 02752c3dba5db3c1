"""Time limits that do not depend on the machine's load: charged time, the watchdog, the retry.

The arithmetic of charged time is checked on made-up readings; the meter on this process's own
CPU time; the driver's retry policy with a stand-in kernel whose cells end as told; and the
watchdog on a real kernel (no sandbox), where a cell that computes is stopped by the CPU time it
used and a cell that sleeps by the time it slept -- assertions on CPU seconds and verdicts,
never on how long anything took on the clock.
"""
import json
import time

import pytest

from labkit.grading import cpuclock, driver, runner
from labkit.grading.cpuclock import Reading, busy, charged
from labkit.grading.runner import CellRun, KernelRun


def test_a_computation_is_charged_its_cpu_time_whatever_the_load():
    start = Reading(wall=0.0, cpu=0.0, waited=0.0)
    quiet = Reading(wall=2.0, cpu=2.0, waited=0.0)
    loaded = Reading(wall=10.0, cpu=2.0, waited=8.0)          # waited for a CPU 8 s of 10
    assert charged(start, quiet) == charged(start, loaded) == 2.0
    assert not busy(start, quiet) and busy(start, loaded)


def test_sleeping_is_charged_and_threads_add_up():
    start = Reading(wall=0.0, cpu=0.0, waited=0.0)
    assert charged(start, Reading(wall=30.0, cpu=0.1, waited=0.0)) == 30.0      # time.sleep counts
    assert charged(start, Reading(wall=10.0, cpu=20.0, waited=15.0)) == 20.0    # two busy threads
    # waits that cannot be known: the wall clock, as before
    assert charged(Reading(0.0, 0.0, None), Reading(10.0, 2.0, None)) == 10.0


def test_a_sleep_is_charged_its_time_however_much_the_helper_threads_waited():
    # a cell sleeps 6 s; on a busy machine twenty helper threads (the watchdog, the kernel's and
    # the driver's message loops) each wait 0.4 s for a CPU as they wake: 8 s summed, more than
    # the wall time, but waits of tasks side by side overlap, and the sleeping task waited 0.02 s
    helpers = {f"helper-{k}": 0.4 for k in range(20)}
    start = Reading(wall=0.0, cpu=0.0, waited=0.0, delays={})
    end = Reading(wall=6.0, cpu=0.1, waited=8.02, delays={"kernel": 0.02, **helpers})
    assert cpuclock.waited_between(start, end) == pytest.approx(0.4)
    assert charged(start, end) == pytest.approx(5.6)
    assert not busy(start, end)
    # a computation that waited 8 s of 10 for a CPU is charged its CPU time, and was on a busy machine
    end = Reading(wall=10.0, cpu=2.0, waited=8.5, delays={"kernel": 8.0, "helper": 0.5})
    assert charged(start, end) == pytest.approx(2.0) and busy(start, end)
    # tasks seen in an earlier reading count from what they had then
    middle = Reading(wall=5.0, cpu=1.0, waited=4.0, delays={"kernel": 4.0})
    assert cpuclock.waited_between(middle, end) == pytest.approx(4.0)


def test_the_meter_counts_this_process_cpu_and_waits_never_shrink():
    meter = cpuclock.Meter(whole_namespace=False)
    first = meter.read()
    target = time.process_time() + 0.3
    while time.process_time() < target:
        pass
    second = meter.read()
    assert second.cpu - first.cpu >= 0.25
    if first.waited is not None:
        assert second.waited >= first.waited >= 0
        # every task seen once keeps its figure, and no task's wait shrinks
        assert set(first.delays) <= set(second.delays)
        assert all(second.delays[task] >= seconds >= 0 for task, seconds in first.delays.items())


class _Events:
    def __init__(self):
        self.sent = []

    def send(self, **event):
        self.sent.append(event)


class _ScriptedKernel:
    """Stands in for `KernelRun`: each run of a source ends as its script says."""
    scripts = {}

    def __init__(self, timeout, env, cwd, meter=None):
        self.restarts = self.interrupts = 0
        self.calls = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def run(self, source, timeout=None, wall_factor=1.0):
        self.calls.append((source, wall_factor))
        script = self.scripts.get(source, ["ok"])
        outcome = script.pop(0) if len(script) > 1 else script[0]
        if outcome == "busy":
            return CellRun("timeout", [], "stopped by the safety net", charged=1.0, busy=True)
        if outcome == "slow":
            return CellRun("timeout", [], "used its budget", charged=timeout)
        return CellRun("ok", [], charged=0.5)


def _run(tmp_path, monkeypatch, scripts, everything=False):
    monkeypatch.setattr(runner, "KernelRun", _ScriptedKernel)
    _ScriptedKernel.scripts = {k: list(v) for k, v in scripts.items()}
    job = {"cells": [["setup", None, "setup"], ["answer", "p", "first"], ["check", "p", "check first"],
                     ["answer", "q", "second"], ["check", "q", "check second"]],
           "timeout": 10, "setup_timeout": 10, "budget": 100, "seals": [{"nonce": "0" * 32}]}
    events = _Events()
    driver.run_job(job, events, tmp_path)
    return events.sent if everything else {e["index"]: e for e in events.sent if e["event"] == "cell"}


def test_a_cell_stopped_on_a_busy_machine_is_run_again_once(tmp_path, monkeypatch):
    cells = _run(tmp_path, monkeypatch, {"first": ["busy", "ok"], "second": ["slow"]})
    assert cells[1]["status"] == "ok" and cells[1]["retried"]
    assert cells[3]["status"] == "timeout" and not cells[3]["retried"]       # its own budget: final
    assert cells[4]["status"] == "skipped"


def test_a_cell_stopped_twice_on_a_busy_machine_is_not_graded(tmp_path, monkeypatch):
    cells = _run(tmp_path, monkeypatch, {"first": ["busy", "busy"]})
    assert cells[1]["status"] == "busy" and cells[1]["retried"] and "twice" in cells[1]["error"]
    assert cells[2]["status"] == "skipped" and cells[3]["status"] == "ok"


def test_a_setup_stopped_twice_on_a_busy_machine_leaves_every_part_busy(tmp_path, monkeypatch):
    from labkit.grading.checking import part_spec
    from labkit.grading.grader import _verdicts
    sent = _run(tmp_path, monkeypatch, {"setup": ["busy", "busy"]}, everything=True)
    (fatal,) = sent
    assert fatal["event"] == "fatal" and fatal["busy"] is True

    class Run:
        events = sent
        oom_kills = process_limit_hits = 0
        memory, processes, note, stderr, busy = 2 ** 30, 64, None, "", True
    plan = [("setup", None, ""), ("answer", "p", ""), ("check", "p", "")]
    (p,) = _verdicts(plan, Run, ["0" * 32], {"p": part_spec("p", ["x"], lambda v: None, 2)}, None)
    assert p.verdict == "busy" and "too busy" in p.hints[0]
    sent = _run(tmp_path, monkeypatch, {"setup": ["slow"]}, everything=True)        # its own fault: final
    assert sent[0]["event"] == "fatal" and sent[0]["busy"] is False


def test_a_busy_verdict_is_not_a_grade():
    from labkit.grading.checking import part_spec
    from labkit.grading.grader import _verdicts

    class Run:
        events = [{"event": "cell", "index": 0, "status": "busy", "error": "stopped on a busy machine twice"},
                  {"event": "cell", "index": 1, "status": "skipped"}]
        oom_kills = process_limit_hits = 0
        memory, processes, note, stderr, busy = 2 ** 30, 64, None, "", True
    plan = [("answer", "p", ""), ("check", "p", "")]
    (p,) = _verdicts(plan, Run, ["0" * 32], {"p": part_spec("p", ["x"], lambda v: None, 2)}, None)
    assert p.verdict == "busy" and p.points == 0 and "busy machine" in p.hints[0]


@pytest.fixture(scope="module")
def kernel():
    with KernelRun(30, {}, "/tmp") as k:
        yield k


def test_a_computing_cell_is_stopped_by_the_cpu_time_it_used(kernel):
    run = kernel.run("while True:\n    pass\n", timeout=2)
    assert run.status == "timeout" and run.charged >= 2 and run.cpu >= 1 and not run.busy
    assert kernel.run("x = 41 + 1\nprint(x)").status == "ok"              # the kernel went on


def test_a_sleeping_cell_is_stopped_by_the_time_it_slept(kernel):
    run = kernel.run("import time\ntime.sleep(600)\n", timeout=2)
    assert run.status == "timeout" and run.charged >= 2 and run.cpu < 1.5
    assert kernel.run("y = 1").status == "ok"


def test_a_cell_that_ignores_the_interrupt_loses_its_kernel(kernel):
    restarts = kernel.restarts
    run = kernel.run("import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n"
                     "        pass\n", timeout=2)
    assert run.status == "timeout" and kernel.restarts == restarts + 1
    assert kernel.run("z = 2").status == "ok"


def test_the_events_carry_the_clocks(tmp_path):
    """A real driver run without a sandbox: every cell event says what it was charged."""
    from labkit.grading.sandbox import run_driver
    job = {"cells": [["setup", None, "import numpy"], ["answer", "x", "total = sum(range(10 ** 6))"]],
           "timeout": 30, "setup_timeout": 60, "budget": 120, "seals": [{"nonce": "0" * 32, "specs": {}}]}
    run = run_driver(job, sandbox=False, wall=600)
    (cell,) = [e for e in run.events if e.get("event") == "cell"]
    assert cell["status"] == "ok" and not cell["retried"]
    assert cell["charged"] >= cell["cpu"] >= 0 and cell["wall"] > 0
    done = [e for e in run.events if e.get("event") == "done"]
    assert done and done[0]["charged"] >= cell["charged"], json.dumps(run.events)[:500]
