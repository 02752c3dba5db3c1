"""Sandbox slots, allocated machine-wide: a slot number names a sandbox's uid and its control group.

Everything a slot names is shared by the whole machine: as root, slot ``N`` runs its sandbox as
uid ``UID_BASE + N`` and in the control group ``labkit-grade/slot-N``, and taking a slot kills
whatever a crashed grader left with that uid or in that group. So the lock that says "slot N is
mine" must be machine-wide too: an exclusive ``flock`` on ``slot-N.lock`` in `lock_folder`, a
fixed folder of the machine (never under ``TMPDIR``, which differs between graders and users).
Any number of graders, started by anyone with any environment, then take different slots; a
lock is released by the kernel when its grader exits, however it exits.

The folder is ``/run/labkit-grade`` for root (``/run`` is root's own, so no one else can plant a
folder or a link there first) and ``/run/lock/labkit-grade-<uid>`` for other users (without
root there are no sandbox uids, and only the control groups, when a delegated hierarchy allows
them, need the slot). A folder that is not what it should be (a link, someone else's, writable
by others) is refused, never used.

Graders of labkit 0.2 and earlier locked slots in ``$TMPDIR/labkit-grade-slots-<uid>/slot-N``
only. A slot is also locked there (`LEGACY_FOLDER`, in this process's temporary folder and in
``/tmp``, the default), so that such a grader still running on the machine never takes -- and
kills -- a slot in use.
"""
from __future__ import annotations

import errno
import fcntl
import os
import pwd
import signal
import stat
import tempfile
import time
from pathlib import Path

UID_BASE = 60000
SLOTS = 2000
LEGACY_FOLDER = "labkit-grade-slots-{uid}"       # under the temporary folder: where labkit <= 0.2 locked slots


class SlotError(RuntimeError):
    """No slot can be taken (the lock folder is unsafe, or every slot is in use).

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     os.symlink("/tmp", os.path.join(folder, "slot-0.lock"))        # planted: never followed
    ...     try:
    ...         _lock_all([Path(folder) / "slot-0.lock"])
    ...     except SlotError as error:
    ...         print(str(error).endswith("is a symbolic link; remove it (slot locks are never followed)"))
    True
    """


def _candidate_folders(uid):
    if uid == 0:
        return [Path("/run/labkit-grade")]
    home = Path(pwd.getpwuid(uid).pw_dir) if _has_account(uid) else None
    folders = [Path("/run/lock") / f"labkit-grade-{uid}"]
    if home is not None:
        folders.append(home / ".cache" / "labkit-grade" / "slots")
    return folders


def _has_account(uid):
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def _safe_folder(folder, uid):
    """Create `folder` (mode 0700 for a user, 0755 for root) or check the one there: a real
    folder owned by `uid` that no one else can write. Returns None if fine, else why not."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)       # ~/.cache/labkit-grade for a user
        os.mkdir(folder, 0o755 if uid == 0 else 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        return f"cannot create {folder} ({exc.strerror})"
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder (a link or a file is in its place)"
    if info.st_uid != uid:
        return f"{folder} belongs to uid {info.st_uid}, not to uid {uid}"
    if info.st_mode & 0o022:
        return f"{folder} is writable by other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def lock_folder(uid: int | None = None) -> Path:
    """The machine-wide folder of the slot locks for `uid` (default: this process's euid):
    ``/run/labkit-grade`` for root, ``/run/lock/labkit-grade-<uid>`` for others.

    Parameters
    ----------
    uid : int, optional

    Returns
    -------
    pathlib.Path

    Raises
    ------
    SlotError
        When no safe folder can be made (each candidate's reason is given).

    Examples
    --------
    >>> str(lock_folder()).startswith("/run/")
    True
    """
    uid = os.geteuid() if uid is None else uid
    reasons = []
    for folder in _candidate_folders(uid):
        why = _safe_folder(folder, uid)
        if why is None:
            return folder
        reasons.append(why)
    raise SlotError("no safe folder for the sandbox slot locks: " + "; ".join(reasons))


def uid_taken(uid: int) -> bool:
    """Whether `uid` belongs to an account of this system (such a uid is never used for a sandbox).

    Parameters
    ----------
    uid : int

    Returns
    -------
    bool

    Examples
    --------
    >>> uid_taken(0)                                        # root
    True
    """
    return _has_account(uid)


class Slot:
    """A sandbox slot held for as long as the context lasts.

    Attributes
    ----------
    number : int
        The slot (0 ... `SLOTS` - 1): the control group ``labkit-grade/slot-<number>``.
    uid : int
        The sandbox's uid: ``UID_BASE + number`` as root, this process's uid otherwise.

    Parameters
    ----------
    folder : str or path, optional
        The lock folder (default `lock_folder`, machine-wide: another folder does not keep
        other graders out).

    Raises
    ------
    SlotError
        On entering, when no slot can be taken.

    Examples
    --------
    >>> import os
    >>> with Slot() as slot:
    ...     print(0 <= slot.number < SLOTS, slot.uid == (UID_BASE + slot.number if os.geteuid() == 0 else os.geteuid()))
    True True
    """

    def __init__(self, folder: str | os.PathLike[str] | None = None):
        self.folder = folder
        self.number = self.uid = None
        self._fds: list[int] = []

    def __enter__(self):
        root = os.geteuid() == 0
        folder = Path(self.folder) if self.folder is not None else lock_folder()
        legacy = _legacy_folders()
        for number in range(SLOTS):
            uid = UID_BASE + number
            if root and uid_taken(uid):
                continue
            fds = _lock_all([folder / f"slot-{number}.lock"] + [old / f"slot-{number}" for old in legacy])
            if fds is None:
                continue
            self.number, self._fds = number, fds
            self.uid = uid if root else os.geteuid()
            if root:
                kill_uid(uid)           # a leftover of a grader that crashed
            return self
        raise SlotError(f"all {SLOTS} sandbox slots are in use (locks in {folder})")

    def __exit__(self, *exc):
        for fd in self._fds:
            os.close(fd)
        self._fds = []


def _lock_all(paths):
    """Exclusive locks on every file of `paths` (open fds), or None if one is held elsewhere."""
    fds = []
    for path in paths:
        fd = _open_lock(path)
        fds.append(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            for held in fds:
                os.close(held)
            return None
    return fds


def _legacy_folders():
    """Where labkit <= 0.2 locked slots (this process's temporary folder, and /tmp), made as those
    graders made them; a folder that cannot be made, or is not this user's own, is left out."""
    out = []
    for temporary in dict.fromkeys([tempfile.gettempdir(), "/tmp"]):
        folder = Path(temporary) / LEGACY_FOLDER.format(uid=os.geteuid())
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            info = os.lstat(folder)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022:
            out.append(folder)
    return out


def _open_lock(path):
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SlotError(f"{path} is a symbolic link; remove it (slot locks are never followed)") from None
        raise SlotError(f"cannot open the slot lock {path} ({exc.strerror})") from None


def kill_uid(uid: int, passes: int = 50) -> None:
    """SIGKILL every process whose real uid is `uid` (root only; a sandbox's uid is its own),
    pass after pass until none is left (a fork bomb forks while we look).

    Parameters
    ----------
    uid : int
    passes : int, default 50
        At most this many passes over /proc, 0.05 s apart.

    Examples
    --------
    >>> kill_uid(UID_BASE + SLOTS + 12345)                   # a uid no process has: nothing to do
    """
    for _ in range(passes):
        found = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as f:
                    lines = [x for x in f if x.startswith(("Uid:", "State:"))]
                state = next(x for x in lines if x.startswith("State:")).split()[1]
                if int(next(x for x in lines if x.startswith("Uid:")).split()[1]) == uid and state != "Z":
                    os.kill(int(entry), signal.SIGKILL)
                    found += 1
            except (OSError, StopIteration, ValueError, IndexError):
                continue
        if not found:
            return
        time.sleep(0.05)
