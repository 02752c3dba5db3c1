"""The same grade at any load: the worked Lab 15 solution earns full marks on a machine kept busy.

A CPU burner runs beside the grader on every core but one, at the grader's priority, and more
burners, at the lowest priority (nice 19), are started until the one-minute load average is above 8
(and again whenever it falls back); the solution on disk is then graded three times, in three
sandboxes at once. The load average counts every runnable process whatever its priority, so the
machine is as loaded as the issue's; the low-priority burners just do not take the CPU time the
rest of the test suite, running beside this test, needs. The grader's three sandboxes, the burner
and the suite's other worker still share two cores: the sandboxes wait for a CPU most of the time. Nothing here reads a clock to decide anything: the test asserts full marks in
3 of 3 runs, and that the load average stayed above 8 while they were graded. (The grader charges
cells their CPU time, or the time they slept, never the time they waited for a CPU:
`labkit.grading.cpuclock`.)
"""
import os
import shutil
import subprocess
import sys
import threading

import pytest

from _grading_support import EXERCISES, INSTRUCTOR, ROOT
from labkit.grading.grader import grade_paths

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]
LOAD = 8.0
BURN = "while True:\n    pass\n"
MAX_BURNERS = 24


class Burners:
    """Busy processes, added one at a time until the load average is above `LOAD` + 1, kept
    there by a thread until `stop`; `samples` are the load averages it saw."""

    def __init__(self):
        self.procs, self.samples = [], []
        self._done = threading.Event()
        for _ in range(max(1, (os.cpu_count() or 1) - 1)):   # every core but the grader's, at least one
            self._add(nice=0)
        for _ in range(int(2 * LOAD)):                        # the load average climbs from the start
            self._add()
        self._thread = threading.Thread(target=self._keep, daemon=True)

    def _add(self, nice=19):
        command = [sys.executable, "-c", BURN]
        self.procs.append(subprocess.Popen(["nice", "-n", str(nice), *command] if nice else command))

    def _keep(self):
        while not self._done.wait(5):
            load = os.getloadavg()[0]
            self.samples.append(load)
            if load < LOAD + 1 and len(self.procs) < MAX_BURNERS:
                self._add()

    def wait_until_loaded(self):
        """Block until the load average is above `LOAD` (adding burners as it climbs)."""
        self._thread.start()
        for _ in range(240):                     # the 1-minute average climbs within a few minutes
            if os.getloadavg()[0] > LOAD:
                break
            self._done.wait(5)
        else:
            raise AssertionError(f"the load average stayed at {os.getloadavg()[0]} with {len(self.procs)} burners")
        self.samples.clear()

    def stop(self):
        self._done.set()
        for proc in self.procs:
            proc.kill()
            proc.wait()


def test_the_worked_lab15_solution_gets_full_marks_on_a_busy_machine(tmp_path):
    solution = ROOT / "solutions" / EXERCISES["L15"].filename
    for run in ("run1", "run2", "run3"):
        (tmp_path / run).mkdir()
        shutil.copy(solution, tmp_path / run / solution.name)
    burners = Burners()
    try:
        burners.wait_until_loaded()
        results = grade_paths([tmp_path], instructor=INSTRUCTOR, executor=3)
        samples = list(burners.samples)
    finally:
        burners.stop()
    print(f"\nload average while grading: min {min(samples, default=0):.1f}, max {max(samples, default=0):.1f} "
          f"({len(samples)} samples, {len(burners.procs)} burners); scores "
          + ", ".join(f"{r['student']} {r['score']}/{r['max_score']} ({r['seconds']:.0f} s, CPU {r['cpu_seconds']} s, "
                      f"{r['retried']} cells retried)"
                      for r in results))
    assert samples and min(samples) > LOAD, samples                 # it was graded on a busy machine
    scores = [(r["student"], r["score"], r["max_score"]) for r in results]
    assert scores == [(run, 19, 19) for run in ("run1", "run2", "run3")], \
        [(r["student"], [(p["part"], p["verdict"], p["hints"]) for p in r["parts"] if p["verdict"] != "pass"])
         for r in results]
    assert all(r["final"] for r in results)
