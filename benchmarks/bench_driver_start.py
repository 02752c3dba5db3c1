"""The grading driver's start, in CPU seconds: now, and as it was with rfc3987_syntax loaded.

    .venv/bin/python benchmarks/bench_driver_start.py            # 5 rounds
    .venv/bin/python benchmarks/bench_driver_start.py --rounds 9

Each round starts two fresh interpreters in the sandbox's environment, one after the other, that
do what the driver does before it starts a kernel: import `labkit.grading.driver` and
`labkit.grading.runner` (nbclient, nbformat, jsonschema, labkit) and write the master notebook
(nbformat validates it). The second first imports ``rfc3987_syntax``, as jsonschema's format
checker did where that module is installed, before the driver kept it out. CPU seconds (user +
system of the child) do not depend on how busy the machine is; the median of the rounds and the
ratio are printed.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile

START = """
import labkit.grading.driver as driver, labkit.grading.runner
job = {"cells": [["setup", None, "import labkit"], ["answer", "27.4(a)", "x = 1"], ["check", "27.4(a)", "check('27.4(a)')"]]}
driver._write_master(job, sys.argv[1])
print("rfc3987_syntax loaded:", bool(sys.modules.get("rfc3987_syntax")))
"""


def cpu_seconds(as_before):
    """CPU seconds of one driver start (the child's user + system time)."""
    from labkit.grading.sandbox import environment
    code = "import sys\n" + ("import rfc3987_syntax\n" if as_before else "") + START
    with tempfile.TemporaryDirectory() as home:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-s", "-c", code, home], env=environment(home), cwd=home,
                              check=True, capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.stdout.strip().endswith(str(as_before)), done.stdout
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    now, before = [], []
    for k in range(args.rounds):
        now.append(cpu_seconds(False))
        before.append(cpu_seconds(True))
        print(f"round {k + 1}: now {now[-1]:.2f} CPU s, as before {before[-1]:.2f} CPU s", file=sys.stderr)
    a, b = statistics.median(now), statistics.median(before)
    print(f"driver start: {a:.2f} CPU s (median of {args.rounds}); with rfc3987_syntax loaded as before: "
          f"{b:.2f} CPU s; {b / a:.1f}x")


if __name__ == "__main__":
    main()
