"""Writing the grader's outputs: always a new file of our own, never through a link someone planted.

The grader often runs as root and writes into folders others may write to (a shared feedback
folder, a course directory). ``open(path, "w")`` follows a symbolic link already sitting at
``path`` and would overwrite whatever it points to. Every output is written instead

* whole (`write_new`): into a new file created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` next to
  its destination, then renamed over it -- ``rename`` replaces a link itself, never its target;
* or line by line (`open_new`): the entry at ``path`` (a file, or a planted link) is removed and
  a new file is created exclusively, without following links, so a link put there in between
  makes the creation fail rather than be followed.

A write that fails -- the disk is full (ENOSPC), a quota (EDQUOT), a folder that is not there --
raises `OutputError`, which names the file, so that the command line can say exactly what it
could not write.
"""
from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


class OutputError(OSError):
    """An output file could not be written; ``path`` names it, ``str()`` says why."""

    def __init__(self, path, exc):
        super().__init__(exc.errno, exc.strerror or str(exc))
        self.path = str(path)

    @property
    def disk_full(self):
        return self.errno in FULL

    def __str__(self):
        return f"could not write {self.path} ({self.strerror})"


def _create_exclusive(path, mode=0o644):
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)


def write_all(fd, data):
    """Write every byte of `data` to `fd` (short writes continued; an error raises OSError)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_new(path, text, mode=0o644):
    """Write `text` (str or bytes) to `path` as a new file, replacing what is there (a link
    included) without following it. Raises `OutputError`."""
    path = Path(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = _create_exclusive(temporary, mode)
    except OSError as exc:
        raise OutputError(path, exc) from None
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise OutputError(path, exc) from None


def open_new(path, mode=0o644):
    """A new file at `path` opened for writing (text, UTF-8, line by line): what was there,
    a planted link included, is removed, never followed. Raises `OutputError`."""
    path = Path(path)
    try:
        if path.is_symlink() or path.is_file():
            os.unlink(path)
        fd = _create_exclusive(path, mode)
    except OSError as exc:
        raise OutputError(path, exc) from None
    return LineFile(path, fd)


def open_append(path):
    """The regular file at `path` opened to add lines at its end (never through a link).
    Raises `OutputError`."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise OutputError(path, exc) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputError(path, OSError(errno.EINVAL, "not a regular file"))
    return LineFile(path, fd)


class LineFile:
    """A file written a line at a time, each line with one ``write`` (an `OutputError` leaves
    no half line behind: the file is cut back to its last whole line)."""

    def __init__(self, path, fd):
        self.path, self._fd = Path(path), fd
        self._size = os.fstat(fd).st_size

    def write_line(self, text):
        data = (text if text.endswith("\n") else text + "\n").encode("utf-8")
        try:
            write_all(self._fd, data)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, self._size)
                os.lseek(self._fd, self._size, os.SEEK_SET)
            except OSError:
                pass
            raise OutputError(self.path, exc) from None
        self._size += len(data)

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
