"""``import labkit_instructor`` in CPU seconds: this copy against another (an older one, say).

    git archive main instructor/labkit_instructor | tar -x -C /tmp/before
    .venv/bin/python benchmarks/bench_instructor_import.py --before /tmp/before/instructor --rounds 5

Each round imports the material in two fresh interpreters, one after the other: the installed
``labkit_instructor`` and the one in the folder ``--before`` (put first on PYTHONPATH). It then
also forces every lazily computed probe list of the installed copy (the work a first grading of
each exercise does) in a third interpreter, so that the saving at import is seen beside what it
defers. CPU seconds (user + system of the child), the median of the rounds.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys

IMPORT = "import labkit_instructor"
FORCE = """
import labkit_instructor
from labkit_instructor.checks.base import Lazy
for spec in labkit_instructor.SPECS.values():
    for calls in spec.probes.values():
        len(calls)
"""


def cpu_seconds(code, path=None):
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = os.pathsep.join([path, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="folder holding the other labkit_instructor")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    now, before, forced = [], [], []
    for k in range(args.rounds):
        now.append(cpu_seconds(IMPORT))
        before.append(cpu_seconds(IMPORT, args.before))
        forced.append(cpu_seconds(FORCE))
        print(f"round {k + 1}: import {now[-1]:.2f}, before {before[-1]:.2f}, import + every probe {forced[-1]:.2f} "
              "CPU s", file=sys.stderr)
    a, b, c = (statistics.median(x) for x in (now, before, forced))
    print(f"import labkit_instructor: {a:.2f} CPU s (median of {args.rounds}); the other copy: {b:.2f} CPU s "
          f"({b / a:.1f}x); import and every probe computed: {c:.2f} CPU s")


if __name__ == "__main__":
    main()
