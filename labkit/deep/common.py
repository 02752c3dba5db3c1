"""Pieces the learners share: seeds, sampling on the compiled tree, reservoir memories, regressors.

* `random_streams(seed)`: the numpy generators and JAX key of one run, all derived from one seed,
  so a run is bit-identical when repeated on one machine.
* `FlatTree` and `UniformStream`: the tree as Python lists and a stream of uniform numbers drawn
  in blocks, with the same sampling conventions as `labkit.mccfr` (so a Deep CFR traversal and an
  MCCFR episode fed the same seed draw the same cards and actions).
* `Reservoir`: a memory of fixed capacity that keeps a uniform sample of everything ever added
  (Vitter's algorithm R), as Deep CFR's and NFSP's memories do.
* `NetworkRegressor` and `TableRegressor`: fit per-infoset targets (advantages, strategies) by
  weighted least squares or weighted cross-entropy, with an MLP trained by Adam or with an exact
  lookup table (the "network" that makes Deep CFR tabular MCCFR).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from labkit._messages import show
from labkit.deep.features import infoset_features
from labkit.deep.networks import MLP, masked_log_softmax
from labkit.mccfr import _pick_from
from labkit.solver import Solver
from labkit.tree import CHANCE, TERMINAL, GameTree

_BLOCK = 4096                   # labkit.mccfr draws its uniform numbers 4096 at a time, too
LOSSES = ("mse", "cross_entropy")
BATCHINGS = ("minibatch", "infosets")


def check_seed(seed: Any) -> int:
    """An integer seed >= 0 (what every learner of labkit.deep takes).

    Parameters
    ----------
    seed : int

    Returns
    -------
    int

    Raises
    ------
    TypeError
        For anything but an integer >= 0 (a bool is refused too).

    Examples
    --------
    >>> check_seed(3)
    3
    >>> check_seed(-1)
    Traceback (most recent call last):
      ...
    TypeError: seed must be an integer >= 0, got -1
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise TypeError(f"seed must be an integer >= 0, got {show(seed)}")
    return int(seed)


def check_positive_int(name: str, value: Any) -> int:
    """`value` as an int, if it is an integer >= 1.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : int

    Returns
    -------
    int

    Raises
    ------
    ValueError
        For anything else, naming the argument.

    Examples
    --------
    >>> check_positive_int("traversals", 0)
    Traceback (most recent call last):
      ...
    ValueError: traversals must be a positive integer, got 0
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {show(value)}")
    return int(value)


def check_hidden(hidden: Any) -> tuple[int, ...]:
    """Hidden-layer widths as a tuple of positive ints.

    Parameters
    ----------
    hidden : sequence of int
        May be empty (no hidden layer).

    Returns
    -------
    tuple of int

    Raises
    ------
    ValueError
        For anything but a sequence of positive integers.

    Examples
    --------
    >>> check_hidden([64, 64])
    (64, 64)
    >>> check_hidden(64)
    Traceback (most recent call last):
      ...
    ValueError: hidden must be a sequence of positive layer widths, e.g. (64, 64), got 64
    """
    if isinstance(hidden, (str, bytes)) or not isinstance(hidden, Sequence) or any(
            isinstance(h, (bool, np.bool_)) or not isinstance(h, (int, np.integer)) or h < 1 for h in hidden):
        raise ValueError(f"hidden must be a sequence of positive layer widths, e.g. (64, 64), got {show(hidden)}")
    return tuple(int(h) for h in hidden)


def check_rate(name: str, value: Any) -> float:
    """A finite positive number (a learning rate, a clip, a step size).

    Parameters
    ----------
    name : str
    value : float

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For anything else, naming the argument.

    Examples
    --------
    >>> check_rate("learning_rate", float("nan"))
    Traceback (most recent call last):
      ...
    ValueError: learning_rate must be a finite positive number, got nan
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite positive number, got {show(value)}")
    return float(value)


@dataclass
class RandomStreams:
    """Independent random streams of one run (`random_streams`).

    Attributes
    ----------
    sampling : numpy Generator
        The game's samples (cards, actions): ``np.random.default_rng(seed)``, as `labkit.mccfr`.
    memory : numpy Generator
        Reservoir replacements.
    batches : numpy Generator
        Minibatch indices.
    key : jax.Array
        The JAX key for initializations.

    Examples
    --------
    >>> streams = random_streams(0)
    >>> streams.sampling.random() == np.random.default_rng(0).random()
    True
    """
    sampling: np.random.Generator
    memory: np.random.Generator
    batches: np.random.Generator
    key: jax.Array


def random_streams(seed: int) -> RandomStreams:
    """The random streams of one run, all derived from one seed.

    Parameters
    ----------
    seed : int
        >= 0.

    Returns
    -------
    RandomStreams

    Raises
    ------
    TypeError
        For a seed that is not an integer >= 0.

    Examples
    --------
    >>> a, b = random_streams(7), random_streams(7)
    >>> a.memory.random() == b.memory.random(), bool((a.key == b.key).all())
    (True, True)
    """
    seed = check_seed(seed)
    return RandomStreams(np.random.default_rng(seed), np.random.default_rng([seed, 1]),
                         np.random.default_rng([seed, 2]), jax.random.PRNGKey(seed))


class NetworkSolver(Solver):
    """What the zero-sum learners share.

    The game, a validated configuration of type `config_type`, the seed's random streams, the
    infoset features and the flat tree for sampling. `DeepCFR`, `NFSP` and `NeuralMMD` are its
    subclasses.

    Parameters
    ----------
    game : str or GameTree
    config : dataclass instance or None
        Of the subclass's `config_type` (None: its defaults).
    seed : int

    Raises
    ------
    TypeError
        For a configuration of another type or a bad seed.

    Examples
    --------
    >>> from labkit import deep
    >>> solver = deep.DeepCFR("kuhn_poker", deep.DeepCFRConfig(traversals=1), seed=1)
    >>> solver.features.size, solver.streams is not None
    (7, True)
    """

    config_type: Any = None

    def __init__(self, game: Any, config: Any, seed: int):
        super().__init__(game)
        self.config = config = self.config_type() if config is None else config
        if not isinstance(config, self.config_type):
            raise TypeError(f"config must be a {self.config_type.__name__}, got {type(config).__name__}")
        self.seed = check_seed(seed)
        self.streams = random_streams(self.seed)
        self.features = infoset_features(self.game, config.encoding)
        self.flat = flat_tree(self.game)
        self._draw = UniformStream(self.streams.sampling)


class UniformStream:
    """Uniform numbers in [0, 1) from a generator, drawn 4096 at a time (one numpy call each).

    Parameters
    ----------
    rng : numpy Generator

    Examples
    --------
    >>> draw = UniformStream(np.random.default_rng(0))
    >>> draw() == float(np.random.default_rng(0).random(4096)[0])
    True
    """

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self._block: list[float] = []
        self._next = 0

    def __call__(self) -> float:
        if self._next == len(self._block):
            self._block, self._next = self.rng.random(_BLOCK).tolist(), 0
        u = self._block[self._next]
        self._next += 1
        return u


def pick(cumulative: Sequence[float], u: float) -> int:
    """The first index k with u < cumulative[k] (the last one if rounding left a gap).

    Parameters
    ----------
    cumulative : sequence of float
        Cumulative probabilities.
    u : float
        A uniform number in [0, 1).

    Returns
    -------
    int

    Examples
    --------
    >>> pick([0.25, 0.75, 1.0], 0.5), pick([0.25, 0.75, 0.9999999], 0.99999995)
    (1, 2)
    """
    for k, c in enumerate(cumulative):
        if u < c:
            return k
    return len(cumulative) - 1


def pick_from(probs: Sequence[float], u: float) -> int:
    """Sample an index of a probability list with the uniform number u, never a zero-probability one.

    The same rule as tabular MCCFR's sampling (`labkit.mccfr`).

    Parameters
    ----------
    probs : sequence of float
        Probabilities summing to 1.
    u : float
        A uniform number in [0, 1).

    Returns
    -------
    int

    Examples
    --------
    >>> pick_from([0.5, 0.0, 0.5], 0.7)
    2
    """
    return _pick_from(probs, u)


class FlatTree:
    """The compiled tree as Python lists, for walking sampled paths node by node (`flat_tree`).

    Parameters
    ----------
    game : GameTree

    Attributes
    ----------
    player, first_child, infoset : list of int
        Per history: who acts (or CHANCE, TERMINAL), the first child's index, the infoset.
    returns : list of lists of float
        Per history, the payoffs (meaningful at terminals).
    chance_cumulative, chance_probs : list
        At chance histories, the cumulative and plain probabilities of the outcomes; None elsewhere.
    legal_actions : list of lists of int
        Per infoset.

    Examples
    --------
    >>> import labkit as lk
    >>> flat = FlatTree(lk.games.load("kuhn_poker"))
    >>> flat.player[0] == flat.CHANCE, flat.chance_probs[0]
    (True, [0.3333333333333333, 0.3333333333333333, 0.3333333333333333])
    """

    def __init__(self, game: GameTree):
        H, parent = game.num_histories, game.parent
        first_child = np.searchsorted(parent, np.arange(H))      # breadth first: children contiguous
        num_children = np.bincount(parent[1:], minlength=H)
        self.player = game.player.tolist()
        self.first_child = first_child.tolist()
        self.infoset = game.infoset.tolist()
        self.returns = game.returns.tolist()
        self.chance_cumulative: list[Any] = [None] * H
        self.chance_probs: list[Any] = [None] * H
        for h in np.flatnonzero(game.is_chance):
            p = game.chance_prob[first_child[h]:first_child[h] + num_children[h]]
            self.chance_probs[h] = p.tolist()
            self.chance_cumulative[h] = np.cumsum(p).tolist()
        self.legal_actions = [game.legal_actions(i).tolist() for i in range(game.num_infosets)]
        self.CHANCE, self.TERMINAL = CHANCE, TERMINAL


def flat_tree(game: GameTree) -> FlatTree:
    """The `FlatTree` of a game, cached on it.

    Parameters
    ----------
    game : GameTree

    Returns
    -------
    FlatTree

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> flat_tree(kuhn) is flat_tree(kuhn)
    True
    """
    cached = game.__dict__.get("_deep_flat_tree")
    if cached is None:
        cached = game.__dict__["_deep_flat_tree"] = FlatTree(game)
    return cached


def rows_to_lists(game: GameTree, table: Any) -> list[list[float]]:
    """An (I, A) array as per-infoset lists over the legal actions (for scalar access in a walk).

    Parameters
    ----------
    game : GameTree
    table : (num_infosets, num_actions) array_like

    Returns
    -------
    list of lists of float

    Examples
    --------
    >>> import labkit as lk
    >>> leduc = lk.games.load("leduc_poker")
    >>> rows_to_lists(leduc, lk.uniform_policy(leduc).probs)[0]       # fold is not legal here
    [0.5, 0.5]
    """
    legal = flat_tree(game).legal_actions
    values = np.asarray(table, dtype=float)
    return [values[i, actions].tolist() for i, actions in enumerate(legal)]


class Reservoir:
    """A memory of (infoset, target vector, weight) samples that keeps a uniform sample of all
    samples ever added once it is full (reservoir sampling: sample number s > capacity replaces a
    uniformly chosen slot with probability capacity / s).

    Arrays are allocated at full capacity, so networks train on fixed shapes (one compilation).

    Parameters
    ----------
    capacity : int
    num_actions : int
        The length of a target vector.
    rng : numpy Generator
        For the replacements.

    Attributes
    ----------
    rows : (capacity,) int32 array
    targets : (capacity, num_actions) float array
    weights : (capacity,) float array
    size : int
        Filled slots.
    seen : int
        Samples ever added.

    Examples
    --------
    >>> memory = Reservoir(2, 3, np.random.default_rng(0))
    >>> memory.add([4, 5, 6], np.ones((3, 3)), 1.0)
    >>> memory.size, memory.seen
    (2, 3)
    """

    def __init__(self, capacity: int, num_actions: int, rng: np.random.Generator):
        self.capacity = check_positive_int("capacity", capacity)
        self.rows = np.zeros(self.capacity, dtype=np.int32)
        # float64, so a lookup table fitted to the memory is exact; networks get float32 copies
        self.targets = np.zeros((self.capacity, num_actions))
        self.weights = np.zeros(self.capacity)
        self.size = 0           # filled slots
        self.seen = 0           # samples ever added
        self.rng = rng

    def add(self, rows: Any, targets: Any, weights: Any) -> None:
        """Add a batch of samples in order (the same result as adding them one by one).

        Parameters
        ----------
        rows : (k,) array_like of int
            The samples' infosets.
        targets : (k, num_actions) array_like
        weights : float or (k,) array_like

        Examples
        --------
        >>> memory = Reservoir(4, 2, np.random.default_rng(0))
        >>> memory.add([0, 1], [[1.0, 0.0], [0.0, 1.0]], [1.0, 2.0])
        >>> memory.rows[:memory.size].tolist(), memory.weights[:memory.size].tolist()
        ([0, 1], [1.0, 2.0])
        """
        rows = np.asarray(rows, dtype=np.int32)
        k = len(rows)
        if k == 0:
            return
        targets = np.asarray(targets, dtype=np.float64).reshape(k, -1)
        weights = np.broadcast_to(np.asarray(weights, dtype=np.float64), (k,))
        free = min(self.capacity - self.size, k)
        if free:
            first = slice(self.size, self.size + free)
            self.rows[first], self.targets[first], self.weights[first] = rows[:free], targets[:free], weights[:free]
            self.size += free
        if free < k:
            # sample number s (1-based) goes to slot j ~ U{0..s-1} if j < capacity; duplicates keep
            # the last write, as the one-by-one algorithm does
            numbers = self.seen + free + np.arange(1, k - free + 1)
            slots = (self.rng.random(k - free) * numbers).astype(np.int64)
            keep = slots < self.capacity
            self.rows[slots[keep]] = rows[free:][keep]
            self.targets[slots[keep]] = targets[free:][keep]
            self.weights[slots[keep]] = weights[free:][keep]
        self.seen += k


class TableRegressor:
    """A lookup table fitted exactly: output(I) = the weighted mean of the targets stored for I.

    That mean is the minimizer of both losses over an unconstrained table, so this is what an
    infinitely expressive network trained to convergence would output. Unseen infosets get 0
    (advantages) or the uniform distribution (strategies).

    Parameters
    ----------
    game : GameTree
    loss : {"mse", "cross_entropy"}
        Which network it stands for: advantages or a policy's probabilities.

    Raises
    ------
    ValueError
        For another loss.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> memory = Reservoir(10, 2, np.random.default_rng(0))
    >>> memory.add([0, 0], [[1.0, 0.0], [0.0, 1.0]], [1.0, 3.0])
    >>> TableRegressor(kuhn, "mse").fit(memory).predict()[0].tolist()
    [0.25, 0.75]
    """

    def __init__(self, game: GameTree, loss: str):
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
        self.game, self.loss = game, loss
        self.kind = "advantages" if loss == "mse" else "probabilities"
        self.outputs = np.zeros(game.legal_mask.shape)

    def fit(self, memory: Reservoir, rows: Any = None) -> TableRegressor:
        """Set every infoset's output to the weighted mean of the targets stored for it.

        Parameters
        ----------
        memory : Reservoir
        rows : ignored
            (The network regressor's signature.)

        Returns
        -------
        TableRegressor
            self.

        Examples
        --------
        >>> import labkit as lk
        >>> memory = Reservoir(10, 2, np.random.default_rng(0))
        >>> memory.add([1], [[2.0, -2.0]], 1.0)
        >>> TableRegressor(lk.games.load("kuhn_poker"), "mse").fit(memory).predict()[:2].tolist()
        [[0.0, 0.0], [2.0, -2.0]]
        """
        I, A = self.game.legal_mask.shape
        n = memory.size
        w = memory.weights[:n]
        sums = np.zeros((I, A))
        np.add.at(sums, memory.rows[:n], w[:, None] * memory.targets[:n])
        totals = np.bincount(memory.rows[:n], weights=w, minlength=I)
        self.outputs = np.where(totals[:, None] > 0, sums / np.where(totals > 0, totals, 1.0)[:, None], 0.0)
        return self

    def predict(self) -> np.ndarray:
        """The outputs at every infoset.

        Returns
        -------
        (num_infosets, num_actions) float64 array

        Examples
        --------
        >>> import labkit as lk
        >>> TableRegressor(lk.games.load("kuhn_poker"), "mse").predict().shape
        (12, 2)
        """
        return self.outputs


class NetworkRegressor:
    r"""An MLP fitted to a reservoir memory by Adam on minibatches.

    Loss on a minibatch B (weights normalized by their mean :math:`\bar w` over the memory):

    .. math::

       \text{mse:} \quad & \frac{1}{|B|} \sum_{b \in B} \frac{w_b}{\bar w} \sum_{a \text{ legal}}
       \bigl(y_a(I_b) - \text{target}_{b,a}\bigr)^2, \\
       \text{cross entropy:} \quad & -\frac{1}{|B|} \sum_{b \in B} \frac{w_b}{\bar w}
       \sum_{a \text{ legal}} \text{target}_{b,a} \log \pi_y(a \mid I_b).

    Both are minimized, over an unrestricted function of I, by the weighted mean of the targets
    stored for I; with linear weighting (w = iteration number) that is Deep CFR's average.
    The global gradient norm is clipped (Brown et al. clip it at 1). `steps` minibatches are
    drawn up front and run in one jitted `lax.scan`, so a fit costs one dispatch.

    ``batching="infosets"`` minimizes the same loss with its exact gradient. Grouping the memory's
    samples by infoset, with :math:`W_I` the total weight stored for I and :math:`t_I` the weighted
    mean target,

    .. math:: \sum_b w_b\, \ell(y(I_b), \text{target}_b) = \sum_I W_I\, \ell(y(I), t_I) + \text{const}

    for both losses (the squared error splits into bias and a variance that does not depend on y;
    the cross-entropy is linear in the target). So every step is one batch of all the infosets
    `rows` (those the memory can hold, each weighted W_I / sum W, zero if never seen): the
    minibatch noise is gone, and a step costs one pass over at most `len(rows)` feature vectors
    however large the memory is. In a game with few infosets this is what makes the fit converge
    in a CPU budget; in a large game there is no such grouping and minibatches are the method.

    Parameters
    ----------
    game : GameTree
    features : InfosetFeatures
    hidden : sequence of int
        Hidden-layer widths.
    loss : {"mse", "cross_entropy"}
    learning_rate : float
        Adam's step size.
    steps : int
        Adam steps per `fit`.
    batch_size : int
        Minibatch size (batching="minibatch").
    gradient_clip : float
        Global gradient norm clip.
    reinitialize : bool
        Start every `fit` from fresh parameters.
    key : jax.Array
        For the initializations.
    rng : numpy Generator
        For the minibatches.
    batching : {"minibatch", "infosets"}
    rows : array_like of int, optional
        The infosets the memory can hold (default: all).

    Raises
    ------
    ValueError
        For an unknown loss or batching.

    Examples
    --------
    >>> import jax, labkit as lk
    >>> from labkit import deep
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> regressor = NetworkRegressor(kuhn, deep.infoset_features(kuhn), [8], "mse", 1e-2, 20, 4, 1.0, False,
    ...                              jax.random.PRNGKey(0), np.random.default_rng(0), batching="infosets")
    >>> memory = Reservoir(10, 2, np.random.default_rng(0))
    >>> memory.add([0], [[1.0, -1.0]], 1.0)
    >>> losses = regressor.fit(memory)
    >>> len(losses), bool(losses[-1] < losses[0])
    (20, True)
    """

    def __init__(self, game: GameTree, features: Any, hidden: Sequence[int], loss: str, learning_rate: float,
                 steps: int, batch_size: int, gradient_clip: float, reinitialize: bool, key: jax.Array,
                 rng: np.random.Generator, batching: str = "minibatch", rows: Any = None):
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
        if batching not in BATCHINGS:
            raise ValueError(f"batching must be one of {BATCHINGS}, got {batching!r}")
        self.batching = batching
        self.rows = np.arange(game.num_infosets, dtype=np.int32) if rows is None else np.asarray(rows, np.int32)
        self.game, self.features, self.loss = game, features, loss
        self.kind = "advantages" if loss == "mse" else "logits"
        self.model = MLP(features.size, hidden, game.num_actions)
        self.steps, self.batch_size = steps, batch_size
        self.reinitialize = reinitialize
        self.optimizer = optax.chain(optax.clip_by_global_norm(gradient_clip), optax.adam(learning_rate))
        self.key, self.rng = key, rng
        self.params = self._fresh()
        self.opt_state = self.optimizer.init(self.params)
        self._inputs = jnp.asarray(features.matrix)
        self._legal = jnp.asarray(game.legal_mask)
        self._apply = jax.jit(self.model.apply)
        self._train = _training_function(tuple(self.model.sizes), loss, float(learning_rate), float(gradient_clip))

    def _fresh(self) -> Any:
        self.key, sub = jax.random.split(self.key)
        return self.model.init(sub)

    def fit(self, memory: Reservoir) -> np.ndarray:
        """Train on the memory (from fresh parameters if `reinitialize`).

        Parameters
        ----------
        memory : Reservoir

        Returns
        -------
        (steps,) float array
            The loss of every step (empty when the memory is).

        Raises
        ------
        ValueError
            With batching="infosets", if the memory holds infosets outside `rows`.

        Examples
        --------
        >>> import jax, labkit as lk
        >>> from labkit import deep
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> regressor = NetworkRegressor(kuhn, deep.infoset_features(kuhn), [8], "mse", 1e-2, 5, 4, 1.0, True,
        ...                              jax.random.PRNGKey(0), np.random.default_rng(0))
        >>> regressor.fit(Reservoir(10, 2, np.random.default_rng(0))).shape     # nothing to fit yet
        (0,)
        """
        if self.reinitialize:
            self.params = self._fresh()
            self.opt_state = self.optimizer.init(self.params)
        n = memory.size
        if n == 0:
            return np.zeros(0)
        if self.batching == "infosets":
            rows, targets, weights = self._grouped(memory)
            batches = np.broadcast_to(np.arange(len(rows), dtype=np.int32), (self.steps, len(rows)))
        else:
            rows, targets = memory.rows, memory.targets.astype(np.float32)
            weights = (memory.weights / max(float(memory.weights[:n].mean()), 1e-30)).astype(np.float32)
            batches = self.rng.integers(0, n, size=(self.steps, self.batch_size)).astype(np.int32)
        self.params, self.opt_state, losses = self._train(self.params, self.opt_state, self._inputs, self._legal,
                                                          rows, targets, weights, batches)
        return np.asarray(losses)

    def _grouped(self, memory: Reservoir) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, weighted mean targets, weights) over `self.rows`, the weights scaled so the mean
        loss of the batch is the memory's weighted mean loss, as a minibatch estimates it."""
        n, I = memory.size, self.game.num_infosets
        w = memory.weights[:n]
        totals = np.bincount(memory.rows[:n], weights=w, minlength=I)
        sums = np.zeros((I, memory.targets.shape[1]))
        np.add.at(sums, memory.rows[:n], w[:, None] * memory.targets[:n])
        seen = totals[self.rows] > 0
        if np.any(totals[np.setdiff1d(np.arange(I), self.rows)] > 0):
            raise ValueError("the memory holds samples of infosets outside this regressor's rows")
        means = np.where(seen[:, None], sums[self.rows] / np.where(seen, totals[self.rows], 1.0)[:, None], 0.0)
        weights = totals[self.rows] * (len(self.rows) / totals.sum())
        return self.rows, means.astype(np.float32), weights.astype(np.float32)

    def predict(self) -> np.ndarray:
        """The network's outputs at every infoset.

        Returns
        -------
        (num_infosets, num_actions) float64 array

        Examples
        --------
        >>> import jax, labkit as lk
        >>> from labkit import deep
        >>> kuhn = lk.games.load("kuhn_poker")
        >>> regressor = NetworkRegressor(kuhn, deep.infoset_features(kuhn), [8], "cross_entropy", 1e-2, 5, 4, 1.0,
        ...                              True, jax.random.PRNGKey(0), np.random.default_rng(0))
        >>> regressor.predict().shape, regressor.kind
        ((12, 2), 'logits')
        """
        return np.asarray(self._apply(self.params, self._inputs), dtype=np.float64)


@functools.cache
def _training_function(sizes: tuple[int, ...], loss: str, learning_rate: float,
                       gradient_clip: float) -> Callable[..., Any]:
    """One jitted `lax.scan` over minibatches, shared by every regressor of the same shape."""
    optimizer = optax.chain(optax.clip_by_global_norm(gradient_clip), optax.adam(learning_rate))

    def batch_loss(params: Any, inputs: Any, legal: Any, targets: Any, weights: Any) -> Any:
        y = MLP.apply(params, inputs)
        if loss == "mse":
            per_sample = jnp.sum(jnp.where(legal, (y - targets) ** 2, 0.0), axis=1)
        else:
            per_sample = -jnp.sum(jnp.where(legal, targets * masked_log_softmax(y, legal), 0.0), axis=1)
        return jnp.mean(weights * per_sample)

    @jax.jit
    def train(params: Any, opt_state: Any, features: Any, legal_mask: Any, rows: Any, targets: Any, weights: Any,
              batches: Any) -> Any:
        def one_step(carry: Any, batch: Any) -> Any:
            params, opt_state = carry
            infosets = rows[batch]
            value, grads = jax.value_and_grad(batch_loss)(params, features[infosets], legal_mask[infosets],
                                                          targets[batch], weights[batch])
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), value
        (params, opt_state), losses = jax.lax.scan(one_step, (params, opt_state), batches)
        return params, opt_state, losses
    return train
