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
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import optax

from labkit.deep.features import infoset_features
from labkit.deep.networks import MLP, masked_log_softmax
from labkit.mccfr import _pick_from
from labkit.solver import Solver
from labkit.tree import CHANCE, TERMINAL

_BLOCK = 4096                   # labkit.mccfr draws its uniform numbers 4096 at a time, too
LOSSES = ("mse", "cross_entropy")
BATCHINGS = ("minibatch", "infosets")


def check_seed(seed):
    """An integer seed >= 0 (what every learner of labkit.deep takes)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise TypeError(f"seed must be an integer >= 0, got {seed!r}")
    return int(seed)


def check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


@dataclass
class RandomStreams:
    """Independent random streams of one run.

    sampling : the game's samples (cards, actions) -- np.random.default_rng(seed), as labkit.mccfr;
    memory : reservoir replacements;  batches : minibatch indices;  key : JAX key for initializations.
    """
    sampling: np.random.Generator
    memory: np.random.Generator
    batches: np.random.Generator
    key: jax.Array


def random_streams(seed) -> RandomStreams:
    seed = check_seed(seed)
    return RandomStreams(np.random.default_rng(seed), np.random.default_rng([seed, 1]),
                         np.random.default_rng([seed, 2]), jax.random.PRNGKey(seed))


class NetworkSolver(Solver):
    """What the zero-sum learners share: the game, a validated configuration of type `config_type`,
    the seed's random streams, the infoset features and the flat tree for sampling."""

    config_type = None

    def __init__(self, game, config, seed):
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
    """Uniform numbers in [0, 1) from a generator, drawn `_BLOCK` at a time (one numpy call each)."""

    def __init__(self, rng):
        self.rng, self._block, self._next = rng, [], 0

    def __call__(self) -> float:
        if self._next == len(self._block):
            self._block, self._next = self.rng.random(_BLOCK).tolist(), 0
        u = self._block[self._next]
        self._next += 1
        return u


def pick(cumulative, u):
    """The first index k with u < cumulative[k] (the last one if rounding left a gap)."""
    for k, c in enumerate(cumulative):
        if u < c:
            return k
    return len(cumulative) - 1


def pick_from(probs, u):
    """Sample an index of a probability list with the uniform number u, never a zero-probability one
    (the same rule as tabular MCCFR's sampling, `labkit.mccfr._pick_from`)."""
    return _pick_from(probs, u)


class FlatTree:
    """The compiled tree as Python lists, for walking sampled paths node by node."""

    def __init__(self, game):
        H, parent = game.num_histories, game.parent
        first_child = np.searchsorted(parent, np.arange(H))      # breadth first: children contiguous
        num_children = np.bincount(parent[1:], minlength=H)
        self.player = game.player.tolist()
        self.first_child = first_child.tolist()
        self.infoset = game.infoset.tolist()
        self.returns = game.returns.tolist()
        self.chance_cumulative = [None] * H
        self.chance_probs = [None] * H
        for h in np.flatnonzero(game.is_chance):
            p = game.chance_prob[first_child[h]:first_child[h] + num_children[h]]
            self.chance_probs[h] = p.tolist()
            self.chance_cumulative[h] = np.cumsum(p).tolist()
        self.legal_actions = [game.legal_actions(i).tolist() for i in range(game.num_infosets)]
        self.CHANCE, self.TERMINAL = CHANCE, TERMINAL


def flat_tree(game) -> FlatTree:
    cached = game.__dict__.get("_deep_flat_tree")
    if cached is None:
        cached = game.__dict__["_deep_flat_tree"] = FlatTree(game)
    return cached


def rows_to_lists(game, table):
    """An (I, A) array -> per-infoset lists over the legal actions (for scalar access in a walk)."""
    legal = flat_tree(game).legal_actions
    values = np.asarray(table, dtype=float)
    return [values[i, actions].tolist() for i, actions in enumerate(legal)]


class Reservoir:
    """A memory of (infoset, target vector, weight) samples that keeps a uniform sample of all
    samples ever added once it is full (reservoir sampling: sample number s > capacity replaces a
    uniformly chosen slot with probability capacity / s).

    Arrays are allocated at full capacity, so networks train on fixed shapes (one compilation).
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

    def add(self, rows, targets, weights):
        """Add a batch of samples in order (the same result as adding them one by one)."""
        rows = np.asarray(rows, dtype=np.int32)
        k = len(rows)
        if k == 0:
            return
        targets = np.asarray(targets, dtype=np.float64).reshape(k, -1)
        weights = np.broadcast_to(np.asarray(weights, dtype=np.float64), (k,))
        free = min(self.capacity - self.size, k)
        if free:
            slots = slice(self.size, self.size + free)
            self.rows[slots], self.targets[slots], self.weights[slots] = rows[:free], targets[:free], weights[:free]
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
    """

    def __init__(self, game, loss: str):
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
        self.game, self.loss = game, loss
        self.kind = "advantages" if loss == "mse" else "probabilities"
        self.outputs = np.zeros(game.legal_mask.shape)

    def fit(self, memory: Reservoir, rows=None):
        I, A = self.game.legal_mask.shape
        n = memory.size
        w = memory.weights[:n]
        sums = np.zeros((I, A))
        np.add.at(sums, memory.rows[:n], w[:, None] * memory.targets[:n])
        totals = np.bincount(memory.rows[:n], weights=w, minlength=I)
        self.outputs = np.where(totals[:, None] > 0, sums / np.where(totals > 0, totals, 1.0)[:, None], 0.0)
        return self

    def predict(self):
        """(I, A) outputs at every infoset (float64)."""
        return self.outputs


class NetworkRegressor:
    """An MLP fitted to a reservoir memory by Adam on minibatches.

    Loss on a minibatch B (weights normalized by their mean over the memory, w_bar):

        mse            sum_{b in B} (w_b / w_bar) sum_{a legal} (y_a(I_b) - target_{b,a})^2 / |B|
        cross_entropy  - sum_{b in B} (w_b / w_bar) sum_{a legal} target_{b,a} log pi_y(a | I_b) / |B|

    Both are minimized, over an unrestricted function of I, by the weighted mean of the targets
    stored for I; with linear weighting (w = iteration number) that is Deep CFR's average.
    The global gradient norm is clipped (Brown et al. clip it at 1). `steps` minibatches are
    drawn up front and run in one jitted `lax.scan`, so a fit costs one dispatch.

    ``batching="infosets"`` minimizes the same loss with its exact gradient. Grouping the memory's
    samples by infoset, with W_I the total weight stored for I and t_I the weighted mean target,

        sum_b w_b l(y(I_b), target_b) = sum_I W_I l(y(I), t_I) + (a constant)

    for both losses (the squared error splits into bias and a variance that does not depend on y;
    the cross-entropy is linear in the target). So every step is one batch of all the infosets
    `rows` (those the memory can hold, each weighted W_I / sum W, zero if never seen): the
    minibatch noise is gone, and a step costs one pass over at most `len(rows)` feature vectors
    however large the memory is. In a game with few infosets this is what makes the fit converge
    in a CPU budget; in a large game there is no such grouping and minibatches are the method.
    """

    def __init__(self, game, features, hidden, loss, learning_rate, steps, batch_size, gradient_clip,
                 reinitialize, key, rng, batching="minibatch", rows=None):
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

    def _fresh(self):
        self.key, sub = jax.random.split(self.key)
        return self.model.init(sub)

    def fit(self, memory: Reservoir):
        """Train on the memory (from fresh parameters if `reinitialize`); returns the losses."""
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

    def _grouped(self, memory):
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

    def predict(self):
        """(I, A) network outputs at every infoset (float64)."""
        return np.asarray(self._apply(self.params, self._inputs), dtype=np.float64)


@functools.lru_cache(maxsize=None)
def _training_function(sizes, loss, learning_rate, gradient_clip):
    """One jitted `lax.scan` over minibatches, shared by every regressor of the same shape."""
    optimizer = optax.chain(optax.clip_by_global_norm(gradient_clip), optax.adam(learning_rate))

    def batch_loss(params, inputs, legal, targets, weights):
        y = MLP.apply(params, inputs)
        if loss == "mse":
            per_sample = jnp.sum(jnp.where(legal, (y - targets) ** 2, 0.0), axis=1)
        else:
            per_sample = -jnp.sum(jnp.where(legal, targets * masked_log_softmax(y, legal), 0.0), axis=1)
        return jnp.mean(weights * per_sample)

    @jax.jit
    def train(params, opt_state, features, legal_mask, rows, targets, weights, batches):
        def one_step(carry, batch):
            params, opt_state = carry
            infosets = rows[batch]
            value, grads = jax.value_and_grad(batch_loss)(params, features[infosets], legal_mask[infosets],
                                                          targets[batch], weights[batch])
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), value
        (params, opt_state), losses = jax.lax.scan(one_step, (params, opt_state), batches)
        return params, opt_state, losses
    return train
