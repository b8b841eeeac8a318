"""Race to N: the smallest game that trains, one module and no plugin (the generic encoder).

Two players take turns adding 1 or 2 to a counter that starts at 0; whoever brings it to
``target`` (or past it) wins. Perfect information, no chance, two actions: ``0`` adds 1, ``1``
adds 2. It wins for the player who can always leave the counter at ``target`` minus a multiple
of 3, so a trained network has something to learn and an exact answer to be checked against.

The module defines a :class:`~omega_cluster.games.api.Game` and its ``State``, and nothing else:
no ``PLUGIN``, so no encoder of its own. Its ``observation`` is a fixed-length tuple of numbers,
which is what the generic encoder (``omega_cluster.model.encoders.generic``) turns into network
inputs, with the action id one-hot over the two actions. ``examples/blind_war/`` is the full
shape (rules, a rule-based player, an encoder, a ``PLUGIN``). Train it::

    PYTHONPATH=examples omega-cluster train run=smoke game.name=race_to_n:RaceGame \\
        'gate.anchors={random:1000}'

(``gate.anchors={random:1000}``: the game has no ``heuristic`` player to anchor against.) Check it against the contract::

    PYTHONPATH=examples python -m race_to_n
"""

from __future__ import annotations

from typing import Any

from omega_cluster.games.api import Game, GameSpec, ParamSpec, State

__all__ = ["RaceGame", "RaceState"]


class RaceGame(Game):
    """Players take turns adding 1 or 2 to a counter; whoever reaches ``target`` wins."""

    name = "race_to_n"
    parameters = {  # the gate builds its tables with ``players``: every game declares it
        "players": ParamSpec(2, "number of players", int, choices=(2,)),
        "target": ParamSpec(7, "the counter's goal", int, minimum=2),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.spec = GameSpec(
            name=self.name, num_players=2, min_players=2, max_players=2, num_actions=2,
            simultaneous=False, hidden_information=False, explicit_chance=False,
        )  # fmt: skip

    def new_initial_state(self, seed: int = 0) -> RaceState:
        return RaceState(self)


class RaceState(State):
    def __init__(self, game: RaceGame) -> None:
        self.game, self.history, self.count = game, [], 0

    @property
    def current_players(self) -> tuple[int, ...]:
        return () if self.count >= self.game.params["target"] else (len(self.history) % 2,)

    def legal_actions(self, player: int | None = None) -> list[int]:
        acting = self.current_players
        return [0, 1] if acting and player in (None, acting[0]) else []

    def _apply_action(self, action: int) -> None:
        self.count += action + 1
        self.history.append(action)

    def returns(self) -> tuple[float, ...]:
        if self.current_players:
            return (0.0, 0.0)
        winner = (len(self.history) - 1) % 2
        return tuple(1.0 if p == winner else 0.0 for p in range(2))

    def observation(self, player: int) -> tuple[object, ...]:
        # a fixed-length tuple of numbers (nested, with a bool): the generic encoder reads 4
        left = self.game.params["target"] - self.count
        return (self.count, (left, left <= 2), len(self.history))

    def information_set_key(self, player: int) -> tuple[object, ...]:
        return (self.count, len(self.history))

    def clone(self) -> RaceState:
        twin = RaceState(self.game)
        twin.history, twin.count = list(self.history), self.count
        return twin

    def render(self) -> str:
        return f"count={self.count}/{self.game.params['target']} moves={self.history}"


if __name__ == "__main__":
    from omega_cluster.games.conformance import check_game

    print(check_game(RaceGame(target=10)))
