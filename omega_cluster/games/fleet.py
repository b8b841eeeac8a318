"""A fleet: the mix of tables (player count × objective) one network is trained and gated on.

A run trains one network for every table of its mix (``game.fleet`` = {players: weight},
``game.objectives`` = the objectives to score on): self-play draws each game's table from the
mix, the replay window can balance the slices, and the gate benches every slice. A table of the
mix is a :class:`TableSlice`: the game's parameters with ``players`` (and ``objective``) set, the
slice's share of the mix and its key (``players=4,objective=points``: what records, gate rows and
metrics are labelled with). Without a fleet the run's one table is the only slice.

The weight of a table size is split evenly over the objectives. A game's encoder must serve every
table of the mix with one layout (Mexican Train's is seat-relative and padded to 8 seats).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omega_cluster.games.api import Game, GameError
from omega_cluster.games.chance import derive_seed
from omega_cluster.games.registry import make_game

__all__ = ["Fleet", "FleetError", "TableSlice", "fleet_for", "slice_key"]


class FleetError(GameError, ValueError):
    """A fleet that names a table size or objective the game does not have."""


def slice_key(players: int, objective: str) -> str:
    """The label of one table of the mix, e.g. ``players=4,objective=points``."""
    return f"players={int(players)},objective={objective}"


@dataclass(frozen=True)
class TableSlice:
    """One table of the mix: the full game parameters and its share of the mix."""

    key: str
    players: int
    objective: str
    params: Mapping[str, Any]  # the full parameters: make_game(game, **params)
    weight: float  # share of the mix (the weights of a fleet sum to 1)

    def build(self, game: str) -> Game:
        return make_game(game, **dict(self.params))


@dataclass(frozen=True)
class Fleet:
    """The tables of a run, with their shares (module docstring)."""

    game: str
    slices: tuple[TableSlice, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(s.key for s in self.slices)

    @property
    def objectives(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.objective for s in self.slices))

    @property
    def player_counts(self) -> tuple[int, ...]:
        return tuple(sorted({s.players for s in self.slices}))

    @property
    def mixed(self) -> bool:
        return len(self.slices) > 1

    def weights(self) -> dict[str, float]:
        return {s.key: s.weight for s in self.slices}

    def get(self, key: str) -> TableSlice:
        for s in self.slices:
            if s.key == key:
                return s
        raise FleetError(f"no table {key!r} in this fleet; tables: {', '.join(self.keys)}")

    def draw(self, seed: int, *labels: int | str) -> TableSlice:
        """The table of the game with this seed (and labels), drawn in proportion to the weights;
        the same arguments always give the same table."""
        if len(self.slices) == 1:
            return self.slices[0]
        # derive_seed gives 63 bits: its top 53 make a uniform draw in [0, 1)
        u = (derive_seed(seed, "table", *labels) >> 10) / float(1 << 53)
        total = 0.0
        for s in self.slices:
            total += s.weight
            if u < total:
                return s
        return self.slices[-1]

    def key_of(self, num_players: int, params: Mapping[str, Any] | str) -> str:
        """The slice key of a record: its table size and the objective in its parameters (a dict
        or the records' JSON), or this fleet's only objective when the game has none."""
        if isinstance(params, str):
            params = json.loads(params) if params else {}
        objective = params.get("objective")
        if objective is None:
            objective = self.slices[0].objective
        return slice_key(num_players, str(objective))


def fleet_for(
    game: str,
    params: Mapping[str, Any],
    fleet: Mapping[int, float] | None = None,
    objectives: Sequence[str] | None = None,
) -> Fleet:
    """The fleet of ``game``: ``fleet`` maps a player count to its weight (empty or None: the
    table of ``params``), ``objectives`` lists the objectives (empty or None: the one of
    ``params``). Every table is built once, so a size or objective the game refuses fails here
    with the game's own message."""
    base = dict(params)
    table = make_game(game, **base)
    spec = table.spec
    sizes: dict[int, float] = {}
    given = bool(fleet)
    for k, w in dict(fleet or {}).items():
        try:
            n = int(k)
        except (TypeError, ValueError):
            raise FleetError(f"game.fleet: {k!r} is not a player count") from None
        if not spec.min_players <= n <= spec.max_players:
            raise FleetError(
                f"game.fleet: {n} players is outside {spec.name}'s "
                f"{spec.min_players}..{spec.max_players}"
            )
        if not (isinstance(w, int | float) and math.isfinite(w) and w > 0):
            raise FleetError(f"game.fleet: the weight of {n} players must be > 0, got {w!r}")
        sizes[n] = float(w)
    if not sizes:
        sizes = {table.num_players: 1.0}
    objs = list(dict.fromkeys(objectives or ()))
    bad = [o for o in objs if o not in spec.objectives]
    if bad:
        raise FleetError(
            f"game.objectives: {', '.join(map(repr, bad))} not objectives of {spec.name}; "
            f"allowed: {', '.join(spec.objectives)}"
        )
    if objs and "objective" not in table.params:
        if objs != [spec.objective]:
            raise FleetError(f"game.objectives: {spec.name} has no objective parameter")
        objs = []
    total = sum(sizes.values())
    out: list[TableSlice] = []
    for n in sorted(sizes):
        for objective in objs or [spec.objective]:
            p = {**base, "players": n} if given else dict(base)
            if objs:
                p["objective"] = objective
            try:
                make_game(game, **p)
            except (GameError, ValueError) as err:
                raise FleetError(f"game.fleet: {slice_key(n, objective)}: {err}") from err
            w = sizes[n] / total / max(1, len(objs))
            out.append(TableSlice(slice_key(n, objective), n, objective, p, w))
    return Fleet(spec.name, tuple(out))
