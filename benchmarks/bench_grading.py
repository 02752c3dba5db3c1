"""The grader's cost: the eight worked solutions sandboxed against --no-sandbox, and a large class.

    .venv/bin/python benchmarks/bench_grading.py                 # the eight solutions, 2 rounds (~5 min)
    .venv/bin/python benchmarks/bench_grading.py --rounds 1
    nice .venv/bin/python benchmarks/bench_grading.py --class-size 200 --workers 2   # a class (~30 min)

The first part grades each solution of exercises 27.1-27.8 once in a bubblewrap sandbox and
once without (the same driver, as a plain child process), one notebook at a time, alternating
which of the two goes first, and prints the seconds of each and the ratio sandboxed /
unsandboxed (goal of issue 11: under 1.2). It also checks that every solution scores full marks
both ways.

With ``--class-size N`` it instead builds a class of N notebooks from the solutions, the blank
exercises and a few hostile submissions (an endless loop, a killed parent, a fork bomb, a FIFO,
a symlink to /dev/zero, a copy), grades it with ``--workers`` sandboxes at a time through the
command line, and reports the wall time and every row that did not come out as expected.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
INSTRUCTOR = ROOT / "instructor"


def eight(rounds):
    from labkit.grading.grader import grade_notebook
    from labkit.grading.material import load
    exercises = load(INSTRUCTOR).EXERCISES
    totals = {True: 0.0, False: 0.0}
    rows = []
    for k in range(rounds):
        for j, ex in enumerate(exercises.values()):
            path = ROOT / "solutions" / ex.filename
            times = {}
            order = (True, False) if (j + k) % 2 == 0 else (False, True)
            for sandbox in order:
                start = time.perf_counter()
                r = grade_notebook(path, instructor=INSTRUCTOR, sandbox=sandbox, timeout=120)
                times[sandbox] = time.perf_counter() - start
                if r["score"] != r["max_score"] or r["status"] != "graded":
                    sys.exit(f"{ex.number} (sandbox={sandbox}) scored {r['score']}/{r['max_score']}: {r['reason']}")
                totals[sandbox] += times[sandbox]
            rows.append((k + 1, ex.number, times[True], times[False]))
    print("| round | exercise | sandboxed (s) | --no-sandbox (s) | ratio |")
    print("|---|---|---|---|---|")
    for k, number, a, b in rows:
        print(f"| {k} | {number} | {a:.2f} | {b:.2f} | {a / b:.2f} |")
    print(f"| all | 8 x {rounds} | {totals[True]:.1f} | {totals[False]:.1f} | {totals[True] / totals[False]:.3f} |")


HOSTILE = {
    "loop": {"27.2(a)": "value = 0.0\nwhile True:\n    pass\n"},
    "killer": {"27.2(a)": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"},
    "bomb": {"27.2(a)": "import os\nfor _ in range(10000):\n    try:\n        os.fork()\n    except OSError:\n        pass\n"},
}


def build_class(folder, size):
    """N notebooks: solutions, blanks and hostile ones in turn; returns {file stem: expectation}."""
    from labkit.grading.material import load
    exercises = list(load(INSTRUCTOR).EXERCISES.values())
    expected = {}
    kinds = ["solution", "blank", "solution", "blank", "hostile"]
    for n in range(size):
        kind = kinds[n % len(kinds)]
        ex = exercises[(n // len(kinds)) % len(exercises)]
        stem = f"s{n:03d}_{kind}"
        if kind == "solution":
            nb = ex.notebook(solution=True)
            # a per-student comment keeps the copies from being flagged as copies of each other
            nb.cells[[c.metadata.get("labkit", {}).get("role") for c in nb.cells].index("answer")].source += \
                f"\n# student {n}"
            nbformat.write(nb, folder / f"{stem}.ipynb")
            expected[stem] = ("full", ex.number)
        elif kind == "blank":
            nbformat.write(ex.notebook(), folder / f"{stem}.ipynb")
            expected[stem] = ("zero", ex.number)
        else:
            which = (n // len(kinds)) % 5
            if which < 3:
                name = list(HOSTILE)[which]
                nb = exercises[1].notebook()
                for cell in nb.cells:
                    slot = cell.metadata.get("labkit", {}).get("slot")
                    if slot in HOSTILE[name] and cell.metadata["labkit"]["role"] == "answer":
                        cell.source = HOSTILE[name][slot]
                nbformat.write(nb, folder / f"{stem}.ipynb")
                expected[stem] = ("zero", "27.2")
            elif which == 3:
                os.mkfifo(folder / f"{stem}.ipynb")
                expected[stem] = ("not gradable", None)
            else:
                (folder / f"{stem}.ipynb").symlink_to("/dev/zero")
                expected[stem] = ("not gradable", None)
    return expected


def a_class(size, workers, timeout, budget):
    from labkit.grading.__main__ import main
    base = Path(tempfile.mkdtemp(prefix="labkit-bench-class-"))
    try:
        folder = base / "class"
        folder.mkdir()
        expected = build_class(folder, size)
        csv_path = base / "grades.csv"
        start = time.perf_counter()
        with open(os.devnull, "w") as sink:
            stdout, sys.stdout = sys.stdout, sink
            try:
                status = main([str(folder), "--csv", str(csv_path), "--workers", str(workers), "--timeout", str(timeout),
                               "--budget", str(budget), "--instructor", str(INSTRUCTOR)])
            finally:
                sys.stdout = stdout
        wall = time.perf_counter() - start
        with open(csv_path, newline="") as f:
            rows = {row["student"]: row for row in csv.DictReader(f)}
        wrong = []
        for stem, (kind, number) in expected.items():
            row = rows.get(stem)
            if row is None:
                wrong.append((stem, "no row"))
            elif kind == "full" and row["score"] != row["max_score"]:
                wrong.append((stem, f"{row['score']}/{row['max_score']} {row['reason']}"))
            elif kind == "zero" and row["score"] != "0":
                wrong.append((stem, f"{row['score']} {row['status']} {row['reason']}"))
            elif kind == "not gradable" and row["status"] != "not gradable":
                wrong.append((stem, row["status"]))
        counts = {k: sum(1 for v in expected.values() if v[0] == k) for k in ("full", "zero", "not gradable")}
        print(json.dumps({"notebooks": size, "workers": workers, "wall_seconds": round(wall, 1),
                          "seconds_per_notebook": round(wall / size, 2), "exit_status": status, "expected": counts,
                          "rows": len(rows), "unexpected": wrong}, indent=2))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--class-size", type=int, default=0, metavar="N")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--budget", type=float, default=300)
    args = parser.parse_args()
    if args.class_size:
        a_class(args.class_size, args.workers, args.timeout, args.budget)
    else:
        eight(args.rounds)


if __name__ == "__main__":
    main()
