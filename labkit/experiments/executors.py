"""Run independent work units on a `concurrent.futures`-style executor, with a progress bar.

The tournament code only needs ``executor.submit(fn, unit)`` returning a future with
``.result()``. That is the interface of the standard library's ProcessPoolExecutor, of Dask
(``distributed.Client(...).get_executor()``) and of Ray's executor, so the same experiment
runs on a laptop or on a cluster:

    >>> from labkit.experiments.executors import run_units
    >>> run_units(abs, [-1, -2, 3], executor="serial", progress=False)
    [1, 2, 3]
"""
from __future__ import annotations

import concurrent.futures as cf
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any


def _progress_bar(total: int, desc: str | None, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, unit="entry")


def resolve_executor(executor: Any, num_units: int,
                     pool: Callable[..., Any] | None = None) -> tuple[Any, bool]:
    """The executor to run `num_units` work units on, and whether the caller owns it.

    Parameters
    ----------
    executor : None, "serial", int or an object with ``submit``
        None: a ProcessPoolExecutor with os.cpu_count() workers (serial when there is one core
        or one unit); "serial" or 1: in this process; an int n > 1: n worker processes;
        anything with a ``submit`` method: used as is, and left running.
    num_units : int
        How many units will run (no more workers than units are started).
    pool : callable, optional
        ``pool(max_workers=n)`` makes the executor we own; default a ProcessPoolExecutor (the grader
        passes a thread pool: its work happens in sandboxed child processes anyway).

    Returns
    -------
    executor : executor or None
        None means: run the units serially in this process.
    owned : bool
        True when the executor was made here and must be shut down by the caller.

    Raises
    ------
    TypeError, ValueError
        For any other string, a bool, a number of workers below 1, or an object without ``submit``.

    Examples
    --------
    >>> resolve_executor("serial", 10)
    (None, False)
    >>> pool, owned = resolve_executor(2, 10)
    >>> type(pool).__name__, owned
    ('ProcessPoolExecutor', True)
    >>> pool.shutdown()
    >>> resolve_executor(0, 10)
    Traceback (most recent call last):
      ...
    ValueError: the number of workers must be at least 1, got 0
    """
    pool = pool or cf.ProcessPoolExecutor
    if executor is None:
        workers = min(os.cpu_count() or 1, num_units)
        return (pool(max_workers=workers), True) if workers > 1 else (None, False)
    if isinstance(executor, str):
        if executor != "serial":
            raise ValueError(f"executor must be None, 'serial', a number of workers or an executor "
                             f"object with a submit() method; got the string {executor!r}")
        return None, False
    if isinstance(executor, bool):
        raise TypeError("executor must be None, 'serial', an int or an executor object, not a bool")
    if isinstance(executor, int):
        if executor < 1:
            raise ValueError(f"the number of workers must be at least 1, got {executor}")
        workers = min(executor, num_units)
        return (pool(max_workers=workers), True) if workers > 1 else (None, False)
    if callable(getattr(executor, "submit", None)):
        return executor, False
    raise TypeError(f"executor must be None, 'serial', an int or an object with a submit() method "
                    f"(concurrent.futures, dask's client.get_executor(), ...), got {type(executor).__name__}")


def run_units(function: Callable[[Any], Any], units: Iterable[Any], executor: Any = None, progress: bool = True,
              desc: str | None = None, weights: Iterable[int] | None = None) -> list[Any]:
    """``[function(u) for u in units]``, possibly in parallel; results come back in unit order.

    Parameters
    ----------
    function : module-level callable
        Must be picklable (worker processes import it by name).
    units : list
        Picklable arguments, one call each.
    executor : None, "serial", int or executor object
        See `resolve_executor`.
    progress : bool
        Show a tqdm bar that advances by ``weights[k]`` when unit k finishes.
    desc : str, optional
        The bar's label.
    weights : list of int, optional
        What each unit is worth on the bar (default 1 each), one per unit.

    Returns
    -------
    list
        The results, in the order of `units`.

    Raises
    ------
    TypeError, ValueError
        For a bad executor (`resolve_executor`) or weights of another length than the units; any
        exception of `function` is raised here, after the other units are cancelled.

    Examples
    --------
    >>> run_units(abs, [-1, -2, 3], executor="serial", progress=False)
    [1, 2, 3]
    """
    units = list(units)
    weights = [1] * len(units) if weights is None else list(weights)
    if len(weights) != len(units):
        raise ValueError(f"weights must hold one number per unit: {len(weights)} weights for {len(units)} units")
    bar = _progress_bar(sum(weights), desc, progress)
    pool, owned = resolve_executor(executor, len(units))
    results: list[Any] = [None] * len(units)
    try:
        if pool is None:
            for k, unit in enumerate(units):
                results[k] = function(unit)
                if bar is not None:
                    bar.update(weights[k])
        else:
            futures = {pool.submit(function, unit): k for k, unit in enumerate(units)}
            try:
                for future in _completed(futures):
                    k = futures[future]
                    results[k] = future.result()
                    if bar is not None:
                        bar.update(weights[k])
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    finally:
        if bar is not None:
            bar.close()
        if owned:
            pool.shutdown(wait=True, cancel_futures=True)
    return results


def _completed(futures: dict[Any, int]) -> Iterator[Any]:
    """Futures in the order they finish when they are standard-library futures (Dask's and
    Ray's executors return those too); otherwise in submission order."""
    if all(isinstance(f, cf.Future) for f in futures):
        return cf.as_completed(futures)
    return iter(futures)
