"""Mexican Train as one seat sees it, for the tables of :mod:`omega_cluster.play` (the plugin
hook ``seat_view``): built from ``observation(seat)`` only, so no other hand ever shows."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["seat_view"]


def seat_view(state: Any, seat: int) -> dict[str, Any]:
    """Mexican Train as ``seat`` sees it: built from ``observation(seat)`` only."""
    obs = state.observation(seat)
    g = state.game
    tiles = g.tiles
    names = [tiles.name(t) for t in tiles.mask_tiles(obs.hand)]
    trains = []
    for t in obs.trains:
        owner = "Mexican" if t.slot >= g.num_players else f"seat {t.slot}"
        trains.append(
            {
                "slot": t.slot,
                "owner": owner,
                "tiles": [tiles.name(x) for x in t.tiles],
                "open_end": t.open_end,
                "marker": t.marked,
                "open_double": t.slot in obs.open_doubles,
            }
        )
    rounds = [dataclasses.asdict(r) for r in obs.round_results]
    view: dict[str, Any] = {
        "game": g.spec.name,
        "round": obs.round_index + 1,
        "rounds": g.num_rounds,
        "engine": obs.engine,
        "hand": names,
        "trains": trains,
        "open_doubles": list(obs.open_doubles),
        "must_cover": obs.must_cover,
        "hand_sizes": list(obs.hand_sizes),
        "boneyard": obs.boneyard_size,
        "scores": list(obs.scores),
        "rounds_won": list(obs.rounds_won),
        "round_results": rounds,
        "drawn": obs.drawn,
    }
    view["text"] = _mt_text(view, seat)
    return view


def _mt_text(v: dict[str, Any], seat: int) -> str:
    lines = [f"round {v['round']}/{v['rounds']}, engine {v['engine']}|{v['engine']}"]
    for t in v["trains"]:
        flags = "".join(
            f" [{f}]"
            for f, on in (("marker", t["marker"]), ("open double", t["open_double"]))
            if on
        )
        laid = " ".join(t["tiles"]) or "(empty)"
        lines.append(f"  {t['owner']:>8}: {laid} -> end {t['open_end']}{flags}")
    lines.append(f"  your hand (seat {seat}): {' '.join(v['hand']) or '-'}")
    sizes = ", ".join(f"seat {i}: {n}" for i, n in enumerate(v["hand_sizes"]))
    lines.append(f"  hand sizes: {sizes}; boneyard {v['boneyard']}")
    lines.append(f"  scores (pips): {', '.join(map(str, v['scores']))}")
    return "\n".join(lines)
