"""Graded exercise notebooks for chapter 27, and a grader whose verdicts a student cannot forge.

    python -m labkit.grading submissions/ --csv grades.csv      # or: labkit-grade ...
    python -m labkit.grading alice.ipynb --json

In a notebook, ``check("27.4(a)")`` reports a part's answer and prints one feedback line.

Why the grader cannot be fooled
-------------------------------
A check cell that computes its verdict in the student's kernel can be fooled by the student: an
answer cell that redefines ``check`` (or patches labkit's checks) makes every check print "pass"
(../shared/TOOLCHAIN.md, section 5). Here the verdict is never computed in the student's kernel.

1. **Only the answer cells are taken from the submission.** The grader reads the file once, copies
   the code of the cells whose metadata marks them as answers into the *pristine* exercise built
   from labkit's own definition (`labkit.grading.exercises`), and runs that in a fresh kernel in a
   scratch directory. Edited check cells, extra cells and stored outputs of the submission are
   never used, so forged outputs earn nothing, and the submission is never written.
2. **A check cell only reports.** Under the grader, ``check(part)`` publishes the student's value,
   serialized to JSON (numbers, arrays as lists, a function as its results at fixed probe
   arguments), as a display record of type ``application/vnd.labkit.check+json``.
3. **The verdict is computed in the grader's process** by `labkit.grading.checks` from that record.
   Redefining ``check``, patching ``labkit.grading.checks`` or printing "pass" in the kernel changes
   nothing outside it.
4. **The reporting channel is sealed before any student code runs.** The grader's first cell reads
   a random nonce from a private file (and deletes it; every new kernel gets a new nonce, written
   with exclusive creation so that a link planted by student code cannot divert it), and captures the JSON encoder, a sha256
   constructor, the part specifications and the kernel's display publisher. Each record is a JSON
   payload plus its HMAC keyed by the nonce; the nonce itself never leaves the grader and the
   reporter. So answer cells that replace ``json.dumps``, ``print``, ``sys.stdout`` or labkit's
   reporting functions either change nothing or alter a payload, which then fails the HMAC and
   earns nothing ("tampered"). Answer cells' own outputs are ignored, and a record counts only
   in the check cell of its own part.

What remains possible, and why it does not matter: student code runs in the same interpreter, so a
determined student could dig the key out of the reporter's closure and sign a record of their
choice. That record can only *claim* values for their own names -- which is what writing those
values in the answer cell does anyway. Where a part asks for a function, the record holds the
function's results at probe arguments the grader knows, so claiming them means computing them.
The kernel is not a security sandbox: code that kills the grader's process, or reads and writes
files as the grading user, is outside what this design prevents; for an adversarial class, run
the grader as an unprivileged user or in a container.

Robustness: each cell runs with a timeout; a timeout, a dead kernel or more than
`labkit.grading.runner.OUTPUT_CAP` characters of output cost only the part they occur in (the
kernel is replaced if needed and the setup replayed), and an exception in an answer cell costs
whatever the check then cannot find. A malformed notebook, or one of another exercise, gets a
message instead of a score. Many submissions are graded in parallel through any
``concurrent.futures``-style executor (`grade_paths`).
"""
from labkit.grading.reporter import check

__all__ = ["check", "grade_notebook", "grade_paths", "EXERCISES", "format_table", "write_csv"]


def __getattr__(name):
    # the grader pulls in nbclient; keep `from labkit.grading import check` light for notebooks
    if name in ("grade_notebook", "grade_paths", "format_table", "write_csv", "find_notebooks"):
        from labkit.grading import grader
        return getattr(grader, name)
    if name == "EXERCISES":           # needs the instructor material (labkit.grading.material)
        from labkit.grading import material
        return material.load().EXERCISES
    raise AttributeError(f"module 'labkit.grading' has no attribute {name!r}")
