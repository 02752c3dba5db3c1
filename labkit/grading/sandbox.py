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
The price is that the driver is as exposed to student code as the kernel: its events are
claims, which is why the verdicts are computed outside from HMAC-signed records of values.

What one sandbox gets (see `command`)
--------------------------------------
* as root: its own real uid, ``UID_BASE + slot`` (a slot is a lock file, so concurrent
  graders and workers never share one), and no capabilities: bubblewrap runs privileged to
  build the mount tree, then ``setpriv`` drops to that uid with an empty bounding set and
  ``no_new_privs`` before anything of the job runs. ``RLIMIT_NPROC`` therefore counts only that
  sandbox's processes. (Switching to the uid *before* bubblewrap, so that it builds the tree in
  an unprivileged user namespace, fails where the Python installation lies in a folder only root
  can enter, such as a pyenv under /root: bubblewrap 0.8 then cannot reach the folders to bind,
  even through ``--ro-bind-fd``, which it resolves through /proc/self/fd. Measured here.) Without
  root, bubblewrap uses an unprivileged user namespace and every sandbox runs as the
  instructor's uid: the limits still apply per process, but the process count is shared with
  the instructor's other processes (see `Limits`);
* its own PID, network, IPC and UTS namespaces: no network at all, no view of other
  processes; when the driver ends, the PID namespace ends and the kernel takes everything
  it started with it (a ``setsid`` daemon included), and the grader kills the process group
  and, as root, any process left with the slot's uid;
* a read-only view of the system (/usr, /etc), of the Python installation and of labkit's
  own folder -- nothing else of the host: not /root or /home, not the submissions, the grades
  file, the feedback folder or the instructor material (an installed ``labkit_instructor``
  is covered by a package that refuses to import);
* a private writable /tmp (a tmpfs of `Limits.scratch` bytes) holding only the job: the
  master with the student's answers, the kernel's connection file and the seal;
* ``--clearenv`` and a minimal environment;
* a control group of its own (`labkit.grading.cgroups`, ``labkit-grade/slot-N``) with a memory
  limit for all its processes together (``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes``
  on cgroup v1, ``memory.max`` and ``memory.swap.max = 0`` on v2) and a task limit (``pids.max``),
  created before the sandbox starts -- its first process, a ``sh``, writes its own pid into the
  group and then execs bubblewrap, so nothing the sandbox starts is ever outside it (Python's
  ``preexec_fn`` is not safe in the threaded grader) -- and removed after everything left in it
  has been killed. The group's OOM-kill and refused-fork counters are read as each event arrives
  (`SANDBOX_KEY`), so the grader knows which cell ran out of memory and says "memory limit of
  N MiB reached" for that part alone. The groups sit at the top of the hierarchy, not inside the
  cgroup the grader was started in, which belongs to whoever started it;
* rlimits (`Limits`) on address space, processes, CPU seconds, file size and open files, and
  a wall-clock limit enforced from outside. Where no control group can be made (not root, a
  read-only or absent hierarchy) these are all there is: memory is then bounded per process, not
  per submission, and the command line says so once. With a group, RLIMIT_NPROC is set
  `NPROC_SLACK` above ``pids.max``, so the group's limit is the one that fires and is counted.
"""
from __future__ import annotations

import atexit
import fcntl
import json
import os
import pwd
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

UID_BASE = 60000
SLOTS = 2000
MAX_LINE = 8 * 1024 * 1024          # bytes of one event line the grader accepts
MAX_STREAM = 32 * 1024 * 1024       # bytes of events one submission may send in all
MIB = 1024 ** 2
MIN_MEMORY = 256 * MIB
MIN_PROCESSES = 16
NPROC_SLACK = 16                    # RLIMIT_NPROC above the control group's pids.max
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"


@dataclass(frozen=True)
class Limits:
    """Per-submission limits.

    ``memory`` is the memory of the whole sandbox (a control group's limit, see
    `labkit.grading.cgroups`; where no control group can be made, only the per-process limit
    applies) and, unless ``address_space`` says otherwise, also each process's address space
    (RLIMIT_AS: one process that asks for too much at once gets a MemoryError it can report
    rather than a kill); ``processes`` the number of tasks, threads included, of the sandbox
    (the control group's ``pids.max`` and RLIMIT_NPROC of the sandbox's uid); ``cpu`` the CPU
    seconds of each process, ``file_size`` the largest file it may write, ``scratch`` the size
    of its private /tmp (whose pages also count against ``memory``)."""
    memory: int = 2 * 1024 ** 3
    processes: int = 64
    cpu: int = 900
    file_size: int = 256 * 1024 ** 2
    open_files: int = 512
    scratch: int = 512 * 1024 ** 2
    address_space: int | None = None

    def __post_init__(self):
        for name in ("memory", "processes", "cpu", "file_size", "open_files", "scratch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive integer, got {value!r}")
        if self.memory < MIN_MEMORY:
            raise ValueError(f"Limits.memory must be at least {MIN_MEMORY // MIB} MiB (the kernel and its driver "
                             f"need about 300 MiB), got {self.memory // MIB} MiB")
        if self.processes < MIN_PROCESSES:
            raise ValueError(f"Limits.processes must be at least {MIN_PROCESSES} (the kernel alone runs a dozen "
                             f"threads), got {self.processes}")

    @property
    def per_process_memory(self):
        return self.address_space or self.memory


DEFAULT_LIMITS = Limits()


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create a sandbox here; the message says what to do."""


_checked = {}
_check_lock = threading.Lock()


def check_available():
    """Raise `SandboxUnavailable` unless ``bwrap`` can run a command here (tried once per process)."""
    with _check_lock:
        if "error" not in _checked:
            _checked["error"] = _probe()
    if _checked["error"]:
        raise SandboxUnavailable(_checked["error"])


def _probe():
    bwrap = shutil.which("bwrap")
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


def _namespaces():
    common = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    return common if os.geteuid() == 0 else ["--unshare-user", "--disable-userns", *common]


class Slot:
    """A sandbox slot held for as long as the context lasts (an flock on a file, so that two
    grader processes never give two sandboxes the same uid)."""

    def __init__(self):
        self.number = self.uid = None
        self._fd = None

    def __enter__(self):
        root = Path(tempfile.gettempdir()) / f"labkit-grade-slots-{os.geteuid()}"
        root.mkdir(mode=0o700, exist_ok=True)
        for number in range(SLOTS):
            uid = UID_BASE + number
            if os.geteuid() == 0 and _uid_taken(uid):
                continue
            fd = os.open(root / f"slot-{number}", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.number, self._fd = number, fd
            self.uid = uid if os.geteuid() == 0 else os.geteuid()
            if os.geteuid() == 0:
                kill_uid(uid)           # a leftover of a grader that crashed
            return self
        raise SandboxUnavailable(f"all {SLOTS} sandbox slots are in use")

    def __exit__(self, *exc):
        os.close(self._fd)


def _uid_taken(uid):
    """A uid that belongs to an account of this system is never used for a sandbox."""
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def kill_uid(uid, passes=50):
    """SIGKILL every process whose real uid is `uid` (root only; a sandbox's uid is its own),
    pass after pass until none is left (a fork bomb forks while we look)."""
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


def _python_folders():
    """The folders the driver needs: the interpreter and its libraries, and labkit's own folder."""
    import labkit
    folders = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    folders.add(Path(sys.executable).resolve().parent.parent)
    package = Path(labkit.__file__).resolve().parent
    folders.add(package)
    return sorted(folders), package.parent


def _system_binds():
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib64", "lib32", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _ancestors(paths):
    seen = set()
    for p in paths:
        for parent in reversed(Path(p).parents):
            if str(parent) != "/" and parent not in seen and not str(parent).startswith(("/usr", "/etc")):
                seen.add(parent)
    return sorted(seen, key=lambda p: len(p.parts))


_blocker_lock = threading.Lock()
_blocker = {}

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


def _hidden_packages(bound):
    """Folders of labkit_instructor that lie inside a folder the sandbox sees."""
    import importlib.util
    hidden = []
    try:
        spec = importlib.util.find_spec("labkit_instructor")
    except (ImportError, ValueError):
        spec = None
    candidates = list(spec.submodule_search_locations or []) if spec else []
    loaded = sys.modules.get("labkit_instructor")
    if loaded is not None and getattr(loaded, "__file__", None):
        candidates.append(str(Path(loaded.__file__).parent))
    for folder in bound:
        site = Path(folder)
        candidates += [str(p) for p in site.glob("lib/python*/site-packages/labkit_instructor")]
    for c in {str(Path(c).resolve()) for c in candidates}:
        if any(Path(c).is_relative_to(b) for b in bound):
            hidden.append(c)
    return hidden


def environment(home):
    """The minimal environment of the driver and its kernel."""
    folders, pythonpath = _python_folders()
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": f"{home}/home", "TMPDIR": str(home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "PYTHONPATH": str(pythonpath), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
        "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{home}/mpl", "IPYTHONDIR": f"{home}/ipython",
        "JUPYTER_RUNTIME_DIR": f"{home}/jupyter/runtime", "JUPYTER_DATA_DIR": f"{home}/jupyter/data",
        "JUPYTER_CONFIG_DIR": f"{home}/jupyter/config", "JUPYTER_PLATFORM_DIRS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2",
        # labkit's numpy kernels: the same numbers as the compiled ones, without compiling them
        # afresh in every sandbox (numba cannot cache into the read-only package)
        "LABKIT_KERNELS": "numpy",
    }


def _prlimit(limits, processes):
    return ["prlimit", f"--as={limits.per_process_memory}", f"--nproc={processes}", f"--cpu={limits.cpu}",
            f"--fsize={limits.file_size}", f"--nofile={limits.open_files}", "--core=0", "--"]


def command(limits, uid, scratch="/tmp", info_fd=None, nproc=None):
    """The bubblewrap command line that runs the driver in a fresh sandbox as `uid`; with
    `info_fd`, bubblewrap writes the host pid of the sandbox's init there (``child-pid``);
    `nproc` replaces RLIMIT_NPROC (root only; by default ``limits.processes``)."""
    folders, _ = _python_folders()
    args = [shutil.which("bwrap"), "--die-with-parent", "--new-session", *_namespaces(), "--tmpfs", "/"]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    # the private /tmp first, so that a Python installed under /tmp (a venv in a temporary
    # folder) can still be bound on top of it
    args += ["--perms", "1777", "--size", str(limits.scratch), "--tmpfs", scratch]
    args += _system_binds()
    for parent in _ancestors(folders):
        args += ["--perms", "0755", "--dir", str(parent)]
    for folder in folders:
        args += ["--ro-bind", str(folder), str(folder)]
    for hidden in _hidden_packages(folders):
        args += ["--ro-bind", str(_blocker_folder()), hidden]
    args += ["--dev", "/dev", "--proc", "/proc", "--clearenv"]
    for key, value in environment(scratch).items():
        args += ["--setenv", key, value]
    args += ["--chdir", scratch]
    if os.geteuid() == 0:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP",
                 "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                 "--bounding-set=-all", "--no-new-privs", "--"]
        processes = nproc or limits.processes
    else:
        processes = limits.processes + _processes_of(os.getuid())
    args += _prlimit(limits, processes)
    args += [sys.executable, "-s", "-m", "labkit.grading.driver"]
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
    events: list
    returncode: int | None
    note: str | None          # why the stream ended early (wall limit, too much output), if it did
    stderr: str
    seconds: float
    confinement: str = "rlimits"      # "cgroup v1", "cgroup v2" or "rlimits" (per process only)
    memory: int | None = None         # bytes the submission (or, under rlimits, each process) may use
    processes: int | None = None
    oom_kills: int = 0                # processes the OOM killer ended in the submission's control group
    process_limit_hits: int = 0       # forks refused at the control group's process limit


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
    group = cgroups.SubmissionGroup(hierarchy, name, limits.memory, limits.processes)
    try:
        return group.create()
    except OSError:
        group.remove()
        return None


def run_driver(job, *, sandbox=True, limits=DEFAULT_LIMITS, wall=600.0):
    """Run one job through the driver -- in a fresh sandbox, or (sandbox=False) as a plain child
    process -- and collect its events. Never raises because of what the job's code does.

    Where a control group can be made, the whole process tree runs in one of its own
    (memory and process limits for the submission as a whole); every event is stamped under
    `SANDBOX_KEY` with the group's OOM-kill and refused-fork counters at the moment it arrived,
    so the grader can tell which cell ran out of memory."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="labkit-grade-run-") as private, \
            (Slot() if sandbox else _NoSlot()) as slot:
        group = _open_group(limits, slot)
        try:
            run = _run(job, sandbox, limits, wall, start, private, slot, group)
        finally:
            if group is not None:
                run_counts = group.oom_kills(), group.process_limit_hits()
                group.remove()
        if group is not None:
            run.confinement = f"cgroup v{group.hierarchy.version}"
            run.oom_kills, run.process_limit_hits = run_counts
        run.memory = limits.memory if group is not None else limits.per_process_memory
        run.processes = limits.processes
        return run


def _run(job, sandbox, limits, wall, start, private, slot, group):
    stderr_path = Path(private) / "stderr"
    info_read, info_write = os.pipe()
    pass_fds = ()
    if sandbox:
        job = {**job, "workdir": "/tmp/work"}
        # with a control group, its pids.max is the limit that fires (and is counted), the
        # uid's RLIMIT_NPROC a looser second line
        nproc = limits.processes + NPROC_SLACK if group is not None else None
        argv, env, cwd = command(limits, slot.uid, info_fd=info_write, nproc=nproc), None, "/"
        pass_fds = (info_write,)
    else:
        os.chmod(private, 0o700)
        scratch = Path(private) / "scratch"
        scratch.mkdir()
        job = {**job, "workdir": str(scratch / "work")}
        argv = [*_prlimit(limits, limits.processes + _processes_of(os.getuid())),
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


def _feed(pipe, data):
    try:
        pipe.write(data)
        pipe.close()
    except OSError:            # the driver died before reading its job
        pass


def _read_events(stream, deadline, stamp=None):
    """JSON events from the driver's stdout until it closes, the wall limit passes, or it sends
    more than `MAX_STREAM` bytes; lines that are not JSON objects, or longer than `MAX_LINE`,
    are dropped (an overlong line is skipped to its end without being kept in memory). With
    `stamp`, each event gets ``event[SANDBOX_KEY] = stamp()`` (replacing whatever the line said)."""
    events, buffer, total, note, skipping = [], b"", 0, None, False
    fd = stream.fileno()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            note = "wall"
            break
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
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
