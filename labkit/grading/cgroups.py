"""A control group per submission: one memory limit and one process limit for a whole sandbox.

Rlimits bound each process of a sandbox on its own; a submission that forks eight children
each allocating 600 MB stays under a per-process limit while taking 4.8 GB of the machine. A
control group bounds the sum: every process of the sandbox (bubblewrap, the driver, the kernel
and whatever the student's code starts) is in one group whose memory (resident pages, page
cache, and the private /tmp's tmpfs pages) and number of tasks are limited together. When the
group reaches its memory limit the kernel's OOM killer ends one of *its* processes -- never
one of another submission or of the grader -- and counts it in the group's ``oom_kill``
counter, which the grader reads to tell the student "memory limit of N MiB reached".

The group also bounds and counts CPU time, where the ``cpu`` (and, on v1, ``cpuacct``)
controllers exist: a quota of `SubmissionGroup.cpus` CPUs (so that one sandbox with many busy
processes cannot starve its neighbours, whatever the host's scheduler does between process
groups), and the CPU seconds the whole sandbox used, which the sandbox's driver reads to charge
each cell its CPU time (`labkit.grading.cpuclock`; the file is bound read-only into the sandbox).

Both hierarchies are handled:

* cgroup v1 (separate ``memory``, ``pids``, ``cpu`` and ``cpuacct`` mounts, as here, or ``cpu``
  and ``cpuacct`` together): ``memory.limit_in_bytes`` and, when swap accounting exists,
  ``memory.memsw.limit_in_bytes`` (so swap cannot extend it); ``pids.max``;
  ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``; OOM kills from ``memory.oom_control``, CPU
  time from ``cpuacct.usage`` (nanoseconds);
* cgroup v2 (one unified mount with the ``memory`` and ``pids`` controllers, and ``cpu`` when it
  is there): ``memory.max``, ``memory.swap.max = 0``, ``pids.max``, ``cpu.max``; OOM kills from
  ``memory.events``, CPU time from ``usage_usec`` in ``cpu.stat``. The controllers are enabled in
  ``cgroup.subtree_control`` on the way down (the parent folder holds no process, as v2
  requires).

The groups live in a folder of their own, ``labkit-grade``, at the top of each hierarchy (not
inside the cgroup the grader itself runs in, which belongs to whatever started it); one group
per sandbox slot, ``labkit-grade/slot-N``, created before the sandbox starts (the sandbox's
first process joins it before it runs anything: `join_command`) and removed after everything
left in it has been killed. Creating groups needs root (or a delegated v2 subtree); where that
fails, `available` says why and the grader falls back to per-process rlimits.
"""
from __future__ import annotations

import errno
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PARENT = "labkit-grade"
MOUNTINFO = "/proc/self/mountinfo"

# The examples below never touch the machine's control groups: they use a "stand-in" v2 hierarchy,
# a temporary folder of ordinary files, and a mountinfo file of their own.


@dataclass(frozen=True)
class Hierarchy:
    """Where the controllers are mounted: ``version`` 1 (``memory`` and ``pids`` mounts) or 2
    (both the same unified mount). ``cpu`` (the quota) and ``cpuacct`` (the CPU time; on v2 the
    unified mount itself) are None where the machine lacks them.

    Attributes
    ----------
    version : int
        1 or 2.
    memory, pids : pathlib.Path
        The mounts of the memory and pids controllers.
    cpu, cpuacct : pathlib.Path or None
        The mounts of the CPU quota and of the CPU time counter.

    Examples
    --------
    >>> unified = Path("/sys/fs/cgroup")
    >>> Hierarchy(2, unified, unified, None, unified).cpu is None
    True
    """
    version: int
    memory: Path
    pids: Path
    cpu: Path | None = None
    cpuacct: Path | None = None


def _mounts(mountinfo):
    """(mount point, file system type, super options) of every cgroup mount."""
    out = []
    try:
        text = Path(mountinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        if tail[0] in ("cgroup", "cgroup2"):
            point = fields[4].replace("\\040", " ")
            out.append((Path(point), tail[0], set(tail[2].split(","))))
    return out


def find_hierarchy(mountinfo: str | os.PathLike[str] = MOUNTINFO) -> Hierarchy | None:
    """The `Hierarchy` that has both a memory and a pids controller, or None.

    cgroup v1 is used when both controllers are mounted as v1 (a v2 mount then holds neither);
    otherwise a v2 mount whose ``cgroup.controllers`` lists both.

    Parameters
    ----------
    mountinfo : str or path, default `MOUNTINFO`
        A file in the format of ``/proc/self/mountinfo``.

    Returns
    -------
    Hierarchy or None

    Examples
    --------
    A machine with cgroup v1's memory, pids and cpu,cpuacct mounts:

    >>> import tempfile
    >>> lines = ["30 25 0:26 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory",
    ...          "31 25 0:27 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids",
    ...          "32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct"]
    >>> with tempfile.NamedTemporaryFile("w", suffix=".mountinfo") as mountinfo:
    ...     _ = mountinfo.write("\\n".join(lines) + "\\n")
    ...     mountinfo.flush()
    ...     found = find_hierarchy(mountinfo.name)
    >>> found.version, str(found.pids), str(found.cpuacct)
    (1, '/sys/fs/cgroup/pids', '/sys/fs/cgroup/cpu,cpuacct')
    >>> find_hierarchy("/no/such/mountinfo") is None
    True
    """
    mounts = _mounts(mountinfo)
    v1 = {c: point for point, kind, options in mounts if kind == "cgroup"
          for c in ("memory", "pids", "cpu", "cpuacct") if c in options}
    if "memory" in v1 and "pids" in v1:
        return Hierarchy(1, v1["memory"], v1["pids"], v1.get("cpu"), v1.get("cpuacct"))
    for point, kind, _ in mounts:
        if kind != "cgroup2":
            continue
        try:
            controllers = set((point / "cgroup.controllers").read_text().split())
        except OSError:
            continue
        if {"memory", "pids"} <= controllers:
            return Hierarchy(2, point, point, point if "cpu" in controllers else None, point)
    return None


def _write(path, text):
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


def _counter(path, key):
    """The value of `key` in a ``key value`` file (``memory.events``, ``memory.oom_control``)."""
    try:
        for line in Path(path).read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


class SubmissionGroup:
    """The control group(s) of one sandbox: `create` before it starts, `remove` after.

    Parameters
    ----------
    hierarchy : Hierarchy
    name : str
        The group's folder name under ``labkit-grade`` (``slot-N``).
    memory : int
        Bytes the whole group may use (``memory.limit_in_bytes`` / ``memory.max``).
    processes : int
        Tasks (processes and threads) the whole group may hold (``pids.max``).
    cpus : float, optional
        CPUs' worth of time the whole group may use per second (``cpu.cfs_quota_us`` /
        ``cpu.max``); None: no quota.

    Examples
    --------
    On a stand-in v2 hierarchy (ordinary files in a temporary folder):

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     stand_in = Hierarchy(2, Path(root), Path(root), Path(root), Path(root))
    ...     group = SubmissionGroup(stand_in, "slot-0", memory=256 * 1024 ** 2, processes=64, cpus=0.5).create()
    ...     print((group.memory_folder / "memory.max").read_text(), (group.cpu_folder / "cpu.max").read_text())
    ...     print([str(folder.relative_to(root)) for folder in group.folders], group.cpu_limited)
    268435456 50000 100000
    ['labkit-grade/slot-0'] True
    """

    PERIOD = 100_000           # microseconds of one CPU quota period (the kernel's default)

    def __init__(self, hierarchy: Hierarchy, name: str, memory: int, processes: int,
                 cpus: float | None = None) -> None:
        self.hierarchy, self.name = hierarchy, name
        self.memory, self.processes = int(memory), int(processes)
        self.cpus = None if cpus is None else float(cpus)
        roots = {hierarchy.memory, hierarchy.pids} | {r for r in (hierarchy.cpu, hierarchy.cpuacct) if r is not None}
        self.folders = [root / PARENT / name for root in sorted(roots)]
        self.memory_folder = hierarchy.memory / PARENT / name
        self.pids_folder = hierarchy.pids / PARENT / name
        self.cpu_folder = hierarchy.cpu / PARENT / name if hierarchy.cpu is not None else None
        self.cpuacct_folder = hierarchy.cpuacct / PARENT / name if hierarchy.cpuacct is not None else None
        self.cpu_limited = False
        self._oom_start = self._pids_start = 0

    # ------------------------------------------------------------------ set up

    def create(self) -> SubmissionGroup:
        """Make the group(s) and set the limits; a group left by a grader that crashed is
        emptied and reused. Raises OSError if the hierarchy refuses.

        On v1 the memory limit also bounds memory plus swap where swap is accounted; on v2
        swap is set to 0. The counters of OOM kills and refused forks start from here.

        Returns
        -------
        SubmissionGroup
            The group itself.

        Raises
        ------
        OSError
            Where a folder cannot be made or a limit written (no root, no delegated subtree).

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as root:
        ...     stand_in = Hierarchy(2, Path(root), Path(root), None, Path(root))      # no cpu controller
        ...     group = SubmissionGroup(stand_in, "slot-1", memory=2 ** 30, processes=32, cpus=1.0).create()
        ...     print((group.pids_folder / "pids.max").read_text(), (group.memory_folder / "memory.swap.max").exists(),
        ...           group.cpu_limited)
        32 False False
        """
        for folder in self.folders:
            if self.hierarchy.version == 2:
                _enable_controllers(folder.parent.parent, self._v2_controllers())
                folder.parent.mkdir(exist_ok=True)
                _enable_controllers(folder.parent, self._v2_controllers())
            else:
                folder.parent.mkdir(exist_ok=True)
            if folder.exists():
                self.kill()
            folder.mkdir(exist_ok=True)
        if self.hierarchy.version == 1:
            memsw = self.memory_folder / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                _write(memsw, "-1")              # the memory limit may not exceed memsw's
            _write(self.memory_folder / "memory.limit_in_bytes", str(self.memory))
            if memsw.exists():
                _write(memsw, str(self.memory))
        else:
            _write(self.memory_folder / "memory.max", str(self.memory))
            if (self.memory_folder / "memory.swap.max").exists():
                _write(self.memory_folder / "memory.swap.max", "0")
        _write(self.pids_folder / "pids.max", str(self.processes))
        self.cpu_limited = self._set_cpu_quota()
        self._oom_start, self._pids_start = self._oom_total(), self._pids_total()
        return self

    def _v2_controllers(self):
        return ("memory", "pids") + (("cpu",) if self.hierarchy.cpu is not None and self.cpus else ())

    def _set_cpu_quota(self):
        """Write the CPU quota; False where there is no cpu controller (or no quota asked)."""
        if self.cpus is None or self.cpu_folder is None:
            return False
        quota = max(1000, round(self.cpus * self.PERIOD))
        try:
            if self.hierarchy.version == 1:
                _write(self.cpu_folder / "cpu.cfs_period_us", str(self.PERIOD))
                _write(self.cpu_folder / "cpu.cfs_quota_us", str(quota))
            else:
                _write(self.cpu_folder / "cpu.max", f"{quota} {self.PERIOD}")
        except OSError:
            return False
        return True

    def cpu_usage_file(self) -> Path | None:
        """The file holding the group's CPU time (``cpuacct.usage`` or ``cpu.stat``), or None
        where it is not there.

        Returns
        -------
        pathlib.Path or None

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as root:
        ...     stand_in = Hierarchy(2, Path(root), Path(root), Path(root), Path(root))
        ...     group = SubmissionGroup(stand_in, "slot-0", 2 ** 30, 32).create()
        ...     before = group.cpu_usage_file()
        ...     _ = (group.cpuacct_folder / "cpu.stat").write_text("usage_usec 0\\n")
        ...     print(before, group.cpu_usage_file().name)
        None cpu.stat
        """
        if self.cpuacct_folder is None:
            return None
        path = self.cpuacct_folder / ("cpuacct.usage" if self.hierarchy.version == 1 else "cpu.stat")
        return path if path.exists() else None

    def cpu_seconds(self) -> float | None:
        """CPU seconds the group used so far (None where not counted): ``cpuacct.usage`` (ns) on
        v1, ``usage_usec`` of ``cpu.stat`` on v2.

        Returns
        -------
        float or None

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as root:
        ...     stand_in = Hierarchy(2, Path(root), Path(root), Path(root), Path(root))
        ...     group = SubmissionGroup(stand_in, "slot-0", 2 ** 30, 32).create()
        ...     _ = (group.cpuacct_folder / "cpu.stat").write_text("usage_usec 1500000\\nuser_usec 1000000\\n")
        ...     print(group.cpu_seconds())
        1.5
        """
        path = self.cpu_usage_file()
        if path is None:
            return None
        try:
            if self.hierarchy.version == 1:
                return int(path.read_text().split()[0]) / 1e9
            return _counter(path, "usage_usec") / 1e6
        except (OSError, ValueError, IndexError):
            return None

    def join_command(self) -> list[str]:
        """argv prefix that puts the command it runs into this group before exec'ing it, so
        that nothing the sandbox starts is ever outside the group (Python's ``preexec_fn`` is
        not safe in a threaded grader; ``sh`` writes its own pid, then execs).

        Returns
        -------
        list of str
            ``/bin/sh -c SCRIPT labkit-cgroup N FILE...``: the command follows. Where a
            ``cgroup.procs`` cannot be written, the shell exits with status 125.

        Examples
        --------
        >>> unified = Path("/sys/fs/cgroup")
        >>> argv = SubmissionGroup(Hierarchy(2, unified, unified), "slot-3", 2 ** 30, 32).join_command()
        >>> argv[0], argv[3:]
        ('/bin/sh', ['labkit-cgroup', '1', '/sys/fs/cgroup/labkit-grade/slot-3/cgroup.procs'])
        """
        files = [str(f / "cgroup.procs") for f in self.folders]
        script = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"'
        return ["/bin/sh", "-c", script, "labkit-cgroup", str(len(files)), *files]

    # ------------------------------------------------------------------ what happened

    def _oom_total(self):
        if self.hierarchy.version == 1:
            return _counter(self.memory_folder / "memory.oom_control", "oom_kill")
        return _counter(self.memory_folder / "memory.events", "oom_kill")

    def _pids_total(self):
        return _counter(self.pids_folder / "pids.events", "max")

    def oom_kills(self) -> int:
        """Processes the OOM killer ended in this group since `create` (``oom_kill`` of
        ``memory.events`` on v2, of ``memory.oom_control`` on v1).

        Returns
        -------
        int

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as root:
        ...     stand_in = Hierarchy(2, Path(root), Path(root))
        ...     group = SubmissionGroup(stand_in, "slot-0", 2 ** 30, 32).create()
        ...     _ = (group.memory_folder / "memory.events").write_text("oom 3\\noom_kill 2\\n")
        ...     print(group.oom_kills())
        2
        """
        return self._oom_total() - self._oom_start

    def process_limit_hits(self) -> int:
        """Forks refused because the group held ``processes`` tasks, since `create` (``max`` of
        ``pids.events``).

        Returns
        -------
        int

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as root:
        ...     stand_in = Hierarchy(2, Path(root), Path(root))
        ...     group = SubmissionGroup(stand_in, "slot-0", 2 ** 30, 32).create()
        ...     _ = (group.pids_folder / "pids.events").write_text("max 7\\n")
        ...     print(group.process_limit_hits())
        7
        """
        return self._pids_total() - self._pids_start

    # ------------------------------------------------------------------ tear down

    def members(self) -> set[int]:
        """The processes in the group now (its ``cgroup.procs``, over every folder).

        Returns
        -------
        set of int

        Examples
        --------
        The stand-in lists a number above the kernel's largest process id, which no process has:

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as root:
        ...     stand_in = Hierarchy(2, Path(root), Path(root))
        ...     group = SubmissionGroup(stand_in, "slot-0", 2 ** 30, 32).create()
        ...     _ = (group.memory_folder / "cgroup.procs").write_text("4194305\\n")
        ...     print(group.members())
        ...     _ = (group.memory_folder / "cgroup.procs").write_text("")
        ...     print(group.members())
        {4194305}
        set()
        """
        pids: set[int] = set()
        for folder in self.folders:
            try:
                pids.update(int(x) for x in (folder / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return pids

    def kill(self, passes: int = 100) -> bool:
        """SIGKILL everything in the group, pass after pass until it is empty (a fork bomb
        forks while we look; ``pids.max`` bounds it). v2's ``cgroup.kill`` does it at once.

        Parameters
        ----------
        passes : int, default 100
            At most this many passes, 0.02 s apart.

        Returns
        -------
        bool
            True when the group is empty.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as root:
        ...     stand_in = Hierarchy(2, Path(root), Path(root))
        ...     group = SubmissionGroup(stand_in, "slot-0", 2 ** 30, 32).create()
        ...     print(group.kill(), (group.memory_folder / "cgroup.kill").read_text())
        True 1
        """
        if self.hierarchy.version == 2:
            try:
                _write(self.memory_folder / "cgroup.kill", "1")
            except OSError:
                pass
        for _ in range(passes):
            members = self.members()
            if not members:
                return True
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)
        return not self.members()

    def remove(self) -> bool:
        """Kill what is left, then remove the group(s); True if they are gone.

        Returns
        -------
        bool

        Examples
        --------
        A stand-in v1 hierarchy, whose groups' files are removed as a real group's go with its folder:

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as root:
        ...     stand_in = Hierarchy(1, Path(root, "memory"), Path(root, "pids"))
        ...     stand_in.memory.mkdir(); stand_in.pids.mkdir()
        ...     group = SubmissionGroup(stand_in, "slot-0", 2 ** 30, 32).create()
        ...     for path in [path for folder in group.folders for path in folder.iterdir()]:
        ...         path.unlink()
        ...     print(group.remove(), [folder.exists() for folder in group.folders])
        True [False, False]
        """
        self.kill()
        gone = True
        for folder in self.folders:
            for attempt in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or attempt == 49:
                        gone = False
                        break
                    self.kill(passes=5)
                    time.sleep(0.05)
        return gone


def _enable_controllers(folder, controllers=("memory", "pids")):
    """Let the children of a v2 group use the controllers given."""
    control = folder / "cgroup.subtree_control"
    try:
        enabled = set(control.read_text().split())
    except OSError:
        return
    for controller in (c for c in controllers if c not in enabled):
        try:
            _write(control, f"+{controller}")
        except OSError:
            if controller in ("memory", "pids"):      # without a CPU quota the group is still worth having
                raise


_state: dict = {}
_state_lock = threading.Lock()


def available(mountinfo: str | os.PathLike[str] = MOUNTINFO) -> tuple[Hierarchy | None, str | None]:
    """(hierarchy, None) when a group per submission can be made here, else (None, why).

    Tried once per process: a probe group is created with limits and removed.

    Parameters
    ----------
    mountinfo : str or path, default `MOUNTINFO`
        A file in the format of ``/proc/self/mountinfo``.

    Returns
    -------
    (Hierarchy or None, str or None)

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".mountinfo") as mountinfo:
    ...     _ = mountinfo.write("24 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\\n")
    ...     mountinfo.flush()
    ...     print(available(mountinfo.name))
    (None, 'no cgroup hierarchy with both the memory and pids controllers is mounted')
    """
    with _state_lock:
        if mountinfo not in _state:
            _state[mountinfo] = _probe(mountinfo)
        return _state[mountinfo]


def _probe(mountinfo):
    hierarchy = find_hierarchy(mountinfo)
    if hierarchy is None:
        return None, "no cgroup hierarchy with both the memory and pids controllers is mounted"
    group = SubmissionGroup(hierarchy, f"probe-{os.getpid()}", 256 * 1024 ** 2, 16)
    try:
        group.create()
    except OSError as exc:
        group.remove()
        return None, f"cannot create a control group under {hierarchy.memory / PARENT} ({exc.strerror or exc})"
    group.remove()
    return hierarchy, None
