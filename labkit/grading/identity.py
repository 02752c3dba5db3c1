"""Who handed in a notebook: a readable name, and ids that are stable, unique and safe as file names.

Every id is a function of the submission's path alone (relative to the folder given on the command
line), never of the order in which notebooks were found or finished, so a re-run, a resumed run
and a run with more submissions give every notebook the same id and the same feedback file.

* `display_name`: the name as the student or the learning platform wrote it, made readable on
  one line without losing a distinction: backslashes, control characters (a newline, a tab),
  invisible format characters, bytes that are not UTF-8, and spaces that a reader could not count
  (leading, trailing, doubled) are written as escapes (``\\n``, ``\\x20``, ``\\xff``), so that
  ``"a\\nb"``, ``"a b"`` and ``"a  b"`` stay three different names.
* `make_id`: a name safe in a file name on any system: kept as it is when it is plain (ASCII
  letters, digits, ``.``, ``_``, ``-`` and single spaces between them, as LMS downloads name
  students' folders -- ``Jane Smith_101_assignsubmission_file_``; at most `MAX_PLAIN`
  characters), otherwise a readable
  ASCII form of it followed by ``~`` and the first `HASH_CHARS` hex digits of the sha256 of
  its raw bytes. A plain name never contains ``~``, so a plain name and a hashed one cannot
  collide, and two different raw names get different hashed ids.
* `ids_for`: ``(student, student_id, submission_id)`` for every notebook of a run: the student
  is the first folder below the folder given (a student's folder; folders that hold one
  assignment's download are skipped: `labkit.grading.lms.student_folders`), else the file's stem; the
  submission id joins the ids of the path's parts with ``+`` (``ann+lab15`` for
  ``ann/lab15.ipynb``), so that two notebooks of one student stay apart.
"""
from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from labkit.grading import lms

MAX_PLAIN = 80
HASH_CHARS = 10
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?: [A-Za-z0-9._-]+)*")     # words with one space between
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\"}


def raw_bytes(name: str | bytes) -> bytes:
    r"""The bytes of a name as the file system holds them (``os.fsencode``: a name that was not
    UTF-8 comes back byte for byte).

    Parameters
    ----------
    name : str or bytes

    Returns
    -------
    bytes

    Examples
    --------
    >>> raw_bytes("é"), raw_bytes(b"\xff")
    (b'\xc3\xa9', b'\xff')
    """
    return name if isinstance(name, bytes) else os.fsencode(name)


def display_name(name: str | bytes) -> str:
    r"""`name` (str from the file system, or bytes) as one readable line; see the module's docstring.

    Parameters
    ----------
    name : str or bytes

    Returns
    -------
    str
        Control characters, bytes that are not UTF-8 and uncountable spaces written as escapes.

    Examples
    --------
    >>> print(display_name("a\nb"), display_name(b"caf\xff"), display_name(" ann"))
    a\nb caf\xff \x20ann
    """
    text = raw_bytes(name).decode("utf-8", "surrogateescape")
    out = []
    for k, ch in enumerate(text):
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:                          # a byte that is not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch == " " and (k == 0 or k == len(text) - 1 or text[k - 1] == " "):
            out.append("\\x20")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Zs", "Co", "Cs", "Cn") and ch != " ":
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def make_id(name: str | bytes) -> str:
    """A file-name-safe id of `name` (str or bytes); see the module's docstring.

    Parameters
    ----------
    name : str or bytes

    Returns
    -------
    str
        The name itself when it is plain, else a readable ASCII form, ``~`` and a hash.

    Examples
    --------
    >>> make_id("Jane Smith_101_assignsubmission_file_"), make_id("José Núñez"), make_id("a/b")
    ('Jane Smith_101_assignsubmission_file_', 'Jose_Nunez~cd32e4cb9e', 'a_b~c14cddc033')
    """
    raw = raw_bytes(name)
    text = raw.decode("ascii", "replace") if raw.isascii() else None
    if text is not None and len(text) <= MAX_PLAIN and _PLAIN.fullmatch(text):
        return text
    readable = unicodedata.normalize("NFKD", raw.decode("utf-8", "replace"))
    readable = "".join(ch for ch in readable if not unicodedata.combining(ch))
    readable = _UNSAFE.sub("_", readable).strip("._-")[:60] or "x"
    return f"{readable}~{hashlib.sha256(raw).hexdigest()[:HASH_CHARS]}"


def _stem(path):
    name = Path(path).name
    return name[:-len(".ipynb")] if name.endswith(".ipynb") else name


def ids_for(found: Iterable[tuple[str | os.PathLike[str], str | os.PathLike[str] | None]],
            exercises: Mapping[str, Any] | None = None) -> dict[Path, tuple[str, str, str]]:
    """{path: (student, student_id, submission_id)} for `found`, a list of (path, root) pairs as
    `labkit.grading.intake.find_notebooks` gives them (root None for a file given by itself);
    `exercises` ({number: Exercise}) tells assignment folders from students' folders.

    Within a folder given, the ids come from the path below it. Files given by themselves are
    known by their stem; when several share a stem, by as many parent folders as tell them apart
    (a function of the set of files given, not of their order).

    Parameters
    ----------
    found : iterable of (path, root or None)
    exercises : mapping, optional

    Returns
    -------
    dict
        {pathlib.Path: (student, student_id, submission_id)}.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "ann" / "lab15.ipynb"
    ...     path.parent.mkdir()
    ...     print(ids_for([(path, folder)])[path])
    ('ann', 'ann', 'ann+lab15')
    >>> alone = [(Path("x/27_4.ipynb"), None), (Path("y/27_4.ipynb"), None)]     # the same stem
    >>> [ids[2] for ids in ids_for(alone).values()]
    ['x+27_4', 'y+27_4']
    """
    out, alone = {}, []
    for path, root in found:
        path = Path(path)
        if root is not None and Path(root).is_dir():
            parts = list(path.relative_to(root).parts)
            folders = lms.student_folders(Path(root), parts, exercises or {})
            parts[-1] = _stem(parts[-1])
            student = folders[0] if folders else parts[-1]
            out[path] = (display_name(student), make_id(student), "+".join(make_id(p) for p in parts))
        else:
            alone.append(path)
    for path in alone:
        depth = 0
        while depth < len(path.parts) - 1 and any(p != path and _tail(p, depth) == _tail(path, depth) for p in alone):
            depth += 1
        stem = _stem(path)
        out[path] = (display_name(stem), make_id(stem),
                     "+".join(make_id(part.strip("/") or "root") for part in _tail(path, depth)))
    return out


def _tail(path, depth):
    stem = _stem(path)
    return [*path.parent.parts[len(path.parent.parts) - depth:], stem] if depth else [stem]
