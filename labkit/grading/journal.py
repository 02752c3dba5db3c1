"""The run journal: one line per graded notebook, in the output folder, so that no finished work is lost.

``labkit-grade-journal.jsonl`` holds, as JSON lines,

    {"journal": 1, "started": "2026-05-20T10:00:00+00:00", "command": [...]}      first line of a run
    {"submission_id", "path", "sha256", "final", "result"}                       one per notebook graded

Each line is written with one ``write`` and a line cut short by a full disk is cut back
(`labkit.grading.outputs.LineFile`), so the journal is always whole lines; reading it skips a
line that is not JSON anyway (the machine may have stopped mid-write).

``labkit-grade --resume`` keeps every *final* entry whose notebook still has the same content
(sha256 of its bytes) and grades only the rest: notebooks that are new, changed, were not
reached, or whose grade was not final (a part the machine was too busy to time, a grader that
failed). A run without ``--resume`` keeps the previous journal as ``.previous``.

One grader at a time writes to an output folder (an exclusive ``flock`` on ``.labkit-grade.lock``
there); a second one is refused with a message, not allowed to mix its rows in.
"""
from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
from pathlib import Path
from typing import Any

from labkit.grading.outputs import OutputError, open_append, open_new

JOURNAL_NAME = "labkit-grade-journal.jsonl"
LOCK_NAME = ".labkit-grade.lock"
VERSION = 1


class JournalBusy(RuntimeError):
    """Another grader is writing to the same output folder.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     first = Journal(folder)
    ...     try:
    ...         Journal(folder)
    ...     except JournalBusy as error:
    ...         print(str(error).startswith("another labkit-grade is writing to"))
    ...     first.close()
    True
    """


def read_entries(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """{submission_id: entry} from a journal (the last entry of each id wins; broken lines skipped).

    Parameters
    ----------
    path : str or path
        The journal (a missing or unreadable one gives {}).

    Returns
    -------
    dict

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, JOURNAL_NAME)
    ...     _ = open(path, "w").write('{"journal": 1}\\n{"submission_id": "ann", "result": {"score": 3}}\\n{"subm')
    ...     print(read_entries(path))
    {'ann': {'submission_id': 'ann', 'result': {'score': 3}}}
    """
    entries: dict[str, dict[str, Any]] = {}
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return entries
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("submission_id"), str) \
                and isinstance(entry.get("result"), dict):
            entries[entry["submission_id"]] = entry
    return entries


class Journal:
    """The journal of one run in `folder` (created if missing).

    Parameters
    ----------
    folder : str or Path
        The output folder.
    resume : bool
        Keep the entries of the journal already there (`cached` returns them).
    command : list of str, optional
        The command line, for the journal's first line.

    Raises
    ------
    JournalBusy
        When another grader holds the folder.
    OutputError
        When the journal cannot be written.

    Examples
    --------
    A run records a result; a resumed run finds it again for the same content:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     journal = Journal(folder, command=["labkit-grade", "class/"])
    ...     journal.record({"submission_id": "ann", "sha256": "ab12", "score": 3})
    ...     journal.close()
    ...     again = Journal(folder, resume=True)
    ...     print(again.cached("ann", "ab12"), again.cached("ann", "cd34"))
    ...     again.close()
    {'submission_id': 'ann', 'sha256': 'ab12', 'score': 3} None
    """

    def __init__(self, folder: str | os.PathLike[str], resume: bool = False, command: list[str] | None = None):
        self.folder = Path(folder)
        self.path = self.folder / JOURNAL_NAME
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise OutputError(self.folder / LOCK_NAME, exc) from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock)
            raise JournalBusy(f"another labkit-grade is writing to {self.folder} (it holds {LOCK_NAME}); "
                              "wait for it, or choose another output folder") from None
        self.entries = read_entries(self.path) if resume else {}
        if resume and self.path.exists() and not self.path.is_symlink():
            self._file = open_append(self.path)
        else:
            if self.path.is_symlink() or self.path.exists():
                try:
                    os.replace(self.path, self.path.with_name(JOURNAL_NAME + ".previous"))
                except OSError as exc:
                    raise OutputError(self.path, exc) from None
            self._file = open_new(self.path)
        started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        self._file.write_line(json.dumps({"journal": VERSION, "started": started, "command": command or []}))
        self.recorded = 0

    def cached(self, submission_id: str, sha256: str | None) -> dict[str, Any] | None:
        """The result kept for this notebook, if a final one with the same content is in the journal.

        Parameters
        ----------
        submission_id : str
        sha256 : str or None
            Of the notebook's bytes now.

        Returns
        -------
        dict or None
            A copy of the kept result.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     journal = Journal(folder)
        ...     journal.record({"submission_id": "ann", "sha256": "ab12"}, final=False)    # not a grade
        ...     journal.close()
        ...     print(Journal(folder, resume=True).cached("ann", "ab12"))
        None
        """
        entry = self.entries.get(submission_id)
        if entry and sha256 and entry.get("sha256") == sha256 and entry.get("final"):
            return dict(entry["result"])
        return None

    def record(self, result: dict[str, Any], final: bool = True) -> None:
        """Append one notebook's result as one line.

        Parameters
        ----------
        result : dict
            The notebook's result (`labkit.grading.grader.grade_notebook`).
        final : bool, default True
            Whether it is a grade (`labkit.grading.grader.is_final`).

        Raises
        ------
        labkit.grading.outputs.OutputError
            When it cannot be written (the journal left whole).

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     journal = Journal(folder)
        ...     journal.record({"submission_id": "ann", "path": "ann/27_4.ipynb", "sha256": "ab12"})
        ...     journal.close()
        ...     print(journal.recorded, list(read_entries(journal.path)))
        1 ['ann']
        """
        line = json.dumps({"submission_id": result.get("submission_id"), "path": result.get("path"),
                           "sha256": result.get("sha256"), "final": bool(final), "result": result},
                          ensure_ascii=True)
        self._file.write_line(line)
        self.recorded += 1

    def close(self) -> None:
        """Close the journal and release the output folder for another grader.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     Journal(folder).close()
        ...     Journal(folder).close()              # the folder is free again
        """
        self._file.close()
        try:
            os.close(self._lock)
        except OSError as exc:
            if exc.errno != errno.EBADF:
                raise
