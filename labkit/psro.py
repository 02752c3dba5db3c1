r"""Policy-space response oracles (PSRO) with an exact meta-game and an exact best-response oracle.

Lanctot, Zambaldi, Gruslys, Lazaridou, Tuyls, Perolat, Silver and Graepel (2017), "A unified
game-theoretic approach to multiagent reinforcement learning". With the Nash meta-solver on a
two-player zero-sum game it is the double oracle algorithm (McMahan, Gordon and Blum, 2003).

Every player i keeps a population of policies Pi_i = {pi_i^1, ..., pi_i^K} and a meta-strategy
sigma_i, a probability vector over it. One PSRO iteration:

1. build the mixture policy of the current meta-strategies (per player, reach-weighted, so
   it plays like drawing pi_i^k with probability sigma_i(k) before the game);
2. every player adds an exact best response to the others' mixtures to its population;
3. the meta-game (empirical game) is extended: M_i[k_0, ..., k_{n-1}] is player i's expected
   payoff when every player j follows pi_j^{k_j} (only the entries with a new member are computed;
   the others are kept from the previous iteration);
4. the meta-solver returns new meta-strategies sigma_i;
5. NashConv of the new mixture is recorded in `nash_conv_history`.

Meta-solvers: "nash" (a Nash equilibrium of the two-player zero-sum meta-game by linear
programming), "uniform" (sigma_i uniform over the population: fictitious play), "last" (all
weight on the newest policy: iterated best response, i.e. self-play) and "prd" (projected
replicator dynamics, Lanctot et al. 2017).

The meta-game entries are exact expected payoffs, computed from realization plans:
M_i[k_0, ..., k_{n-1}] = sum_z chance(z) u_i(z) prod_j x_j^{k_j}(z), with x_j^k(z) player j's own
probability of its moves on the way to the terminal z under pi_j^k.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from labkit._messages import show
from labkit.evaluate import PolicyLike, _reach, best_response, edge_probabilities, nash_conv, policy_array
from labkit.policy import TabularPolicy
from labkit.solver import Solver

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from labkit.games import GameLike

META_SOLVERS = ("nash", "uniform", "last", "prd")
ORACLES = ("exact",)


class PSRO(Solver):
    r"""PSRO with exact best responses and an exact meta-game.

    Each iteration adds to every population :math:`\Pi_i` a best response to the others'
    meta-strategy mixtures, extends the meta-game

    .. math:: M_i[k_0, \dots, k_{n-1}] = \sum_z \pi_c(z)\, u_i(z) \prod_j x_j^{k_j}(z),

    and solves it for new meta-strategies (module docstring).

    Parameters
    ----------
    game : str or GameTree
    meta_solver : {"nash", "uniform", "last", "prd"}
        "nash" needs a two-player zero-sum game.
    oracle : {"exact"}
        The best-response oracle (`labkit.best_response`; ties go to the lowest action id).
    initial_policy : TabularPolicy or array, optional
        Every population starts with this policy (uniform by default). It is validated, also
        when it is a TabularPolicy made with ``check=False``.
    prd_iterations, prd_stepsize, prd_exploration : int, float, float
        Projected replicator dynamics: number of Euler steps, their size, and the exploration
        gamma (every meta-probability stays >= gamma / population size).

    Attributes
    ----------
    populations : list of lists of (I, A) arrays
        populations[i][k] is player i's k-th policy (only player i's rows are used).
    meta_game : (n, K_0, ..., K_{n-1}) array
        Expected payoff of every player for every combination of population members.
    meta_strategies : list of arrays
        sigma_i, one probability vector per player.
    nash_conv_history : list of (int, float)
        NashConv of the meta-strategy mixture after each PSRO iteration (0 = the initial policy).

    Raises
    ------
    ValueError
        For an unknown meta-solver or oracle, "nash" on a game that is not two-player zero-sum,
        bad PRD settings, or an invalid initial policy.

    References
    ----------
    M. Lanctot, V. Zambaldi, A. Gruslys, A. Lazaridou, K. Tuyls, J. Perolat, D. Silver and
    T. Graepel (2017), "A unified game-theoretic approach to multiagent reinforcement learning",
    NeurIPS. H. B. McMahan, G. J. Gordon and A. Blum (2003), "Planning in the presence of cost
    functions controlled by an adversary", ICML (double oracle).

    Examples
    --------
    >>> import labkit as lk
    >>> psro = lk.PSRO("kuhn_poker", meta_solver="nash")
    >>> [(t, round(value, 4)) for t, value in psro.run(3)]
    [(1, 0.8333), (2, 0.3333), (3, 0.1833)]
    >>> psro.population_sizes
    [4, 4]
    """

    def __init__(self, game: GameLike, meta_solver: str = "nash", oracle: str = "exact",
                 initial_policy: PolicyLike | None = None, prd_iterations: int = 10_000, prd_stepsize: float = 1e-2,
                 prd_exploration: float = 1e-6):
        super().__init__(game)
        game = self.game
        if meta_solver not in META_SOLVERS:
            raise ValueError(f"unknown meta_solver {meta_solver!r}; valid: {', '.join(map(repr, META_SOLVERS))}")
        if oracle not in ORACLES:
            raise ValueError(f"unknown oracle {oracle!r}; valid: {', '.join(map(repr, ORACLES))}")
        if meta_solver == "nash":
            _check_two_player_zero_sum(game)
        if not (isinstance(prd_iterations, (int, np.integer)) and prd_iterations > 0):
            raise ValueError(f"prd_iterations must be a positive integer, got {show(prd_iterations)}")
        if not (np.isfinite(prd_stepsize) and prd_stepsize > 0) or not 0 <= prd_exploration < 1:
            raise ValueError("prd_stepsize must be > 0 and prd_exploration in [0, 1)")
        self.meta_solver, self.oracle = meta_solver, oracle
        self.prd = {"iterations": int(prd_iterations), "stepsize": float(prd_stepsize),
                    "exploration": float(prd_exploration)}
        if initial_policy is None:
            start = TabularPolicy.uniform(game).probs
        else:
            start = policy_array(game, initial_policy, "initial_policy")
        n = game.num_players
        ones = np.where(game.legal_mask, 1.0, 0.0)
        z = game.terminals
        self._weighted_returns = (_reach(game, edge_probabilities(game, ones))[n, z][:, None]
                                  * game.returns[z])                        # chance(z) u_i(z), (Z, n)
        self.populations = [[start.copy()] for _ in range(n)]
        # x_j^k(z) of every member, one (K_j, Z) array per player, grown by one row per iteration
        self._terminal_plans = [self._terminal_plan(start, p)[None, :] for p in range(n)]
        self.meta_game = self._compute_meta_game()
        self.meta_strategies = [np.ones(1) for _ in range(n)]
        self._warned: set[str] = set()
        self._player_rows = [game.infoset_player == p for p in range(n)]
        self._mixture = self.average_policy()
        self.nash_conv_history = [(0, nash_conv(game, self._mixture))]

    # ------------------------------------------------------------------ one iteration
    def _step(self) -> None:
        game = self.game
        responses = [best_response(game, self._mixture, p).policy.probs for p in range(game.num_players)]
        repeated = [any(np.array_equal(br[rows], old[rows]) for old in population)
                    for br, population, rows in zip(responses, self.populations, self._player_rows, strict=True)]
        if all(repeated) and self.meta_solver == "nash":
            self._warn_once("converged", f"PSRO iteration {self.iteration + 1}: every best response is already in "
                            "its population, so double oracle has converged (the meta-game only gains duplicates)")
        elif any(repeated) and self.meta_solver in ("nash", "prd"):
            self._warn_once("repeat", f"PSRO iteration {self.iteration + 1}: the best response of player "
                            f"{repeated.index(True)} is already in its population; the meta-game gets a duplicate "
                            "row, so its equilibrium is not unique")
        for p, br in enumerate(responses):
            self.populations[p].append(br)
            self._terminal_plans[p] = np.vstack([self._terminal_plans[p], self._terminal_plan(br, p)])
        self.meta_game = self._extend_meta_game(self.meta_game)
        self.meta_strategies = self._solve_meta_game()
        self._mixture = self.average_policy()
        self.nash_conv_history.append((self.iteration + 1, nash_conv(game, self._mixture)))

    def run(self, iterations: int, progress: bool = False, target_nash_conv: float | None = None,
            eval_every: int | None = None, policy: str = "average") -> list[tuple[int, float]]:
        """Run up to `iterations` PSRO iterations; stop early once NashConv <= target_nash_conv.

        NashConv of the meta-strategy mixture is recorded after every iteration (PSRO needs it
        anyway), so `eval_every` and `policy` are accepted only with their meaning for the base
        class's defaults.

        Parameters
        ----------
        iterations : int
        progress : bool
            Show a tqdm progress bar.
        target_nash_conv : float, optional
            Stop once the mixture's NashConv is at most this.
        eval_every : {None, 1}
            Every iteration is evaluated.
        policy : {"average"}
            The mixture is the policy evaluated.

        Returns
        -------
        list of (int, float)
            The (iteration, NashConv) pairs of this call.

        Raises
        ------
        ValueError
            For a negative or non-integer number of iterations, or other `eval_every` or `policy`.

        Examples
        --------
        >>> import labkit as lk
        >>> psro = lk.PSRO("kuhn_poker", meta_solver="uniform")
        >>> [round(value, 3) for _, value in psro.run(2)]
        [0.625, 0.417]
        """
        if eval_every not in (None, 1) or policy != "average":
            raise ValueError("PSRO evaluates the meta-strategy mixture after every iteration: "
                             "eval_every must be None or 1 and policy 'average'")
        if not isinstance(iterations, (int, np.integer)) or isinstance(iterations, bool) or iterations < 0:
            raise ValueError(f"iterations must be a nonnegative integer, got {show(iterations)}")
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=int(iterations), desc="PSRO", leave=False)
        first = len(self.nash_conv_history)
        try:
            for _ in range(int(iterations)):
                if target_nash_conv is not None and self.nash_conv_history[-1][1] <= target_nash_conv:
                    break
                self.step()
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(nash_conv=f"{self.nash_conv_history[-1][1]:.3g}")
        finally:
            if bar is not None:
                bar.close()
        return self.nash_conv_history[first:]

    def nash_conv(self, policy: str = "average") -> float:
        """NashConv of the meta-strategy mixture ("average") or of the newest best responses ("current").

        Parameters
        ----------
        policy : {"average", "current"}

        Returns
        -------
        float

        Examples
        --------
        >>> import labkit as lk
        >>> psro = lk.PSRO("kuhn_poker")
        >>> round(psro.nash_conv(), 4)                         # the uniform start: 11/12
        0.9167
        """
        if policy == "average":
            return self.nash_conv_history[-1][1]
        return super().nash_conv(policy)

    # ------------------------------------------------------------------ policies
    def average_policy(self) -> TabularPolicy:
        r"""The behavioral policy that plays the meta-strategy mixture.

        For player i's infoset I, with :math:`x_k(I)` its own reach probability under
        :math:`\pi_i^k`,

        .. math:: \pi(a \mid I) = \frac{\sum_k \sigma_i(k)\, x_k(I)\, \pi_i^k(a \mid I)}
                  {\sum_k \sigma_i(k)\, x_k(I)}

        (the plain weighted average where no member reaches I).

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> psro = lk.PSRO("kuhn_poker", meta_solver="uniform")
        >>> _ = psro.run(1)
        >>> psro.average_policy()["J|"]            # half uniform, half the best response (a bluff)
        {'pass': 0.25, 'bet': 0.75}
        """
        game = self.game
        probs = np.zeros(game.legal_mask.shape)
        for p, (population, sigma) in enumerate(zip(self.populations, self.meta_strategies, strict=True)):
            mixed = TabularPolicy.mixture([TabularPolicy(game, pol, check=False) for pol in population], sigma)
            rows = game.infoset_player == p
            probs[rows] = mixed.probs[rows]
        return TabularPolicy(game, probs, check=False)

    def current_policy(self) -> TabularPolicy:
        """The newest member of every population, as one joint policy.

        Returns
        -------
        TabularPolicy

        Examples
        --------
        >>> import labkit as lk
        >>> psro = lk.PSRO("kuhn_poker")
        >>> _ = psro.run(1)
        >>> psro.current_policy()["K|b"]               # a best response calls with the king
        {'pass': 0.0, 'bet': 1.0}
        """
        game = self.game
        probs = np.zeros(game.legal_mask.shape)
        for p, population in enumerate(self.populations):
            rows = game.infoset_player == p
            probs[rows] = population[-1][rows]
        return TabularPolicy(game, probs, check=False)

    @property
    def population_sizes(self) -> list[int]:
        """The number of policies in each player's population.

        Examples
        --------
        >>> import labkit as lk
        >>> lk.PSRO("kuhn_poker").step().population_sizes
        [2, 2]
        """
        return [len(pop) for pop in self.populations]

    # ------------------------------------------------------------------ the meta-game
    def _terminal_plan(self, probs, player):
        """x(z): the player's own probability of its moves on the way to every terminal z."""
        return _reach(self.game, edge_probabilities(self.game, probs))[player, self.game.terminals]

    def _meta_game_block(self, plans):
        """M[i, k_0, ..., k_{n-1}] = sum_z chance(z) u_i(z) prod_j x_j^{k_j}(z) for the members
        whose terminal plans are given (one (K_j, Z) array per player).

        The sum over z is a running sum in terminal order (cumsum), whatever the block's shape, so an
        entry gets the same bits whether it is computed in a one-row slab or in the whole table
        (einsum would pick a different loop for a length-1 axis and change the last bits).
        """
        n = len(plans)
        product = 1.0
        for j, x in enumerate(plans):                       # x_0 * x_1 * ... broadcast to (K_0, ..., K_{n-1}, Z)
            shape = [1] * n + [x.shape[1]]
            shape[j] = x.shape[0]
            product = product * x.reshape(shape)
        weights = self._weighted_returns.T.reshape((n,) + (1,) * n + (-1,))
        return np.cumsum(product[None] * weights, axis=-1)[..., -1]

    def _compute_meta_game(self):
        """The whole meta-game, every entry computed from the terminal plans."""
        block = self._meta_game_block(self._terminal_plans)
        table = np.moveaxis(np.empty(block.shape[1:] + block.shape[:1]), -1, 0)   # player-last, as above
        table[...] = block
        return table

    def _extend_meta_game(self, old):
        """The meta-game after every player gained one member: the old entries are copied, and only
        the slabs holding a new member (k_j = K_j - 1 for some j) are computed, so an iteration
        costs O(n K^{n-1} Z) instead of O(K^n Z). The entries are those of a full recomputation,
        bit for bit (see `_meta_game_block`)."""
        plans = self._terminal_plans
        # laid out player-last in memory, as einsum returned it before: matrix-vector products in
        # the meta-solvers sum in an order set by the strides, and they must not change
        new = np.moveaxis(np.empty(tuple(len(x) for x in plans) + (old.shape[0],)), -1, 0)
        new[(slice(None),) + tuple(slice(k) for k in old.shape[1:])] = old
        for j in range(len(plans)):
            newest = plans[:j] + [plans[j][-1:]] + plans[j + 1:]
            new[(slice(None),) * (j + 1) + (slice(-1, None),)] = self._meta_game_block(newest)
        return new

    def _solve_meta_game(self):
        sizes = self.population_sizes
        if self.meta_solver == "uniform":
            return [np.full(k, 1.0 / k) for k in sizes]
        if self.meta_solver == "last":
            return [np.eye(k)[-1] for k in sizes]
        if self.meta_solver == "nash":
            x, y, _ = zero_sum_matrix_equilibrium(self.meta_game[0])
            return [x, y]
        return projected_replicator_dynamics(self.meta_game, **self.prd)

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, stacklevel=4)

    def __repr__(self) -> str:
        return (f"PSRO({self.game.name}, meta_solver={self.meta_solver!r}, iteration={self.iteration}, "
                f"population sizes {self.population_sizes}, NashConv {self.nash_conv_history[-1][1]:.4g})")


# ---------------------------------------------------------------------- meta-solvers
def zero_sum_matrix_equilibrium(M: ArrayLike) -> tuple[np.ndarray, np.ndarray, float]:
    r"""Maximin strategies of the zero-sum matrix game M (row player receives M[a, b]).

    .. math:: \max_{x \in \Delta, v}\ v \quad \text{s.t.} \quad \sum_a x_a M_{ab} \ge v
              \ \text{for every column } b,

    and the same on :math:`-M^\top` for the column player. Solved with scipy's HiGHS.

    Parameters
    ----------
    M : (m, k) array_like

    Returns
    -------
    x : (m,) float array
        The row player's maximin strategy (clipped at 0 and renormalized).
    y : (k,) float array
        The column player's.
    value : float
        The value of the game to the row player.

    Raises
    ------
    RuntimeError
        If the LP solver fails.

    Examples
    --------
    >>> import labkit as lk
    >>> x, y, value = zero_sum_matrix_equilibrium(lk.games.biased_rock_paper_scissors().A)
    >>> x.round(3).tolist(), y.round(3).tolist(), abs(value) < 1e-9
    ([0.25, 0.5, 0.25], [0.25, 0.5, 0.25], True)
    """
    M = np.asarray(M, dtype=float)
    x, value = _maximin(M)
    y, _ = _maximin(-M.T)
    return x, y, value


def _maximin(M: np.ndarray) -> tuple[np.ndarray, float]:
    from scipy.optimize import linprog

    m, k = M.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0                                                    # maximize v
    A_ub = np.hstack([-M.T, np.ones((k, 1))])                       # v - x^T M[:, b] <= 0
    A_eq = np.concatenate([np.ones(m), [0.0]])[None, :]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(k), A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0, None)] * m + [(None, None)], method="highs")
    if res.status != 0:
        raise RuntimeError(f"the meta-game LP failed: {res.message}")
    x = np.maximum(res.x[:m], 0.0)
    return x / x.sum(), float(res.x[-1])


def projected_replicator_dynamics(meta_game: np.ndarray, iterations: int = 10_000, stepsize: float = 1e-2,
                                  exploration: float = 1e-6) -> list[np.ndarray]:
    r"""Projected replicator dynamics (Lanctot et al., 2017) on an n-player meta-game.

    Euler steps of the replicator equation,

    .. math:: \sigma_i \leftarrow \sigma_i + \Delta t\, \sigma_i \odot (u_i - \sigma_i \cdot u_i),

    with :math:`u_i` the payoff of each of player i's population members against the others'
    mixtures, each followed by the Euclidean projection onto
    :math:`\{\sigma \ge \gamma / K_i,\ \sum \sigma = 1\}`. Starts from the uniform meta-strategies.

    Parameters
    ----------
    meta_game : (n, K_0, ..., K_{n-1}) float array
        Every player's payoff for every combination of members.
    iterations : int
        Euler steps.
    stepsize : float
        :math:`\Delta t`.
    exploration : float
        :math:`\gamma`: every probability stays at least :math:`\gamma / K_i`.

    Returns
    -------
    list of arrays
        One meta-strategy per player.

    Examples
    --------
    In the prisoner's dilemma both players end up defecting, up to the exploration floor:

    >>> import numpy as np
    >>> import labkit as lk
    >>> game = lk.games.prisoners_dilemma()
    >>> x, y = projected_replicator_dynamics(np.stack([game.A, game.B]), iterations=5000, stepsize=0.05)
    >>> x.round(4).tolist(), y.round(4).tolist()
    ([0.0, 1.0], [0.0, 1.0])
    """
    n = meta_game.shape[0]
    sigma = [np.full(k, 1.0 / k) for k in meta_game.shape[1:]]
    floors = [exploration / len(s) for s in sigma]
    for _ in range(iterations):
        payoffs = [_pure_payoffs(meta_game, sigma, i) for i in range(n)]
        for i, u in enumerate(payoffs):
            s = sigma[i]
            s = s + stepsize * s * (u - s @ u)          # the Euler step keeps sum(s) = 1
            sigma[i] = s if s.min() >= floors[i] else _project_simplex(s, floors[i])
    return sigma


def _pure_payoffs(meta_game: np.ndarray, sigma: list[np.ndarray], player: int) -> Any:
    """u_i(k): player i's meta-payoff of member k against the other players' mixtures."""
    if len(sigma) == 2:
        return meta_game[0] @ sigma[1] if player == 0 else sigma[0] @ meta_game[1]
    table = meta_game[player]
    for j in reversed(range(len(sigma))):               # contract the last axes first
        if j != player:
            table = np.tensordot(table, sigma[j], axes=([j], [0]))
    return table


def _project_simplex(v: np.ndarray, lower: float) -> np.ndarray:
    """Euclidean projection of v onto {p >= lower, sum p = 1} (sort-based, Duchi et al. 2008)."""
    mass = 1.0 - lower * len(v)
    w = v - lower
    u = np.sort(w)[::-1]
    cumulative = np.cumsum(u) - mass
    k = np.flatnonzero(u - cumulative / np.arange(1, len(u) + 1) > 0)[-1]
    return np.maximum(w - cumulative[k] / (k + 1), 0.0) + lower


def _check_two_player_zero_sum(game: Any) -> None:
    z = game.terminals
    if game.num_players != 2 or not np.allclose(game.returns[z].sum(axis=1), 0.0):
        raise ValueError(f"the 'nash' meta-solver needs a two-player zero-sum game; {game.name} is not "
                         "(use 'uniform', 'last' or 'prd')")
