r"""How a game is written down, and how it is compiled once into flat arrays.

A game definition is an object with

    name                      a string, e.g. "kuhn_poker"
    num_players               n >= 1
    num_distinct_actions      actions are the integers 0 .. num_distinct_actions - 1
    initial_state()           the root state
    action_name(action)       a short readable name (optional)
    action_names()            every action's name at once (optional, else action_name per action)
    count_histories(limit)    the exact number of histories, or any number above `limit` as soon as
                              the count passes it (optional: the size guard estimates otherwise)
    walk_states()             (root state, name of the states' infoset-key method) for the walk, when
                              it may use another library's states as they are (optional)

and its states answer

    current_player()          a player 0..n-1, CHANCE or TERMINAL
    legal_actions()           sorted action ids (decision nodes)
    chance_outcomes()         [(action, probability), ...] (chance nodes)
    child(action)             the state after the action (a new object)
    returns()                 the payoff of every player (terminal states)
    infoset_key()             what the acting player knows, as a readable string

(`GameDefinition` and `GameState` spell this out as typing protocols.) `compile_game` walks this
tree once, breadth first, and returns a `GameTree` whose arrays every algorithm in labkit works on.
Information sets are identified by the pair (acting player, `infoset_key()`), so two players may
use the same string.

Size guard: before walking, `compile_game` takes the number of histories from the definition's
``count_histories(limit)`` if it has one (labkit's own games count theirs from their parameters or
from one deal's betting tree, and stop counting as soon as the count passes the limit), and
otherwise counts a small tree exactly (up to `SMALL_TREE` histories, `count_histories_up_to`) or
estimates a larger one from random playouts (`estimate_histories`); a tree above `max_histories`
is refused with a GameError naming the count or the estimate and the limit, and the walk itself
stops at the limit. The default, DEFAULT_MAX_HISTORIES = 20 million, is sized for a 24 GB machine:
compiling costs about 0.5 KB per history at its peak (3-player Leduc, 1.8 M histories, peaks near
1 GB), and the solvers' own arrays need room too.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np

from labkit.tree import CHANCE, TERMINAL, GameTree

DEFAULT_MAX_HISTORIES = 20_000_000


class GameState(Protocol):
    """One history of a game definition, as `compile_game` reads it (see the module docstring).

    Examples
    --------
    >>> from labkit.games import KuhnPoker
    >>> state = KuhnPoker().initial_state()          # chance deals the cards first
    >>> state.current_player(), state.chance_outcomes()[0]
    (-1, (0, 0.3333333333333333))
    """

    def current_player(self) -> int:
        """A player 0..n-1, CHANCE (-1) or TERMINAL (-4).

        Returns
        -------
        int

        Examples
        --------
        >>> from labkit.games import KuhnPoker
        >>> KuhnPoker().initial_state().child(0).child(1).current_player()
        0
        """
        ...

    def legal_actions(self) -> Sequence[int]:
        """The action ids the player to act may choose (a decision history).

        Returns
        -------
        sequence of int
            Sorted, within 0 .. num_distinct_actions - 1.

        Examples
        --------
        >>> from labkit.games import LeducPoker
        >>> LeducPoker().initial_state().child(0).child(1).legal_actions()      # no fold before a bet
        [1, 2]
        """
        ...

    def chance_outcomes(self) -> Sequence[tuple[int, float]]:
        """The chance outcomes and their probabilities (a chance history).

        Returns
        -------
        sequence of (int, float)
            Probabilities summing to 1.

        Examples
        --------
        >>> from labkit.games import KuhnPoker
        >>> KuhnPoker().initial_state().chance_outcomes()
        [(0, 0.3333333333333333), (1, 0.3333333333333333), (2, 0.3333333333333333)]
        """
        ...

    def child(self, action: int) -> GameState:
        """The history after `action`, as a new state.

        Parameters
        ----------
        action : int

        Returns
        -------
        GameState

        Examples
        --------
        >>> from labkit.games import KuhnPoker
        >>> KuhnPoker().initial_state().child(2).cards
        (2,)
        """
        ...

    def returns(self) -> Sequence[float]:
        """Every player's payoff (a terminal history).

        Returns
        -------
        sequence of float
            One number per player.

        Examples
        --------
        >>> from labkit.games import KuhnPoker
        >>> KuhnPoker().initial_state().child(0).child(1).child(0).child(0).returns()   # J vs Q, checked down
        [-1.0, 1.0]
        """
        ...

    def infoset_key(self) -> str:
        """What the player to act knows, as a readable string (its information set).

        Returns
        -------
        str

        Examples
        --------
        >>> from labkit.games import KuhnPoker
        >>> KuhnPoker().initial_state().child(0).child(1).infoset_key()
        'J|'
        """
        ...


@runtime_checkable
class GameDefinition(Protocol):
    """A readable game that `compile_game` (and so `labkit.games.load`) compiles into a `GameTree`.

    Besides these members a definition may have ``action_name(action) -> str`` and
    ``count_histories(limit=None) -> int`` (module docstring).

    Examples
    --------
    >>> from labkit.games import KuhnPoker, GameDefinition
    >>> isinstance(KuhnPoker(), GameDefinition)
    True
    """

    name: str
    num_players: int
    num_distinct_actions: int

    def initial_state(self) -> Any:
        """The root history, a `GameState`.

        Returns
        -------
        GameState

        Examples
        --------
        >>> from labkit.games import KuhnPoker
        >>> KuhnPoker().initial_state().current_player()          # chance deals first
        -1
        """
        ...


class GameError(ValueError):
    """A game definition that labkit cannot use (imperfect recall, inconsistent actions, too big...).

    A subclass of ValueError, so ``except ValueError`` catches it too.

    Examples
    --------
    >>> import labkit as lk
    >>> try:
    ...     lk.games.load("kuhn_poker(players=3)", max_histories=100)
    ... except lk.games.GameError as err:
    ...     print(str(err)[:62])
    kuhn_poker(players=3) has more than 100 histories (counted unt
    """


def estimate_histories(definition: GameDefinition, samples: int = 200, seed: int = 0) -> float:
    r"""Knuth's (1975) unbiased estimate of the number of histories, from random playouts.

    One playout follows uniformly random moves (chance outcomes included) from the root to a
    terminal; with :math:`b_0, b_1, \dots` the branching factors it meets, it estimates the tree
    size as

    .. math:: \hat H = 1 + b_0 + b_0 b_1 + b_0 b_1 b_2 + \cdots,

    whose expectation is the number of histories. The mean over `samples` playouts is the
    estimate. Cheap (samples x depth states), exact for trees whose shape does not depend on the
    moves, and within a small factor for the games we load (3-player Leduc: 1.89 M estimated,
    1.83 M exact).

    Parameters
    ----------
    definition : GameDefinition
        The game (not compiled).
    samples : int
        Number of playouts averaged.
    seed : int
        Seed of the playouts' random moves.

    Returns
    -------
    float
        The estimated number of histories.

    References
    ----------
    D. E. Knuth (1975), "Estimating the efficiency of backtrack programs", Mathematics of
    Computation 29(129).

    Examples
    --------
    Kuhn poker has 58 histories; a check-check line ends sooner than a bet, so single playouts
    vary, and their mean comes close:

    >>> from labkit.games import KuhnPoker
    >>> estimate_histories(KuhnPoker(), samples=1000)
    57.376
    """
    rng = np.random.default_rng(seed)
    total = 0.0
    root = _walk_root(definition)[0]
    for _ in range(samples):
        state, width, size = root, 1.0, 1.0
        while True:
            p = state.current_player()
            if p == TERMINAL:
                break
            moves = [a for a, _ in state.chance_outcomes()] if p == CHANCE else list(state.legal_actions())
            if not moves:
                break
            width *= len(moves)
            size += width
            state = state.child(moves[int(rng.integers(len(moves)))])
        total += size
    return total / samples


def count_histories_chance_blind(definition: GameDefinition, limit: int | None = None) -> int:
    """The number of histories of a game whose tree below a chance node has the same shape for
    every outcome (cards change payoffs and information, not who may move how: Kuhn and Leduc
    poker).

    Walks the tree with only the first outcome of each chance node and multiplies by the number of
    outcomes, so it visits one deal's betting tree instead of the whole game. With a `limit` it
    stops as soon as the count passes it, so a game far too large is refused at once: it then
    returns a number above `limit`, not the exact count, after visiting at most ``limit + 1``
    states (each visited state counts at least once).

    Parameters
    ----------
    definition : GameDefinition
        A game with chance-independent shape.
    limit : int, optional
        Stop counting once the count exceeds this (None: count everything).

    Returns
    -------
    int
        The exact number of histories, or a number above `limit`.

    Examples
    --------
    >>> from labkit.games import LeducPoker
    >>> count_histories_chance_blind(LeducPoker())
    9457
    >>> count_histories_chance_blind(LeducPoker(players=9), limit=1000) > 1000
    True
    """
    total = 0
    stack = [(definition.initial_state(), 1)]
    while stack:
        state, copies = stack.pop()
        total += copies
        if limit is not None and total > limit:
            return total
        p = state.current_player()
        if p == TERMINAL:
            continue
        if p == CHANCE:
            outcomes = state.chance_outcomes()
            stack.append((state.child(outcomes[0][0]), copies * len(outcomes)))
        else:
            stack.extend((state.child(a), copies) for a in state.legal_actions())
    return total


#: Trees of up to this many histories are counted exactly by the size guard (`check_size`): about
#: the states its 200 random playouts visit in a game of depth 4.
SMALL_TREE = 800


def count_histories_up_to(definition: GameDefinition, budget: int) -> int | None:
    """The exact number of histories if it is at most `budget`, else None (after visiting at
    most `budget` + 1 states).

    Parameters
    ----------
    definition : GameDefinition
    budget : int

    Returns
    -------
    int or None

    Examples
    --------
    >>> from labkit.games import KuhnPoker
    >>> count_histories_up_to(KuhnPoker(), 100), count_histories_up_to(KuhnPoker(), 50)
    (58, None)
    """
    count = 0
    stack = [_walk_root(definition)[0]]
    while stack:
        state = stack.pop()
        count += 1
        if count > budget:
            return None
        p = state.current_player()
        if p == TERMINAL:
            continue
        moves = [a for a, _ in state.chance_outcomes()] if p == CHANCE else state.legal_actions()
        stack.extend(state.child(a) for a in moves)
    return count


def _counts_with_limit(counter: Any) -> bool:
    """Whether a definition's ``count_histories`` takes the `limit` argument (asked once per
    function: `inspect.signature` costs more than compiling a small game's levels)."""
    function = getattr(counter, "__func__", counter)      # a method: its class's function
    try:
        return _takes_limit(function)
    except TypeError:                        # an unhashable callable object: asked every time
        return _takes_limit.__wrapped__(function)


@functools.lru_cache(maxsize=64)
def _takes_limit(function: Any) -> bool:
    """Whether `function` has a parameter named ``limit``."""
    import inspect

    try:
        return "limit" in inspect.signature(function).parameters
    except (TypeError, ValueError):          # a builtin or an object without a signature
        return False


def check_size(definition: GameDefinition, max_histories: int = DEFAULT_MAX_HISTORIES) -> float:
    """The definition's number of histories, counted or estimated; GameError if above the limit.

    The count comes from ``definition.count_histories(limit=max_histories)`` when the definition
    has that method (a count that stops once it passes the limit), else from
    ``count_histories()``, else from an exact count of up to `SMALL_TREE` histories
    (`count_histories_up_to`), else from `estimate_histories`.

    Parameters
    ----------
    definition : GameDefinition
    max_histories : int
        The largest number of histories accepted (a positive integer).

    Returns
    -------
    float
        The count (an int) or the estimate (a float) when it is within the limit.

    Raises
    ------
    TypeError
        If `max_histories` is not a positive integer.
    GameError
        If the game has more than `max_histories` histories. When the count stopped at the
        limit, the message gives the playout estimate as well.

    Examples
    --------
    >>> from labkit.games import KuhnPoker
    >>> check_size(KuhnPoker(players=3))
    617
    >>> check_size(KuhnPoker(players=3), max_histories=600)
    Traceback (most recent call last):
      ...
    labkit.games.base.GameError: kuhn_poker(players=3) has more than 600 histories (counted until ...
    """
    if isinstance(max_histories, bool) or not isinstance(max_histories, (int, np.integer)) or max_histories < 1:
        raise TypeError(f"max_histories must be a positive integer, got {max_histories!r}")
    counter = getattr(definition, "count_histories", None)
    if counter is None:
        # a small tree is counted exactly, for less than the playouts would cost
        small = count_histories_up_to(definition, SMALL_TREE)
        size: float = estimate_histories(definition) if small is None else small
        how = "estimated" if small is None else "counted"
    elif _counts_with_limit(counter):
        size = counter(limit=int(max_histories))
        how = "counted"
    else:
        size = counter()
        how = "counted"
    if size > max_histories:
        name = getattr(definition, "name", type(definition).__name__)
        if how == "counted" and _counts_with_limit(counter):
            estimate = estimate_histories(definition)
            amount = (f"more than {max_histories:,} histories (counted until the count passed the limit; "
                      f"about {estimate:.3g} by random playouts)")
        else:
            amount = f"{size:.3g} histories ({how})"
        raise GameError(f"{name} has {amount}; labkit compiles the whole tree and refuses "
                        f"more than max_histories={max_histories:,} (about 0.5 KB each while compiling). "
                        "Pass a larger max_histories if the machine has the memory.")
    return size


def compile_game(definition: GameDefinition, max_histories: int = DEFAULT_MAX_HISTORIES,
                 by_deals: bool | None = None) -> GameTree:
    """Expand a game definition into a `GameTree` (breadth-first order).

    Breadth-first order makes every depth level a contiguous block of histories and the
    children of one node a contiguous block of the next level, so a top-down or bottom-up
    pass is one vectorized operation per level.

    Parameters
    ----------
    definition : GameDefinition
        The game, written as in the module docstring.
    max_histories : int
        Refuse trees with more histories (counted, estimated, and checked during the walk).
    by_deals : bool, optional
        Compile labkit's own Leduc poker from one betting tree expanded over the deals
        (`labkit.games.deals`) and goofspiel a depth level at a time
        (`labkit.games.goofspiel_levels`): the same GameTree, several times faster. None
        (default): for exactly `LeducPoker` and `Goofspiel`; False: always walk history by history.

    Returns
    -------
    GameTree
        The compiled game; `labkit.games.load` caches the trees it compiles from strings,
        `compile_game` makes a new one at every call.

    Raises
    ------
    GameError
        If the tree is larger than `max_histories`, chance probabilities do not sum to 1, a
        player id or an action id is out of range, or an information set mixes histories with
        different legal actions or breaks perfect recall (its histories disagree on the player's
        own earlier sequence).

    Examples
    --------
    >>> from labkit.games import KuhnPoker
    >>> compile_game(KuhnPoker())
    GameTree('kuhn_poker': 2 players, 58 histories, 12 infosets, 2 distinct actions)
    """
    check_size(definition, max_histories)
    if by_deals is None:
        by_deals = type(definition) in _compiled_by_levels()
    if by_deals:
        compile_fast = getattr(definition, "compile_by_levels", None) or cast(Any, definition).compile_by_deals
        return cast(GameTree, compile_fast())
    num_players = int(definition.num_players)
    num_actions = int(definition.num_distinct_actions)
    name = getattr(definition, "name", type(definition).__name__)
    # the histories, numbered breadth first: a level's children are made in the order its
    # histories are visited, so the lists below are appended in history order
    parent: list[int] = [-1]
    action: list[int] = [-1]
    edge_prob: list[float] = [1.0]
    player: list[int] = []
    sizes: list[int] = []
    terminal_rows: list[int] = []
    terminal_returns: list[Any] = []
    infoset_of_history: list[int] = []
    infoset_index: dict[tuple[int, str], int] = {}
    infoset_keys: list[str] = []
    infoset_player: list[int] = []
    infoset_legal: list[tuple[int, ...]] = []

    # a definition may hand the walk its own library's states and the name of their key method,
    # sparing a wrapper object per state (the OpenSpiel adapter: pyspiel states)
    root, key_method = _walk_root(definition)
    level = [root]
    h = 0
    while level:
        sizes.append(len(level))
        below: list[Any] = []
        for state in level:
            p = state.current_player()
            player.append(p)
            if p == TERMINAL:
                infoset_of_history.append(-1)
                terminal_rows.append(h)
                terminal_returns.append(state.returns())
            elif p == CHANCE:
                infoset_of_history.append(-1)
                outcomes = list(state.chance_outcomes())
                total = sum(q for _, q in outcomes)
                if abs(total - 1.0) > 1e-9:
                    raise GameError(f"chance outcomes at depth {len(sizes) - 1} sum to {total}, not 1")
                for a, q in sorted(outcomes):
                    below.append(state.child(a))
                    parent.append(h)
                    action.append(a)
                    edge_prob.append(float(q))
            else:
                if not 0 <= p < num_players:
                    raise GameError(f"current_player() returned {p}; expected 0..{num_players - 1}, CHANCE or TERMINAL")
                key = getattr(state, key_method)()
                legal = tuple(sorted(state.legal_actions()))
                if not legal or legal[0] < 0 or legal[-1] >= num_actions:
                    raise GameError(f"infoset {key!r}: legal actions {legal} are not within 0..{num_actions - 1}")
                index = infoset_index.get((p, key))
                if index is None:
                    index = infoset_index[(p, key)] = len(infoset_keys)
                    infoset_keys.append(key)
                    infoset_player.append(p)
                    infoset_legal.append(legal)
                elif infoset_legal[index] != legal:
                    raise GameError(f"infoset {key!r} has inconsistent legal actions: "
                                    f"{infoset_legal[index]} in one history, {legal} in another")
                infoset_of_history.append(index)
                below += [state.child(a) for a in legal]
                parent += [h] * len(legal)
                action += legal
                edge_prob += [1.0] * len(legal)
            h += 1
            if len(parent) > max_histories:
                raise GameError(f"{name} has more than max_histories={max_histories:,} histories (its estimate "
                                "was lower); pass a larger max_histories if the machine has the memory")
        level = below

    num_histories = len(parent)
    parent_array = np.asarray(parent, dtype=np.int64)
    action_array = np.asarray(action, dtype=np.int64)
    player_array = np.asarray(player, dtype=np.int64)
    infoset = np.asarray(infoset_of_history, dtype=np.int64)
    # each player's last own sequence before every history, and perfect recall: every history of an
    # infoset has its first history's (the first in breadth-first order that breaks it is named)
    own_last = _own_last_sequences(parent_array, action_array, player_array, infoset, sizes, num_players,
                                   num_actions)
    decision = np.flatnonzero(infoset >= 0)
    first_history = decision[np.unique(infoset[decision], return_index=True)[1]]   # infosets number in that order
    infoset_player_array = np.asarray(infoset_player, dtype=np.int64)
    infoset_parent_seq = own_last[first_history, infoset_player_array]
    broken = own_last[decision, player_array[decision]] != infoset_parent_seq[infoset[decision]]
    if broken.any():
        h = int(decision[np.argmax(broken)])
        raise GameError(f"infoset {infoset_keys[infoset[h]]!r} breaks perfect recall: its histories differ in "
                        f"player {player[h]}'s own earlier information sets or actions")
    infoset_keys = _distinct_keys(infoset_keys, infoset_player)
    returns = np.zeros((num_histories, num_players))
    returns[terminal_rows] = _returns_table(terminal_returns, num_players)
    legal_mask = np.zeros((len(infoset_keys), num_actions), dtype=bool)
    for i, legal in enumerate(infoset_legal):
        legal_mask[i, list(legal)] = True
    names = getattr(definition, "action_names", None)          # all at once, where a definition can
    action_names = list(names()) if callable(names) else [_action_name(definition, a) for a in range(num_actions)]
    return GameTree(
        name=name,
        num_players=num_players,
        num_actions=num_actions,
        parent=parent_array,
        action=action_array,
        player=player_array,
        depth=np.repeat(np.arange(len(sizes), dtype=np.int64), sizes),
        infoset=infoset,
        chance_prob=np.asarray(edge_prob, dtype=float),
        returns=returns,
        infoset_keys=infoset_keys,
        infoset_player=infoset_player_array,
        legal_mask=legal_mask,
        infoset_parent_seq=infoset_parent_seq,
        own_last_seq=own_last,
        action_names=action_names,
        definition=definition,
    )


def _walk_root(definition: Any) -> tuple[Any, str]:
    """(root state, name of its infoset-key method): the definition's `walk_states()` if it has one."""
    walk_states = getattr(definition, "walk_states", None)
    return walk_states() if walk_states is not None else (definition.initial_state(), "infoset_key")


def _returns_table(rows: list[Any], num_players: int) -> np.ndarray:
    """(Z, n) float array of the terminals' `returns()`, one conversion for all when every row has
    n numbers; GameError naming the first row that does not."""
    try:
        table = np.array(rows, dtype=float)
    except (TypeError, ValueError):          # ragged rows, or something that is not a number
        table = None
    if table is None or table.shape != (len(rows), num_players):
        for row in rows:
            values = np.asarray(row, dtype=float)
            if values.shape != (num_players,):
                raise GameError(f"returns() gave {values.size} values for {num_players} players")
    assert table is not None                # every row has n numbers, so the conversion worked
    return table


def _compiled_by_levels() -> tuple[type, ...]:
    """The definitions whose exact class compiles a level at a time with numpy (Leduc poker's
    `compile_by_deals`, `labkit.games.deals`; goofspiel's `compile_by_levels`,
    `labkit.games.goofspiel_levels`); a subclass may change the rules, so it is walked."""
    from labkit.games.goofspiel import Goofspiel
    from labkit.games.leduc import LeducPoker
    return (LeducPoker, Goofspiel)


def _own_last_sequences(parent: np.ndarray, action: np.ndarray, player: np.ndarray, infoset: np.ndarray,
                       sizes: Sequence[int], num_players: int, num_actions: int) -> np.ndarray:
    """Every player's last own sequence before each history, a depth level at a time.

    A history inherits its parent's row, and the edge from a decision history of player p at
    infoset I with action a sets column p to the sequence I * A + a.

    Parameters
    ----------
    parent, action, player, infoset : numpy.ndarray
        (H,) the tree's arrays, histories numbered level by level (breadth-first).
    sizes : sequence of int
        The numbers of histories of the levels, in order (the first is the root's level).
    num_players, num_actions : int

    Returns
    -------
    numpy.ndarray
        (H, n) int64, -1 where the player has not moved yet.
    """
    own_last = np.full((len(parent), num_players), -1, dtype=np.int64)
    edge_infoset = np.where(parent >= 0, infoset[np.maximum(parent, 0)], -1)
    lo = int(sizes[0])
    for size in sizes[1:]:
        hi = lo + int(size)
        above = parent[lo:hi]
        own_last[lo:hi] = own_last[above]
        moved = np.flatnonzero(edge_infoset[lo:hi] >= 0)
        own_last[lo + moved, player[above[moved]]] = edge_infoset[lo + moved] * num_actions + action[lo + moved]
        lo = hi
    return own_last


def _check_recall(name: str, own_last: np.ndarray, player: np.ndarray, infoset: np.ndarray,
                 infoset_parent_seq: np.ndarray) -> None:
    """Raise `GameError` unless every decision history's own last sequence is its infoset's
    (perfect recall)."""
    decision = np.flatnonzero(infoset >= 0)
    if np.any(own_last[decision, player[decision]] != infoset_parent_seq[infoset[decision]]):
        raise GameError(f"{name}: an information set breaks perfect recall")


def _distinct_keys(keys: Sequence[str], players: Sequence[int]) -> list[str]:
    """Readable keys, one per infoset: a string that several players use gets " (player p)"."""
    if len(set(keys)) == len(keys):                 # no string is used twice (one set, in C)
        return list(keys)
    owners: dict[str, set[int]] = {}
    for key, p in zip(keys, players, strict=True):
        owners.setdefault(key, set()).add(p)
    return [key if len(owners[key]) == 1 else f"{key} (player {p})" for key, p in zip(keys, players, strict=True)]


def _action_name(definition: Any, a: int) -> str:
    namer = getattr(definition, "action_name", None)
    return namer(a) if namer else str(a)
