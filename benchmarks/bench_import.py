"""What starting labkit costs: `import labkit` next to `import numpy`, and the chapter's Kuhn table
as a whole process next to `python -c "import numpy"`.

    .venv/bin/python benchmarks/bench_import.py [--repeats 15]

1. Import. Each repeat starts a fresh interpreter that times ``import numpy`` and then ``import
   labkit`` in the same process (perf_counter and process_time around each); the ratio is
   (numpy + labkit) / numpy, labkit's whole import against numpy's alone. Goal (issue 24): at
   most 1.5. It also lists the heavy modules the import must not load (scipy, numba, matplotlib).
2. The Kuhn table. The chapter's table (CFR and CFR+ on Kuhn poker to 10, 100, 1000 and 10,000
   iterations, NashConv of both policies at each) run as a script, each process's CPU time
   (user + system, from the kernel's accounting of the waited child) side by side with a process
   that only imports numpy, in alternating order. Goal: at most 0.5 s CPU with warm caches (the
   compiled kernels' cache is warmed by a first run that is not counted).

Medians over the repeats are printed; a machine under load inflates both sides of each ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

IMPORT_PROBE = """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import numpy
t1, c1 = time.perf_counter(), time.process_time()
import labkit
t2, c2 = time.perf_counter(), time.process_time()
heavy = [m for m in ("scipy", "numba", "matplotlib", "tqdm", "ipywidgets") if m in sys.modules]
print(json.dumps({"numpy": t1 - t0, "labkit": t2 - t1, "numpy_cpu": c1 - c0, "labkit_cpu": c2 - c1,
                  "heavy": heavy}))
"""

KUHN_TABLE = """
import labkit as lk
game = lk.games.load("kuhn_poker")
for name in ("CFR", "CFRPlus"):
    solver = getattr(lk, name)(game)
    cells = []
    for T in (10, 100, 1000, 10000):
        solver.run(T - solver.iteration)
        average = lk.nash_conv(game, solver.average_policy())
        current = lk.nash_conv(game, solver.current_policy())
        cells.append(f"{average:.4f} ({current:.3f})")
    print(f"{name:8s}", "    ".join(cells))
"""


def child_cpu(args: list[str]) -> tuple[float, str]:
    """CPU seconds (user + system) of one child process, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    python = sys.executable
    env = dict(os.environ)

    rows = [json.loads(subprocess.run([python, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True,
                                      env=env).stdout) for _ in range(args.repeats)]
    wall = [(r["numpy"] + r["labkit"]) / r["numpy"] for r in rows]
    cpu = [(r["numpy_cpu"] + r["labkit_cpu"]) / r["numpy_cpu"] for r in rows]
    print(f"import numpy: median {statistics.median(r['numpy'] for r in rows) * 1e3:.0f} ms wall, "
          f"{statistics.median(r['numpy_cpu'] for r in rows) * 1e3:.0f} ms CPU")
    print(f"import labkit after it: median {statistics.median(r['labkit'] for r in rows) * 1e3:.0f} ms wall, "
          f"{statistics.median(r['labkit_cpu'] for r in rows) * 1e3:.0f} ms CPU")
    print(f"ratio (numpy + labkit) / numpy: median {statistics.median(wall):.2f} wall, "
          f"{statistics.median(cpu):.2f} CPU (goal <= 1.5; {args.repeats} fresh processes)")
    print(f"heavy modules loaded by `import labkit`: {sorted({m for r in rows for m in r['heavy']}) or 'none'}")

    child_cpu([python, "-c", KUHN_TABLE])                     # warm the compiled kernels' cache
    table, numpy_only = [], []
    output = ""
    for k in range(args.repeats):
        order = [("table", [python, "-c", KUHN_TABLE]), ("numpy", [python, "-c", "import numpy"])]
        for name, command in (order if k % 2 == 0 else order[::-1]):
            seconds, out = child_cpu(command)
            (table if name == "table" else numpy_only).append(seconds)
            output = out or output
    print(output, end="")
    print(f"Kuhn table as a process: median {statistics.median(table):.3f} s CPU; python -c 'import numpy': "
          f"{statistics.median(numpy_only):.3f} s CPU; ratio {statistics.median(table) / statistics.median(numpy_only):.1f} "
          f"(goal <= 0.5 s; kernels: {os.environ.get('LABKIT_KERNELS', 'default')})")


if __name__ == "__main__":
    main()
