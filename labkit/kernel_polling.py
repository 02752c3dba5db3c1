"""Waits for kernel messages that cannot sleep through a lost ZeroMQ wake-up.

nbclient waits for a kernel's replies with ``await channel.get_msg(timeout)``. With pyzmq's
asyncio sockets that wait ends only when the socket's file descriptor (``ZMQ_FD``) becomes
readable or the timeout expires. ``ZMQ_FD`` is edge-triggered: it signals that the socket's
command mailbox went from empty to non-empty, not that a message is queued, and any libzmq call on
the socket that processes those commands clears it. pyzmq's asyncio layer re-checks
``ZMQ_EVENTS`` after the calls it makes itself, but jupyter_client's ``Session.send`` sends on an
asyncio socket through a plain shadow of it, behind pyzmq's back. If the signal of a reply that
has just arrived is pending at that moment, the send consumes it: the reply is queued
(``ZMQ_EVENTS`` says ``POLLIN``), the descriptor stays quiet, and the wait lasts its whole timeout
(nbclient's per-cell ``timeout``, for ever when there is none) before returning the reply, as if
the cell had hung.

nbclient sends on the shell socket while it waits for a cell's ``execute_reply`` whenever the cell
displays output inside an Output widget: its stand-in for the browser echoes the widget's new
state to the kernel as a ``comm_msg``. ``ipywidgets.interact`` draws into an Output widget, so a
cell calling it races its own reply. (pyzmq's asyncio sockets make the same re-check after their
own sends since pyzmq PR 1208; pyzmq issue 199 explains why every send, receive and
``ZMQ_EVENTS`` read consumes the edge.)

`poll_in_slices` cuts every wait into slices of at most `POLL_INTERVAL` seconds. At the end of a
slice pyzmq asks libzmq with ``zmq_poll(0)``, which reads ``ZMQ_EVENTS`` and so finds a queued
message whatever the descriptor says; a lost wake-up then costs at most one slice. The timeout
the caller asked for is kept exactly (`queue.Empty` at the same deadline).

`SlicedPollingMixin` applies it to an nbclient ``NotebookClient`` (or any subclass)::

    from nbclient import NotebookClient
    from labkit.kernel_polling import SlicedPollingMixin

    class Client(SlicedPollingMixin, NotebookClient):
        pass

nbclient itself is never imported here, so ``import labkit`` does not need it.
"""
from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from queue import Empty
from typing import Any

POLL_INTERVAL = 0.25       # seconds: the longest a lost wake-up can delay a message

# the channels nbclient waits on (stdin and control are left as they are)
CHANNELS = ("shell_channel", "iopub_channel")


def sliced_get_msg(get_msg: Callable[..., Awaitable[Any]],
                   interval: float = POLL_INTERVAL) -> Callable[..., Awaitable[Any]]:
    """Wrap an async ``get_msg(timeout=None)`` so that no single wait is longer than `interval`.

    Parameters
    ----------
    get_msg : coroutine function
        The channel's own ``get_msg``; it raises `queue.Empty` when its timeout expires.
    interval : float
        The longest single wait, in seconds.

    Returns
    -------
    coroutine function
        ``get_msg(timeout=None)`` with the same meaning: the first message, or `queue.Empty`
        once `timeout` seconds have passed (``None``: wait for ever).

    Raises
    ------
    ValueError
        If `interval` is not positive.

    Examples
    --------
    A channel whose message arrives without waking the waiter is found at the end of a slice:

    >>> import asyncio
    >>> from queue import Empty
    >>> queued = ["reply"]
    >>> async def get_msg(timeout=None):          # a wait that misses its wake-up
    ...     await asyncio.sleep(timeout)
    ...     if queued:
    ...         return queued.pop()
    ...     raise Empty
    >>> asyncio.run(sliced_get_msg(get_msg, interval=0.01)(timeout=60))
    'reply'
    """
    if not interval > 0:
        raise ValueError(f"interval must be a positive number of seconds, got {interval!r}")

    @functools.wraps(get_msg)
    async def get_msg_in_slices(timeout: float | None = None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = interval if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await get_msg(timeout=min(interval, remaining))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    get_msg_in_slices.sliced = True  # type: ignore[attr-defined]
    return get_msg_in_slices


def poll_in_slices(kernel_client: Any, interval: float = POLL_INTERVAL,
                   channels: tuple[str, ...] = CHANNELS) -> Any:
    """Make the shell and IOPub waits of an asyncio kernel client poll in slices.

    Parameters
    ----------
    kernel_client : jupyter_client.asynchronous.AsyncKernelClient
        A client whose channels are started (nbclient's ``client.kc``).
    interval : float
        The longest single wait, in seconds.
    channels : tuple of str
        Names of the client's channels to change.

    Returns
    -------
    jupyter_client.asynchronous.AsyncKernelClient
        The same client (changed in place; applying it twice changes nothing more).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> async def get_msg(timeout=None):
    ...     return "message"
    >>> client = SimpleNamespace(shell_channel=SimpleNamespace(get_msg=get_msg),
    ...                          iopub_channel=SimpleNamespace(get_msg=get_msg))
    >>> poll_in_slices(client).shell_channel.get_msg.sliced
    True
    """
    for name in channels:
        channel = getattr(kernel_client, name)
        if not getattr(channel.get_msg, "sliced", False):
            channel.get_msg = sliced_get_msg(channel.get_msg, interval)
    return kernel_client


class SlicedPollingMixin:
    """Mix into an nbclient ``NotebookClient`` so that its kernel client polls in slices.

    Both ways nbclient starts a kernel client are covered: ``execute()`` awaits
    ``async_start_new_kernel_client``, while ``setup_kernel()`` (used by nbconvert and by
    cell-by-cell runners) calls ``start_new_kernel_client``, which nbclient binds to its own
    coroutine and so would skip an override of the async method alone.

    Examples
    --------
    With a stand-in for nbclient (a real ``NotebookClient`` starts a kernel):

    >>> from types import SimpleNamespace
    >>> async def get_msg(timeout=None):
    ...     return "message"
    >>> class Client:
    ...     async def async_start_new_kernel_client(self):
    ...         return SimpleNamespace(shell_channel=SimpleNamespace(get_msg=get_msg),
    ...                                iopub_channel=SimpleNamespace(get_msg=get_msg))
    >>> class SlicedClient(SlicedPollingMixin, Client):
    ...     pass
    >>> SlicedClient().start_new_kernel_client().iopub_channel.get_msg.sliced
    True
    """

    poll_interval = POLL_INTERVAL

    async def async_start_new_kernel_client(self) -> Any:
        """The base class's kernel client, made to poll in slices (`poll_in_slices`).

        Returns
        -------
        jupyter_client.asynchronous.AsyncKernelClient

        Examples
        --------
        >>> import asyncio
        >>> from types import SimpleNamespace
        >>> async def get_msg(timeout=None):
        ...     return "message"
        >>> class Client:
        ...     async def async_start_new_kernel_client(self):
        ...         return SimpleNamespace(shell_channel=SimpleNamespace(get_msg=get_msg),
        ...                                iopub_channel=SimpleNamespace(get_msg=get_msg))
        >>> class SlicedClient(SlicedPollingMixin, Client):
        ...     pass
        >>> client = asyncio.run(SlicedClient().async_start_new_kernel_client())
        >>> client.shell_channel.get_msg.sliced
        True
        """
        kernel_client = await super().async_start_new_kernel_client()  # type: ignore[misc]
        poll_in_slices(kernel_client, self.poll_interval)
        return kernel_client

    def start_new_kernel_client(self) -> Any:
        """The synchronous form of `async_start_new_kernel_client` (nbclient's ``setup_kernel``).

        Returns
        -------
        jupyter_client.asynchronous.AsyncKernelClient

        Examples
        --------
        See the class's example.

        >>> callable(SlicedPollingMixin.start_new_kernel_client)
        True
        """
        from jupyter_core.utils import run_sync

        return run_sync(self.async_start_new_kernel_client)()

