"""The tables self-play plays: one game, encoder and leaf evaluator per table of the mix.

Internal to :mod:`.selfplay` (and the workers and warm start that build its tables). One network
plays every table of a fleet (:mod:`omega_cluster.games.fleet`), so every table's encoder (built
by the game's plugin for that table) must give the network one layout: :func:`table_games`
builds each table's game and encoder and fails with one line, naming ``game.fleet`` and the two
tables, where two layouts differ. :class:`Table` is a table ready to play (its evaluator built on
its own game and encoder); :class:`_Play` is what one :class:`~.selfplay.SelfPlay` keeps per
table: its parameters' JSON and its batched search
(:func:`omega_cluster.search.batched.batched_search`: compiled, or the Python loop and why).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from omega_cluster.games.api import Game
from omega_cluster.games.encoding import Encoder
from omega_cluster.games.fleet import Fleet, FleetError, TableSlice, slice_key
from omega_cluster.model.encoders import encoder_for
from omega_cluster.search.batched import BatchedSearch, batched_search
from omega_cluster.search.evaluators import Evaluator
from omega_cluster.search.smmcts import SMMCTS
from omega_cluster.train._records import game_params_json
from omega_cluster.train.config import SelfPlayConfig, SelfPlayError

__all__ = ["Table", "table_games", "table_key"]


def table_key(game: Game) -> str:
    """The slice key of ``game``'s table (its player count and objective)."""
    objective = game.params.get("objective", game.spec.objective)
    return slice_key(game.num_players, str(objective))


@dataclass(frozen=True)
class Table:
    """One table of the mix, ready to play: its key, game, encoder and leaf evaluator."""

    key: str
    game: Game
    encoder: Encoder
    evaluator: Evaluator


def _layout(encoder: Encoder) -> tuple[Any, ...]:
    info = encoder.info()
    return (info.name, info.version, info.observation_size, info.action_feature_size,
            info.max_players, info.observation_layout, info.action_layout,
            info.aux_heads, info.hidden)  # fmt: skip


def _sizes(encoder: Encoder) -> str:
    return (f"{encoder.observation_size} observation / {encoder.action_feature_size} action "
            f"features, {encoder.max_players} seats")  # fmt: skip


def table_games(
    fleet: Fleet, *, like: Game | None = None
) -> list[tuple[TableSlice, Game, Encoder]]:
    """Every table's game and its plugin's encoder, checked to share one layout (one network
    reads them all: the layout of ``like``'s encoder, the network's own table, where given); a
    :class:`FleetError` names the two tables that differ."""
    reference = (like.num_players, encoder_for(like)) if like is not None else None
    out: list[tuple[TableSlice, Game, Encoder]] = []
    for s in fleet.slices:
        game = s.build(fleet.game)
        encoder = encoder_for(game)
        if reference is None:
            reference = (game.num_players, encoder)
        players, first = reference
        if _layout(encoder) != _layout(first):
            raise FleetError(
                f"game.fleet: one network plays every table, but {fleet.game}'s encoder at "
                f"{players} players ({_sizes(first)}) and at {s.players} players "
                f"({_sizes(encoder)}) differ; keep the mix to tables of one layout"
            )
        out.append((s, game, encoder))
    return out


def fleet_order(fleet: Fleet, tables: Sequence[Table]) -> list[Table]:
    """``tables`` in the fleet's order, one per slice (else a :class:`SelfPlayError`)."""
    by_key = {t.key: t for t in tables}
    if sorted(by_key) != sorted(fleet.keys) or len(by_key) != len(tables):
        raise SelfPlayError(
            f"the tables ({', '.join(t.key for t in tables) or 'none'}) are not the fleet's "
            f"({', '.join(fleet.keys)})"
        )
    return [by_key[k] for k in fleet.keys]


def search_path(plays: Sequence[_Play]) -> str:
    """``compiled`` where every table searches compiled, else ``python:`` and why (per table
    where there are several)."""
    slow = [(p.table.key, p.fast_reason) for p in plays if p.fast is None]
    if not slow:
        return "compiled"
    if len(plays) == 1:
        return f"python: {slow[0][1]}"
    return "python: " + "; ".join(f"{key}: {why}" for key, why in slow)


@dataclass
class _Play:
    """What one self-play keeps per table (module docstring)."""

    table: Table
    params: str  # the game's parameters as the records' JSON
    searcher: BatchedSearch | None  # None: mode 'network' searches nothing
    fast_reason: str  # why the Python loop runs ("": compiled)

    @property
    def fast(self) -> BatchedSearch | None:
        """The compiled searches (None: the Python loop, or no search)."""
        return (
            self.searcher if self.searcher is not None and self.searcher.fast is not None else None
        )

    @classmethod
    def of(cls, table: Table, config: SelfPlayConfig, fast: bool) -> _Play:
        """The table's state, with its batched search (compiled where it applies)."""
        game, encoder, evaluator = table.game, table.encoder, table.evaluator
        if encoder.game_name != game.spec.name:
            raise SelfPlayError(
                f"encoder {encoder.name} v{encoder.version} serves {encoder.game_name}, "
                f"not {game.spec.name}"
            )
        if not callable(getattr(evaluator, "evaluate", None)):
            raise SelfPlayError(f"evaluator must have evaluate(leaves), got {evaluator!r}")
        searcher: BatchedSearch | None = None
        reason = "mode 'network' searches nothing" if fast else "fast=False"
        if config.mode == "search":
            search: Any = config.search
            if game.spec.simultaneous:  # the SM-MCTS configuration, checked as SMMCTS checks it
                search = SMMCTS(game, evaluator, simulations=config.search.simulations, fast=False,
                                **config.search_options).config  # fmt: skip
            searcher = batched_search(game, evaluator, search, fast=fast)
            reason = searcher.fast_reason if fast else reason
        return cls(table, game_params_json(game), searcher, reason)
