r"""Self-play dynamics on two-player matrix games.

Both players start from given mixed strategies x_0 (rows) and y_0 (columns) and update them
simultaneously from exact payoffs. With A the row player's and B the column player's payoffs,
the payoff of every action at step t is

    g_x = A y_t        (one entry per row action),
    g_y = x_t^T B      (one entry per column action).

One step of each method (t = 1, 2, ...):

* ``"best response"`` (naive self-play): play the pure best response to the opponent's
  latest strategy, x_t = e_{argmax g_x}.
* ``"fictitious play"`` (Brown, 1951): best-respond to the opponent's running sum
  y_0 + ... + y_{t-1} (the start counts as one observation).
* ``"mirror descent"`` (Hedge, multiplicative weights): x_t ∝ x_{t-1} exp(eta g_x).
* ``"optimistic mirror descent"`` (optimistic Hedge; Daskalakis and Panageas, 2019): the same
  step with the predicted payoff 2 g_t - g_{t-1}.
* ``"regularized, fixed magnet"``: the magnetic mirror-descent step
  (Sokota et al., 2023)

      x_t = argmax_p  eta <g_x, p> - eta alpha KL(p || magnet) - KL(p || x_{t-1}),

  whose closed form, in log space, is

      log x_t = (log x_{t-1} + eta alpha log magnet + eta g_x) / (1 + eta alpha) - log Z.

  It converges in the last iterate to the regularized (logit quantal response) equilibrium.
* ``"regularized, moving magnet"``: the same, with the magnet reset to the current strategy
  every `reset` steps (the idea of R-NaD, Perolat et al., 2021), which removes the bias.
* ``"regret matching"`` (Hart and Mas-Colell, 2000): x_t ∝ max(R_t, 0), R_t the cumulative
  regret sum_s (g_s - <g_s, x_s>).
* ``"replicator"``: the replicator ODE dx/dt = x ⊙ (g_x - <x, g_x>) integrated with
  `scipy.integrate.solve_ivp`; `eta` is the time between two recorded points.

Every method returns a `Trajectory` with the strategies x_t, y_t of every step, their running
averages (x_0 + ... + x_t) / (t + 1), and exploitability / NashConv of both.

    >>> import labkit as lk
    >>> game = lk.games.biased_rock_paper_scissors()
    >>> traj = lk.dynamics.run(game, "regularized, moving magnet", steps=3000)
    >>> print(traj.x[-1].round(3))
    [0.25 0.5  0.25]
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from labkit._messages import show
from labkit.games.matrix import MatrixGame, biased_rock_paper_scissors

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

METHODS = ("best response", "fictitious play", "mirror descent", "optimistic mirror descent",
           "regularized, fixed magnet", "regularized, moving magnet", "regret matching", "replicator")
ALIASES = {"naive self play": "best response", "self play": "best response", "hedge": "mirror descent",
           "optimistic hedge": "optimistic mirror descent", "fixed magnet": "regularized, fixed magnet",
           "moving magnet": "regularized, moving magnet", "r nad": "regularized, moving magnet",
           "replicator dynamics": "replicator"}
# the chapter's example: the starting points and the methods of its table
CHAPTER_X0 = (0.6, 0.2, 0.2)
CHAPTER_Y0 = (0.2, 0.2, 0.6)
CHAPTER_METHODS = ("best response", "fictitious play", "mirror descent", "regularized, fixed magnet",
                   "regularized, moving magnet")
CHAPTER_CHECKPOINTS = (10, 100, 1000, 3000)


def method_name(method: str) -> str:
    """The canonical name of a method ("Hedge" -> "mirror descent").

    Case, underscores, hyphens and extra spaces do not matter; `ALIASES` lists the other names.

    Parameters
    ----------
    method : str

    Returns
    -------
    str
        One of `METHODS`.

    Raises
    ------
    TypeError
        If `method` is not a string.
    ValueError
        For an unknown method; the message lists the valid ones.

    Examples
    --------
    >>> import labkit as lk
    >>> lk.dynamics.method_name("Hedge"), lk.dynamics.method_name("R-NaD")
    ('mirror descent', 'regularized, moving magnet')
    """
    if not isinstance(method, str):
        raise TypeError(f"method must be a string, one of {', '.join(METHODS)}")
    key = " ".join(method.lower().replace("_", " ").replace("-", " ").split())
    key = ALIASES.get(key, key)
    if key not in METHODS:
        raise ValueError(f"unknown method {method!r}; valid methods: {', '.join(repr(m) for m in METHODS)} "
                         f"(aliases: {', '.join(repr(a) for a in ALIASES)})")
    return key


@dataclass
class Trajectory:
    """What a run of self-play dynamics went through (`run` makes one).

    Shapes use T = steps and m, k the numbers of row and column actions.

    Attributes
    ----------
    game : MatrixGame
    method : str
    x, y : (T + 1, m), (T + 1, k) arrays
        The current strategies; row 0 is the start.
    x_average, y_average : (T + 1, m), (T + 1, k) arrays
        Running averages: row t is (x_0 + ... + x_t) / (t + 1).
    times : (T + 1,) array
        The step numbers 0..T (or the ODE times, for the replicator).
    params : dict
        The step size and the other settings of the run.

    Examples
    --------
    >>> import labkit as lk
    >>> traj = lk.dynamics.run(method="fictitious play", steps=1000)
    >>> traj
    Trajectory('fictitious play' on biased_rock_paper_scissors, 1000 steps)
    >>> traj.x_average[-1].round(2).tolist(), round(float(traj.average_exploitability[-1]), 3)
    ([0.26, 0.48, 0.25], 0.045)
    """

    game: MatrixGame
    method: str
    x: np.ndarray
    y: np.ndarray
    times: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # sequential sums (np.cumsum adds in order), so row t equals a loop's running sum
        self.x_average = np.cumsum(self.x, axis=0) / np.arange(1, len(self.x) + 1)[:, None]
        self.y_average = np.cumsum(self.y, axis=0) / np.arange(1, len(self.y) + 1)[:, None]

    @property
    def steps(self) -> int:
        """T, the number of updates (the arrays have T + 1 rows).

        Examples
        --------
        >>> import labkit as lk
        >>> lk.dynamics.run(steps=5).steps
        5
        """
        return len(self.x) - 1

    # ----------------------------------------------------------------- measures
    @functools.cached_property
    def exploitability(self) -> np.ndarray:
        """(T + 1,) max_i (A y_t)_i - min_j (x_t^T A)_j of the current strategies (zero-sum games).

        This is the NashConv of (x_t, y_t), under the name the course chapter gives it; it is not
        `lk.exploitability`, which is NashConv / 2 for two players. The book prints `nash_conv`.
        """
        return _zero_sum_gap(self.game, self.x, self.y)

    @functools.cached_property
    def average_exploitability(self) -> np.ndarray:
        """(T + 1,) the same for the running averages."""
        return _zero_sum_gap(self.game, self.x_average, self.y_average)

    @functools.cached_property
    def nash_conv(self) -> np.ndarray:
        """(T + 1,) NashConv = max_i (A y)_i - x^T A y + max_j (x^T B)_j - x^T B y of the current strategies."""
        return _nash_conv(self.game, self.x, self.y)

    @functools.cached_property
    def average_nash_conv(self) -> np.ndarray:
        """(T + 1,) NashConv of the running averages."""
        return _nash_conv(self.game, self.x_average, self.y_average)

    def at(self, step: int) -> dict[str, Any]:
        """Everything about one step: strategies, averages and their exploitability or NashConv.

        Parameters
        ----------
        step : int
            0..T.

        Returns
        -------
        dict
            x, y, x_average, y_average, gap (exploitability of a zero-sum game, else NashConv)
            and average_gap.

        Raises
        ------
        ValueError
            If `step` is out of range.

        Examples
        --------
        >>> import labkit as lk
        >>> point = lk.dynamics.run(method="best response", steps=3).at(1)
        >>> point["x"].tolist(), point["gap"]
        ([1.0, 0.0, 0.0], 2.0)
        """
        if not 0 <= step <= self.steps:
            raise ValueError(f"step must be in 0..{self.steps}, got {step}")
        gap, avg_gap = (self.exploitability, self.average_exploitability) if self.game.is_zero_sum \
            else (self.nash_conv, self.average_nash_conv)
        return {"x": self.x[step], "y": self.y[step], "x_average": self.x_average[step],
                "y_average": self.y_average[step], "gap": float(gap[step]), "average_gap": float(avg_gap[step])}

    def __repr__(self) -> str:
        return f"Trajectory({self.method!r} on {self.game.name}, {self.steps} steps)"


def _zero_sum_gap(game, X, Y):
    if not game.is_zero_sum:
        raise ValueError(f"{game.name} is not zero-sum: use .nash_conv instead of .exploitability")
    A = game.A
    return (Y @ A.T).max(axis=1) - (X @ A).min(axis=1)


def _nash_conv(game, X, Y):
    A, B = game.A, game.B
    row_values = np.einsum("ti,ij,tj->t", X, A, Y)
    col_values = np.einsum("ti,ij,tj->t", X, B, Y)
    return (Y @ A.T).max(axis=1) - row_values + (X @ B).max(axis=1) - col_values


# --------------------------------------------------------------------- the steps
def _pure(n, index):
    e = np.zeros(n)
    e[index] = 1.0
    return e


def _magnet_step(current, payoff, magnet, eta, alpha):
    """argmax_p eta <payoff, p> - eta alpha KL(p || magnet) - KL(p || current), in log space.

    alpha = 0 is the plain mirror-descent (Hedge) step current * exp(eta payoff).
    """
    logits = (np.log(current) + eta * alpha * np.log(magnet) + eta * payoff) / (1 + eta * alpha)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def _regret_matching(regret):
    positive = np.maximum(regret, 0.0)
    total = positive.sum()
    return positive / total if total > 0 else np.full(len(regret), 1.0 / len(regret))


def _discrete(game, method, steps, x0, y0, eta, alpha, reset, magnet):
    A, B = game.A, game.B
    m, k = A.shape
    xs, ys = np.empty((steps + 1, m)), np.empty((steps + 1, k))
    xs[0], ys[0] = x, y = x0, y0
    sum_x, sum_y = x0.copy(), y0.copy()          # fictitious play's beliefs: the start counts once
    magnet_x, magnet_y = magnet
    reg_x, reg_y = np.zeros(m), np.zeros(k)
    last_gx = last_gy = None
    a = 0.0 if method in ("mirror descent", "optimistic mirror descent") else alpha
    for t in range(1, steps + 1):
        gx, gy = A @ y, x @ B                      # payoff of every action against the other's strategy
        if method == "best response":
            x, y = _pure(m, gx.argmax()), _pure(k, gy.argmax())
        elif method == "fictitious play":
            x, y = _pure(m, (A @ sum_y).argmax()), _pure(k, (sum_x @ B).argmax())
        elif method == "regret matching":
            reg_x += gx - x @ gx
            reg_y += gy - gy @ y
            x, y = _regret_matching(reg_x), _regret_matching(reg_y)
        else:
            if method == "optimistic mirror descent":
                prev_x, prev_y = (gx, gy) if last_gx is None else (last_gx, last_gy)
                last_gx, last_gy = gx, gy
                gx, gy = 2 * gx - prev_x, 2 * gy - prev_y
            x, y = _magnet_step(x, gx, magnet_x, eta, a), _magnet_step(y, gy, magnet_y, eta, a)
            if method == "regularized, moving magnet" and t % reset == 0:
                magnet_x, magnet_y = x.copy(), y.copy()
        sum_x += x
        sum_y += y
        xs[t], ys[t] = x, y
    return xs, ys, np.arange(steps + 1, dtype=float)


def _replicator(game, steps, x0, y0, eta):
    from scipy.integrate import solve_ivp
    A, B = game.A, game.B
    m = A.shape[0]

    def velocity(_, z):
        x, y = z[:m], z[m:]
        gx, gy = A @ y, x @ B
        return np.concatenate([x * (gx - x @ gx), y * (gy - gy @ y)])

    times = eta * np.arange(steps + 1)
    sol = solve_ivp(velocity, (0.0, times[-1]), np.concatenate([x0, y0]), t_eval=times, method="DOP853",
                    rtol=1e-10, atol=1e-12)
    if not sol.success:
        raise RuntimeError(f"the replicator ODE could not be integrated: {sol.message}")
    z = np.clip(sol.y.T, 0.0, None)
    return z[:, :m] / z[:, :m].sum(1, keepdims=True), z[:, m:] / z[:, m:].sum(1, keepdims=True), times


def _strategy(value, size, name):
    p = np.asarray(value, dtype=float)
    if p.shape != (size,):
        raise ValueError(f"{name} must be a vector of {size} probabilities, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"{name} must be nonnegative and sum to 1, got {p}")
    return p


def run(game: MatrixGame | None = None, method: str = "mirror descent", steps: int = 1000, eta: float = 0.1,
        alpha: float = 0.2, reset: int = 200, x0: ArrayLike | None = None, y0: ArrayLike | None = None,
        magnet: tuple[ArrayLike, ArrayLike] | None = None) -> Trajectory:
    r"""Run one self-play dynamic on a two-player matrix game.

    Both players update simultaneously from the exact payoffs of every action,
    :math:`g_x = A y_t` and :math:`g_y = x_t^\top B`; e.g. the regularized step is

    .. math:: \log x_{t+1} = \frac{\log x_t + \eta \alpha \log \text{magnet} + \eta g_x}
              {1 + \eta \alpha} - \log Z

    (module docstring for every method).

    Parameters
    ----------
    game : MatrixGame, optional
        Defaults to the chapter's biased rock-paper-scissors.
    method : str
        One of `METHODS` (see the module docstring); "Hedge" and a few other aliases work too.
    steps : int
        Number of simultaneous updates T.
    eta : float
        Step size of the mirror-descent methods (time between recorded points for the replicator).
    alpha : float
        Weight of the KL penalty toward the magnet (regularized methods only).
    reset : int
        Steps between two magnet moves ("regularized, moving magnet").
    x0, y0 : arrays, optional
        Starting strategies; uniform by default. Methods that take logarithms need them
        strictly positive.
    magnet : (array, array), optional
        The initial magnets of the two players; uniform by default.

    Returns
    -------
    Trajectory

    Raises
    ------
    TypeError
        If `game` is not a MatrixGame or `method` not a string.
    ValueError
        For an unknown method, or a setting out of range (the message names it).

    References
    ----------
    S. Sokota et al. (2023), "A unified approach to reinforcement learning, quantal response
    equilibria, and two-player zero-sum games", ICLR (the magnetic step); G. W. Brown (1951),
    "Iterative solution of games by fictitious play".

    Examples
    --------
    The chapter's example: on biased rock-paper-scissors the moving magnet's last iterate reaches
    the equilibrium (1/4, 1/2, 1/4), plain mirror descent's does not.

    >>> import labkit as lk
    >>> start = dict(steps=3000, x0=[0.6, 0.2, 0.2], y0=[0.2, 0.2, 0.6])
    >>> moving = lk.dynamics.run(method="regularized, moving magnet", **start)
    >>> hedge = lk.dynamics.run(method="mirror descent", **start)
    >>> moving.x[-1].round(3).tolist(), round(float(hedge.exploitability[-1]), 2) > 0.1
    ([0.25, 0.5, 0.25], True)
    """
    game = biased_rock_paper_scissors() if game is None else game
    if not isinstance(game, MatrixGame):
        raise TypeError(f"game must be a labkit.games.MatrixGame, got {type(game).__name__}")
    method = method_name(method)
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 0:
        raise ValueError(f"steps must be a nonnegative integer, got {show(steps)}")
    if not (np.isfinite(eta) and eta > 0):
        raise ValueError(f"eta (the step size) must be positive, got {show(eta)}")
    if not (np.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha (the magnet's weight) must be >= 0, got {show(alpha)}")
    if not isinstance(reset, (int, np.integer)) or reset < 1:
        raise ValueError(f"reset must be a positive integer number of steps, got {show(reset)}")
    m, k = game.shape
    start_x = np.full(m, 1.0 / m) if x0 is None else _strategy(x0, m, "x0")
    start_y = np.full(k, 1.0 / k) if y0 is None else _strategy(y0, k, "y0")
    if magnet is None:
        magnets = (np.full(m, 1.0 / m), np.full(k, 1.0 / k))
    else:
        magnets = (_strategy(magnet[0], m, "magnet[0]"), _strategy(magnet[1], k, "magnet[1]"))
    uses_logs = method in ("mirror descent", "optimistic mirror descent", "regularized, fixed magnet",
                           "regularized, moving magnet")
    if uses_logs and any(np.any(p <= 0) for p in (start_x, start_y, *magnets)):
        raise ValueError(f"{method!r} works with logarithms: x0, y0 and the magnets must be strictly positive")
    if method == "replicator":
        xs, ys, times = _replicator(game, int(steps), start_x, start_y, float(eta))
    else:
        xs, ys, times = _discrete(game, method, int(steps), start_x, start_y, float(eta), float(alpha), int(reset),
                                  magnets)
    params: dict[str, Any] = {"eta": eta, "x0": start_x, "y0": start_y}
    if method.startswith("regularized"):
        params.update(alpha=alpha, magnet=magnets)
    if method == "regularized, moving magnet":
        params["reset"] = reset
    return Trajectory(game, method, xs, ys, times, params)


# --------------------------------------------------------------------- the chapter's table
def table_row(trajectory: Trajectory, checkpoints: Sequence[int] = CHAPTER_CHECKPOINTS,
              label: str | None = None) -> str:
    """One line of the comparison table: the method's name in 28 columns, then for every
    checkpoint T the exploitability of the current strategies (9.3f) and of the averages
    (in parentheses), then the row player's current strategy at the last checkpoint.

    Parameters
    ----------
    trajectory : Trajectory
        Of a zero-sum game, at least max(checkpoints) steps long.
    checkpoints : sequence of int
    label : str, optional
        The row's name (the method's by default).

    Returns
    -------
    str

    Examples
    --------
    >>> import labkit as lk
    >>> print(lk.dynamics.table_row(lk.dynamics.run(method="best response", steps=10), checkpoints=(1, 10)))
    best response                   2.000 (1.000)    2.000 (0.606)     [1. 0. 0.]
    """
    cells = [f"{trajectory.exploitability[T]:9.3f} ({trajectory.average_exploitability[T]:.3f})"
             for T in checkpoints]
    strategy = np.array2string(trajectory.x[checkpoints[-1]], precision=3, suppress_small=False)
    return f"{label or trajectory.method:28s}" + "".join(cells) + " " * 5 + strategy


def comparison_table(game: MatrixGame | None = None, methods: Sequence[str] = CHAPTER_METHODS,
                     checkpoints: Sequence[int] = CHAPTER_CHECKPOINTS, x0: ArrayLike = CHAPTER_X0,
                     y0: ArrayLike = CHAPTER_Y0, eta: float = 0.1, alpha: float = 0.2, reset: int = 200) -> str:
    """The table comparing self-play dynamics, as text (the chapter's defaults reproduce its table).

    One run of max(checkpoints) steps per method; every checkpoint is read off the same
    trajectory, which is the same as rerunning for T steps because the dynamics do not
    depend on the horizon.

    Parameters
    ----------
    game : MatrixGame, optional
        Biased rock-paper-scissors by default.
    methods : sequence of str
    checkpoints : sequence of int
    x0, y0 : array_like
        The starting strategies.
    eta, alpha, reset
        As in `run`.

    Returns
    -------
    str

    Examples
    --------
    >>> import labkit as lk
    >>> print(lk.dynamics.comparison_table(methods=["fictitious play"], checkpoints=(10, 100)))
    exploitability of current strategies, with averages in parentheses
                                            T = 10           T = 100     current x at 100
    fictitious play                 3.000 (0.545)    2.000 (0.218)     [0. 1. 0.]
    """
    game = biased_rock_paper_scissors() if game is None else game
    checkpoints = tuple(int(T) for T in checkpoints)
    runs = {m: run(game, m, steps=max(checkpoints), eta=eta, alpha=alpha, reset=reset, x0=x0, y0=y0)
            for m in methods}
    columns = "".join(f"{'T = ' + format(T, ','):>18s}" for T in checkpoints)
    lines = ["exploitability of current strategies, with averages in parentheses",
             " " * 28 + columns + f"     current x at {checkpoints[-1]:,}"]
    lines += [table_row(traj, checkpoints) for traj in runs.values()]
    return "\n".join(lines)


def print_comparison_table(**kwargs: Any) -> None:
    """Print `comparison_table(**kwargs)`.

    Parameters
    ----------
    **kwargs
        The arguments of `comparison_table`.

    Examples
    --------
    >>> import labkit as lk
    >>> lk.dynamics.print_comparison_table(methods=["mirror descent"], checkpoints=(10,))
    exploitability of current strategies, with averages in parentheses
                                            T = 10     current x at 10
    mirror descent                  0.727 (1.068)     [0.762 0.121 0.117]
    """
    print(comparison_table(**kwargs))
