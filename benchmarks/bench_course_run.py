"""A class run from an LMS download to the gradebook it imports, step by step, timed.

    .venv/bin/python benchmarks/bench_course_run.py [--exercise 27.4] [--workers 2] [--keep DIR]

Builds a Canvas download of one assignment with eight submissions (the worked solution handed in
late, a copy of it, a partial one, a blank, a broken file, a notebook of another exercise, a renamed
file, a function returning text where a number is expected) and the gradebook export Canvas gives as
the class list, then times each step an instructor takes:

1. ``labkit-grade DOWNLOAD --roster export.csv --csv --review --feedback --gradebook canvas``;
2. filling in ``manual.csv`` (here: full points for every answered written part);
3. ``labkit-grade merge grades.csv manual.csv --gradebook canvas``;
4. ``labkit-grade gradescope EXERCISE bundle.zip`` (the same exercise for Gradescope).

It prints each step's wall time and the gradebook's rows.
"""
from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
INSTRUCTOR = ROOT / "instructor"
GRADE = [sys.executable, "-m", "labkit.grading"]


def build_class(folder, number, exercises):
    """The Canvas download (folder) and its gradebook export (returned path)."""
    ex = exercises[number]
    other = next(n for n in exercises if n != number and n != "L15")
    folder.mkdir(parents=True)
    solution, blank = ROOT / "solutions" / ex.filename, ROOT / "exercises" / ex.filename
    people = [("Smith, Jane", 1001, "late_", "full"), ("Doe, John", 1002, "", "copy"), ("Roe, Ann", 1003, "", "partial"),
              ("Lee, Ken", 1004, "", "blank"), ("Kim, Sun", 1005, "", "broken"), ("Ng, Ada", 1006, "", "wrong"),
              ("Ito, Ren", 1007, "", "renamed"), ("Cruz, Eva", 1008, "", "text")]
    for name, uid, late, kind in people:
        login = "".join(ch for ch in name.lower() if ch.isalnum())
        target = folder / f"{login}_{late}{uid}_{uid + 5000}_{ex.filename}"
        if kind in ("full", "copy"):
            shutil.copy(solution, target)
        elif kind == "blank":
            shutil.copy(blank, target)
        elif kind == "broken":
            target.write_text('{"cells": [')
        elif kind == "wrong":
            shutil.copy(ROOT / "solutions" / exercises[other].filename,
                        folder / f"{login}_{uid}_{uid + 5000}_{exercises[other].filename}")
        elif kind == "renamed":
            shutil.copy(solution, folder / f"{login}_{uid}_{uid + 5000}_my homework (final).ipynb")
        else:                          # partial: the last part blank; text: every function returns a string
            nb = nbformat.read(solution, as_version=4)
            answers = [c for c in nb.cells if c.metadata.get("labkit", {}).get("role") == "answer"]
            template = nbformat.read(blank, as_version=4)
            blanks = [c for c in template.cells if c.metadata.get("labkit", {}).get("role") == "answer"]
            if kind == "partial":
                answers[-1].source = blanks[-1].source
            else:
                for cell in answers:
                    cell.source = cell.source.replace("    return ", "    return str(")
                    cell.source = "\n".join(line + ")" if line.startswith("    return str(") else line
                                            for line in cell.source.splitlines())
            nbformat.write(nb, target)
    export = folder.parent / "canvas-export.csv"
    with open(export, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"Exercise {number}: {ex.title} (4242)"])
        w.writerow(["    Points Possible", "", "", "", "", ""])
        for name, uid, _, _ in people:
            w.writerow([name, uid, f"S{uid}", f"u{uid}", "A", ""])
    return export


def timed(argv, label, times):
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    times.append((label, time.perf_counter() - start, done.returncode))
    if done.returncode not in (0,):
        print(done.stdout[-3000:], done.stderr[-3000:], file=sys.stderr)
    return done


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--exercise", default="27.4")
    p.add_argument("--workers", default="2")
    p.add_argument("--keep", metavar="DIR", help="work in DIR (kept) instead of a temporary folder")
    args = p.parse_args()
    sys.path.insert(0, str(INSTRUCTOR))
    from labkit_instructor import EXERCISES
    work = Path(args.keep or tempfile.mkdtemp(prefix="course-run-"))
    download = work / "download"
    export = build_class(download, args.exercise, EXERCISES)
    times = []
    graded = timed(GRADE + [str(download), "--instructor", str(INSTRUCTOR), "--roster", str(export), "--csv",
                            str(work / "grades.csv"), "--review", str(work / "review"), "--feedback",
                            str(work / "feedback"), "--gradebook", "canvas", str(work / "canvas-import.csv"),
                            "--workers", args.workers], "1. grade the download (roster, review, feedback, gradebook)",
                   times)
    start = time.perf_counter()
    with open(work / "review" / "manual.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if row["answered"] == "yes":
            row["points"] = row["max_points"]
    with open(work / "manual-filled.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    times.append(("2. fill in manual.csv (here by a script)", time.perf_counter() - start, 0))
    timed(GRADE + ["merge", str(work / "grades.csv"), str(work / "manual-filled.csv"), "-o", str(work / "final.csv"),
                   "--instructor", str(INSTRUCTOR), "--roster", str(export), "--gradebook", "canvas",
                   str(work / "canvas-final.csv")], "3. merge the hand-graded points, write the final gradebook", times)
    timed(GRADE + ["gradescope", args.exercise, str(work / "bundle.zip"), "--instructor", str(INSTRUCTOR)],
          "4. build the Gradescope bundle", times)
    print("| step | seconds | exit |\n|---|---|---|")
    for label, seconds, code in times:
        print(f"| {label} | {seconds:.1f} | {code} |")
    print("\nprogress lines of step 1:")
    print("\n".join(line for line in graded.stderr.splitlines() if line.startswith("labkit-grade: [")))
    print("\ncanvas-final.csv:")
    print((work / "canvas-final.csv").read_text())
    print(f"files in {work}")


if __name__ == "__main__":
    main()
