"""Mexican Train parameters, validation and spec: :class:`MexicanTrainGame`.

The rules live in :mod:`.state`; this module turns keyword parameters into validated, immutable
rule settings that every state of the game shares (``make_game("mexican_train", players=4)``).

Returns (the scheme used everywhere in omega_cluster for this game): each player's **share of the
win** — ``1/k`` for each of the ``k`` tied winners, ``0`` otherwise, summing to 1. The winner is the
lowest cumulative pip count (objective ``"points"``) or the most rounds won by going out
(``"go_out"``). ``win_shares() == returns()``. A player's **fair share** is ``N × mean return``
over many games: 1.0 is par at any table size (the "fair share" figure the reports show), see
:func:`fair_share`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from omega_cluster.games.api import Game as _Game
from omega_cluster.games.api import GameSpec, HistoryEntry, InvalidParameterError, ParamSpec
from omega_cluster.games.mexican_train.state import MexicanTrainState
from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT, NUM_SLOTS, TileSet, tile_set

__all__ = ["DEFAULT_HAND_SIZES", "OBJECTIVES", "MexicanTrainGame", "fair_share"]

OBJECTIVES = ("points", "go_out")

# Hand size per player count 2..8 (common rule sheets; pagat lists the double-12 row).
DEFAULT_HAND_SIZES: dict[int, tuple[int, ...]] = {
    12: (15, 15, 15, 12, 12, 11, 11),
    9: (9, 9, 9, 7, 7, 7, 6),
}


def fair_share(returns_list: Sequence[Sequence[float]], player: int | None = None) -> Any:
    """``N × mean return`` per seat over several games (1.0 is par at any table size).

    ``returns_list`` holds one returns tuple per game. With ``player`` given, that seat's figure;
    otherwise a tuple with every seat's.
    """
    if not returns_list:
        raise ValueError("fair_share needs at least one game's returns")
    n = len(returns_list[0])
    games = len(returns_list)
    shares = tuple(n * sum(r[i] for r in returns_list) / games for i in range(n))
    return shares if player is None else shares[player]


class MexicanTrainGame(_Game):
    """Mexican Train dominoes (2–8 players, double-12 or double-9), full campaign or k rounds."""

    name = "mexican_train"
    parameters: ClassVar[dict[str, ParamSpec]] = {
        "players": ParamSpec(4, "number of players", int, minimum=2, maximum=8),
        "double_set": ParamSpec(12, "highest double of the set (91 or 55 tiles)", int, (9, 12)),
        "hand_sizes": ParamSpec(
            None,
            "hand size for 2..8 players (7 positive ints) or None for the set's default table",
            (tuple, list, type(None)),
        ),
        "rounds": ParamSpec(
            None,
            "rounds to play (engines max, max-1, ...); None = full campaign (13 or 10)",
            (int, type(None)),
        ),
        "objective": ParamSpec("points", "who wins the campaign", str, OBJECTIVES),
        "must_play": ParamSpec(True, "a player who can play must play (else may draw)", bool),
        "draw_until_playable": ParamSpec(
            False, "keep drawing until a tile plays or the boneyard is empty", bool
        ),
        "first_turn_chain": ParamSpec(
            False, "first turn of a round: lay a chain on your own train, PASS ends it", bool
        ),
        "strict_doubles": ParamSpec(
            True, "an open double must be covered by the very next play (else: lenient)", bool
        ),
        "double_blank_value": ParamSpec(0, "pips the 0|0 counts in hand", int, (0, 25, 50)),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.params
        n: int = p["players"]
        self.tiles: TileSet = tile_set(p["double_set"])
        self.max_value: int = p["double_set"]
        table = self._hand_table(p["hand_sizes"], p["double_set"])
        self.params = {**p, "hand_sizes": table}
        self.hand_size: int = table[n - 2]
        self.num_rounds: int = self._check_rounds(p["rounds"], p["double_set"])
        self.strict_doubles: bool = p["strict_doubles"]
        self.must_play: bool = p["must_play"]
        self.draw_until_playable: bool = p["draw_until_playable"]
        self.first_turn_chain: bool = p["first_turn_chain"]
        self.double_blank_value: int = p["double_blank_value"]
        self.objective: str = p["objective"]
        t = self.tiles
        # every tile but the engine double, per engine value: the deck a round deals from
        self.decks: tuple[tuple[int, ...], ...] = tuple(
            tuple(i for i in range(t.num_tiles) if i != t.double(v))
            for v in range(self.max_value + 1)
        )
        # Per round at most: T plays, T draws, one PASS after each draw, fewer than 2N passes
        # with an empty boneyard between two plays (after one pass each every train is open),
        # and one PASS per first-turn chain.
        per_round = 3 * t.num_tiles + 2 * n * (t.num_tiles + 1) + n
        self.spec = GameSpec(
            name=self.name,
            num_players=n,
            min_players=2,
            max_players=8,
            num_actions=t.num_actions,
            simultaneous=False,
            hidden_information=True,
            explicit_chance=False,
            objectives=OBJECTIVES,
            objective=self.objective,
            max_game_length=per_round * self.num_rounds,
            min_return=0.0,
            max_return=1.0,
            zero_sum=False,  # constant-sum: returns are win shares summing to 1
        )

    # -- validation -------------------------------------------------------------------------
    @staticmethod
    def _hand_table(table: Any, double_set: int) -> tuple[int, ...]:
        if table is None:
            return DEFAULT_HAND_SIZES[double_set]
        num_tiles = (double_set + 1) * (double_set + 2) // 2
        allowed = (
            f"allowed: None or 7 positive ints (players 2..8) with players × hand + 1 (the engine) "
            f"<= {num_tiles} tiles of the double-{double_set} set, "
            f"e.g. {DEFAULT_HAND_SIZES[double_set]}"
        )
        values = tuple(table)
        if len(values) != 7:
            raise InvalidParameterError(
                f"mexican_train: hand_sizes={table!r} has {len(values)} entries; {allowed}"
            )
        for i, h in enumerate(values):
            players = i + 2
            if isinstance(h, bool) or not isinstance(h, int) or h <= 0:
                raise InvalidParameterError(
                    f"mexican_train: hand_sizes entry for {players} players is {h!r}, "
                    f"not a positive int; {allowed}"
                )
            if players * h + 1 > num_tiles:
                raise InvalidParameterError(
                    f"mexican_train: hand_sizes entry for {players} players is {h}: "
                    f"{players} × {h} + 1 = {players * h + 1} > {num_tiles} tiles, the set "
                    f"cannot be dealt; {allowed}"
                )
        return values

    @staticmethod
    def _check_rounds(rounds: int | None, double_set: int) -> int:
        most = double_set + 1
        if rounds is None:
            return most
        if isinstance(rounds, bool) or not 1 <= rounds <= most:
            raise InvalidParameterError(
                f"mexican_train: rounds={rounds!r} is not allowed; allowed: None (full campaign "
                f"of {most}) or an int in [1, {most}] for the double-{double_set} set"
            )
        return rounds

    # -- contract ---------------------------------------------------------------------------
    def new_initial_state(self, seed: int = 0) -> MexicanTrainState:
        """Round 0 dealt from ``seed`` (every later deal and boneyard order follows from it)."""
        return MexicanTrainState.initial(self, seed)  # an int: the contract checked it

    def replay(self, seed: int, history: Sequence[HistoryEntry]) -> MexicanTrainState:
        """:meth:`Game.replay`, typed: the rebuilt state of this game."""
        state = super().replay(seed, history)
        assert isinstance(state, MexicanTrainState)
        return state

    def describe_action(self, action: int) -> str:
        return self.tiles.describe_action(int(action))

    def encode_action(self, tile: int, train: int) -> int:
        """Action id of laying tile index ``tile`` on train slot ``train`` (8 = Mexican)."""
        return self.tiles.encode_action(tile, train)

    def decode_action(self, action: int) -> tuple[int, int] | None:
        """``(tile, train_slot)`` of a play, ``None`` for DRAW / PASS."""
        return self.tiles.decode_action(action)

    @property
    def draw_action(self) -> int:
        return self.tiles.draw_action

    @property
    def pass_action(self) -> int:
        return self.tiles.pass_action

    def engine_of_round(self, round_index: int) -> int:
        """The engine double of a round: max, max-1, ... (12-12 down to 0-0 for double-12)."""
        return self.max_value - round_index

    def train_slots(self) -> tuple[int, ...]:
        """Slots in use at this table: the seats' trains, then the Mexican train."""
        return (*range(self.num_players), MEXICAN_SLOT)


assert NUM_SLOTS == MEXICAN_SLOT + 1
