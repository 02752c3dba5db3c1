"""The common shape of labkit's iterative solvers (CFR, CFR+, MCCFR, MMD, PSRO, EFR).

A solver owns a game and improves a policy one iteration at a time:

    solver = lk.CFR(game)
    solver.step()                         # one iteration
    solver.run(1000, progress=True)       # many, with a tqdm bar
    solver.run(10**5, target_nash_conv=1e-3, eval_every=100)   # stop early
    solver.average_policy(), solver.current_policy(), solver.iteration

A subclass implements `_step()`, which performs iteration number ``self.iteration + 1``
(so linear averaging can weight it by that number), and `current_policy()` /
`average_policy()`. `step()` and `run()` are shared.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from labkit._messages import show
from labkit.evaluate import nash_conv
from labkit.games import load
from labkit.policy import TabularPolicy

if TYPE_CHECKING:
    from labkit.games import GameLike

TRACKED_POLICIES = ("average", "current")


class Solver:
    """Base class of the iterative solvers: `step`, `run`, `nash_conv` and the two policies.

    Parameters
    ----------
    game : str or GameTree
        Anything `labkit.games.load` accepts.

    Attributes
    ----------
    game : GameTree
    iteration : int
        Number of iterations performed so far.
    nash_conv_history : list of (int, float)
        (iteration, NashConv) pairs recorded by `run` whenever it evaluated the tracked policy.

    Examples
    --------
    A solver of one's own: fictitious play's cousin that always plays uniformly.

    >>> import labkit as lk
    >>> class Uniform(Solver):
    ...     def _step(self):
    ...         pass
    ...     def current_policy(self):
    ...         return lk.uniform_policy(self.game)
    ...     average_policy = current_policy
    >>> Uniform("kuhn_poker").run(20, eval_every=10)
    [(10, 0.9166666666666666), (20, 0.9166666666666666)]
    """

    def __init__(self, game: GameLike):
        self.game = load(game)
        self.iteration = 0
        self.nash_conv_history: list[tuple[int, float]] = []

    # -- what a subclass provides -------------------------------------------------
    def _step(self) -> None:
        """Perform iteration number ``self.iteration + 1``."""
        raise NotImplementedError

    def current_policy(self) -> TabularPolicy:
        """The policy the algorithm plays at the next iteration.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> lk.CFR("kuhn_poker").current_policy()["J|"]          # uniform before any iteration
        {'pass': 0.5, 'bet': 0.5}
        """
        raise NotImplementedError

    def average_policy(self) -> TabularPolicy:
        """The (weighted) average of the policies played so far: the one whose NashConv goes to 0.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.CFR("kuhn_poker").step()
        >>> solver.average_policy()["J|"]
        {'pass': 0.5, 'bet': 0.5}
        """
        raise NotImplementedError

    # -- shared driver ---------------------------------------------------------------
    def step(self) -> Solver:
        """Perform one iteration and return the solver (so calls can be chained).

        Returns
        -------
        Solver
            The solver itself.

        Examples
        --------
        >>> import labkit as lk
        >>> lk.CFR("kuhn_poker").step().step().iteration
        2
        """
        self._step()
        self.iteration += 1
        return self

    def _steps(self, count: int) -> None:
        """Perform `count` iterations (a compiled backend overrides this to batch them)."""
        for _ in range(count):
            self.step()

    def nash_conv(self, policy: str = "average") -> float:
        r"""NashConv of the average (default) or current policy: the sum over players of what a
        best response gains, :math:`\sum_i \max_{\pi_i'} v_i(\pi_i', \pi_{-i}) - v_i(\pi)`
        (`labkit.nash_conv`).

        Parameters
        ----------
        policy : {"average", "current"}

        Returns
        -------
        float

        Raises
        ------
        ValueError
            For another policy name.

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.CFRPlus("kuhn_poker")
        >>> _ = solver.run(100)
        >>> round(solver.nash_conv(), 4), round(solver.nash_conv("current"), 3)
        (0.0024, 0.081)
        """
        return nash_conv(self.game, self._tracked(policy))

    def run(self, iterations: int, progress: bool = False, target_nash_conv: float | None = None,
            eval_every: int | None = None, policy: str = "average") -> list[tuple[int, float]]:
        """Run up to `iterations` more iterations.

        Parameters
        ----------
        iterations : int
            How many iterations to perform (at most, if `target_nash_conv` is given).
        progress : bool
            Show a tqdm progress bar (with the last NashConv when evaluating).
        target_nash_conv : float, optional
            Stop as soon as the NashConv of the tracked policy is at most this value.
        eval_every : int, optional
            Evaluate NashConv every this many iterations (and after the last one). Defaults to
            10 when a target is given, and to no evaluation otherwise.
        policy : {"average", "current"}
            Which policy's NashConv is evaluated and compared with the target.

        Returns
        -------
        list of (int, float)
            The (iteration, NashConv) pairs evaluated during this call (also appended to
            `nash_conv_history`).

        Raises
        ------
        ValueError
            For a negative or non-integer number of iterations, a negative target, a bad
            `eval_every` or an unknown policy name.

        Examples
        --------
        >>> import labkit as lk
        >>> solver = lk.CFR("kuhn_poker")
        >>> [(t, round(value, 4)) for t, value in solver.run(1000, eval_every=500)]
        [(500, 0.0214), (1000, 0.0145)]
        >>> records = lk.CFRPlus("kuhn_poker").run(10_000, target_nash_conv=0.01)
        >>> records[-1][0]                                   # stopped as soon as the target was met
        40
        """
        if not isinstance(iterations, (int, np.integer)) or isinstance(iterations, bool) or iterations < 0:
            raise ValueError(f"iterations must be a nonnegative integer, got {show(iterations)}")
        if target_nash_conv is not None and not target_nash_conv >= 0:
            raise ValueError(f"target_nash_conv must be a number >= 0, got {show(target_nash_conv)}")
        if eval_every is None:
            eval_every = 10 if target_nash_conv is not None else 0
        if not isinstance(eval_every, (int, np.integer)) or eval_every < 0:
            raise ValueError(f"eval_every must be a nonnegative integer, got {show(eval_every)}")
        if policy not in TRACKED_POLICIES:         # validate the name before running
            self._tracked(policy)
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=int(iterations), desc=type(self).__name__, leave=False)
        records: list[tuple[int, float]] = []
        iterations = int(iterations)
        try:
            k = 0
            while k < iterations:
                # run up to the next evaluation (or bar update) in one batch
                stop = iterations if not eval_every else min(iterations, (k // eval_every + 1) * eval_every)
                if bar is not None:
                    stop = min(stop, k + max(1, iterations // 100))
                self._steps(stop - k)
                if bar is not None:
                    bar.update(stop - k)
                k = stop
                if eval_every and (k % eval_every == 0 or k == iterations):
                    value = self.nash_conv(policy)
                    records.append((self.iteration, value))
                    self.nash_conv_history.append((self.iteration, value))
                    if bar is not None:
                        bar.set_postfix(nash_conv=f"{value:.3g}")
                    if target_nash_conv is not None and value <= target_nash_conv:
                        break
        finally:
            if bar is not None:
                bar.close()
        return records

    def _tracked(self, policy: str) -> TabularPolicy:
        if policy == "average":
            return self.average_policy()
        if policy == "current":
            return self.current_policy()
        raise ValueError(f"policy must be one of {TRACKED_POLICIES}, got {policy!r}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game.name}, iteration={self.iteration})"
