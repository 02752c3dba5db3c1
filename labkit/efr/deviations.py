r"""The deviation types of EFR as arrays: which time-selection weights and which action
transformations every decision point of a game carries.

Morrill, D'Orazio, Lanctot, Wright, Bowling and Greenwald (2021), "Efficient Deviation Types and
Learning for Hindsight Rationality in Extensive-Form Games" (ICML), in the notation of chapter 6:

* A *decision point* is an infoset with at least two legal actions. Only decision points learn,
  and only they count as predecessors.
* The predecessors of a decision point I are its player's earlier decision points on the way to I,
  :math:`(I_1, a_1), \dots, (I_d, a_d)`, with :math:`a_k` the action at :math:`I_k` that leads
  toward I.
* A *transformation sequence* s says what the deviation does at every predecessor: follow the
  strategy (identity), play :math:`a_k` whatever the strategy says (external), or move the
  probability of one action :math:`b \ne a_k` onto :math:`a_k` (an informed trigger). Its weight,
  the probability that the deviated strategy plays to I, is a product of the player's own action
  probabilities:

  .. math:: w_I(s; \pi) = \prod_k f_k, \qquad f_k = \begin{cases} \pi(a_k \mid I_k) & \text{identity,} \\
            1 & \text{external,} \\ \pi(b \mid I_k) & \text{trigger } b \to a_k. \end{cases}

  So a sequence is stored as the list of flat sequence indices ``I_k * A + x`` whose probabilities
  multiply into its weight.
* Each sequence is paired with external transformations ("every action becomes b"), internal ones
  ("a becomes b", a != b), or both.

`deviation_structure(game, kind)` builds, once per game and type, one *row* per (infoset, sequence)
pair, sorted by player, then by own depth d (number of predecessors), then by infoset, so that a
top-down pass handles one contiguous block of rows per (player, depth).
"""
from __future__ import annotations

import enum
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from labkit._messages import show

if TYPE_CHECKING:
    from labkit.tree import GameTree


class DeviationType(enum.StrEnum):
    """The deviation types of EFR, from the weakest (blind action) to the behavioral deviations.

    The members' values are the names every function of labkit accepts ("act", "cf_ex+in", ...);
    `DEVIATION_NAMES` lists them in this order. chapter 6 draws their landscape.

    References
    ----------
    D. Morrill et al. (2021), "Efficient deviation types and learning for hindsight rationality in
    extensive-form games", ICML, Table 1 and Figure 1.

    Examples
    --------
    >>> DeviationType("tips") is DeviationType.TIPS, str(DeviationType.CF_EX_IN)
    (True, 'cf_ex+in')
    """

    ACT = "act"                  # blind action
    ACT_IN = "act_in"            # informed action
    CF = "cf"                    # blind counterfactual: EFR-cf is vanilla CFR
    CF_IN = "cf_in"              # informed counterfactual
    CF_EX_IN = "cf_ex+in"
    BPS = "bps"                  # blind partial sequence
    CFPS = "cfps"                # counterfactual partial sequence
    CFPS_EX_IN = "cfps_ex+in"
    CSPS = "csps"                # causal partial sequence
    TIPS = "tips"                # twice informed partial sequence
    TIPS_EX_IN = "tips_ex+in"
    BHV = "bhv"                  # (single-target) behavioral

    def __str__(self) -> str:
        return self.value


DEVIATION_NAMES = tuple(t.value for t in DeviationType)


def parse_deviation_type(deviations: DeviationType | str) -> DeviationType:
    """A `DeviationType` from itself or its name ("tips", "TIPS_EX+IN", "cf_ex_in" ...).

    Parameters
    ----------
    deviations : DeviationType or str
        A member, its value or its name, in any case; "_ex_in" may stand for "_ex+in".

    Returns
    -------
    DeviationType

    Raises
    ------
    ValueError
        For anything else, listing the valid names.

    Examples
    --------
    >>> parse_deviation_type("TIPS_EX_IN")
    <DeviationType.TIPS_EX_IN: 'tips_ex+in'>
    >>> parse_deviation_type("informed")
    Traceback (most recent call last):
      ...
    ValueError: unknown deviation type 'informed'; valid names are act, act_in, cf, ...
    """
    if isinstance(deviations, DeviationType):
        return deviations
    if isinstance(deviations, str):
        key = deviations.strip().lower()
        key = key.replace("_ex_in", "_ex+in")
        for kind in DeviationType:
            if key in (kind.value, kind.name.lower()):
                return kind
    raise ValueError(f"unknown deviation type {deviations!r}; valid names are {', '.join(DEVIATION_NAMES)}")


# which action transformations a sequence is paired with
EXTERNAL, INTERNAL, BOTH = 1, 2, 3


def _sequences(kind: DeviationType, preds: list[tuple[int, int]], legal: Callable[[int], Any],
               A: int) -> list[tuple[list[int], int]]:
    """The transformation sequences of one decision point as (factor list, transformation group).

    preds : list of (I_k, a_k) decision-point predecessors, from the first decision down.
    legal : function I -> its legal action ids.
    """
    d = len(preds)
    path = [I * A + a for I, a in preds]
    # BPS sequence k (k = 1..d+1): follow the strategy before I_k, play straight to I from I_k on
    bps = [path[:k] for k in range(d + 1)]                 # bps[0] all external, bps[d] identity
    # informed triggers at I_k (identity before I_k, b -> a_k at I_k, external after)
    triggers = [[path[:k] + [I * A + b] for b in legal(I) if b != a] for k, (I, a) in enumerate(preds)]
    # the causal order of the authors' sequence lists: bps[0], triggers at I_1, bps[1], ..., bps[d]
    # (only the order of floating-point sums depends on it)
    causal = [s for k in range(d) for s in [bps[k]] + triggers[k]] + [bps[d]]
    K = DeviationType
    if kind is K.ACT:
        return [(path, EXTERNAL)]
    if kind is K.ACT_IN:
        return [(path, INTERNAL)]
    if kind is K.CF:
        return [([], EXTERNAL)]
    if kind is K.CF_IN:
        return [([], INTERNAL)]
    if kind is K.CF_EX_IN:
        return [([], BOTH)]
    if kind is K.BPS:
        return [(s, EXTERNAL) for s in bps]
    if kind is K.CFPS:
        return [(s, INTERNAL) for s in bps]
    if kind is K.CFPS_EX_IN:
        return [(s, BOTH) for s in bps]
    if kind is K.CSPS:
        # external on every sequence except the identity one (internal only there)
        return [(s, EXTERNAL) for s in causal[:-1]] + [(causal[-1], INTERNAL)]
    if kind is K.TIPS:
        return [(s, INTERNAL) for s in causal]
    if kind is K.TIPS_EX_IN:
        return [(s, BOTH) for s in causal]
    if kind is K.BHV:
        # every tuple (b_1..b_d): b_k = a_k is the identity at I_k, b_k != a_k the trigger b_k -> a_k
        choices = [[I * A + b for b in legal(I)] for I, _ in preds]
        return [(list(s), INTERNAL) for s in itertools.product(*choices)]
    raise AssertionError(kind)


@dataclass(eq=False)
class DeviationStructure:
    """Rows (infoset, transformation sequence) of one deviation type on one game.

    Made by `deviation_structure`; R rows and S transformation slots below.

    Attributes
    ----------
    kind : DeviationType
    num_actions : int
        A, the game's number of distinct actions.
    has_external, has_internal : bool
        Which transformation slots exist: slots 0..A-1 are "every action becomes b" (if external),
        then A*A slots "a becomes b" at offset ``internal_offset + a * A + b`` (if internal).
    num_slots : int
    row_infoset : (R,) int
    row_factors : (R, max_depth) int
        Flat indices into the extended probability vector (probs.ravel() followed by a 1.0 at
        index ``one``) whose product is the row's weight; padded with ``one``.
    row_active : (R, S) bool
        Transformations paired with the row (legal ones only, never the identity).
    blocks : dict player -> list of (row slice, infosets, starts)
        One entry per own depth d, top-down: the rows of the player's decision points with d
        predecessors, those infosets in order, and where each infoset's rows start (relative
        to the slice, for np.add.reduceat).
    decision_points : (D,) int
        Infosets with at least two legal actions.
    predecessors : dict infoset -> list of (I_k, a_k)
    internal_offset : int
        The first internal slot.
    one : int
        The index of the trailing 1.0 in the extended probability vector.

    Examples
    --------
    >>> import labkit as lk
    >>> structure = deviation_structure(lk.games.load("kuhn_poker"), "cfps")
    >>> structure.num_rows, structure.num_slots, structure.num_regrets()
    (15, 4, 30)
    """

    kind: DeviationType
    num_actions: int
    has_external: bool
    has_internal: bool
    num_slots: int
    internal_offset: int
    one: int
    row_infoset: np.ndarray
    row_factors: np.ndarray
    row_active: np.ndarray
    blocks: dict
    decision_points: np.ndarray
    predecessors: dict

    @property
    def num_rows(self) -> int:
        """R, the number of (infoset, transformation sequence) rows.

        Examples
        --------
        >>> import labkit as lk
        >>> deviation_structure(lk.games.load("kuhn_poker"), "cf").num_rows     # one per decision point
        12
        """
        return len(self.row_infoset)

    def num_regrets(self) -> int:
        """Number of (infoset, sequence, transformation) regrets EFR keeps.

        Returns
        -------
        int

        Examples
        --------
        >>> import labkit as lk
        >>> deviation_structure(lk.games.load("leduc_poker"), "bhv").num_regrets()
        16020
        """
        return int(self.row_active.sum())


def decision_point_predecessors(game: GameTree) -> dict[int, list[tuple[int, int]]]:
    r"""Every decision point's predecessors: :math:`I \mapsto [(I_1, a_1), \dots, (I_d, a_d)]`.

    Its player's earlier decision points, from the first one down, each with the action that
    leads toward I. Infosets with a single legal action are passed through: they are nobody's
    decision.

    Parameters
    ----------
    game : GameTree

    Returns
    -------
    dict of int to list of (int, int)
        One entry per decision point.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> preds = decision_point_predecessors(kuhn)
    >>> [(kuhn.infoset_keys[J], kuhn.action_names[a]) for J, a in preds[kuhn.infoset_index("Q|pb")]]
    [('Q|', 'pass')]
    """
    A = game.num_actions
    decision = game.num_legal >= 2
    preds = {}
    for I in np.flatnonzero(decision):
        chain = []
        seq = game.infoset_parent_seq[I]
        while seq >= 0:
            J, a = divmod(int(seq), A)
            if decision[J]:
                chain.append((J, a))
            seq = game.infoset_parent_seq[J]
        preds[int(I)] = chain[::-1]
    return preds


def deviation_structure(game: GameTree, deviations: DeviationType | str) -> DeviationStructure:
    """Build (or fetch from the game's cache) the row structure of a deviation type.

    Parameters
    ----------
    game : GameTree
        A compiled game (`labkit.games.load`).
    deviations : DeviationType or str

    Returns
    -------
    DeviationStructure
        Cached on the game: every EFR learner of this type on this game shares it.

    Raises
    ------
    TypeError
        If `game` is not a GameTree.
    ValueError
        For an unknown deviation type.

    Examples
    --------
    >>> import labkit as lk
    >>> leduc = lk.games.load("leduc_poker")
    >>> [deviation_structure(leduc, kind).num_rows for kind in ("cf", "bps", "tips", "bhv")]
    [936, 2664, 4752, 4734]
    """
    from labkit.tree import GameTree
    if not isinstance(game, GameTree):
        raise TypeError(f"game must be a GameTree (labkit.games.load(...)), got {type(game).__name__} {show(game)}")
    kind = parse_deviation_type(deviations)
    cache = game.__dict__.setdefault("_efr_structure_cache", {})
    if kind not in cache:
        cache[kind] = _build(game, kind)
    return cache[kind]


def _build(game: GameTree, kind: DeviationType) -> DeviationStructure:
    A = game.num_actions
    K = DeviationType
    has_external = kind in (K.ACT, K.CF, K.CF_EX_IN, K.BPS, K.CFPS_EX_IN, K.CSPS, K.TIPS_EX_IN)
    has_internal = kind not in (K.ACT, K.CF, K.BPS)
    internal_offset = A if has_external else 0
    num_slots = internal_offset + (A * A if has_internal else 0)
    one = game.num_infosets * A
    legal_sets = [np.flatnonzero(row) for row in game.legal_mask]
    preds = decision_point_predecessors(game)
    depth = {I: len(p) for I, p in preds.items()}
    max_depth = max(depth.values(), default=0)

    # the slots each group activates, per infoset (legal actions only, no identity)
    def slot_mask(I: int, group: int) -> np.ndarray:
        mask = np.zeros(num_slots, dtype=bool)
        legal = game.legal_mask[I]
        if group & EXTERNAL:
            mask[:A] = legal
        if group & INTERNAL:
            swap = np.outer(legal, legal) & ~np.eye(A, dtype=bool)
            mask[internal_offset:] = swap.reshape(-1)
        return mask

    row_infoset: list[int] = []
    row_factors: list[list[int]] = []
    row_active: list[np.ndarray] = []
    blocks: dict[int, list] = {}
    for player in range(game.num_players):
        blocks[player] = []
        for d in range(max_depth + 1):
            infosets = [I for I in preds if game.infoset_player[I] == player and depth[I] == d]
            if not infosets:
                continue
            start = len(row_infoset)
            starts = []
            for I in infosets:
                starts.append(len(row_infoset) - start)
                masks = {}
                for factors, group in _sequences(kind, preds[I], lambda J: legal_sets[J], A):
                    if group not in masks:
                        masks[group] = slot_mask(I, group)
                    row_infoset.append(I)
                    row_factors.append(factors + [one] * (max_depth - len(factors)))
                    row_active.append(masks[group])
            blocks[player].append((slice(start, len(row_infoset)), np.asarray(infosets), np.asarray(starts)))
    return DeviationStructure(
        kind=kind, num_actions=A, has_external=has_external, has_internal=has_internal,
        num_slots=num_slots, internal_offset=internal_offset, one=one,
        row_infoset=np.asarray(row_infoset, dtype=np.int64),
        row_factors=np.asarray(row_factors, dtype=np.int64).reshape(len(row_infoset), max_depth),
        row_active=np.asarray(row_active, dtype=bool).reshape(len(row_infoset), num_slots),
        blocks=blocks, decision_points=np.asarray(sorted(preds), dtype=np.int64), predecessors=preds)


def describe_row(game: GameTree, structure: DeviationStructure, row: int) -> list[str]:
    """Readable memory of one row: what the deviation does at each predecessor of its infoset.

    e.g. ["follow at 'J|'", "raise instead of call at 'J|rr'"], or ["play Bet at 'Q|'"] when it
    plays straight to the infoset from there.

    Parameters
    ----------
    game : GameTree
    structure : DeviationStructure
        Of this game.
    row : int
        In 0..structure.num_rows - 1.

    Returns
    -------
    list of str
        One entry per predecessor; empty at a first decision.

    Raises
    ------
    ValueError
        For a row out of range.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> structure = deviation_structure(kuhn, "tips")
    >>> rows = [r for r in range(structure.num_rows) if kuhn.infoset_keys[structure.row_infoset[r]] == "J|pb"]
    >>> [describe_row(kuhn, structure, r) for r in rows]
    [["play pass at 'J|'"], ["pass instead of bet at 'J|'"], ["follow at 'J|'"]]
    """
    if isinstance(row, (bool, np.bool_)) or not isinstance(row, (int, np.integer)) \
            or not 0 <= row < structure.num_rows:
        raise ValueError(f"row must be an integer in 0..{structure.num_rows - 1}, got {show(row)}")
    A = structure.num_actions
    infoset = int(structure.row_infoset[row])
    chosen = {int(f) // A: int(f) % A for f in structure.row_factors[row] if f != structure.one}
    names = game.action_names
    parts = []
    for J, a in structure.predecessors[infoset]:
        key = game.infoset_keys[J]
        if J not in chosen:
            parts.append(f"play {names[a]} at {key!r}")
        elif chosen[J] == a:
            parts.append(f"follow at {key!r}")
        else:
            parts.append(f"{names[a]} instead of {names[chosen[J]]} at {key!r}")
    return parts


def describe_slot(game: GameTree, structure: DeviationStructure, slot: int) -> str:
    """Readable action transformation of a slot: "always Bet" or "Check -> Bet".

    Parameters
    ----------
    game : GameTree
    structure : DeviationStructure
        Of this game.
    slot : int
        In 0..structure.num_slots - 1.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        For a slot out of range.

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> structure = deviation_structure(kuhn, "cf_ex+in")
    >>> [describe_slot(kuhn, structure, int(s)) for s in structure.row_active[0].nonzero()[0]]
    ['always pass', 'always bet', 'pass -> bet', 'bet -> pass']
    """
    if isinstance(slot, (bool, np.bool_)) or not isinstance(slot, (int, np.integer)) \
            or not 0 <= slot < structure.num_slots:
        raise ValueError(f"slot must be an integer in 0..{structure.num_slots - 1}, got {show(slot)}")
    A, names = structure.num_actions, game.action_names
    if structure.has_external and slot < A:
        return f"always {names[slot]}"
    a, b = divmod(slot - structure.internal_offset, A)
    return f"{names[a]} -> {names[b]}"
