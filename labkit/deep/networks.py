r"""Multilayer perceptrons in plain JAX, and the conversion of any network into a `TabularPolicy`.

A network maps an infoset's feature vector (`labkit.deep.features`) to one number per distinct
action of the game. What the numbers mean is its *kind*, and the conversion turns them into a
distribution over the legal actions of each infoset:

* logits (policy networks): :math:`\pi(a \mid I) = e^{y_a} / \sum_{b \text{ legal}} e^{y_b}`;
* probabilities: :math:`\pi(a \mid I) = \max(y_a, 0) / \sum_{b \text{ legal}} \max(y_b, 0)`
  (uniform if all are 0);
* advantages, regret matching: :math:`\pi(a \mid I) = y_a^+ / \sum_b y_b^+`; if no legal
  :math:`y_b` is positive, all mass on the legal argmax (Deep CFR's rule) or uniform (tabular
  CFR's rule);
* q_values: the greedy action, argmax over the legal actions, ties to the lowest id.

Illegal actions always get 0. `network_policy` evaluates a network once at every infoset of the
game (one batched call per player) and returns a `TabularPolicy`, so ``lk.nash_conv(game,
network_policy(...))`` is the exact NashConv of what the network plays.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from labkit.deep.features import infoset_features
from labkit.games import load
from labkit.policy import TabularPolicy

OUTPUT_KINDS = ("logits", "probabilities", "advantages", "q_values")
NONPOSITIVE_RULES = ("argmax", "uniform")
MASKED_LOGIT = -1e9            # finite, so a masked softmax never computes inf - inf


class MLP:
    """A fully connected network y = W_L relu(... relu(W_1 x + b_1) ...) + b_L.

    Parameters
    ----------
    in_size : int
    hidden : sequence of int
        Widths of the hidden layers (ReLU).
    out_size : int

    last_scale : float
        The last layer's weights are scaled by it, so a fresh policy network starts near uniform
        and a fresh value network near zero.

    The parameters are a list of {"w": (m, k), "b": (k,)} dicts, made by `init` from a
    `jax.random` key: He-normal weights, zero biases.

    Raises
    ------
    ValueError
        For a layer size below 1.

    Examples
    --------
    >>> import jax
    >>> net = MLP(7, [16, 16], 2)
    >>> net
    MLP(7 -> 16 -> 16 -> 2)
    >>> params = net.init(jax.random.PRNGKey(0))
    >>> [layer["w"].shape for layer in params]
    [(7, 16), (16, 16), (16, 2)]
    """

    def __init__(self, in_size: int, hidden: Sequence[int], out_size: int, last_scale: float = 0.1):
        try:
            sizes = [int(in_size), *(int(h) for h in hidden), int(out_size)]
        except (TypeError, ValueError):
            raise ValueError(f"layer sizes must be positive integers, got in_size={in_size!r}, hidden={hidden!r}, "
                             f"out_size={out_size!r}") from None
        if any(s < 1 for s in sizes):
            raise ValueError(f"layer sizes must be positive integers, got {sizes}")
        self.sizes = sizes
        self.last_scale = float(last_scale)

    def init(self, key: jax.Array) -> list[dict[str, jax.Array]]:
        """Fresh parameters from a `jax.random.PRNGKey`.

        Parameters
        ----------
        key : jax.Array

        Returns
        -------
        list of {"w": (m, k) array, "b": (k,) array}
            float32, one dict per layer.

        Examples
        --------
        >>> import jax
        >>> params = MLP(3, [4], 2).init(jax.random.PRNGKey(1))
        >>> params[0]["b"].tolist(), params[1]["w"].dtype
        ([0.0, 0.0, 0.0, 0.0], dtype('float32'))
        """
        params = []
        keys = jax.random.split(key, len(self.sizes) - 1)
        for k, (m, n) in enumerate(zip(self.sizes[:-1], self.sizes[1:], strict=True)):
            scale = np.sqrt(2.0 / m) * (self.last_scale if k == len(self.sizes) - 2 else 1.0)
            params.append({"w": scale * jax.random.normal(keys[k], (m, n), jnp.float32),
                           "b": jnp.zeros((n,), jnp.float32)})
        return params

    @staticmethod
    def apply(params: Any, x: Any) -> Any:
        r"""The network's outputs :math:`y = W_L\, \mathrm{relu}(\cdots \mathrm{relu}(W_1 x + b_1) \cdots) + b_L`.

        Parameters
        ----------
        params : list of dicts
            From `init`.
        x : (batch, in_size) array

        Returns
        -------
        (batch, out_size) jax array

        Examples
        --------
        >>> import jax, jax.numpy as jnp
        >>> net = MLP(3, [4], 2)
        >>> net.apply(net.init(jax.random.PRNGKey(0)), jnp.zeros((5, 3))).shape     # zero biases: zeros
        (5, 2)
        """
        for layer in params[:-1]:
            x = jax.nn.relu(x @ layer["w"] + layer["b"])
        return x @ params[-1]["w"] + params[-1]["b"]

    def __repr__(self) -> str:
        return f"MLP({' -> '.join(map(str, self.sizes))})"


def masked_log_softmax(logits: Any, mask: Any) -> Any:
    """log pi over the legal actions (jax); about -1e9 on illegal ones, which callers multiply by 0.

    Parameters
    ----------
    logits : (..., num_actions) array
    mask : (..., num_actions) bool array
        The legal actions.

    Returns
    -------
    (..., num_actions) jax array

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> out = masked_log_softmax(jnp.zeros((1, 3)), jnp.array([[True, True, False]]))
    >>> [round(float(v), 4) for v in out[0, :2]], bool(out[0, 2] < -1e8)
    ([-0.6931, -0.6931], True)
    """
    return jax.nn.log_softmax(jnp.where(mask, logits, MASKED_LOGIT), axis=-1)


def network_outputs(game: Any, networks: Any, features: Any = None) -> np.ndarray:
    """(num_infosets, num_actions) outputs of the networks at every infoset, as float64.

    Parameters
    ----------
    game : str or GameTree
    networks : callable or sequence of callables
        ``f(x) -> y`` mapping a (k, num_features) batch to (k, num_actions) outputs, one shared
        by all players or one per player (player p's network is evaluated at p's infosets).
    features : InfosetFeatures, optional
        Default: the game's own encoding (`infoset_features(game)`).

    Returns
    -------
    (num_infosets, num_actions) float64 array

    Raises
    ------
    TypeError
        For networks that are not a callable or one callable per player.
    ValueError
        For outputs of the wrong shape.

    Examples
    --------
    >>> import numpy as np
    >>> outputs = network_outputs("kuhn_poker", lambda x: np.ones((len(x), 2)))
    >>> outputs.shape, float(outputs.sum())
    ((12, 2), 24.0)
    """
    game = load(game)
    features = infoset_features(game) if features is None else features
    if callable(networks):
        networks = [networks] * game.num_players
    networks = list(networks)
    if len(networks) != game.num_players or not all(callable(f) for f in networks):
        raise TypeError(f"networks must be a callable or a list of {game.num_players} callables, one per player")
    out = np.zeros(game.legal_mask.shape)
    for player, f in enumerate(networks):
        rows = game.infosets_of(player)
        if len(rows):
            values = np.asarray(f(features.matrix[rows]), dtype=np.float64)
            if values.shape != (len(rows), game.num_actions):
                raise ValueError(f"a network returned shape {values.shape}; expected "
                                 f"({len(rows)}, {game.num_actions}): one output per distinct action")
            out[rows] = values
    return out


def policy_from_outputs(game: Any, outputs: Any, kind: str = "logits", nonpositive: str = "argmax") -> TabularPolicy:
    """Turn per-infoset network outputs into a policy (see the module docstring for each kind).

    Parameters
    ----------
    game : GameTree
    outputs : (num_infosets, num_actions) array
    kind : {"logits", "probabilities", "advantages", "q_values"}
    nonpositive : {"argmax", "uniform"}
        For kind="advantages": what to play where no legal advantage is positive.

    Returns
    -------
    TabularPolicy

    Raises
    ------
    ValueError
        For an unknown kind or rule, outputs of the wrong shape, or outputs that are not finite
        at a legal action.

    Examples
    --------
    >>> import numpy as np
    >>> outputs = np.zeros((12, 2))
    >>> outputs[0] = [1.0, 3.0]          # advantages at 'J|'
    >>> outputs[1] = [-1.0, -2.0]        # none positive at 'Q|'
    >>> print(policy_from_outputs("kuhn_poker", outputs, "advantages").probs[:2])
    [[0.25 0.75]
     [1.   0.  ]]
    >>> policy_from_outputs("kuhn_poker", np.full((12, 2), np.nan))
    Traceback (most recent call last):
      ...
    ValueError: network outputs must be finite at every legal action
    """
    game = load(game)
    if kind not in OUTPUT_KINDS:
        raise ValueError(f"kind must be one of {OUTPUT_KINDS}, got {kind!r}")
    if nonpositive not in NONPOSITIVE_RULES:
        raise ValueError(f"nonpositive must be one of {NONPOSITIVE_RULES}, got {nonpositive!r}")
    y = np.asarray(outputs, dtype=np.float64)
    legal = game.legal_mask
    if y.shape != legal.shape:
        raise ValueError(f"outputs have shape {y.shape}; expected (num_infosets, num_actions) = {legal.shape}")
    if not np.all(np.isfinite(y[legal])):
        raise ValueError("network outputs must be finite at every legal action")
    uniform = legal / legal.sum(axis=1, keepdims=True)
    if kind == "logits":
        z = np.where(legal, y, -np.inf)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return TabularPolicy(game, e / e.sum(axis=1, keepdims=True), check=False)
    if kind == "q_values":
        return TabularPolicy(game, _greedy(legal, y), check=False)
    positive = np.where(legal, np.maximum(y, 0.0), 0.0)
    total = positive.sum(axis=1, keepdims=True)
    fallback = uniform if kind == "probabilities" or nonpositive == "uniform" else _greedy(legal, y)
    probs = np.where(total > 0, positive / np.where(total > 0, total, 1.0), fallback)
    return TabularPolicy(game, probs, check=False)


def _greedy(legal: np.ndarray, y: np.ndarray) -> np.ndarray:
    best = np.where(legal, y, -np.inf).argmax(axis=1)
    probs = np.zeros(legal.shape)
    probs[np.arange(len(best)), best] = 1.0
    return probs


def network_policy(game: Any, networks: Any, kind: str = "logits", features: Any = None,
                   nonpositive: str = "argmax") -> TabularPolicy:
    """The policy a network plays, as a `TabularPolicy`.

    Evaluate it at every infoset, mask illegal actions and normalize:
    ``policy_from_outputs(game, network_outputs(game, networks, features), kind, nonpositive)``.

    Parameters
    ----------
    game : str or GameTree
    networks : callable or sequence of callables
        As `network_outputs`.
    kind : {"logits", "probabilities", "advantages", "q_values"}
    features : InfosetFeatures, optional
    nonpositive : {"argmax", "uniform"}

    Returns
    -------
    TabularPolicy

    Raises
    ------
    TypeError, ValueError
        As `network_outputs` and `policy_from_outputs`.

    Examples
    --------
    >>> import functools, jax, labkit as lk
    >>> from labkit import deep
    >>> game = lk.games.load("kuhn_poker")
    >>> features = deep.infoset_features(game)
    >>> net = deep.MLP(features.size, [16], game.num_actions)
    >>> params = net.init(jax.random.PRNGKey(0))
    >>> policy = deep.network_policy(game, functools.partial(net.apply, params))
    >>> bool(abs(policy.probs.sum(axis=1) - 1).max() < 1e-12)
    True
    """
    game = load(game)
    return policy_from_outputs(game, network_outputs(game, networks, features), kind, nonpositive)


def apply_fn(model: MLP, params: Any) -> Callable:
    """``x -> model.apply(params, x)``, jitted: the callable `network_outputs` expects.

    Parameters
    ----------
    model : MLP
    params : list of dicts
        From ``model.init``.

    Returns
    -------
    callable

    Examples
    --------
    >>> import jax, labkit as lk
    >>> net = MLP(7, [8], 2)
    >>> policy = network_policy("kuhn_poker", apply_fn(net, net.init(jax.random.PRNGKey(0))))
    >>> policy.probs.shape
    (12, 2)
    """
    fn = jax.jit(model.apply)
    return lambda x: fn(params, x)
