"""Reading submissions safely: only regular files under a size cap, no symlink followed, nothing executed.

`find_notebooks` lists every ``*.ipynb`` entry under the folders given without following links
(a symlink, FIFO or device named ``x.ipynb`` is listed, and then refused with a clear message);
`read_bytes` opens one with ``O_NOFOLLOW | O_NONBLOCK``, checks with ``fstat`` that it is a
regular file no larger than the cap, and reads at most that many bytes, so a FIFO cannot block
the grader and a link to ``/dev/zero`` cannot fill its memory. `take_in` turns a file into an
`Intake`: the exercise, the answer cells, the sha256 of the file's bytes (for the run journal),
a fingerprint of the answers (to find copies, which only the instructor is told about:
`similar_groups`) and flags for a file name that names another exercise.

Reading and parsing happen in the grader's workers, one notebook at a time as each is graded,
so one huge file is read while the others are already being graded.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from labkit.grading.identity import display_name
from labkit.grading.notebooks import NotebookError, extract, read_notebook

MAX_NOTEBOOK_BYTES = 20_000_000


def find_notebooks(paths):
    """(notebook path, root given) for every ``*.ipynb`` under the given files and folders,
    sorted; folders are walked without following symlinks; checkpoint copies are skipped."""
    found = []
    for p in map(Path, paths):
        if p.is_dir():
            entries = []
            for folder, dirs, files in os.walk(p, followlinks=False):
                dirs[:] = sorted(d for d in dirs if d != ".ipynb_checkpoints")
                entries += [Path(folder) / f for f in files if f.endswith(".ipynb")]
                # a symlinked folder is not walked, but a symlink named *.ipynb is listed
                entries += [Path(folder) / d for d in dirs if d.endswith(".ipynb")]
            found += [(f, p) for f in sorted(entries)]
        else:
            found.append((p, None))
    return found


def read_bytes(path, max_bytes=MAX_NOTEBOOK_BYTES):
    """The bytes of a submission, or NotebookError saying why it cannot be read."""
    name = display_name(Path(path).name)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotebookError(f"{name} is a symbolic link, not a notebook file; "
                                f"submit the .ipynb file itself") from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise NotebookError(f"{name} cannot be read (permission denied)") from None
        if exc.errno == errno.ENXIO:
            raise NotebookError(f"{name} is not a regular file") from None
        raise NotebookError(f"{name} cannot be opened ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a folder" if stat.S_ISDIR(info.st_mode)
                    else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
                    else "a socket" if stat.S_ISSOCK(info.st_mode) else "not a regular file")
            raise NotebookError(f"{name} is {kind}, not a notebook file")
        if info.st_size > max_bytes:
            raise NotebookError(f"{name} is {info.st_size / 1e6:.1f} MB, more than the {max_bytes / 1e6:.0f} MB a "
                                "notebook may have (clear large outputs and save again)")
        chunks, total = [], 0
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError as exc:
                raise NotebookError(f"{name} cannot be read ({exc.strerror})") from None
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise NotebookError(f"{name} is larger than the {max_bytes / 1e6:.0f} MB a notebook may have")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@dataclass
class Intake:
    """One submission as read: what to grade, or why it cannot be graded.

    ``student`` is the readable name, ``student_id`` and ``submission_id`` the stable ids
    (`labkit.grading.identity`), ``sha256`` the hash of the file's bytes (None if unreadable)."""
    path: str
    student: str
    exercise: str | None = None
    answers: dict = field(default_factory=dict)
    written: dict = field(default_factory=dict)
    error: str | None = None
    flags: list = field(default_factory=list)
    fingerprint: str | None = None          # of the answers that differ from the templates
    student_id: str | None = None
    submission_id: str | None = None
    sha256: str | None = None

    def __post_init__(self):
        from labkit.grading.identity import make_id
        self.student_id = self.student_id or make_id(self.student)
        self.submission_id = self.submission_id or self.student_id


def take_in(path, student, exercises, expected=None, max_bytes=MAX_NOTEBOOK_BYTES, student_id=None,
            submission_id=None):
    """Read one submission into an `Intake` (never raises for a bad file)."""
    intake = Intake(str(path), student, student_id=student_id, submission_id=submission_id)
    try:
        data = read_bytes(path, max_bytes)
    except NotebookError as exc:
        intake.error = str(exc)
        if expected in exercises:
            intake.exercise = expected
        return intake
    return take_in_bytes(data, intake, exercises, expected)


def take_in_bytes(data, intake, exercises, expected=None):
    """Fill `intake` (path and ids set) from the bytes of its file (never raises for bad bytes)."""
    name = display_name(Path(intake.path).name)
    intake.sha256 = hashlib.sha256(data).hexdigest()
    try:
        nb = read_notebook(data, name)
        sub = extract(nb, exercises, expected=expected, name=name)
    except NotebookError as exc:
        intake.error = str(exc)
        if expected in exercises:
            intake.exercise = expected
        return intake
    except Exception as exc:          # whatever else a crafted file triggers: that row's message
        intake.error = f"{name} could not be read ({type(exc).__name__})"
        return intake
    intake.exercise, intake.answers, intake.written = sub.exercise, sub.answers, sub.written
    intake.fingerprint = fingerprint(exercises[sub.exercise], sub.answers)
    other = named_exercise(name, exercises, sub.exercise)
    if other:
        intake.flags.append(f"the file name suggests exercise {other}, but the notebook is exercise {sub.exercise}; "
                            f"it was graded as {sub.exercise}")
    return intake


def fingerprint(exercise, answers):
    """sha256 of the answer cells that differ from the exercise's templates (whitespace
    ignored), or None when nothing was written (blank notebooks are not copies of each other)."""
    templates = {c.slot: " ".join(c.source.split()) for c in exercise.cells if c.role == "answer"}
    written = {slot: [" ".join(src.split()) for src in sources] for slot, sources in sorted(answers.items())
               if [" ".join(src.split()) for src in sources] != [templates.get(slot)]}
    if not written:
        return None
    return hashlib.sha256(json.dumps(written, sort_keys=True).encode()).hexdigest()


def named_exercise(filename, exercises, actual):
    """The exercise a file name points at, if it is not `actual` (by slug or number, e.g. 27_3)."""
    lowered = filename.lower()
    for number, ex in exercises.items():
        if number == actual:
            continue
        pattern = r"(?<![\d.])" + re.escape(number).replace(r"\.", "[._-]") + r"(?![\d])"
        if ex.slug.lower() in lowered or re.search(pattern, lowered):
            return number
    return None


def similar_groups(items):
    """Groups (lists, two or more) of submissions with the same answers: `items` are results
    or intakes, with ``exercise`` and ``fingerprint``; blank notebooks are never grouped.

    What this finds is for the instructor only (a CSV column, the JSON lines, a report of its
    own): a student's feedback never names another student."""
    def get(item, key):
        return item.get(key) if isinstance(item, dict) else getattr(item, key, None)
    by_print = {}
    for item in items:
        if get(item, "fingerprint"):
            by_print.setdefault((get(item, "exercise"), get(item, "fingerprint")), []).append(item)
    return [group for group in by_print.values() if len(group) > 1]
