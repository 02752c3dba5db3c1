"""The grading sandbox: one bubblewrap container per submission, its kernel and driver inside.

Design
------
The kernel *and* the code that drives it (`labkit.grading.driver`, an nbclient client) run
inside the sandbox; the grader outside sends the job on the driver's standard input and reads
one JSON line per cell event from its standard output, then computes every verdict in its own
process with the hidden checks. We chose this over "the kernel alone inside, with IPC sockets
in the submission's scratch directory" because

* nothing has to cross the sandbox's boundary but two pipes: no socket of the kernel's is
  reachable from outside, and the network namespace can be empty (not even loopback is shared);
* the grader never speaks the Jupyter protocol with student-controlled code, so a malformed
  or huge message hurts only the driver, inside the sandbox's memory limit; the grader reads
  a capped line stream;
* a kernel restart (after a timeout the interrupt could not stop) stays inside the sandbox.

The price is that the driver shares the sandbox with student code, which is why it protects
itself before starting a kernel (`labkit.grading.hardening`) and why its events are claims:
the verdicts are computed outside from HMAC-signed records of values.

What one sandbox gets (see `command`)
--------------------------------------
* a slot (`labkit.grading.slots`), locked machine-wide, so that any number of graders of any
  users side by side never share one. As root: its own real uid, ``UID_BASE + slot``, and no
  capabilities: bubblewrap runs privileged to build the mount tree, then ``setpriv`` drops to
  that uid with an empty bounding set and ``no_new_privs`` before anything of the job runs.
  ``RLIMIT_NPROC`` therefore counts only that sandbox's processes. (Switching to the uid
  *before* bubblewrap, so that it builds the tree in an unprivileged user namespace, fails where
  the Python installation lies in a folder only root can enter, such as a pyenv under /root:
  bubblewrap 0.8 then cannot reach the folders to bind, even through ``--ro-bind-fd``, which it
  resolves through /proc/self/fd. Measured here.) Without root, bubblewrap uses an
  unprivileged user namespace (with ``--disable-userns``) and every sandbox runs as the
  instructor's uid: the limits still apply per process, but the process count is shared with
  the instructor's other processes (see `Limits`);
* no new user namespaces in any mode (the driver's seccomp filter, `labkit.grading.hardening`),
  so student code cannot become "root" of a namespace of its own and remount its view;
* its own PID, network, IPC and UTS namespaces: no network at all, no view of other
  processes; when the driver ends, the PID namespace ends and the kernel takes everything
  it started with it (a ``setsid`` daemon included), and the grader kills the process group
  and, as root, any process left with the slot's uid;
* a read-only view of the system (/usr, /etc), of the Python installation as it really is
  (`labkit.grading.binds`: the interpreter behind its links, every site folder and ``.pth``
  target, editable installs, the user site when the grader uses it) and of labkit's own folder
  -- nothing else of the host: not /root or /home, not the submissions, the grades file, the
  feedback folder or the instructor material (an installed ``labkit_instructor`` is covered by a
  package that refuses to import). What cannot be shown makes the grader refuse to start, and
  `check_available` runs the grader's Python once inside to be sure it starts there;
* a private writable /tmp (a tmpfs of `Limits.scratch` bytes) holding only the job: the
  master with the student's answers, the kernel's connection file and the seal;
* ``--clearenv`` and a minimal environment;
* a control group of its own (`labkit.grading.cgroups`, ``labkit-grade/slot-N``) with a memory
  limit for all its processes together (``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes``
  on cgroup v1, ``memory.max`` and ``memory.swap.max = 0`` on v2), a task limit (``pids.max``)
  and a CPU quota of `Limits.cpus` CPUs, created before the sandbox starts -- its first process,
  a ``sh``, writes its own pid into the group and then execs bubblewrap, so nothing the sandbox
  starts is ever outside it (Python's ``preexec_fn`` is not safe in the threaded grader) -- and
  removed after everything left in it has been killed. The group's OOM-kill and refused-fork
  counters are read as each event arrives (`SANDBOX_KEY`), so the grader knows which cell ran out
  of memory and says "memory limit of N MiB reached" for that part alone; its CPU time is bound
  read-only into the sandbox, where the driver charges each cell its CPU seconds
  (`labkit.grading.cpuclock`). The groups sit at the top of the hierarchy, not inside the
  cgroup the grader was started in, which belongs to whoever started it;
* rlimits (`Limits`) on address space, processes, CPU seconds, file size and open files, and
  a wall-clock safety net enforced from outside. Where no control group can be made (not root, a
  read-only or absent hierarchy) these are all there is: memory is then bounded per process, not
  per submission, and the command line says so once. With a group, RLIMIT_NPROC is set
  `NPROC_SLACK` above ``pids.max``, so the group's limit is the one that fires and is counted.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labkit.grading import binds
from labkit.grading.slots import SLOTS, UID_BASE, Slot, SlotError, kill_uid  # noqa: F401  (public names)

MAX_LINE = 8 * 1024 * 1024          # bytes of one event line the grader accepts
MAX_STREAM = 32 * 1024 * 1024       # bytes of events one submission may send in all
MIB = 1024 ** 2
MIN_MEMORY = 256 * MIB
MIN_PROCESSES = 16
NPROC_SLACK = 16                    # RLIMIT_NPROC above the control group's pids.max
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
BWRAP_VARIABLE = "LABKIT_GRADE_BWRAP"       # the bubblewrap to use; "none" (or empty): as if none were installed
CPU_USAGE_INSIDE = "/run/labkit/cpu-usage"  # where the sandbox's control group shows its CPU time, inside
FONT_CACHE_INSIDE = "/run/labkit/matplotlib"  # where the grader's matplotlib font list is, inside
PROBE_IMPORTS = "import labkit.grading.driver, labkit.grading.runner, ipykernel.kernelapp, numpy"

stopping = threading.Event()        # set by the grader to end every running sandbox now (Ctrl-C)


@dataclass(frozen=True)
class Limits:
    """Per-submission limits.

    ``memory`` is the memory of the whole sandbox (a control group's limit, see
    `labkit.grading.cgroups`; where no control group can be made, only the per-process limit
    applies) and, unless ``address_space`` says otherwise, also each process's address space
    (RLIMIT_AS: one process that asks for too much at once gets a MemoryError it can report
    rather than a kill); ``processes`` the number of tasks, threads included, of the sandbox
    (the control group's ``pids.max`` and RLIMIT_NPROC of the sandbox's uid); ``cpus`` the CPUs'
    worth of time the whole sandbox may use at once (the group's CPU quota); ``cpu`` the CPU
    seconds of each process (RLIMIT_CPU, never less than the notebook's budget), ``file_size``
    the largest file it may write, ``scratch`` the size of its private /tmp (whose pages also
    count against ``memory``). ``user`` applies without a sandbox only: a grader running as root
    then runs the driver and its kernel as that unprivileged user (`unprivileged_command`), as
    where bubblewrap cannot run (a Gradescope container, `labkit.grading.gradescope`).

    Attributes
    ----------
    memory : int
        Bytes (default 2 GiB, at least `MIN_MEMORY`).
    processes : int
        Tasks, threads included (default 64, at least `MIN_PROCESSES`).
    cpu : int
        CPU seconds of each process (default 900).
    file_size : int
        Bytes of the largest file (default 256 MiB).
    open_files : int
        Default 512.
    scratch : int
        Bytes of the private /tmp (default 512 MiB).
    address_space : int or None
        Bytes of each process's address space (None: ``memory``).
    cpus : float
        CPUs' worth of time at once (default 1.0).
    user : str or None
        The user an unsandboxed run as root switches to.

    Raises
    ------
    ValueError
        For a limit that is not a positive integer, or below what the kernel needs.

    Examples
    --------
    >>> limits = Limits(memory=1024 ** 3, cpus=2)
    >>> limits.processes, limits.per_process_memory
    (64, 1073741824)
    >>> Limits(processes=4)
    Traceback (most recent call last):
    ...
    ValueError: Limits.processes must be at least 16 (the kernel alone runs a dozen threads), got 4
    """
    memory: int = 2 * 1024 ** 3
    processes: int = 64
    cpu: int = 900
    file_size: int = 256 * 1024 ** 2
    open_files: int = 512
    scratch: int = 512 * 1024 ** 2
    address_space: int | None = None
    cpus: float = 1.0
    user: str | None = None

    def __post_init__(self):
        for name in ("memory", "processes", "cpu", "file_size", "open_files", "scratch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive integer, got {value!r}")
        if isinstance(self.cpus, bool) or not isinstance(self.cpus, (int, float)) or not self.cpus >= 0.01:
            raise ValueError(f"Limits.cpus must be a number of CPUs of at least 0.01, got {self.cpus!r}")
        if self.memory < MIN_MEMORY:
            raise ValueError(f"Limits.memory must be at least {MIN_MEMORY // MIB} MiB (the kernel and its driver "
                             f"need about 300 MiB), got {self.memory // MIB} MiB")
        if self.processes < MIN_PROCESSES:
            raise ValueError(f"Limits.processes must be at least {MIN_PROCESSES} (the kernel alone runs a dozen "
                             f"threads), got {self.processes}")
        if self.user is not None and not (isinstance(self.user, str) and self.user):
            raise ValueError(f"Limits.user must be a user's name, got {self.user!r}")

    @property
    def per_process_memory(self) -> int:
        """Each process's address space (RLIMIT_AS): ``address_space`` if set, else ``memory``.

        Examples
        --------
        >>> Limits(memory=2 ** 30, address_space=2 ** 32).per_process_memory
        4294967296
        """
        return self.address_space or self.memory


DEFAULT_LIMITS = Limits()


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create a sandbox here; the message says what to do.

    Examples
    --------
    >>> try:
    ...     check_user("root")
    ... except SandboxUnavailable as error:
    ...     print(error)
    'root' is root: student code must run as an unprivileged user
    """


def bwrap_path() -> str | None:
    """The bubblewrap executable, or None: `BWRAP_VARIABLE` when set ("none" or empty hides it),
    else ``bwrap`` on PATH.

    Returns
    -------
    str or None

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {BWRAP_VARIABLE: "none"}):
    ...     print(bwrap_path())
    None
    """
    chosen = os.environ.get(BWRAP_VARIABLE)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "none") else chosen
    return shutil.which("bwrap")


_checked: dict = {}
_check_lock = threading.Lock()


def check_available(hidden: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Raise `SandboxUnavailable` unless a sandbox can run the grader's Python here: bubblewrap
    works, everything the driver needs can be bound (`labkit.grading.binds.check`, with the
    instructor material in `hidden` never shown), and the driver's modules import inside.
    Tried once per process (and set of hidden folders): the probe starts a sandbox.

    Parameters
    ----------
    hidden : iterable of str or path
        The instructor material's folders.

    Raises
    ------
    SandboxUnavailable
        Saying what is missing and what to do.

    Examples
    --------
    Where no bubblewrap is found (here: hidden by `BWRAP_VARIABLE`), nothing is started:

    >>> import os, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as material, mock.patch.dict(os.environ, {BWRAP_VARIABLE: "none"}):
    ...     try:
    ...         check_available(hidden=[material])
    ...     except SandboxUnavailable as error:
    ...         print(error)
    no sandbox available: bwrap was not found; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), \
or pass --no-sandbox to grade unsandboxed
    """
    key = tuple(sorted(str(Path(h).resolve()) for h in hidden))
    with _check_lock:
        if key not in _checked:
            _checked[key] = _probe() or _probe_layout(hidden)
    if _checked[key]:
        raise SandboxUnavailable(_checked[key])


def _probe():
    bwrap = bwrap_path()
    if bwrap is None:
        return f"no sandbox available: bwrap was not found; {INSTALL_HINT}, or pass --no-sandbox to grade unsandboxed"
    for tool in ("prlimit",) + (("setpriv",) if os.geteuid() == 0 else ()):
        if shutil.which(tool) is None:
            return f"no sandbox available: {tool} (util-linux) was not found"
    try:
        done = subprocess.run([bwrap, "--ro-bind", "/", "/", *_namespaces(), "true"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no sandbox available: bwrap could not run ({exc}); {INSTALL_HINT}"
    if done.returncode != 0:
        return (f"no sandbox available: `bwrap --ro-bind / / true` failed ({done.stderr.strip()[:300]}); "
                "bubblewrap needs root or unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)")
    return None


def _probe_layout(hidden):
    """None if the grader's Python can be bound and starts inside a sandbox, else why not."""
    try:
        with Slot() as slot:
            layout = python_layout(hidden)
            binds.check(layout, hidden, sandbox_uid=slot.uid)
            argv = command(DEFAULT_LIMITS, slot.uid, layout=layout, hidden=hidden,
                           program=[sys.executable, *_site_flags(layout), "-c", PROBE_IMPORTS])
            done = subprocess.run(argv, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
            if slot.uid != os.geteuid():
                kill_uid(slot.uid)
    except (binds.BindError, SlotError) as exc:
        return f"the grader's Python cannot be shown to the sandbox: {exc}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no sandbox available: the sandbox could not start ({exc})"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        bound = ", ".join(str(f) for f in layout.folders) or "nothing beyond /usr and /etc"
        return (f"the grader's Python does not start inside the sandbox ({last[:300]}); bound: {bound}. "
                "A module it imports lives in a folder the sandbox does not show or its user cannot read")
    return None


def _namespaces():
    common = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    return common if os.geteuid() == 0 else ["--unshare-user", "--disable-userns", *common]


_layouts: dict = {}
_layout_lock = threading.Lock()


def python_layout(hidden: Iterable[str | os.PathLike[str]] = ()) -> binds.Layout:
    """What sandboxes bind of this process's Python (`labkit.grading.binds.layout`), computed once
    per set of hidden folders.

    Parameters
    ----------
    hidden : iterable of str or path
        The instructor material's folders, never bound.

    Returns
    -------
    labkit.grading.binds.Layout

    Examples
    --------
    >>> layout = python_layout()
    >>> layout is python_layout(), all(isinstance(entry, str) for entry in layout.pythonpath)
    (True, True)
    """
    key = tuple(sorted(str(Path(h).resolve()) for h in hidden))
    with _layout_lock:
        if key not in _layouts:
            _layouts[key] = binds.layout(hidden)
        return _layouts[key]


def _system_binds():
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib64", "lib32", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


_blocker_lock = threading.Lock()
_blocker: dict = {}

BLOCKER_SOURCE = ('raise ImportError("the instructor material is not available inside the grading sandbox")\n')


def _blocker_folder():
    """A package whose import fails, bound over an installed labkit_instructor."""
    with _blocker_lock:
        if "path" not in _blocker:
            folder = Path(tempfile.mkdtemp(prefix="labkit-grade-blocker-"))
            os.chmod(folder, 0o755)
            (folder / "__init__.py").write_text(BLOCKER_SOURCE)
            os.chmod(folder / "__init__.py", 0o644)
            _blocker["path"] = folder
            atexit.register(shutil.rmtree, folder, True)
        return _blocker["path"]


def _hidden_packages(bound, hidden=()):
    """Folders of labkit_instructor that lie inside a folder the sandbox sees."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(binds.INSTRUCTOR_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    candidates = list(spec.submodule_search_locations or []) if spec else []
    candidates += [str(h) for h in hidden]
    loaded = sys.modules.get(binds.INSTRUCTOR_PACKAGE)
    if loaded is not None and getattr(loaded, "__file__", None):
        candidates.append(str(Path(loaded.__file__).parent))
    for folder in map(Path, bound):
        candidates += [str(p) for p in folder.glob("lib/python*/site-packages/" + binds.INSTRUCTOR_PACKAGE)]
        candidates += [str(p) for p in folder.glob(binds.INSTRUCTOR_PACKAGE)]
    return sorted(c for c in {str(Path(c).resolve()) for c in candidates}
                  if any(Path(c).is_relative_to(b) for b in bound))


def _site_flags(layout):
    """-s (no user site) unless the grader imports from its user site."""
    return [] if layout.user_base else ["-s"]


def environment(home: str, layout: binds.Layout | None = None) -> dict[str, str]:
    """The minimal environment of the driver and its kernel: its PATH and PYTHONPATH, private
    HOME, TMPDIR and Jupyter folders under `home`, one BLAS thread, labkit's numpy kernels.

    Parameters
    ----------
    home : str
        The sandbox's scratch folder.
    layout : labkit.grading.binds.Layout, optional
        Default `python_layout`.

    Returns
    -------
    dict

    Examples
    --------
    >>> env = environment("/tmp")
    >>> env["HOME"], env["TMPDIR"], env["LABKIT_KERNELS"]
    ('/tmp/home', '/tmp', 'numpy')
    """
    layout = layout or python_layout()
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": f"{home}/home", "TMPDIR": str(home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join(layout.pythonpath), "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{home}/mpl", "IPYTHONDIR": f"{home}/ipython",
        "JUPYTER_RUNTIME_DIR": f"{home}/jupyter/runtime", "JUPYTER_DATA_DIR": f"{home}/jupyter/data",
        "JUPYTER_CONFIG_DIR": f"{home}/jupyter/config", "JUPYTER_PLATFORM_DIRS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2",
        # labkit's numpy kernels: the same numbers as the compiled ones, without compiling them
        # afresh in every sandbox (numba cannot cache into the read-only package)
        "LABKIT_KERNELS": "numpy",
    }
    if layout.user_base:
        env["PYTHONUSERBASE"] = layout.user_base
    else:
        env["PYTHONNOUSERSITE"] = "1"
    if os.environ.get("PYTHONHOME"):
        env["PYTHONHOME"] = os.environ["PYTHONHOME"]
    return env


def _prlimit(limits, processes, cpu=None):
    return ["prlimit", f"--as={limits.per_process_memory}", f"--nproc={processes}", f"--cpu={cpu or limits.cpu}",
            f"--fsize={limits.file_size}", f"--nofile={limits.open_files}", "--core=0", "--"]


def command(limits: Limits, uid: int, scratch: str = "/tmp", info_fd: int | None = None, nproc: int | None = None,
            layout: binds.Layout | None = None, hidden: Iterable[str | os.PathLike[str]] = (),
            extra_binds: Iterable[tuple[Any, Any]] = (), program: list[str] | None = None,
            cpu: int | None = None) -> list[Any]:
    """The bubblewrap command line that runs the driver (or `program`) in a fresh sandbox as `uid`.

    Parameters
    ----------
    limits : Limits
    uid : int
        The sandbox's user (as root: the slot's; otherwise this process's own).
    scratch : str, default "/tmp"
        The private, size-limited folder inside (HOME and the working directory).
    info_fd : int, optional
        bubblewrap writes the host pid of the sandbox's init there (``child-pid``).
    nproc : int, optional
        Replaces RLIMIT_NPROC (root only; by default ``limits.processes``).
    layout : labkit.grading.binds.Layout, optional
        Default `python_layout` of `hidden`.
    hidden : iterable of str or path
        The instructor material's folders: never shown (an installed package is covered).
    extra_binds : iterable of (host file, path inside)
        Bound read-only.
    program : list of str, optional
        Default ``python -m labkit.grading.driver``.
    cpu : int, optional
        Replaces RLIMIT_CPU.

    Returns
    -------
    list
        The command line (its first entry `bwrap_path`).

    Examples
    --------
    >>> import os
    >>> argv = command(Limits(), os.getuid(), program=["true"])
    >>> "--unshare-net" in argv, "--clearenv" in argv, argv[-3:]
    (True, True, ['--core=0', '--', 'true'])
    """
    layout = layout or python_layout(hidden)
    args = [bwrap_path(), "--die-with-parent", "--new-session", *_namespaces(), "--tmpfs", "/"]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    # the private /tmp first, so that a Python installed under /tmp (a venv in a temporary
    # folder) can still be bound on top of it
    args += ["--perms", "1777", "--size", str(limits.scratch), "--tmpfs", scratch]
    args += _system_binds()
    args += binds.arguments(layout)
    for covered in _hidden_packages(layout.folders, hidden):
        args += ["--ro-bind", str(_blocker_folder()), covered]
    extra_binds = list(extra_binds)
    if extra_binds:
        # their folders readable by the sandbox's user: bubblewrap makes a missing parent of a
        # mount point (/run) with mode 700, which hid /run/labkit from the driver and its kernel
        for folder in sorted({str(Path(inside).parent) for _, inside in extra_binds}, key=len):
            for parent in [*reversed(Path(folder).parents[:-1]), Path(folder)]:
                args += ["--perms", "0755", "--dir", str(parent)]
    for source, inside in extra_binds:
        args += ["--ro-bind", str(source), str(inside)]
    args += ["--dev", "/dev", "--proc", "/proc", "--clearenv"]
    for key, value in environment(scratch, layout).items():
        args += ["--setenv", key, value]
    args += ["--chdir", scratch]
    if os.geteuid() == 0:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP",
                 "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                 "--bounding-set=-all", "--no-new-privs", "--"]
        processes = nproc or limits.processes
    else:
        processes = limits.processes + _processes_of(os.getuid())
    args += _prlimit(limits, processes, cpu)
    args += program or [sys.executable, *_site_flags(layout), "-m", "labkit.grading.driver"]
    return args


def _processes_of(uid):
    """The tasks (threads included) `uid` runs now: RLIMIT_NPROC counts them all."""
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry}/task"))
            except OSError:
                pass
    return count


@dataclass
class DriverRun:
    """What one run of the driver gave (`run_driver`).

    Attributes
    ----------
    events : list of dict
        The driver's events (`labkit.grading.driver`), each stamped under `SANDBOX_KEY`.
    returncode : int or None
    note : str or None
        Why the stream ended early ("wall", "stream", "stopped"), if it did.
    stderr : str
        The driver's standard error, capped.
    seconds : float
        On the clock.
    confinement : str
        "cgroup v1", "cgroup v2" or "rlimits" (per process only).
    memory, processes : int or None
        The limits that applied.
    oom_kills, process_limit_hits : int
        Processes the OOM killer ended, forks refused, in the run's control group.
    cpu_seconds : float or None
        CPU time of the whole sandbox (from its control group).
    busy : bool
        The host's load average was above its core count at the end.

    Examples
    --------
    >>> DriverRun([], None, "stopped", "", 0.0).confinement
    'rlimits'
    """
    events: list
    returncode: int | None
    note: str | None          # why the stream ended early ("wall", "stream", "stopped"), if it did
    stderr: str
    seconds: float
    confinement: str = "rlimits"      # "cgroup v1", "cgroup v2" or "rlimits" (per process only)
    memory: int | None = None         # bytes the submission (or, under rlimits, each process) may use
    processes: int | None = None
    oom_kills: int = 0                # processes the OOM killer ended in the submission's control group
    process_limit_hits: int = 0       # forks refused at the control group's process limit
    cpu_seconds: float | None = None  # CPU time of the whole sandbox (from its control group)
    busy: bool = False                # the host's load average was above its core count at the end


SANDBOX_KEY = "__sandbox__"           # what the grader adds to each event: the counters when it arrived

_run_counter = iter(range(1 << 62))


def _open_group(limits, slot):
    """The control group of this run (`labkit.grading.cgroups`), created; None where no group
    can be made (the rlimits alone then bound it)."""
    from labkit.grading import cgroups
    hierarchy, _why = cgroups.available()
    if hierarchy is None:
        return None
    name = f"slot-{slot.number}" if slot.number is not None else f"run-{os.getpid()}-{next(_run_counter)}"
    group = cgroups.SubmissionGroup(hierarchy, name, limits.memory, limits.processes, limits.cpus)
    try:
        return group.create()
    except OSError:
        group.remove()
        return None


def run_driver(job: dict[str, Any], *, sandbox: bool = True, limits: Limits = DEFAULT_LIMITS, wall: float = 600.0,
               hidden: Iterable[str | os.PathLike[str]] = ()) -> DriverRun:
    """Run one job through the driver -- in a fresh sandbox, or (sandbox=False) as a plain child
    process -- and collect its events. Never raises because of what the job's code does.

    Where a control group can be made, the whole process tree runs in one of its own
    (memory, process and CPU limits for the submission as a whole); every event is stamped under
    `SANDBOX_KEY` with the group's OOM-kill and refused-fork counters at the moment it arrived,
    so the grader can tell which cell ran out of memory.

    Parameters
    ----------
    job : dict
        The driver's job (`labkit.grading.driver`).
    sandbox : bool, default True
        False: a plain child process (``--no-sandbox``).
    limits : Limits
    wall : float, default 600
        The safety net of the whole run, in seconds on the clock.
    hidden : iterable of str or path
        The instructor material's folders (never shown).

    Returns
    -------
    DriverRun

    Raises
    ------
    SandboxUnavailable
        With ``sandbox=True``, where no sandbox can run (`check_available`).

    Examples
    --------
    Without a sandbox, a job the driver refuses (no time limit) ends with its "fatal" event:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     run = run_driver({"cells": [], "workdir": folder}, sandbox=False)
    >>> [(event["event"], event["error"]) for event in run.events], run.note
    ([('fatal', "KeyError: 'timeout'")], None)
    """
    if stopping.is_set():                 # the grader is being interrupted: start nothing new
        return DriverRun([], None, "stopped", "", 0.0)
    if sandbox:
        check_available(hidden)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="labkit-grade-run-") as private, \
            (Slot() if sandbox else _NoSlot()) as slot:
        group = _open_group(limits, slot)
        try:
            run = _run(job, sandbox, limits, wall, start, private, slot, group, hidden)
        finally:
            if group is not None:
                run_counts = group.oom_kills(), group.process_limit_hits(), group.cpu_seconds()
                group.remove()
        if group is not None:
            run.confinement = f"cgroup v{group.hierarchy.version}"
            run.oom_kills, run.process_limit_hits, run.cpu_seconds = run_counts
        run.memory = limits.memory if group is not None else limits.per_process_memory
        run.processes = limits.processes
        from labkit.grading.cpuclock import loaded
        run.busy = loaded()
        return run


_font_cache_lock = threading.Lock()
_font_cache: list[str | None] = []


def matplotlib_font_cache(layout: binds.Layout | None = None) -> str | None:
    """A folder holding matplotlib's font list, built once per grading process and shared,
    read-only, by every sandbox it starts (their drivers copy it into the kernel's own matplotlib
    folder: `labkit.grading.driver.seed_font_cache`).

    Each sandbox starts with an empty matplotlib folder, so without this list the kernel of every
    notebook that imports matplotlib would list and read every font of the system to build it
    again: about 4 CPU seconds with TeX's fonts installed, a fifth of a Lab 15 notebook. The list
    is built here by a Python of the sandbox's own environment (the same interpreter, packages and
    fonts under /usr), before any student code runs, into a folder of this process that is
    removed when it exits.

    Parameters
    ----------
    layout : labkit.grading.binds.Layout, optional
        Default `python_layout`.

    Returns
    -------
    str or None
        The folder (mode 755, its ``fontlist-*.json`` 644), or None where matplotlib is not
        installed or the list could not be built (each kernel then builds its own, as before).

    Examples
    --------
    >>> folder = matplotlib_font_cache()               # built on the first call, then the same
    >>> folder == matplotlib_font_cache()
    True
    >>> folder is None or sorted(os.listdir(folder))[0].startswith("fontlist-")
    True
    """
    with _font_cache_lock:
        if not _font_cache:
            _font_cache.append(_build_font_cache(layout))
        return _font_cache[0]


def _build_font_cache(layout):
    folder = tempfile.mkdtemp(prefix="labkit-grade-fonts-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    env = {**environment(folder, layout), "MPLCONFIGDIR": folder}
    try:
        subprocess.run([sys.executable, "-s", "-c", "import matplotlib.font_manager"], env=env, cwd=folder,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=600, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    lists = list(Path(folder).glob("fontlist-*.json"))
    if not lists:
        return None
    os.chmod(folder, 0o755)
    for file in lists:
        os.chmod(file, 0o644)
    return folder


def _rlimit_cpu(limits, job):
    """RLIMIT_CPU of each process: never below what the notebook's budget lets its kernel use."""
    return max(limits.cpu, int(float(job.get("budget", 0)) + float(job.get("setup_timeout", 0))) + 60)


def _run(job, sandbox, limits, wall, start, private, slot, group, hidden=()):
    stderr_path = Path(private) / "stderr"
    info_read, info_write = os.pipe()
    pass_fds = ()
    usage = group.cpu_usage_file() if group is not None else None
    fonts = matplotlib_font_cache()
    if sandbox:
        job = {**job, "workdir": "/tmp/work", "sandboxed": True, "cpu_usage": CPU_USAGE_INSIDE if usage else None,
               "font_cache": FONT_CACHE_INSIDE if fonts else None}
        # with a control group, its pids.max is the limit that fires (and is counted), the
        # uid's RLIMIT_NPROC a looser second line
        nproc = limits.processes + NPROC_SLACK if group is not None else None
        extra = [(usage, CPU_USAGE_INSIDE)] if usage else []
        extra += [(fonts, FONT_CACHE_INSIDE)] if fonts else []
        argv = command(limits, slot.uid, info_fd=info_write, nproc=nproc, hidden=hidden,
                       extra_binds=extra, cpu=_rlimit_cpu(limits, job))
        env, cwd = None, "/"
        pass_fds = (info_write,)
    else:
        os.chmod(private, 0o700)
        scratch = Path(private) / "scratch"
        scratch.mkdir()
        job = {**job, "workdir": str(scratch / "work"), "sandboxed": False, "cpu_usage": str(usage) if usage else None,
               "font_cache": fonts}
        user = None
        if limits.user is not None:
            check_user(limits.user)
            user = _unprivileged_ids(limits.user)
        if user is not None:                 # its own scratch folder; the rest of `private` stays the grader's
            os.chmod(private, 0o711)
            os.chown(scratch, *user)
        uid = user[0] if user is not None else os.getuid()
        argv = [*_prlimit(limits, limits.processes + _processes_of(uid), _rlimit_cpu(limits, job)),
                *(unprivileged_command(*user) if user is not None else []),
                sys.executable, "-s", "-m", "labkit.grading.driver"]
        env, cwd = environment(str(scratch)), str(scratch)
    stamp = None
    if group is not None:
        argv = group.join_command() + argv

        def stamp():
            return {"oom_kills": group.oom_kills(), "process_limit_hits": group.process_limit_hits()}
    with open(stderr_path, "wb") as err:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env,
                                    cwd=cwd, process_group=0, close_fds=True, pass_fds=pass_fds, umask=0o022)
        except OSError as exc:
            os.close(info_read)
            return DriverRun([], None, f"the sandbox could not start ({exc})", "", time.monotonic() - start)
        finally:
            os.close(info_write)
        feeder = threading.Thread(target=_feed, args=(proc.stdin, json.dumps(job).encode()), daemon=True)
        feeder.start()
        try:
            events, note = _read_events(proc.stdout, start + wall, stamp)
        finally:
            _kill(proc, slot.uid if sandbox else None, _init_pid(info_read) if sandbox else None)
            os.close(info_read)
    stderr = stderr_path.read_bytes()[-4000:].decode("utf-8", "replace")
    return DriverRun(events, proc.returncode, note, stderr, time.monotonic() - start)


class _NoSlot:
    uid = number = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def _unprivileged_ids(name):
    """(uid, gid) of the user `name`, which an unsandboxed run as root switches to; refused for
    root itself, when this process is not root, or when there is no such user."""
    import pwd
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise SandboxUnavailable(f"there is no user {name!r} to run student code as") from None
    if entry.pw_uid == 0:
        raise SandboxUnavailable(f"{name!r} is root: student code must run as an unprivileged user")
    if os.geteuid() != 0:
        raise SandboxUnavailable(f"only root can run student code as {name!r}")
    return entry.pw_uid, entry.pw_gid


_users_checked: dict = {}
_users_lock = threading.Lock()
USER_PROBE = ("import subprocess, sys, labkit.grading.driver, labkit.grading.runner; "
              "subprocess.run([sys.executable, '-s', '-c', 'import ipykernel, labkit'], check=True)")


def check_user(name: str) -> None:
    """Raise `SandboxUnavailable` unless an unsandboxed run can switch to the user `name`: this
    process is root, `name` is another user, and as that user the grader's Python starts and
    imports the driver (every folder on the way readable by it). Tried once per user.

    Parameters
    ----------
    name : str
        A user's name (``Limits.user``).

    Raises
    ------
    SandboxUnavailable
        Saying why not.

    Examples
    --------
    >>> try:
    ...     check_user("root")
    ... except SandboxUnavailable as error:
    ...     print(error)
    'root' is root: student code must run as an unprivileged user
    """
    if name not in _users_checked:
        with _users_lock:
            if name not in _users_checked:
                _users_checked[name] = _probe_user(name)
    if _users_checked[name]:
        raise SandboxUnavailable(_users_checked[name])


def _probe_user(name):
    try:
        uid, gid = _unprivileged_ids(name)
    except SandboxUnavailable as exc:
        return str(exc)
    with tempfile.TemporaryDirectory(prefix="labkit-grade-user-") as home:
        os.chmod(home, 0o711)
        scratch = Path(home) / "scratch"
        scratch.mkdir()
        os.chown(scratch, uid, gid)
        try:
            # the driver's imports, and a kernel's start: a Python started from the driver's
            done = subprocess.run([*unprivileged_command(uid, gid), sys.executable, "-s", "-c", USER_PROBE],
                                  env=environment(str(scratch)), cwd=str(scratch), capture_output=True, text=True,
                                  timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"the grader's Python could not be started as {name!r} ({exc})"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return (f"the grader's Python ({sys.executable}) cannot run as {name!r}: {last[:300]}; install it where "
                "other users can read it")
    return None


def unprivileged_command(uid: int, gid: int) -> list[str]:
    """The prefix that runs a program as `uid`:`gid` with no supplementary groups, no
    capabilities and no way to gain privileges again (util-linux's setpriv; the environment is
    left as it is given).

    Parameters
    ----------
    uid, gid : int

    Returns
    -------
    list of str

    Examples
    --------
    >>> unprivileged_command(1000, 1000)[:3]
    ['setpriv', '--reuid=1000', '--regid=1000']
    """
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all",
            "--no-new-privs", "--"]


def _feed(pipe, data):
    try:
        pipe.write(data)
        pipe.close()
    except OSError:            # the driver died before reading its job
        pass


def _read_events(stream, deadline, stamp=None):
    """JSON events from the driver's stdout until it closes, the wall limit passes, the grader
    is `stopping`, or it sends more than `MAX_STREAM` bytes; lines that are not JSON objects, or
    longer than `MAX_LINE`, are dropped (an overlong line is skipped to its end without being kept
    in memory). With `stamp`, each event gets ``event[SANDBOX_KEY] = stamp()`` (replacing
    whatever the line said)."""
    events, buffer, total, note, skipping = [], b"", 0, None, False
    fd = stream.fileno()
    while True:
        if stopping.is_set():
            note = "stopped"
            break
        left = deadline - time.monotonic()
        if left <= 0:
            note = "wall"
            break
        ready, _, _ = select.select([fd], [], [], min(left, 0.25))
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        total += len(chunk)
        if total > MAX_STREAM:
            note = "stream"
            break
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if skipping:
                skipping = False
            else:
                _keep(line, events, stamp)
        if len(buffer) > MAX_LINE:
            buffer, skipping = b"", True
    return events, note


def _keep(line, events, stamp=None):
    if len(line) > MAX_LINE:
        return
    try:
        event = json.loads(line)
    except ValueError:
        return
    if isinstance(event, dict):
        event.pop(SANDBOX_KEY, None)
        if stamp is not None:
            event[SANDBOX_KEY] = stamp()
        events.append(event)


def _init_pid(fd):
    """The host pid of the sandbox's init, from bubblewrap's --info-fd (None if it never started)."""
    data = b""
    while select.select([fd], [], [], 0)[0]:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    try:
        pid = json.loads(data.decode()).get("child-pid")
    except ValueError:
        return None
    return pid if isinstance(pid, int) and pid > 1 else None


def _kill(proc, uid, init_pid=None):
    """End the sandbox and everything in it: its init first (when a PID namespace's init dies,
    the kernel kills every process in it, a ``setsid`` daemon included), then bubblewrap's
    process group, then -- as root -- whatever is left with the sandbox's uid."""
    if init_pid is not None:
        try:
            os.kill(init_pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    if uid is not None and os.geteuid() == 0:
        kill_uid(uid)
    for pipe in (proc.stdin, proc.stdout):
        try:
            pipe.close()
        except OSError:
            pass
