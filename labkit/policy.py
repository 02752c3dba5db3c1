"""Behavioral policies: one probability table over (infoset, action) for all players.

A `TabularPolicy` holds ``probs``, an array of shape (num_infosets, num_actions): row I is
the distribution the acting player uses at infoset I, zero on illegal actions. It is a
*joint* policy: every player's infosets are in it, so evaluation never has to guess what
the other players do.
"""
from __future__ import annotations

import numpy as np

from labkit._messages import show
from labkit.tree import GameTree

TOLERANCE = 1e-9


class TabularPolicy:
    """A behavioral strategy profile.

    Parameters
    ----------
    game : GameTree
    probs : (num_infosets, num_actions) array
        Nonnegative, zero on illegal actions, each row summing to 1.
    check : bool
        Validate `probs` (default). Solvers that build valid arrays may skip it.
    """

    def __init__(self, game: GameTree, probs, check: bool = True):
        if not isinstance(game, GameTree):
            raise TypeError(f"game must be a GameTree (labkit.games.load(...)), got {type(game).__name__}")
        self.game = game
        if check:
            from labkit.evaluate import policy_array        # the same checks as every evaluator
            self.probs = policy_array(game, probs)
        else:
            self.probs = np.asarray(probs, dtype=float)

    # ------------------------------------------------------------ constructors
    @classmethod
    def uniform(cls, game):
        """Every legal action equally likely at every infoset."""
        mask = game.legal_mask
        return cls(game, mask / mask.sum(axis=1, keepdims=True), check=False)

    @classmethod
    def pure(cls, game, actions):
        """A deterministic policy. `actions` is a sequence of one action per infoset, or a dict
        {infoset key: action}; infosets missing from the dict play their first legal action."""
        choice = np.argmax(game.legal_mask, axis=1)
        if isinstance(actions, dict):
            for key, a in actions.items():
                choice[game.infoset_index(key)] = a
        else:
            choice = np.asarray(actions, dtype=np.int64)
            if choice.shape != (game.num_infosets,):
                raise ValueError(f"pure() needs one action per infoset ({game.num_infosets}), got shape {choice.shape}")
        rows = np.arange(game.num_infosets)
        if np.any(choice < 0) or np.any(choice >= game.num_actions) or not np.all(game.legal_mask[rows, choice]):
            bad = next(i for i in rows if not (0 <= choice[i] < game.num_actions and game.legal_mask[i, choice[i]]))
            raise ValueError(f"action {choice[bad]} is not legal at infoset {game.infoset_keys[bad]!r}; "
                             f"legal: {list(game.legal_actions(bad))}")
        probs = np.zeros(game.legal_mask.shape)
        probs[rows, choice] = 1.0
        return cls(game, probs, check=False)

    @classmethod
    def from_dict(cls, game, table, default=None):
        """Build a policy from {infoset key: distribution}.

        A distribution is a dict {action id or action name: probability} or a list of
        probabilities over the infoset's legal actions. Infosets not listed take their row
        from `default` (a TabularPolicy; uniform if None).
        """
        base = (default if default is not None else cls.uniform(game)).probs.copy()
        names = {name: a for a, name in enumerate(game.action_names)}
        for key, dist in table.items():
            i = game.infoset_index(key)
            legal = game.legal_actions(i)
            row = np.zeros(game.num_actions)
            if isinstance(dist, dict):
                for a, p in dist.items():
                    a = names.get(a, a) if isinstance(a, str) else a
                    if a not in legal:
                        raise ValueError(f"action {show(a)} is not legal at infoset {key!r}; legal: {list(legal)}")
                    row[a] = p
            else:
                dist = np.asarray(dist, dtype=float)
                if dist.shape != (len(legal),):
                    raise ValueError(f"infoset {key!r} has {len(legal)} legal actions, got {dist.shape[0] if dist.ndim else 1} probabilities")
                row[legal] = dist
            base[i] = row
        return cls(game, base)

    @classmethod
    def mixture(cls, policies, weights=None):
        """The behavioral policy that plays like picking policy k with probability weights[k]
        once, before the game, and following it throughout.

        Per player and infoset (Kuhn's theorem), with x_k the player's own reach under policy k:
            pi(a | I) = sum_k w_k x_k(I) pi_k(a | I) / sum_k w_k x_k(I).
        Infosets no policy reaches get the plain weighted average.
        """
        policies = list(policies)
        if not policies:
            raise ValueError("mixture() needs at least one policy")
        game = policies[0].game
        if any(p.game is not game for p in policies):
            raise ValueError("all policies of a mixture must belong to the same game")
        w = np.full(len(policies), 1.0 / len(policies)) if weights is None else np.asarray(weights, float)
        if w.shape != (len(policies),) or np.any(w < 0) or not np.isclose(w.sum(), 1.0):
            raise ValueError("mixture weights must be nonnegative, one per policy, and sum to 1")
        num = np.zeros(game.legal_mask.shape)
        den = np.zeros(game.num_infosets)
        plain = np.zeros(game.legal_mask.shape)
        for wk, pol in zip(w, policies):
            reach = infoset_own_reach(game, pol.probs)
            num += wk * reach[:, None] * pol.probs
            den += wk * reach
            plain += wk * pol.probs
        probs = np.where(den[:, None] > 0, num / np.where(den > 0, den, 1.0)[:, None], plain)
        return cls(game, normalize_rows(game, probs), check=False)

    # ------------------------------------------------------------ access
    def __getitem__(self, key):
        """{action name: probability} over the legal actions of the infoset `key`."""
        i = self.game.infoset_index(key)
        return {self.game.action_names[a]: float(self.probs[i, a]) for a in self.game.legal_actions(i)}

    def action_probabilities(self, key):
        """{action id: probability} over the legal actions of the infoset `key`."""
        i = self.game.infoset_index(key)
        return {int(a): float(self.probs[i, a]) for a in self.game.legal_actions(i)}

    def copy(self):
        return TabularPolicy(self.game, self.probs.copy(), check=False)

    def to_dict(self):
        """{infoset key: {action name: probability}} for every infoset."""
        return {key: self[key] for key in self.game.infoset_keys}

    def table(self, player=None, digits=3, max_rows=60):
        """The policy as a text table, one row per infoset (optionally one player's only)."""
        game = self.game
        rows = range(game.num_infosets) if player is None else game.infosets_of(player)
        actions = [a for a in range(game.num_actions) if game.legal_mask[list(rows), a].any()] if len(rows) else []
        width = max([len("infoset")] + [len(game.infoset_keys[i]) for i in rows])
        col = max(digits + 3, *(len(game.action_names[a]) for a in actions)) if actions else digits + 3
        lines = ["player  " + "infoset".ljust(width) + "".join(game.action_names[a].rjust(col + 2) for a in actions)]
        for k, i in enumerate(rows):
            if k == max_rows:
                lines.append(f"... ({len(rows) - max_rows} more infosets)")
                break
            cells = "".join((f"{self.probs[i, a]:.{digits}f}" if game.legal_mask[i, a] else "-").rjust(col + 2)
                            for a in actions)
            lines.append(f"{game.infoset_player[i]:>6d}  " + game.infoset_keys[i].ljust(width) + cells)
        return "\n".join(lines)

    def __repr__(self):
        return f"TabularPolicy({self.game.name}, {self.game.num_infosets} infosets)\n" + self.table(max_rows=24)


def uniform_policy(game) -> TabularPolicy:
    """The policy that plays every legal action with equal probability."""
    from labkit.games import load
    return TabularPolicy.uniform(load(game))


def validate_probs(game, probs):
    """Raise ValueError naming the first infoset whose row is not a distribution over legal actions."""
    expected = game.legal_mask.shape
    if probs.shape != expected:
        raise ValueError(f"policy array has shape {probs.shape}; expected (num_infosets, num_actions) = {expected}")
    bad_value = ~np.isfinite(probs) | (probs < -TOLERANCE)
    illegal = (~game.legal_mask) & (np.abs(probs) > TOLERANCE)
    sums = np.where(game.legal_mask, probs, 0.0).sum(axis=1)
    bad_sum = np.abs(sums - 1.0) > 1e-6
    for name, mask in (("a negative or non-finite probability", bad_value.any(axis=1)),
                       ("probability on an illegal action", illegal.any(axis=1)),
                       ("probabilities that do not sum to 1", bad_sum)):
        if mask.any():
            i = int(np.flatnonzero(mask)[0])
            legal = {game.action_names[a]: round(float(probs[i, a]), 6) for a in range(game.num_actions)
                     if game.legal_mask[i, a] or probs[i, a] != 0}
            raise ValueError(f"invalid policy at infoset {game.infoset_keys[i]!r}: {name} ({legal}, sum {sums[i]:.6g})")


def check_probs(game, probs, name="policy"):
    """Raise ValueError unless `probs` (of the game's shape) is a valid joint policy.

    The same conditions as `validate_probs` (to its tolerances), from three whole-array
    reductions: the minimum, the total mass on illegal actions (a dot product) and the sum of
    squared deviations of the row sums from 1; NaN fails every comparison and an infinity makes
    a deviation infinite, so both are caught. Only an invalid array pays for
    `validate_probs`, which finds the first bad infoset for the message.
    """
    ones, illegal = _check_vectors(game)
    flat = probs.reshape(-1)
    if not flat.size:
        return
    # np.dot and np.minimum.reduce: the cheapest numpy calls for these reductions (the check
    # guards every evaluation of a raw array, so its few microseconds count; benchmarks/)
    deviation = _dot(probs, ones)
    deviation -= 1.0
    # in this order, so that a NaN or an infinity stops the test before it could meet a 0
    ok = (_minimum(flat) >= -TOLERANCE                 # NaN fails every comparison here; so does -inf
          and _dot(deviation, deviation) <= 1e-12     # row sums within 1e-6 of 1; +inf fails
          and _dot(flat, illegal) <= TOLERANCE)       # with every entry >= -1e-9: no mass on illegal actions
    if not ok:
        try:
            validate_probs(game, probs)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
        # validate_probs sums legal entries only; a row can fail here only through illegal mass
        raise ValueError(f"{name}: invalid probabilities (non-finite or outside [0, 1])")


_dot = np.dot
_minimum = np.minimum.reduce


def _check_vectors(game):
    """Cached per game: a vector of ones (num_actions,) and the 0/1 indicator of illegal slots."""
    cached = game.__dict__.get("_check_vectors")
    if cached is None:
        cached = game.__dict__["_check_vectors"] = (np.ones(game.num_actions),
                                                    (~game.legal_mask).reshape(-1).astype(float))
    return cached


def normalize_rows(game, probs):
    """Renormalize each row over the legal actions; rows with zero mass become uniform."""
    p = np.where(game.legal_mask, np.maximum(probs, 0.0), 0.0)
    total = p.sum(axis=1, keepdims=True)
    uniform = game.legal_mask / game.legal_mask.sum(axis=1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), uniform)


def realization_weights(game, probs):
    """x[I, a] = the acting player's own probability of the sequence (I, a):
    the product of its own action probabilities on the way to I, times probs[I, a]."""
    reach = infoset_own_reach(game, probs)
    return reach[:, None] * probs


def infoset_own_reach(game, probs):
    """x(I): the acting player's own probability of playing to infoset I (1 at first decisions).

    x(I) = x(I') pi(a' | I') where (I', a') is the player's previous sequence; infosets are
    numbered parents first, so one vectorized step per own depth suffices.
    """
    reach = np.ones(game.num_infosets)
    flat = probs.reshape(-1)
    for idx, parent_infoset, parent_seq in _own_depth_levels(game):
        reach[idx] = reach[parent_infoset] * flat[parent_seq]
    return reach


def _own_depth_levels(game):
    """Cached per game: for own depths 1, 2, ...: the infosets there, their parent infoset and
    parent sequence."""
    levels = game.__dict__.get("_own_depth_levels")
    if levels is None:
        levels = []
        for d in range(1, int(game.infoset_own_depth.max(initial=0)) + 1):
            idx = _own_depth_index(game, d)
            seq = game.infoset_parent_seq[idx]
            levels.append((idx, seq // game.num_actions, seq))
        game.__dict__["_own_depth_levels"] = levels
    return levels


def _own_depth_index(game, d):
    cache = game.__dict__.setdefault("_own_depth_cache", {})
    if d not in cache:
        cache[d] = np.flatnonzero(game.infoset_own_depth == d)
    return cache[d]
