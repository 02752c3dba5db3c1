"""Where labkit keeps the libraries it compiles (the C CFR kernel, the Eigen fixed point).

A compiled library is code the process will load and run, so its folder must be one that no other
user can write to. The home cache (``$LABKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/labkit`` or
``~/.cache/labkit``) is the user's own. Where it cannot be written (a locked-down grading server,
say), a folder in the shared temporary directory is used only if it is a real directory (not a
link) owned by this user with no write permission for anyone else; otherwise another user could
have put a library of their own there under the expected name, and this process would load it.
Failing those, each process compiles into a private folder of its own (``tempfile.mkdtemp``).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


def home_folder() -> Path:
    """The user's cache folder for compiled libraries (it may not exist yet)."""
    root = os.environ.get("LABKIT_CACHE_DIR")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or (Path.home() / ".cache")
    return Path(base) / "labkit"


def is_private(folder: Path) -> bool:
    """Whether `folder` is a directory, not a link, owned by this user, writable by no one else.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as scratch:
    ...     mine = Path(scratch) / "mine"
    ...     mine.mkdir(mode=0o700)
    ...     open_to_all = Path(scratch) / "open"
    ...     open_to_all.mkdir()
    ...     open_to_all.chmod(0o777)
    ...     (Path(scratch) / "link").symlink_to(mine)
    ...     is_private(mine), is_private(open_to_all), is_private(Path(scratch) / "link")
    (True, False, False)
    """
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    owner_ok = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return stat.S_ISDIR(info.st_mode) and owner_ok and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def library_folder() -> Path:
    """A folder, existing and writable, where this process may cache and load compiled libraries.

    The home cache where it can be written; else ``labkit-<uid>`` in the temporary directory if
    it is private (`is_private`; created with mode 0700 if missing); else a new private folder.

    Examples
    --------
    >>> folder = library_folder()
    >>> folder.is_dir() and os.access(folder, os.W_OK)
    True
    """
    import tempfile       # here, not at the top: `import labkit` stays cheap
    home = home_folder()
    try:
        home.mkdir(parents=True, exist_ok=True)
        if os.access(home, os.W_OK):
            return home
    except OSError:
        pass
    shared = Path(tempfile.gettempdir()) / f"labkit-{os.getuid() if hasattr(os, 'getuid') else 0}"
    try:
        shared.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        pass
    if is_private(shared) and os.access(shared, os.W_OK):
        return shared
    return Path(tempfile.mkdtemp(prefix="labkit-"))
