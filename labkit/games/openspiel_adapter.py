"""Any OpenSpiel game as a labkit game definition (OpenSpiel is an optional dependency).

Simultaneous-move games are first made turn-based with OpenSpiel's own converter, so the
players of a round move one after another without seeing each other's choices.
"""
from __future__ import annotations


def _pyspiel():
    try:
        import pyspiel
    except ImportError as err:          # pragma: no cover - depends on the environment
        raise ImportError("labkit.games.from_openspiel needs OpenSpiel: pip install open_spiel "
                          "(or pip install -e '.[test]')") from err
    return pyspiel


class OpenSpielDefinition:
    """Wraps a pyspiel.Game in the interface `labkit.games.base.compile_game` reads."""

    def __init__(self, game):
        pyspiel = _pyspiel()
        if isinstance(game, str):
            game = pyspiel.load_game(game)
        if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
            game = pyspiel.convert_to_turn_based(game)
        self.os_game = game
        self.name = str(game)
        self.num_players = game.num_players()
        self.num_distinct_actions = game.num_distinct_actions()
        self._root = game.new_initial_state()

    def initial_state(self):
        return OpenSpielState(self._root)

    def action_name(self, a):
        try:
            return self._root.action_to_string(0, a)
        except Exception:                # some games name actions only in context
            return str(a)


class OpenSpielState:
    def __init__(self, state):
        self.state = state

    def current_player(self):
        return self.state.current_player()

    def legal_actions(self):
        return self.state.legal_actions()

    def chance_outcomes(self):
        return self.state.chance_outcomes()

    def child(self, action):
        return OpenSpielState(self.state.child(action))

    def returns(self):
        return self.state.returns()

    def infoset_key(self):
        return self.state.information_state_string()
