"""Domino tables and the Mexican Train action encoding: everything precomputed, nothing mutable.

The rules (:mod:`.state`), the fast playout (:mod:`.playout`), the heuristic players and the
encoders all read these tables instead of recomputing tile arithmetic in their inner loops.

Tiles. A double-``D`` set holds every ``(hi, lo)`` with ``D >= hi >= lo >= 0``: 91 tiles for
double-12, 55 for double-9. Tiles are indexed in ascending ``(hi, lo)`` order, so
``index(hi, lo) = hi * (hi + 1) // 2 + lo``: ``0|0 -> 0, 1|0 -> 1, 1|1 -> 2, 2|0 -> 3, ...,
12|12 -> 90``. A set of tiles (a hand, the board) is an int bit mask, bit ``index`` set.

Trains. Action slots ``0..7`` are the seats' personal trains (slot ``p`` belongs to seat ``p``;
slots ``>= players`` are unused at smaller tables) and slot ``8`` is the Mexican train.

Actions. ``action = tile_index * 9 + train_slot`` plays a tile on a train; ``DRAW = num_tiles * 9``
draws from the boneyard; ``PASS = num_tiles * 9 + 1`` passes (and ends a first-turn chain). The
space has ``num_tiles * 9 + 2`` ids (821 for double-12, 497 for double-9) whatever the table size.
"""

from __future__ import annotations

from functools import cache
from typing import Final

__all__ = [
    "HASH_MULT",
    "MASK64",
    "MEXICAN_BIT",
    "MEXICAN_SLOT",
    "NUM_SLOTS",
    "SLOTS_OF",
    "TileSet",
    "tile_set",
    "train_owner",
]

NUM_SLOTS: Final[int] = 9  # 8 personal trains (max players) + the Mexican train
MEXICAN_SLOT: Final[int] = 8
MEXICAN_BIT: Final[int] = 1 << MEXICAN_SLOT
# SLOTS_OF[mask] = the train slots of a 9-bit slot mask, ascending (legal actions come out sorted)
SLOTS_OF: tuple[tuple[int, ...], ...] = tuple(
    tuple(s for s in range(NUM_SLOTS) if m >> s & 1) for m in range(1 << NUM_SLOTS)
)
MASK64: Final[int] = (1 << 64) - 1
HASH_MULT: Final[int] = 0x100000001B3  # FNV 64-bit prime: the rolling hash of the public log
# _BYTE_BITS[k][b] = the bit indices of byte value b at byte k of a mask (91 tiles: 12 bytes)
_BYTE_BITS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(8 * k + i for i in range(8) if b >> i & 1) for b in range(256)) for k in range(12)
)


def train_owner(slot: int) -> str:
    """Whose train a slot is, as every table names it: ``seat 2``, or ``Mexican``."""
    return "Mexican" if slot == MEXICAN_SLOT else f"seat {slot}"


class TileSet:
    """Precomputed tables of one double-``D`` set. Get it from :func:`tile_set` (cached)."""

    __slots__ = (
        "double_set",
        "doubles_mask",
        "draw_action",
        "end_mask",
        "full_mask",
        "high",
        "low",
        "num_actions",
        "num_tiles",
        "pass_action",
        "pips",
        "tiles",
    )

    def __init__(self, double_set: int) -> None:
        self.double_set = double_set
        # ascending (hi, lo): index(hi, lo) = hi * (hi + 1) // 2 + lo
        self.tiles: tuple[tuple[int, int], ...] = tuple(
            (hi, lo) for hi in range(double_set + 1) for lo in range(hi + 1)
        )
        self.num_tiles = len(self.tiles)
        self.high: tuple[int, ...] = tuple(hi for hi, _ in self.tiles)
        self.low: tuple[int, ...] = tuple(lo for _, lo in self.tiles)
        # pips of a tile; the other end of tile t played on end v is pips[t] - v
        self.pips: tuple[int, ...] = tuple(hi + lo for hi, lo in self.tiles)
        self.end_mask: tuple[int, ...] = tuple(
            sum(1 << t for t, (hi, lo) in enumerate(self.tiles) if v in (hi, lo))
            for v in range(double_set + 1)
        )
        self.doubles_mask = sum(1 << t for t, (hi, lo) in enumerate(self.tiles) if hi == lo)
        self.full_mask = (1 << self.num_tiles) - 1
        self.draw_action = self.num_tiles * NUM_SLOTS
        self.pass_action = self.draw_action + 1
        self.num_actions = self.draw_action + 2

    # -- tiles ------------------------------------------------------------------------------
    @staticmethod
    def index(hi: int, lo: int) -> int:
        """Index of the tile ``hi|lo`` (either order)."""
        if hi < lo:
            hi, lo = lo, hi
        return hi * (hi + 1) // 2 + lo

    def double(self, value: int) -> int:
        """Index of the double ``value|value`` (the engine of a round)."""
        return value * (value + 3) // 2

    def is_double(self, tile: int) -> bool:
        return self.high[tile] == self.low[tile]

    def name(self, tile: int) -> str:
        return f"{self.high[tile]}|{self.low[tile]}"

    def other_end(self, tile: int, end: int) -> int:
        """The open end after playing ``tile`` on a train whose open end is ``end``."""
        return self.pips[tile] - end

    @staticmethod
    def mask_tiles(mask: int) -> tuple[int, ...]:
        """Tile indices of a mask, ascending (a byte at a time, through a table)."""
        out: list[int] = []
        extend = out.extend
        for row in _BYTE_BITS:
            if not mask:
                break
            b = mask & 0xFF
            if b:
                extend(row[b])
            mask >>= 8
        i = 8 * len(_BYTE_BITS)
        while mask:  # beyond the table (no tile set reaches it)
            if mask & 1:
                out.append(i)
            mask >>= 1
            i += 1
        return tuple(out)

    def mask_pips(self, mask: int, double_blank_value: int = 0) -> int:
        """Pips of the tiles in ``mask``; the 0|0 counts ``double_blank_value``."""
        total = double_blank_value if mask & 1 else 0
        pips = self.pips
        mask &= ~1
        while mask:
            low = mask & -mask
            total += pips[low.bit_length() - 1]
            mask ^= low
        return total

    # -- actions ----------------------------------------------------------------------------
    def encode_action(self, tile: int, train: int) -> int:
        """Action id of playing ``tile`` on train slot ``train`` (0..7 seats, 8 Mexican)."""
        if not 0 <= tile < self.num_tiles:
            raise ValueError(f"tile index {tile} outside 0..{self.num_tiles - 1}")
        if not 0 <= train < NUM_SLOTS:
            raise ValueError(f"train slot {train} outside 0..{NUM_SLOTS - 1} (8 = Mexican)")
        return tile * NUM_SLOTS + train

    def decode_action(self, action: int) -> tuple[int, int] | None:
        """``(tile, train_slot)`` of a play, or ``None`` for DRAW and PASS."""
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action} outside 0..{self.num_actions - 1}")
        if action >= self.draw_action:
            return None
        return divmod(action, NUM_SLOTS)

    def describe_action(self, action: int) -> str:
        """ "6|4 on Mexican train", "12|3 on seat 2's train", "draw", "pass"."""
        if action == self.draw_action:
            return "draw"
        if action == self.pass_action:
            return "pass"
        if not 0 <= action < self.num_actions:
            return f"invalid action {action} (valid: 0..{self.num_actions - 1})"
        tile, slot = divmod(action, NUM_SLOTS)
        where = "Mexican train" if slot == MEXICAN_SLOT else f"{train_owner(slot)}'s train"
        return f"{self.name(tile)} on {where}"


@cache
def tile_set(double_set: int) -> TileSet:
    """The shared, immutable tables of the double-``double_set`` set."""
    return TileSet(double_set)
