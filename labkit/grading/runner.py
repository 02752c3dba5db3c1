"""Execute cells one by one in a fresh kernel, surviving what a student's code can do to it.

This module runs inside the grading sandbox (`labkit.grading.driver`), beside the kernel.
`KernelRun` wraps an nbclient `NotebookClient`:

* each cell gets a budget of *charged* seconds (`labkit.grading.cpuclock`: CPU time, or the wall
  time it slept, never the time the machine made it wait for a CPU). A watchdog thread reads
  the sandbox's clocks every `TICK` seconds; when the cell has used its budget it interrupts the
  kernel (SIGINT, as Jupyter's interrupt does), and if the cell is still running `GRACE`
  charged seconds later it kills the kernel's process group. The lost cell is a "timeout"; an
  interrupted kernel keeps its state for the following parts, a killed one is replaced (the
  caller then replays its setup cells);
* the wall clock is only a safety net: nbclient's own timeout is `wall_net` of the budget. A
  cell stopped by it ran on a machine too busy to give it its budget, and says so (``busy``),
  so that the driver can run it once more;
* a kernel that dies (``os._exit``, a segfault) is replaced the same way;
* outputs past `OUTPUT_CAP` characters in one cell are dropped as they arrive, and the cell is
  marked as flooded (a single huge message costs memory here, inside the sandbox's limits, and
  never in the grader, which reads a capped event stream);
* the kernel starts in a scratch directory with the extra environment variables given
  (the grader's nonce), never in the submission's folder; its own stdout and stderr go to
  /dev/null, so nothing it prints reaches the driver's event stream or the terminal.

An interrupt is sent with nbclient's own ``interrupt_on_timeout`` when the safety net fires (it
awaits ``km.interrupt_kernel()`` and then collects the interrupted cell's last messages, so that
no stale reader is left to swallow the next cell's outputs); the watchdog's SIGINT ends the cell
the same way from inside the kernel, with a KeyboardInterrupt reply.
"""
from __future__ import annotations

import math
import os
import signal
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import nbformat

from nbclient import NotebookClient

from labkit.grading.cpuclock import Meter, busy, charged, loaded
from labkit.kernel_polling import SlicedPollingMixin
from nbclient.exceptions import CellTimeoutError, DeadKernelError

OUTPUT_CAP = 200_000       # characters of output one cell may produce
TIMEOUT_REPLY = {"ename": "CellTimeout", "evalue": "the cell ran out of time", "traceback": []}
PROBE_TIMEOUT = 5          # charged seconds a kernel gets to answer a probe cell after an interrupt
IOPUB_TIMEOUT = 60         # wall seconds to wait for a cell's last outputs once its reply is in (a safety net)
STARTUP_TIMEOUT = 600      # wall seconds a kernel may take to start (a safety net: it needs ~2 s of CPU)
TICK = 0.2                 # seconds between two readings of the watchdog
GRACE = 5.0                # charged seconds an interrupted cell has to stop before its kernel is killed
WALL_FACTOR = 10.0         # the safety net: a cell may take this many times its budget on the wall clock ...
WALL_SLACK = 30.0          # ... plus this many seconds


def wall_net(budget: float, factor: float = 1.0) -> float:
    """Wall-clock seconds after which a cell with `budget` charged seconds is stopped anyway:
    ``factor * (WALL_FACTOR * budget + WALL_SLACK)``.

    Parameters
    ----------
    budget : float
        Charged seconds.
    factor : float, default 1.0
        Widens the net (a retry after a busy machine).

    Returns
    -------
    float

    Examples
    --------
    >>> wall_net(10), wall_net(10, factor=2.0)
    (130.0, 260.0)
    """
    return factor * (WALL_FACTOR * budget + WALL_SLACK)


def _seconds(t):
    """nbclient wants whole seconds."""
    return max(1, math.ceil(t))


@dataclass
class CellRun:
    """How one cell ran (`KernelRun.run`).

    Attributes
    ----------
    status : str
        "ok", "error", "timeout", "flood" or "dead".
    outputs : list of dict
        The cell's outputs (nbformat), those past `OUTPUT_CAP` characters dropped.
    error : str or None
        E.g. "NameError: name 'x' is not defined".
    charged, cpu, wall : float
        Seconds charged (`labkit.grading.cpuclock`), CPU seconds of the sandbox, seconds on the clock.
    busy : bool
        A timeout on a machine too busy to give the cell its budget.

    Examples
    --------
    >>> CellRun("error", error="ZeroDivisionError: division by zero").busy
    False
    """
    status: str                       # ok, error, timeout, flood, dead
    outputs: list = field(default_factory=list)
    error: str | None = None          # "NameError: name 'x' is not defined"
    charged: float = 0.0              # seconds charged (see labkit.grading.cpuclock)
    cpu: float = 0.0                  # CPU seconds of the sandbox during the cell
    wall: float = 0.0                 # seconds on the clock
    busy: bool = False                # a timeout on a machine too busy to give the cell its budget


class _CappedClient(SlicedPollingMixin, NotebookClient):
    """An nbclient that stops storing a cell's outputs once they pass `OUTPUT_CAP` characters.

    Its waits for the kernel are sliced (`labkit.kernel_polling`): a cell that draws into an Output
    widget (``interact``) could otherwise lose its reply's wake-up and end as a false timeout."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.output_chars = {}
        self.flooded = set()
        self.timed_out = set()          # id() of the cells whose execution timed out
        self.interrupts = 0

    async def _async_handle_timeout(self, timeout, cell=None):
        # nbclient interrupts the kernel (awaited) and, with error_on_timeout set, then waits for
        # the interrupted cell's own outputs until the kernel is idle, so that no stale reader of
        # that cell's messages is left to swallow the next cell's
        self.timed_out.add(id(cell))
        self.interrupts += 1
        return await super()._async_handle_timeout(timeout, cell)

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        if msg.get("msg_type") == "stream":
            size = len(content.get("text", ""))
        else:
            size = sum(len(str(v)) for v in content.get("data", {}).values()) + len(str(content.get("traceback", "")))
        used = self.output_chars.get(cell_index, 0) + size
        self.output_chars[cell_index] = used
        if used > OUTPUT_CAP:
            self.flooded.add(cell_index)
            return None
        return super().output(outs, msg, display_id, cell_index)


class _Watchdog(threading.Thread):
    """Interrupts the kernel once a cell has been charged its budget, and kills the kernel's
    process group if the cell goes on `GRACE` charged seconds after that."""

    def __init__(self, meter, start, budget, pid, pgid):
        super().__init__(daemon=True, name="labkit-watchdog")
        self.meter, self.start_reading, self.budget, self.pid, self.pgid = meter, start, budget, pid, pgid
        self.fired = None               # the reading when the interrupt was sent
        self.killed = False
        self._finished = threading.Event()

    def run(self):
        while not self._finished.wait(TICK):
            now = self.meter.read()
            if self.fired is None and charged(self.start_reading, now) >= self.budget:
                self.fired = now
                self._signal(self.pid, signal.SIGINT, group=False)
            elif self.fired is not None and not self.killed and charged(self.fired, now) >= GRACE:
                self.killed = True
                self._signal(self.pgid or self.pid, signal.SIGKILL, group=self.pgid is not None)

    @staticmethod
    def _signal(target, signum, group):
        if target is None:
            return
        try:
            (os.killpg if group else os.kill)(target, signum)
        except OSError:
            pass

    def stop(self):
        self._finished.set()
        self.join()


class KernelRun:
    """A kernel for one graded notebook. Use as a context manager.

    Parameters
    ----------
    timeout : float
        Charged seconds each cell may use (see `labkit.grading.cpuclock`).
    env : dict
        Extra environment variables for the kernel.
    cwd : str
        The kernel's working directory (a scratch directory).
    meter : labkit.grading.cpuclock.Meter, optional
        The sandbox's clocks (default: this process and its descendants).

    Examples
    --------
    A kernel keeps its state from cell to cell; an error is reported, not raised (this starts
    a Python kernel, as ``start_new_kernel_client()`` would):

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder, KernelRun(30, {"GREETING": "hello"}, folder) as kernel:
    ...     ok = kernel.run('import os; x = 6 * 7; print(x, os.environ["GREETING"])')
    ...     failed = kernel.run("1 / 0")
    ...     kept = kernel.run("print(x)")
    >>> ok.status, ok.outputs[0]["text"], kept.outputs[0]["text"]
    ('ok', '42 hello\\n', '42\\n')
    >>> failed.status, failed.error
    ('error', 'ZeroDivisionError: division by zero')
    """

    def __init__(self, timeout: float, env: Mapping[str, str], cwd: str, meter: Meter | None = None):
        self.timeout, self.cwd = timeout, cwd
        self.env = {**os.environ, **env}
        self.meter = meter or Meter(whole_namespace=False)
        self._interrupts = 0
        self.restarts = 0
        self._client: Any = None          # a _CappedClient while a kernel runs
        self._context: Any = None

    def __enter__(self):
        self._start()
        return self

    def __exit__(self, *exc):
        self._stop()

    def _start(self):
        nb = nbformat.v4.new_notebook()
        self._client = _CappedClient(nb, timeout=_seconds(wall_net(self.timeout)), allow_errors=True,
                                     interrupt_on_timeout=True, error_on_timeout=TIMEOUT_REPLY,
                                     kernel_name="python3", startup_timeout=STARTUP_TIMEOUT,
                                     iopub_timeout=IOPUB_TIMEOUT, shutdown_kernel="immediate")
        self._context = self._client.setup_kernel(env=self.env, cwd=self.cwd, stdout=subprocess.DEVNULL,
                                                  stderr=subprocess.DEVNULL)
        self._context.__enter__()

    @property
    def interrupts(self) -> int:
        """Interrupts sent so far (after cell timeouts), over all kernels.

        Examples
        --------
        >>> KernelRun(30, {}, ".").interrupts                 # no kernel started yet
        0
        """
        return self._interrupts + (self._client.interrupts if self._client is not None else 0)

    def _stop(self):
        if self._client is not None:
            self._interrupts += self._client.interrupts
        if self._context is not None:
            try:
                self._context.__exit__(None, None, None)
            except Exception:         # the kernel may already be gone
                pass
        self._client = self._context = None

    def restart(self) -> None:
        """Replace the kernel by a fresh one (its state is lost).

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder, KernelRun(30, {"GREETING": "hello"}, folder) as kernel:
        ...     _ = kernel.run("x = 1")
        ...     kernel.restart()
        ...     lost = kernel.run("x")
        >>> lost.error, kernel.restarts
        ("NameError: name 'x' is not defined", 1)
        """
        self._stop()
        self.restarts += 1
        self._start()

    def _kernel_ids(self):
        provisioner = getattr(self._client.km, "provisioner", None)
        return getattr(provisioner, "pid", None), getattr(provisioner, "pgid", None)

    def _execute(self, source, budget, wall_factor=1.0):
        """Run one cell under its watchdog: (cell, how it ended, watchdog, start and end readings).
        How it ended: "done", "stuck" (no reply even after nbclient's interrupt) or "dead"."""
        client = self._client
        cell = nbformat.v4.new_code_cell(source)
        client.nb.cells.append(cell)
        saved, client.timeout = client.timeout, _seconds(wall_net(budget, wall_factor))
        start = self.meter.read()
        guard = _Watchdog(self.meter, start, budget, *self._kernel_ids())
        guard.start()
        try:
            client.execute_cell(cell, len(client.nb.cells) - 1)
            ended = "done"
        except CellTimeoutError:
            ended = "stuck"
        except DeadKernelError:
            ended = "dead"
        finally:
            guard.stop()
            client.timeout = saved
        return cell, ended, guard, start, self.meter.read()

    def run(self, source: str, timeout: float | None = None, wall_factor: float = 1.0) -> CellRun:
        """Execute one cell with `timeout` charged seconds; never raises because of what the cell
        does. A cell that runs out of time is interrupted (the kernel keeps its state) or, if it
        does not stop, its kernel is replaced; so is a kernel that dies.

        Parameters
        ----------
        source : str
            The cell's code.
        timeout : float, optional
            Charged seconds (default: the kernel's).
        wall_factor : float, default 1.0
            Widens the safety net (for a retry, `wall_net`).

        Returns
        -------
        CellRun

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder, KernelRun(30, {"GREETING": "hello"}, folder) as kernel:
        ...     run = kernel.run("while True: pass", timeout=1)
        ...     after = kernel.run("print('still here')")
        >>> run.status, run.charged >= 1, after.outputs[0]["text"]
        ('timeout', True, 'still here\\n')
        """
        budget = self.timeout if timeout is None else timeout
        client = self._client
        index = len(client.nb.cells)
        cell, ended, guard, start, end = self._execute(source, budget, wall_factor)
        clocks = {"charged": charged(start, end), "cpu": end.cpu - start.cpu, "wall": end.wall - start.wall}
        outputs = list(cell.outputs)
        if guard.fired is not None:
            # without the scheduler's waits, the wall time was charged: a busy machine may be to blame
            unsure = start.waited is None and loaded() and clocks["cpu"] < 0.5 * clocks["wall"]
            if ended != "done" or guard.killed:
                self.restart()
            else:
                self._recover()
            return CellRun("timeout", outputs, f"the cell ran longer than {budget:g} s "
                                               f"({clocks['cpu']:.1f} s of CPU time)", busy=unsure, **clocks)
        if ended == "dead":
            self.restart()
            return CellRun("dead", outputs, "the kernel died while running this cell", **clocks)
        if ended == "stuck" or id(cell) in client.timed_out:
            was_busy = busy(start, end)
            if ended == "stuck":
                self.restart()
            else:
                self._recover()
            limit = wall_net(budget, wall_factor)
            why = "the machine was busy" if was_busy else "it was not computing: sleeping or waiting?"
            return CellRun("timeout", outputs, f"the cell did not finish in {limit:g} s on the clock, having used "
                                               f"{clocks['charged']:.1f} of its {budget:g} s ({why})",
                           busy=was_busy, **clocks)
        if index in client.flooded:
            return CellRun("flood", outputs, f"the cell printed more than {OUTPUT_CAP} characters", **clocks)
        errors = [o for o in outputs if o.get("output_type") == "error"]
        if errors:
            return CellRun("error", outputs, f"{errors[-1].get('ename')}: {errors[-1].get('evalue')}", **clocks)
        return CellRun("ok", outputs, **clocks)

    def _recover(self):
        """After an interrupt: if the kernel does not answer a probe cell -- whose own watchdog
        interrupts it once more -- replace it."""
        cell, ended, guard, _start, _end = self._execute("pass", PROBE_TIMEOUT)
        if ended == "done" and guard.fired is None and id(cell) not in self._client.timed_out \
                and not any(o.get("output_type") == "error" for o in cell.outputs):
            return
        self.restart()
