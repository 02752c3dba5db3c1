"""Execute cells one by one in a fresh kernel, surviving what a student's code can do to it.

This module runs inside the grading sandbox (`labkit.grading.driver`), beside the kernel.
`KernelRun` wraps an nbclient `NotebookClient`:

* each cell gets its own timeout; on a timeout the kernel is interrupted -- through nbclient's
  own ``interrupt_on_timeout``, which awaits ``km.interrupt_kernel()`` and then collects the
  interrupted cell's last messages, so that no stale reader is left to swallow the next cell's
  outputs -- and the cell that looped is lost but the kernel keeps its state for the following
  parts; only if a short probe cell still does not come back is the kernel replaced by a new
  one (the caller then replays its setup cells);
* a kernel that dies (``os._exit``, a segfault) is replaced the same way;
* outputs past `OUTPUT_CAP` characters in one cell are dropped as they arrive, and the cell is
  marked as flooded (a single huge message costs memory here, inside the sandbox's limits, and
  never in the grader, which reads a capped event stream);
* the kernel starts in a scratch directory with the extra environment variables given
  (the grader's nonce), never in the submission's folder; its own stdout and stderr go to
  /dev/null, so nothing it prints reaches the driver's event stream or the terminal.
"""
from __future__ import annotations

import math
import os
import subprocess
from dataclasses import dataclass, field

import nbformat

from nbclient import NotebookClient

from labkit.kernel_polling import SlicedPollingMixin
from nbclient.exceptions import CellTimeoutError, DeadKernelError

OUTPUT_CAP = 200_000       # characters of output one cell may produce
TIMEOUT_REPLY = {"ename": "CellTimeout", "evalue": "the cell ran out of time", "traceback": []}
PROBE_TIMEOUT = 5          # seconds a kernel gets to answer a probe cell after an interrupt
IOPUB_TIMEOUT = 3          # seconds to wait for a cell's last outputs once its reply is in


def _seconds(t):
    """nbclient wants whole seconds."""
    return max(1, math.ceil(t))


@dataclass
class CellRun:
    status: str                       # ok, error, timeout, flood, dead
    outputs: list = field(default_factory=list)
    error: str | None = None          # "NameError: name 'x' is not defined"


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


class KernelRun:
    """A kernel for one graded notebook. Use as a context manager.

    Parameters
    ----------
    timeout : float
        Seconds each cell may run.
    env : dict
        Extra environment variables for the kernel.
    cwd : str
        The kernel's working directory (a scratch directory).
    """

    def __init__(self, timeout, env, cwd):
        self.timeout, self.cwd = timeout, cwd
        self.env = {**os.environ, **env}
        self._interrupts = 0
        self.restarts = 0
        self._client = self._context = None

    def __enter__(self):
        self._start()
        return self

    def __exit__(self, *exc):
        self._stop()

    def _start(self):
        nb = nbformat.v4.new_notebook()
        self._client = _CappedClient(nb, timeout=_seconds(self.timeout), allow_errors=True, interrupt_on_timeout=True,
                                     error_on_timeout=TIMEOUT_REPLY,
                                     kernel_name="python3", startup_timeout=120, iopub_timeout=IOPUB_TIMEOUT,
                                     shutdown_kernel="immediate")
        self._context = self._client.setup_kernel(env=self.env, cwd=self.cwd, stdout=subprocess.DEVNULL,
                                                  stderr=subprocess.DEVNULL)
        self._context.__enter__()

    @property
    def interrupts(self):
        """Interrupts sent so far (after cell timeouts), over all kernels."""
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

    def restart(self):
        """Replace the kernel by a fresh one (its state is lost)."""
        self._stop()
        self.restarts += 1
        self._start()

    def run(self, source, timeout=None):
        """Execute one cell; never raises because of what the cell does."""
        client = self._client
        cell = nbformat.v4.new_code_cell(source)
        client.nb.cells.append(cell)
        index = len(client.nb.cells) - 1
        saved = client.timeout
        if timeout is not None:
            client.timeout = _seconds(timeout)
        try:
            client.execute_cell(cell, index)
        except CellTimeoutError:            # e.g. no idle after the interrupt: treat as a stuck kernel
            limit = client.timeout
            self.restart()
            return CellRun("timeout", list(cell.outputs), f"the cell ran longer than {limit:g} s")
        except DeadKernelError:
            self.restart()
            return CellRun("dead", list(cell.outputs), "the kernel died while running this cell")
        finally:
            if self._client is client:
                client.timeout = saved
        if id(cell) in client.timed_out:
            limit = _seconds(timeout) if timeout is not None else saved
            self._recover()
            return CellRun("timeout", list(cell.outputs), f"the cell ran longer than {limit:g} s")
        if index in client.flooded:
            return CellRun("flood", list(cell.outputs), f"the cell printed more than {OUTPUT_CAP} characters")
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        if errors:
            return CellRun("error", list(cell.outputs), f"{errors[-1].get('ename')}: {errors[-1].get('evalue')}")
        return CellRun("ok", list(cell.outputs))

    def _recover(self):
        """After a timeout (nbclient interrupted the kernel and awaited it): if the kernel does
        not answer a probe cell -- whose own timeout interrupts it once more -- replace it."""
        client = self._client
        probe = nbformat.v4.new_code_cell("pass")
        client.nb.cells.append(probe)
        saved, client.timeout = client.timeout, PROBE_TIMEOUT
        try:
            client.execute_cell(probe, len(client.nb.cells) - 1)
            if id(probe) not in client.timed_out and not any(o.get("output_type") == "error" for o in probe.outputs):
                return
        except Exception:            # timeout again, or the kernel died
            pass
        finally:
            client.timeout = saved
        self.restart()
