"""How much of the machine a sandbox had: its CPU seconds, and how long its processes waited for a CPU.

A cell's time limit used to be wall-clock seconds, so the same notebook could pass on a quiet
machine and time out on a busy one. The grader now charges a cell with the time it *had*:

    charged = max(cpu, wall - waited)

where ``cpu`` is the CPU time the whole sandbox used during the cell (every process and thread),
``wall`` the seconds that passed, and ``waited`` the longest time any one of its tasks spent
runnable but waiting for a CPU that other work held (the growth of the scheduler's ``run_delay``,
from ``/proc/<pid>/task/<tid>/schedstat``; at most ``wall``). A computation charges its CPU time
whatever the load; a cell that sleeps or waits on I/O charges the wall time it slept, which no
load changes; a cell whose threads keep several CPUs busy charges the CPU time of all of them.
Only waiting for a CPU is free.

``waited`` is one task's wait, not the sum over tasks: the waits of tasks that wait side by side
overlap in time. While a cell sleeps, the kernel's and the driver's helper threads (the watchdog,
the message loops) each wait a little every time they wake on a busy machine; summed, their waits
can exceed the cell's whole wall time, and a cell that slept six seconds was once charged almost
nothing at a load average of 15.

Where the sandbox has a control group, its CPU time is the group's own counter (``cpuacct.usage``
in nanoseconds on cgroup v1, ``usage_usec`` in ``cpu.stat`` on v2), which the grader binds
read-only into the sandbox; otherwise it is the sum of ``utime + stime + cutime + cstime`` of the
sandbox's processes (every process in its PID namespace, or the driver's descendants without a
sandbox). Where the scheduler's statistics are missing, ``waited`` is unknown: a cell is then
charged its wall time, and `busy` falls back on the load average.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
BUSY_SHARE = 0.5          # a cell that waited for a CPU this share of its wall time ran on a busy machine


@dataclass(frozen=True)
class Reading:
    """The sandbox's clocks at one moment.

    Attributes
    ----------
    wall : float
        ``time.monotonic()`` seconds.
    cpu : float
        CPU seconds the sandbox has used so far.
    waited : float or None
        Seconds its tasks have waited for a CPU so far, summed over tasks; None where the
        scheduler's statistics are not available.
    delays : mapping of str to float, optional
        The same per task, by task id, for every task seen so far (tasks gone since keep their
        figure); None where not known, and then ``waited`` stands for the longest wait.

    Examples
    --------
    >>> Reading(wall=10.0, cpu=2.5, waited=None).cpu
    2.5
    """
    wall: float
    cpu: float
    waited: float | None
    delays: Mapping[str, float] | None = field(default=None, compare=False)


def waited_between(start: Reading, end: Reading) -> float | None:
    """Seconds the sandbox waited for a CPU between two readings: the longest growth of any one
    task's wait (`Reading.delays`), or of ``waited`` where the readings have no per-task figures.

    Parameters
    ----------
    start, end : Reading
        The clocks before and after (`Meter.read`).

    Returns
    -------
    float or None
        Seconds; None when waits are not known.

    Examples
    --------
    Twenty helper threads waited 0.4 s each while the cell's own task waited 0.02 s: the
    sandbox waited 0.4 s, not 8 s.

    >>> helpers = {f"helper-{k}": 0.4 for k in range(20)}
    >>> end = Reading(6.0, 0.1, 8.02, {"kernel": 0.02, **helpers})
    >>> round(waited_between(Reading(0.0, 0.0, 0.0, {}), end), 2)
    0.4
    """
    if start.waited is None or end.waited is None:
        return None
    if start.delays is None or end.delays is None:
        return max(0.0, end.waited - start.waited)
    return max((seconds - start.delays.get(task, 0.0) for task, seconds in end.delays.items()), default=0.0)


def charged(start: Reading, end: Reading) -> float:
    r"""Seconds charged between two readings (see the module's docstring):

    .. math:: \text{charged} = \max\big(\Delta\text{cpu},\; \Delta\text{wall} -
              \min(\Delta\text{wall}, \max(0, \Delta\text{waited}))\big),

    or :math:`\max(\Delta\text{cpu}, \Delta\text{wall})` where the waits are not known.

    Parameters
    ----------
    start, end : Reading
        The clocks before and after (`Meter.read`).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    A cell that computed for 2 s of CPU in 5 s of wall time, 3 s of which it waited for a CPU:

    >>> charged(Reading(0.0, 0.0, 0.0), Reading(5.0, 2.0, 3.0))
    2.0

    A cell that slept 5 s: its wall time, whatever the load.

    >>> charged(Reading(0.0, 0.0, 0.0), Reading(5.0, 0.01, 0.0))
    5.0
    """
    wall, cpu = end.wall - start.wall, end.cpu - start.cpu
    waited = waited_between(start, end)
    if waited is None:
        return max(cpu, wall)
    return max(cpu, wall - min(wall, max(0.0, waited)))


def busy(start: Reading, end: Reading, cores: int | None = None) -> bool:
    """Whether the machine kept the sandbox waiting between two readings: one of its tasks waited
    for a CPU at least `BUSY_SHARE` of the wall time; where waits are not known, whether the load
    average is above the number of cores (`loaded`).

    Parameters
    ----------
    start, end : Reading
    cores : int, optional
        The machine's cores for the load test (default ``os.cpu_count()``).

    Returns
    -------
    bool

    Examples
    --------
    >>> busy(Reading(0.0, 0.0, 0.0), Reading(4.0, 1.0, 3.0))      # waited 3 s of 4
    True
    >>> busy(Reading(0.0, 0.0, 0.0), Reading(4.0, 3.9, 0.1))
    False
    """
    wall = end.wall - start.wall
    waited = waited_between(start, end)
    if waited is not None:
        return wall > 0 and waited >= BUSY_SHARE * wall
    return loaded(cores)


def loaded(cores: int | None = None) -> bool:
    """Whether the one-minute load average is above the number of cores.

    Parameters
    ----------
    cores : int, optional
        Default ``os.cpu_count()``.

    Returns
    -------
    bool
        False where the load average cannot be read.

    Examples
    --------
    >>> loaded(cores=10 ** 9)
    False
    """
    try:
        return os.getloadavg()[0] > (cores or os.cpu_count() or 1)
    except OSError:
        return False


def _stat_fields(pid):
    """utime, stime, cutime, cstime (clock ticks) and ppid of a process, from /proc/<pid>/stat."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()      # after "pid (comm) "
    return int(fields[1]), [int(x) for x in fields[11:15]]


def _usage_seconds(path):
    """A control group's CPU seconds: ``cpuacct.usage`` (ns) or ``cpu.stat``'s ``usage_usec``."""
    text = Path(path).read_text()
    if "usage_usec" in text:
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
    return int(text.split()[0]) / 1e9


class Meter:
    """Reads a sandbox's clocks (`Reading`).

    Parameters
    ----------
    usage_file : str, optional
        The control group's CPU counter as seen inside the sandbox (``cpuacct.usage`` or
        ``cpu.stat``); without it, CPU time is summed over the processes.
    whole_namespace : bool
        True inside a sandbox (every process in /proc is the sandbox's); False without one
        (only this process and its descendants count).

    Examples
    --------
    >>> meter = Meter(whole_namespace=False)          # this process and its children
    >>> start = meter.read()
    >>> total = sum(i * i for i in range(10 ** 5))
    >>> end = meter.read()
    >>> end.wall >= start.wall and end.cpu >= start.cpu and charged(start, end) >= 0
    True
    """

    def __init__(self, usage_file: str | None = None, whole_namespace: bool = True):
        self.usage_file = usage_file if usage_file and os.path.exists(usage_file) else None
        self.whole_namespace = whole_namespace
        self._delays: dict[str, int] = {}         # tid -> run_delay seen last (ns)
        self._per_task: dict[str, float] = {}     # tid -> seconds waited so far, kept for tasks gone since
        self._waited = 0.0              # seconds, summed over tasks, including those gone since
        self._schedstat = Path("/proc/self/schedstat").exists()
        self._lock = threading.Lock()

    def _pids(self):
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        if self.whole_namespace:
            return pids
        children = {}
        for pid in pids:
            try:
                children.setdefault(_stat_fields(pid)[0], []).append(pid)
            except (OSError, ValueError, IndexError):
                continue
        out, todo = [], [os.getpid()]
        while todo:
            pid = todo.pop()
            out.append(pid)
            todo += children.get(pid, [])
        return out

    def read(self) -> Reading:
        """The clocks now.

        Returns
        -------
        Reading

        Examples
        --------
        >>> reading = Meter(whole_namespace=False).read()
        >>> reading.cpu > 0 and reading.wall > 0
        True
        """
        with self._lock:
            wall = time.monotonic()
            pids = self._pids()
            cpu = None
            if self.usage_file:
                try:
                    cpu = _usage_seconds(self.usage_file)
                except (OSError, ValueError, IndexError):
                    cpu = None
            if cpu is None:
                cpu = self._summed_cpu(pids)
            if not self._schedstat:
                return Reading(wall, cpu, None)
            waited = self._read_waits(pids)
            return Reading(wall, cpu, waited, dict(self._per_task))

    @staticmethod
    def _summed_cpu(pids):
        ticks = 0
        for pid in pids:
            try:
                ticks += sum(_stat_fields(pid)[1])
            except (OSError, ValueError, IndexError):
                continue
        return ticks / CLOCK_TICKS

    def _read_waits(self, pids):
        """Seconds waited so far: each task's growth of ``run_delay`` since it was last seen is
        added once, so tasks that exit take nothing away."""
        for pid in pids:
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                try:
                    delay = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                last = self._delays.get(tid, 0)
                grown = (delay - last if delay >= last else delay) / 1e9     # smaller: a new task
                self._waited += grown
                self._per_task[tid] = self._per_task.get(tid, 0.0) + grown
                self._delays[tid] = delay
        return self._waited
