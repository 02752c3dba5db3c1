"""Graded exercise notebooks, and a grader an instructor can run on a class that may try anything.

    labkit-grade submissions/ --out graded/     # or: python -m labkit.grading ...

In a notebook, ``check("27.4(a)")`` reports a part's answer and prints one line about its
*format* (`labkit.grading.public`); the points are decided by the grader.

What students have, and what they do not
----------------------------------------
labkit (what students install) holds the notebook format (`labkit.grading.notebooks`), the
kernel-side reporter (`labkit.grading.reporter`), public checks (`labkit.grading.public`)
and the grader. The worked solutions, the model answers and the hidden checks that compute the
expected values are a separate distribution, ``labkit-instructor`` (the repository's
``instructor/``), which the grader loads with `labkit.grading.material.load` and which never
enters a student's kernel.

Why the verdicts cannot be forged
---------------------------------
1. **Only the answer cells are taken from the submission.** The grader reads the file once
   (`labkit.grading.intake`: regular files under a size cap, no symlink followed), copies the
   code of the cells whose metadata marks them as answers into the *pristine* exercise built
   from the instructor's definition, and runs that. Edited check cells, extra cells and stored
   outputs of the submission are never used, and the submission is never written.
2. **A check cell only reports.** Under the grader, ``check(part)`` publishes the student's
   value, serialized to JSON (numbers, arrays as lists, a function as its results at the hidden
   checks' probe arguments, which the grader passes in), as a display record of type
   ``application/vnd.labkit.check+json``.
3. **The verdict is computed in the grader's process**, outside the sandbox, by the hidden
   checks. Redefining ``check``, patching labkit or printing "pass" changes nothing outside.
4. **The reporting channel is sealed before any student code runs.** The grader's first cell
   reads a random nonce and the part specifications from a private file (and deletes it; every
   kernel gets a new nonce, written with exclusive creation so that a link planted by student
   code cannot divert it), and captures the JSON encoder, a sha256 constructor and the display
   publisher. Each record is a payload plus its HMAC keyed by the nonce, which the grader checks:
   answer cells that replace ``json.dumps``, ``print`` or labkit's reporting functions change
   nothing or earn "tampered".

What remains possible, and why it does not matter: student code runs in the same interpreter as
the reporter and in the same sandbox as the driver, so a determined student could dig the key
out of the reporter's closure and sign a record of their choice. That record can only *claim*
values for their own names -- which is what writing those values in the answer cell does anyway.
Where a part asks for a function, the record holds its results at the hidden probe arguments, so
claiming them means computing them. The driver itself cannot be read or traced from the kernel
(`labkit.grading.hardening`) and holds the secrets of its own submission only.

Isolation (`labkit.grading.sandbox`)
------------------------------------
Every submission runs in its own bubblewrap sandbox: its own uid (as root), PID and network
namespaces, no user namespaces of its own, a read-only view of the system and of the grader's
Python as it really is (`labkit.grading.binds`: the interpreter behind its links, ``.pth`` and
editable folders), labkit only, a private tmpfs, a clean environment, a control group of its own
with one memory, process and CPU limit for all its processes together (`labkit.grading.cgroups`;
rlimits per process where no group can be made), and rlimits; everything it started is killed
when it is done. Sandbox uids, groups and their locks are machine-wide
(`labkit.grading.slots`), so any number of graders run side by side. The kernel and its driver
(`labkit.grading.driver`) both live inside and return the check records on a pipe (the module's
docstring says why). `labkit-grade` refuses to run without a working sandbox unless given
``--no-sandbox``.

Robustness: each cell has a limit in *charged* seconds -- the CPU time of the sandbox, or the
time it slept, never the time it waited for a CPU (`labkit.grading.cpuclock`) -- so a notebook gets
the same grade at any load; the wall clock is a safety net, and a cell it stops on a busy machine
is run once more (twice stopped, the part is "busy" and the grade not final). A timeout interrupts
the kernel (its state is kept for the next parts; only a kernel that ignores the interrupt is
replaced, with the setup replayed); the notebook has a total budget and at most
`labkit.grading.grader.MAX_ANSWER_CELLS` cells per answer slot; a timeout, a dead kernel, an
output flood or the end of the budget costs only the parts it touches; a malformed or unreadable
file gets a message instead of a score; notebooks whose file name names another exercise are
graded and flagged, and copies of another submission are reported to the instructor only.
Reports (`labkit.grading.report`) neutralise everything a student controls, name every notebook
by an id from its path (`labkit.grading.identity`) and are never written through a link
(`labkit.grading.outputs`); a run journal (`labkit.grading.journal`) lets an interrupted run resume.
"""
from labkit.grading.reporter import check

__all__ = ["check", "grade_notebook", "grade_paths", "EXERCISES", "format_table", "write_csv"]


def __getattr__(name):
    # the grader pulls in nbclient; keep `from labkit.grading import check` light for notebooks
    if name in ("grade_notebook", "grade_paths", "find_notebooks"):
        from labkit.grading import grader
        return getattr(grader, name)
    if name in ("format_table", "write_csv"):
        from labkit.grading import report
        return getattr(report, name)
    if name == "EXERCISES":           # needs the instructor material (labkit.grading.material)
        from labkit.grading import material
        return material.load().EXERCISES
    raise AttributeError(f"module 'labkit.grading' has no attribute {name!r}")
