"""What the grader's call monitor costs: Lab 15's worked answers at the hidden probes, watched and not.

While a part's probes run, the sealed reporter watches every call with a profile function
(`labkit.grading.own_work.CallMonitor`). This measures the CPU time of the worked solution's
probe calls with the monitor and without, alternating, and prints the ratio watched / plain
(median over the repeats) per part: what the monitor adds to a student's measured time.

    .venv/bin/python benchmarks/bench_call_monitor.py [--repeats 5]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "instructor")]

from exercise_harness import Harness  # noqa: E402
from labkit.grading.own_work import CallMonitor  # noqa: E402
from labkit_instructor.exercises import lab15 as hidden  # noqa: E402
from labkit_instructor.exercises import lab15 as lab  # noqa: E402

CALLS = {   # part: (name, probes)
    "L15(d) nash_conv": ("nash_conv", [(p,) for p in hidden.POLICIES]),
    "L15(f) cfr_plus(100)": ("cfr_plus", [(100,)]),
    "L15(h) sampled_regret_means": ("sampled_regret_means", hidden.MEAN_PROBES),
    "L15(j) mccfr": ("mccfr", hidden.MCCFR_PROBES),
}


def cpu_seconds(function, probes, monitor=None):
    start = time.process_time()
    for args in probes:
        if monitor is None:
            function(*args)
        else:
            with monitor.watch("f"):
                function(*args)
    return time.process_time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    harness = Harness(lab.EXERCISE, hidden.PARTS)
    wanted = ("L15(b)", "L15(c)", "L15(d)", "L15(e)", "L15(f)", "L15(h)", "L15(i)", "L15(j)")
    sources = harness.cells(lambda p: p in wanted, edits={"L15(h)": [("range(5_000)", "range(20)")]})
    sources[-1] = sources[-1].split("\nfor sampling, T in")[0]
    namespace = harness.run(sources)
    monitor = CallMonitor()
    print(f"{'probe calls':30s} {'plain CPU s':>12s} {'watched CPU s':>14s} {'ratio':>6s}")
    for label, (name, probes) in CALLS.items():
        plain, watched = [], []
        for _ in range(args.repeats):                  # alternating blocks
            plain.append(cpu_seconds(namespace[name], probes))
            watched.append(cpu_seconds(namespace[name], probes, monitor))
        ratios = [w / p for w, p in zip(watched, plain)]
        print(f"{label:30s} {statistics.median(plain):12.3f} {statistics.median(watched):14.3f} "
              f"{statistics.median(ratios):6.2f}")


if __name__ == "__main__":
    main()
