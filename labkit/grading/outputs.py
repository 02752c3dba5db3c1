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
from typing import Any

FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


class OutputError(OSError):
    """An output file could not be written; ``path`` names it, ``str()`` says why.

    Parameters
    ----------
    path : str or path
    exc : OSError
        The error that stopped the write.

    Examples
    --------
    >>> import errno
    >>> error = OutputError("out/grades.csv", OSError(errno.ENOSPC, "No space left on device"))
    >>> print(error), error.disk_full
    could not write out/grades.csv (No space left on device)
    (None, True)
    """

    def __init__(self, path: str | os.PathLike[str], exc: OSError):
        super().__init__(exc.errno, exc.strerror or str(exc))
        self.path = str(path)

    @property
    def disk_full(self) -> bool:
        """Whether the disk or a quota was full (ENOSPC, EDQUOT, EFBIG).

        Examples
        --------
        >>> import errno
        >>> OutputError("x", OSError(errno.ENOENT, "No such file or directory")).disk_full
        False
        """
        return self.errno in FULL

    def __str__(self):
        return f"could not write {self.path} ({self.strerror})"


def _create_exclusive(path, mode=0o644):
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd` (short writes continued; an error raises OSError).

    Parameters
    ----------
    fd : int
        An open file descriptor.
    data : bytes

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> fd = os.open(os.path.join(folder, "a.txt"), os.O_WRONLY | os.O_CREAT)
    >>> write_all(fd, b"0123456789")
    >>> os.close(fd)
    >>> os.path.getsize(os.path.join(folder, "a.txt"))
    10
    >>> shutil.rmtree(folder)
    """
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_new(path: str | os.PathLike[str], text: str | bytes, mode: int = 0o644) -> None:
    """Write `text` (str or bytes) to `path` as a new file, replacing what is there (a link
    included) without following it.

    Parameters
    ----------
    path : str or path
    text : str or bytes
        str is written as UTF-8.
    mode : int, default 0o644

    Raises
    ------
    OutputError
        Naming the file.

    Examples
    --------
    A link planted at the destination is replaced, and its target left alone:

    >>> import os, shutil, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> target = os.path.join(folder, "precious.txt")
    >>> _ = open(target, "w").write("keep me")
    >>> os.symlink(target, os.path.join(folder, "grades.csv"))
    >>> write_new(os.path.join(folder, "grades.csv"), "student,score\\n")
    >>> open(target).read(), os.path.islink(os.path.join(folder, "grades.csv"))
    ('keep me', False)
    >>> shutil.rmtree(folder)
    """
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


def open_new(path: str | os.PathLike[str], mode: int = 0o644) -> LineFile:
    """A new file at `path` opened for writing (text, UTF-8, line by line): what was there,
    a planted link included, is removed, never followed.

    Parameters
    ----------
    path : str or path
    mode : int, default 0o644

    Returns
    -------
    LineFile

    Raises
    ------
    OutputError
        Naming the file.

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> lines = open_new(os.path.join(folder, "log.jsonl"))
    >>> lines.write_line('{"student": "ann"}')
    >>> lines.close()
    >>> open(os.path.join(folder, "log.jsonl")).read()
    '{"student": "ann"}\\n'
    >>> shutil.rmtree(folder)
    """
    path = Path(path)
    try:
        if path.is_symlink() or path.is_file():
            os.unlink(path)
        fd = _create_exclusive(path, mode)
    except OSError as exc:
        raise OutputError(path, exc) from None
    return LineFile(path, fd)


def open_append(path: str | os.PathLike[str]) -> LineFile:
    """The regular file at `path` opened to add lines at its end (never through a link).

    Parameters
    ----------
    path : str or path

    Returns
    -------
    LineFile

    Raises
    ------
    OutputError
        When it is missing, a link or not a regular file.

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "log.jsonl")
    >>> _ = open(path, "w").write("first\\n")
    >>> lines = open_append(path)
    >>> lines.write_line("second")
    >>> lines.close()
    >>> open(path).read().splitlines()
    ['first', 'second']
    >>> shutil.rmtree(folder)
    """
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
    no half line behind: the file is cut back to its last whole line). Made by `open_new` and
    `open_append`.

    Parameters
    ----------
    path : str or path
        For the messages.
    fd : int
        Open for writing.

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> lines = LineFile(os.path.join(folder, "x"), os.open(os.path.join(folder, "x"), os.O_WRONLY | os.O_CREAT))
    >>> lines.write_line("one")
    >>> lines.close()
    >>> lines.close()                                    # a second close does nothing
    >>> shutil.rmtree(folder)
    """

    def __init__(self, path: str | os.PathLike[str], fd: int):
        self.path = Path(path)
        self._fd: Any = fd                  # None once closed
        self._size = os.fstat(fd).st_size

    def write_line(self, text: str) -> None:
        """Write `text` and a newline (unless it ends with one) with one ``write``.

        Parameters
        ----------
        text : str

        Raises
        ------
        OutputError
            The file cut back to its last whole line.

        Examples
        --------
        >>> import os, shutil, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> lines = open_new(os.path.join(folder, "log"))
        >>> lines.write_line("a"); lines.write_line("b\\n")
        >>> lines.close()
        >>> open(os.path.join(folder, "log")).read()
        'a\\nb\\n'
        >>> shutil.rmtree(folder)
        """
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

    def close(self) -> None:
        """Close the file (again: nothing).

        Examples
        --------
        >>> import os, shutil, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> lines = open_new(os.path.join(folder, "log"))
        >>> lines.close()
        >>> lines.close()
        >>> shutil.rmtree(folder)
        """
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
