"""Any OpenSpiel game as a labkit game definition (OpenSpiel is an optional dependency).

Simultaneous-move games are first made turn-based with OpenSpiel's own converter, so the
players of a round move one after another without seeing each other's choices.

Information sets are (player, information state string) pairs, as in OpenSpiel, so games whose
strings omit the player (phantom_ttt, dark_hex) load. OpenSpiel's C++ code prints every error it
raises to the process's stderr ("OpenSpiel exception: ..."); the adapter captures that output,
and a failure becomes a ValueError that quotes it.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pyspiel

    from labkit.policy import TabularPolicy
    from labkit.tree import GameTree


def _pyspiel() -> Any:
    try:
        import pyspiel
    except ImportError as err:          # pragma: no cover - depends on the environment
        raise ImportError("labkit.games.from_openspiel needs OpenSpiel: pip install open_spiel "
                          "(or pip install -e '.[test]')") from err
    return pyspiel


@contextlib.contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """Redirect the process's file descriptor 2 (where OpenSpiel's C++ code writes) to a
    temporary file for the duration of the block.

    Yields
    ------
    list of str
        Empty inside the block; after it, holds the captured text (one string).

    Examples
    --------
    >>> import os
    >>> with captured_stderr() as captured:
    ...     _ = os.write(2, b"from C++")
    >>> captured
    ['from C++']
    """
    captured: list[str] = []
    with _sink() as sink:
        try:
            saved = os.dup(2)
        except OSError:                  # pragma: no cover - no stderr descriptor at all
            yield captured
            return
        try:
            os.dup2(sink.fileno(), 2)
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.append(sink.read().decode(errors="replace"))


def _sink() -> Any:
    """A file for the captured output: in memory where the system has memfd_create (Linux), which
    costs far less than a temporary file on disk, else a temporary file."""
    if hasattr(os, "memfd_create"):
        try:
            return os.fdopen(os.memfd_create("labkit-openspiel-stderr"), "w+b")
        except OSError:
            pass
    return tempfile.TemporaryFile(mode="w+b")


def load_openspiel_game(game: str | pyspiel.Game) -> pyspiel.Game:
    """A turn-based pyspiel.Game from a game string or a pyspiel.Game, with clear errors.

    Parameters
    ----------
    game : str or pyspiel.Game
        A simultaneous-move game is converted with ``pyspiel.convert_to_turn_based``.

    Returns
    -------
    pyspiel.Game

    Raises
    ------
    ImportError
        Without OpenSpiel.
    ValueError
        If OpenSpiel cannot load the string (its first line of explanation is quoted).
    TypeError
        For anything but a string or a pyspiel.Game.

    Examples
    --------
    >>> load_openspiel_game("goofspiel(num_cards=3)").get_type().short_name
    'turn_based_simultaneous_game'
    """
    if not isinstance(game, str) and type(game).__module__.split(".")[0] != "pyspiel":
        # refused before OpenSpiel is needed, so the message is the same with or without it
        raise TypeError(f"spec_or_game must be an OpenSpiel game string or a pyspiel.Game, got "
                        f"{type(game).__name__} {game!r}")
    pyspiel = _pyspiel()
    if isinstance(game, str):
        with captured_stderr():
            try:
                game = pyspiel.load_game(game)
            except pyspiel.SpielError as err:
                first_line = str(err).strip().splitlines()[0]       # not the list of every game it knows
                raise ValueError(f"OpenSpiel cannot load {game!r}: {first_line}") from None
    elif not isinstance(game, pyspiel.Game):
        raise TypeError(f"spec_or_game must be an OpenSpiel game string or a pyspiel.Game, got "
                        f"{type(game).__name__} {game!r}")
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)
    return game


class OpenSpielDefinition:
    """Wraps a pyspiel.Game in the interface `labkit.games.base.compile_game` reads.

    Parameters
    ----------
    game : str or pyspiel.Game
        Loaded with `load_openspiel_game`.

    Examples
    --------
    >>> definition = OpenSpielDefinition("kuhn_poker")
    >>> definition.name, definition.num_players, definition.num_distinct_actions
    ('kuhn_poker()', 2, 2)
    """

    def __init__(self, game: str | pyspiel.Game):
        game = load_openspiel_game(game)
        self.os_game = game
        self.name = str(game)
        self.num_players = game.num_players()
        self.num_distinct_actions = game.num_distinct_actions()
        self._root = game.new_initial_state()

    def initial_state(self) -> OpenSpielState:
        """The root state, wrapped.

        Returns
        -------
        OpenSpielState

        Examples
        --------
        >>> OpenSpielDefinition("kuhn_poker").initial_state().current_player()
        -1
        """
        return OpenSpielState(self._root)

    def walk_states(self) -> tuple[pyspiel.State, str]:
        """The root as a pyspiel state and the name of its infoset-key method: `compile_game`
        walks pyspiel's states as they are, without an `OpenSpielState` around each.

        Returns
        -------
        (pyspiel.State, str)

        Examples
        --------
        >>> root, key_method = OpenSpielDefinition("kuhn_poker").walk_states()
        >>> getattr(root.child(0).child(1), key_method)()
        '0'
        """
        return self._root, "information_state_string"

    def action_name(self, a: int) -> str:
        """OpenSpiel's name of action a at the root, for the first player it is valid for (some
        games name actions only for one player or in context; then the id).

        Parameters
        ----------
        a : int

        Returns
        -------
        str

        Examples
        --------
        >>> OpenSpielDefinition("kuhn_poker").action_name(1)
        'Bet'
        """
        with captured_stderr():
            return self._action_name(a)

    def action_names(self) -> list[str]:
        """`action_name` of every action, with OpenSpiel's error output captured once for all.

        Returns
        -------
        list of str

        Examples
        --------
        >>> OpenSpielDefinition("leduc_poker").action_names()
        ['Fold', 'Call', 'Raise']
        """
        with captured_stderr():
            return [self._action_name(a) for a in range(self.num_distinct_actions)]

    def _action_name(self, a: int) -> str:
        pyspiel = _pyspiel()
        for player in range(self.num_players):
            try:
                return self._root.action_to_string(player, a)
            except pyspiel.SpielError:
                continue
        return str(a)


class OpenSpielState:
    """A pyspiel.State answering the questions of `labkit.games.base.GameState`.

    Parameters
    ----------
    state : pyspiel.State

    Examples
    --------
    >>> state = OpenSpielDefinition("kuhn_poker").initial_state().child(0).child(1)
    >>> state.current_player(), state.infoset_key()
    (0, '0')
    """

    def __init__(self, state: pyspiel.State):
        self.state = state

    def current_player(self) -> int:
        """OpenSpiel's current player: 0..n-1, -1 for chance, -4 at the end.

        Returns
        -------
        int

        Examples
        --------
        >>> OpenSpielDefinition("kuhn_poker").initial_state().current_player()
        -1
        """
        return self.state.current_player()

    def legal_actions(self) -> list[int]:
        """OpenSpiel's legal actions (sorted).

        Returns
        -------
        list of int

        Examples
        --------
        >>> OpenSpielDefinition("kuhn_poker").initial_state().child(0).child(1).legal_actions()
        [0, 1]
        """
        return self.state.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """OpenSpiel's (action, probability) pairs at a chance node.

        Returns
        -------
        list of (int, float)

        Examples
        --------
        >>> OpenSpielDefinition("kuhn_poker").initial_state().chance_outcomes()[0]
        (0, 0.3333333333333333)
        """
        return self.state.chance_outcomes()

    def child(self, action: int) -> OpenSpielState:
        """The state after `action` (a new OpenSpiel state).

        Parameters
        ----------
        action : int

        Returns
        -------
        OpenSpielState

        Examples
        --------
        >>> OpenSpielDefinition("kuhn_poker").initial_state().child(2).state.history()
        [2]
        """
        return OpenSpielState(self.state.child(action))

    def returns(self) -> list[float]:
        """OpenSpiel's returns of every player.

        Returns
        -------
        list of float

        Examples
        --------
        >>> state = OpenSpielDefinition("kuhn_poker").initial_state().child(2).child(0)
        >>> state.child(1).child(0).returns()
        [1.0, -1.0]
        """
        return self.state.returns()

    def infoset_key(self) -> str:
        """OpenSpiel's information state string of the acting player.

        Returns
        -------
        str

        Examples
        --------
        >>> OpenSpielDefinition("kuhn_poker").initial_state().child(2).child(0).child(1).infoset_key()
        '0b'
        """
        return self.state.information_state_string()


def tree_differences(native: GameTree, reference: GameTree, atol: float = 1e-12) -> list[str]:
    """How two compiled trees of the same game differ (an empty list when they are the same).

    Both trees are breadth first with sorted actions, so equal games give equal arrays position
    by position. Compared: the history arrays (parent, action, player, depth), the chance
    probabilities and the terminal returns (to `atol`), and the information partition: the map
    from `native`'s infoset of each decision history to `reference`'s must be a bijection.
    Infoset keys may differ (labkit's native keys are short, OpenSpiel's are its own strings).

    Parameters
    ----------
    native, reference : GameTree
    atol : float
        Absolute tolerance on chance probabilities and returns.

    Returns
    -------
    list of str
        One readable line per difference found.

    Examples
    --------
    >>> import labkit as lk
    >>> tree_differences(lk.games.load("kuhn_poker"), lk.games.load("openspiel:kuhn_poker"))
    []
    """
    import numpy as np

    if native.num_histories != reference.num_histories:
        return [f"{native.name}: {native.num_histories} histories, {reference.name}: {reference.num_histories}"]
    problems = []
    for name in ("parent", "action", "player", "depth"):
        a, b = getattr(native, name), getattr(reference, name)
        if not np.array_equal(a, b):
            h = int(np.flatnonzero(a != b)[0])
            problems.append(f"{name} differs first at history {h} ({a[h]} vs {b[h]}); "
                            f"native path {_path(native, h)}")
    if problems:
        return problems           # the remaining arrays are only comparable on the same structure
    if native.num_players != reference.num_players:
        problems.append(f"num_players {native.num_players} vs {reference.num_players}")
    if not np.allclose(native.chance_prob, reference.chance_prob, rtol=0, atol=atol):
        h = int(np.flatnonzero(~np.isclose(native.chance_prob, reference.chance_prob, rtol=0, atol=atol))[0])
        problems.append(f"chance probability differs at history {h} (path {_path(native, h)}): "
                        f"{native.chance_prob[h]} vs {reference.chance_prob[h]}")
    z = native.terminals
    if native.returns.shape == reference.returns.shape:
        close = np.isclose(native.returns[z], reference.returns[z], rtol=0, atol=atol).all(axis=1)
        if not close.all():
            h = int(z[~close][0])
            problems.append(f"returns differ at terminal {h} (path {_path(native, h)}): "
                            f"{native.returns[h]} vs {reference.returns[h]}")
    decisions = np.flatnonzero(native.infoset >= 0)
    pairs = np.unique(np.stack([native.infoset[decisions], reference.infoset[decisions]]), axis=1)
    for side, tree, other in ((0, native, reference), (1, reference, native)):
        values, counts = np.unique(pairs[side], return_counts=True)
        for i in values[counts > 1][:3]:
            partners = pairs[1 - side, pairs[side] == i]
            problems.append(f"infoset {tree.infoset_keys[i]!r} of {tree.name} is split into "
                            f"{len(partners)} infosets of {other.name}, e.g. "
                            f"{other.infoset_keys[partners[0]]!r} and {other.infoset_keys[partners[1]]!r}")
    return problems


def _path(tree: GameTree, h: int) -> list[int]:
    """The action sequence from the root to history h, e.g. [2, 0, 1]."""
    actions = []
    while tree.parent[h] >= 0:
        actions.append(int(tree.action[h]))
        h = tree.parent[h]
    return actions[::-1]


# ----------------------------------------------------------------------------- policies both ways
def _openspiel_game(game: GameTree, os_game: Any) -> Any:
    """`os_game` as a turn-based pyspiel.Game, loaded from the tree's name when not given."""
    return load_openspiel_game(game.name if os_game is None else os_game)


def openspiel_states(game: GameTree, os_game: Any = None) -> list[pyspiel.State]:
    """One OpenSpiel state per labkit infoset (index order), reached by the same actions.

    labkit's native games use OpenSpiel's action ids, so replaying the actions of a labkit
    history in OpenSpiel reaches the same history; its information state names the infoset.

    Parameters
    ----------
    game : GameTree
    os_game : str or pyspiel.Game, optional
        The OpenSpiel game (loaded from ``game.name`` by default).

    Returns
    -------
    list of pyspiel.State
        The first history of each infoset, in infoset order.

    Examples
    --------
    >>> import labkit as lk
    >>> openspiel_states(lk.games.load("kuhn_poker"))[0].history()
    [0, 1]
    """
    os_game = _openspiel_game(game, os_game)
    states = [os_game.new_initial_state()]
    found = {}
    for h in range(game.num_histories):
        if h > 0:
            states.append(states[game.parent[h]].child(int(game.action[h])))
        i = int(game.infoset[h])
        if i >= 0 and i not in found:
            found[i] = states[h]
    return [found[i] for i in range(game.num_infosets)]


def openspiel_infoset_keys(game: GameTree, os_game: Any = None) -> list[str]:
    """OpenSpiel's information state string of every labkit infoset (index order).

    Parameters
    ----------
    game : GameTree
    os_game : str or pyspiel.Game, optional

    Returns
    -------
    list of str

    Examples
    --------
    >>> import labkit as lk
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> kuhn.infoset_keys[:3], openspiel_infoset_keys(kuhn)[:3]
    (['J|', 'Q|', 'K|'], ['0', '1', '2'])
    """
    return [state.information_state_string() for state in openspiel_states(game, os_game)]


def from_openspiel_policy(game: GameTree, os_policy: Any, os_game: Any = None) -> TabularPolicy:
    """An OpenSpiel policy (anything with ``action_probabilities(state)``) as a labkit TabularPolicy.

    Parameters
    ----------
    game : GameTree
    os_policy : open_spiel.python.policy.Policy
        Asked once per infoset, at its first history.
    os_game : str or pyspiel.Game, optional

    Returns
    -------
    TabularPolicy
        Validated like any policy made from an array.

    Examples
    --------
    >>> import labkit as lk
    >>> from open_spiel.python import policy as os_policy
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> uniform = from_openspiel_policy(kuhn, os_policy.UniformRandomPolicy(load_openspiel_game("kuhn_poker")))
    >>> round(lk.nash_conv(kuhn, uniform), 12)            # 11/12
    0.916666666667
    """
    from labkit.policy import TabularPolicy
    probs = np.zeros(game.legal_mask.shape)
    for i, state in enumerate(openspiel_states(game, os_game)):
        for a, p in os_policy.action_probabilities(state).items():
            probs[i, a] = p
    return TabularPolicy(game, probs)


def to_openspiel_policy(policy: TabularPolicy, os_game: Any = None) -> Any:
    """A labkit policy as an OpenSpiel ``open_spiel.python.policy.TabularPolicy``.

    Parameters
    ----------
    policy : TabularPolicy
    os_game : str or pyspiel.Game, optional
        The OpenSpiel game (loaded from the policy's game name by default).

    Returns
    -------
    open_spiel.python.policy.TabularPolicy

    Examples
    --------
    >>> import labkit as lk
    >>> from open_spiel.python.algorithms import exploitability
    >>> kuhn = lk.games.load("kuhn_poker")
    >>> os_kuhn = load_openspiel_game("kuhn_poker")
    >>> round(float(exploitability.nash_conv(os_kuhn, to_openspiel_policy(lk.uniform_policy(kuhn)))), 12)
    0.916666666667
    """
    from open_spiel.python import policy as os_policy_module
    game = policy.game
    os_game = _openspiel_game(game, os_game)
    result = os_policy_module.TabularPolicy(os_game)
    for key, row in zip(openspiel_infoset_keys(game, os_game), policy.probs, strict=True):
        result.policy_for_key(key)[:] = row[:os_game.num_distinct_actions()]
    return result
