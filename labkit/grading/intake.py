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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labkit.grading.identity import display_name
from labkit.grading.notebooks import NotebookError, extract, read_notebook

if TYPE_CHECKING:
    from labkit.grading.notebooks import Exercise

MAX_NOTEBOOK_BYTES = 20_000_000


def find_notebooks(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[Path, Path | None]]:
    """(notebook path, root given) for every ``*.ipynb`` under the given files and folders,
    sorted; folders are walked without following symlinks; checkpoint copies are skipped.

    Parameters
    ----------
    paths : iterable of str or path
        Notebook files (listed as given, root None) and folders.

    Returns
    -------
    list of (pathlib.Path, pathlib.Path or None)
        A symlink or other non-file named ``*.ipynb`` is listed too; `read_bytes` refuses it.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     os.makedirs(os.path.join(folder, "ann", ".ipynb_checkpoints"))
    ...     for name in ("ann/ex.ipynb", "ann/notes.txt", "ann/.ipynb_checkpoints/ex-checkpoint.ipynb"):
    ...         _ = open(os.path.join(folder, name), "w").write("{}")
    ...     os.symlink("/dev/zero", os.path.join(folder, "ann", "zero.ipynb"))
    ...     print([(str(path.relative_to(folder)), root == Path(folder)) for path, root in find_notebooks([folder])])
    [('ann/ex.ipynb', True), ('ann/zero.ipynb', True)]
    """
    found: list[tuple[Path, Path | None]] = []
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


def read_bytes(path: str | os.PathLike[str], max_bytes: int = MAX_NOTEBOOK_BYTES) -> bytes:
    """The bytes of a submission: a regular file, not a link, at most `max_bytes` long.

    Parameters
    ----------
    path : str or path
    max_bytes : int, default `MAX_NOTEBOOK_BYTES` (20 MB)

    Returns
    -------
    bytes

    Raises
    ------
    labkit.grading.notebooks.NotebookError
        Saying, for the student, why the file cannot be read: a symbolic link, a FIFO, a folder or
        a device, unreadable, or too large.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "ex.ipynb")
    ...     _ = open(path, "w").write("{}")
    ...     print(read_bytes(path))
    ...     os.symlink("/dev/zero", os.path.join(folder, "zero.ipynb"))
    ...     try:
    ...         read_bytes(os.path.join(folder, "zero.ipynb"))
    ...     except NotebookError as error:
    ...         print(error)
    b'{}'
    zero.ipynb is a symbolic link, not a notebook file; submit the .ipynb file itself
    """
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

    Attributes
    ----------
    path : str
    student : str
        The readable name.
    exercise : str or None
        The exercise number the notebook is (None where that is not known).
    answers : dict
        {slot: [code source, ...]}, the answer cells in notebook order.
    written : dict
        {slot: markdown text}, the written answers.
    error : str or None
        Why it cannot be graded, for the student.
    flags : list of str
        Notes for the instructor (a file name that names another exercise).
    fingerprint : str or None
        Of the answers that differ from the templates (`fingerprint`).
    student_id, submission_id : str or None
        The stable ids (`labkit.grading.identity`); made from ``student`` when not given.
    sha256 : str or None
        The hash of the file's bytes (None if unreadable).

    Examples
    --------
    >>> intake = Intake("ann/ex.ipynb", "Ann Lee")
    >>> intake.student_id == intake.submission_id, intake.error is None
    (True, True)
    """
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


def take_in(path: str | os.PathLike[str], student: str, exercises: Mapping[str, Exercise],
            expected: str | None = None, max_bytes: int = MAX_NOTEBOOK_BYTES, student_id: str | None = None,
            submission_id: str | None = None) -> Intake:
    """Read one submission into an `Intake` (never raises for a bad file: its ``error`` says why).

    Parameters
    ----------
    path : str or path
    student : str
        The readable name.
    exercises : mapping
        {number: `labkit.grading.notebooks.Exercise`}, the instructor's exercises.
    expected : str, optional
        The exercise the submission must be (``--exercise``); also the exercise of an unreadable one.
    max_bytes : int, default `MAX_NOTEBOOK_BYTES`
    student_id, submission_id : str, optional
        Stable ids (`labkit.grading.identity`).

    Returns
    -------
    Intake

    Examples
    --------
    >>> import nbformat, os, tempfile
    >>> from labkit.grading import notebooks as nbk
    >>> exercise = nbk.Exercise("1.1", "1_1_sum", "A sum", (
    ...     nbk.md("# Exercise 1.1"), nbk.answer("1.1(a)", "total = ...", "total = 3"), nbk.check("1.1(a)")))
    >>> exercises = {"1.1": exercise}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "1_1_sum.ipynb")
    ...     nbformat.write(exercise.notebook(solution=True), path)
    ...     intake = take_in(path, "ann", exercises)
    ...     missing = take_in(os.path.join(folder, "none.ipynb"), "bob", exercises, expected="1.1")
    >>> intake.exercise, intake.answers, intake.error
    ('1.1', {'1.1(a)': ['total = 3']}, None)
    >>> missing.exercise, missing.error
    ('1.1', 'none.ipynb cannot be opened (No such file or directory)')
    """
    intake = Intake(str(path), student, student_id=student_id, submission_id=submission_id)
    try:
        data = read_bytes(path, max_bytes)
    except NotebookError as exc:
        intake.error = str(exc)
        if expected in exercises:
            intake.exercise = expected
        return intake
    return take_in_bytes(data, intake, exercises, expected)


def take_in_bytes(data: bytes, intake: Intake, exercises: Mapping[str, Exercise],
                  expected: str | None = None) -> Intake:
    """Fill `intake` (path and ids set) from the bytes of its file (never raises for bad bytes:
    its ``error`` says why).

    Parameters
    ----------
    data : bytes
        The file's contents.
    intake : Intake
        Filled in place.
    exercises : mapping
        {number: `labkit.grading.notebooks.Exercise`}.
    expected : str, optional
        The exercise the submission must be.

    Returns
    -------
    Intake
        `intake` itself.

    Examples
    --------
    >>> import nbformat
    >>> from labkit.grading import notebooks as nbk
    >>> exercise = nbk.Exercise("1.1", "1_1_sum", "A sum", (
    ...     nbk.md("# Exercise 1.1"), nbk.answer("1.1(a)", "total = ...", "total = 3"), nbk.check("1.1(a)")))
    >>> exercises = {"1.1": exercise}
    >>> data = nbformat.writes(exercise.notebook(solution=True)).encode()
    >>> intake = take_in_bytes(data, Intake("ann/1_1_sum.ipynb", "ann"), exercises)
    >>> intake.exercise, intake.answers, len(intake.sha256)
    ('1.1', {'1.1(a)': ['total = 3']}, 64)
    >>> take_in_bytes(b"not json", Intake("bob.ipynb", "bob"), exercises).error
    'bob.ipynb is not a Jupyter notebook: its JSON is broken at line 1, column 1 (Expecting value)'
    """
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


def fingerprint(exercise: Exercise, answers: Mapping[str, list[str]]) -> str | None:
    """sha256 of the answer cells that differ from the exercise's templates (whitespace
    ignored), or None when nothing was written (blank notebooks are not copies of each other).

    Parameters
    ----------
    exercise : labkit.grading.notebooks.Exercise
    answers : mapping
        {slot: [code source, ...]}.

    Returns
    -------
    str or None
        64 hexadecimal digits.

    Examples
    --------
    >>> from labkit.grading import notebooks as nbk
    >>> exercise = nbk.Exercise("1.1", "1_1_sum", "A sum", (
    ...     nbk.md("# Exercise 1.1"), nbk.answer("1.1(a)", "total = ...", "total = 3"), nbk.check("1.1(a)")))
    >>> exercises = {"1.1": exercise}
    >>> fingerprint(exercise, {"1.1(a)": ["total = ..."]}) is None          # the template, untouched
    True
    >>> fingerprint(exercise, {"1.1(a)": ["total = 3"]}) == fingerprint(exercise, {"1.1(a)": ["total  =  3"]})
    True
    """
    templates = {c.slot: " ".join(c.source.split()) for c in exercise.cells if c.role == "answer"}
    written = {slot: [" ".join(src.split()) for src in sources] for slot, sources in sorted(answers.items())
               if [" ".join(src.split()) for src in sources] != [templates.get(slot)]}
    if not written:
        return None
    return hashlib.sha256(json.dumps(written, sort_keys=True).encode()).hexdigest()


def named_exercise(filename: str, exercises: Mapping[str, Exercise], actual: str | None) -> str | None:
    """The exercise a file name points at, if it is not `actual` (by slug or number, e.g. 27_3).

    Parameters
    ----------
    filename : str
    exercises : mapping
        {number: `labkit.grading.notebooks.Exercise`}.
    actual : str or None
        The exercise the notebook is.

    Returns
    -------
    str or None
        The other exercise's number, or None.

    Examples
    --------
    >>> from labkit.grading import notebooks as nbk
    >>> exercise = nbk.Exercise("1.1", "1_1_sum", "A sum", (
    ...     nbk.md("# Exercise 1.1"), nbk.answer("1.1(a)", "total = ...", "total = 3"), nbk.check("1.1(a)")))
    >>> exercises = {"1.1": exercise}
    >>> exercises["2.1"] = nbk.Exercise("2.1", "2_1_product", "A product", ())
    >>> named_exercise("ann_2_1.ipynb", exercises, "1.1"), named_exercise("ann_1_1.ipynb", exercises, "1.1")
    ('2.1', None)
    """
    lowered = filename.lower()
    for number, ex in exercises.items():
        if number == actual:
            continue
        pattern = r"(?<![\d.])" + re.escape(number).replace(r"\.", "[._-]") + r"(?![\d])"
        if ex.slug.lower() in lowered or re.search(pattern, lowered):
            return number
    return None


def similar_groups(items: Iterable[Any]) -> list[list[Any]]:
    """Groups (lists, two or more) of submissions with the same answers; blank notebooks are
    never grouped.

    What this finds is for the instructor only (a CSV column, the JSON lines, a report of its
    own): a student's feedback never names another student.

    Parameters
    ----------
    items : iterable
        Results (dicts) or intakes, with ``exercise`` and ``fingerprint``.

    Returns
    -------
    list of lists

    Examples
    --------
    >>> items = [{"student": "a", "exercise": "1.1", "fingerprint": "ab"},
    ...          {"student": "b", "exercise": "1.1", "fingerprint": "ab"},
    ...          {"student": "c", "exercise": "1.1", "fingerprint": None}]          # blank
    >>> [[item["student"] for item in group] for group in similar_groups(items)]
    [['a', 'b']]
    """
    def get(item, key):
        return item.get(key) if isinstance(item, dict) else getattr(item, key, None)
    by_print: dict[tuple[Any, Any], list[Any]] = {}
    for item in items:
        if get(item, "fingerprint"):
            by_print.setdefault((get(item, "exercise"), get(item, "fingerprint")), []).append(item)
    return [group for group in by_print.values() if len(group) > 1]
