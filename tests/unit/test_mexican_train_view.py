"""Mexican Train as the tables show it: trains laid out from the engine outwards with every tile
turned to match (one layout, :func:`render.turned`, read by the seat view and the full render),
trains named as the moves name them, and the plays a picked hand tile lights up."""

from __future__ import annotations

import re

from mexican_train_helpers import play, random_state, rig

from omega_cluster.games.mexican_train import MEXICAN_SLOT, MexicanTrainGame
from omega_cluster.games.mexican_train.render import turned, turned_names
from omega_cluster.games.mexican_train.seat_view import seat_view
from omega_cluster.games.mexican_train.tiles import train_owner


def _chain_ok(engine: int, names: list[str]) -> bool:
    pairs = [tuple(int(x) for x in n.split("|")) for n in names]
    starts = [engine] + [far for _, far in pairs]
    return all(near == start for (near, _), start in zip(pairs, starts, strict=False))


def test_a_train_reads_from_the_engine_outwards_each_tile_turned_to_match() -> None:
    s = rig([["12|3", "7|3", "10|7", "10|10", "1|1"], ["12|5"]], first_turn_chain=True)
    for name in ("12|3", "7|3", "10|7", "10|10"):  # a first-turn chain on the own train
        s.apply_action(play(name, 0))
    laid = s.all_train_tiles()[0]
    assert [s.game.tiles.name(t) for t in laid] == ["12|3", "7|3", "10|7", "10|10"]  # as stored
    assert turned_names(s.game.tiles, 12, laid) == ["12|3", "3|7", "7|10", "10|10"]
    view = seat_view(s, 0)
    assert view["trains"][0]["tiles"] == ["12|3", "3|7", "7|10", "10|10"]
    assert "seat 0: 12|3 3|7 7|10 10|10 -> end 10" in s.render()


def test_every_train_of_random_games_is_a_matching_chain_ending_at_its_open_end() -> None:
    checked = 0
    for seed in range(6):
        game = MexicanTrainGame(players=4, double_set=9, rounds=1)
        state = random_state(game, seed, 40 + 7 * seed)
        if state.is_terminal():
            continue
        trains = state.all_train_tiles()
        for train in seat_view(state, 0)["trains"]:
            names = train["tiles"]
            assert _chain_ok(state.engine, names), names
            pairs = turned(game.tiles, state.engine, trains[train["slot"]])
            assert names == [f"{a}|{b}" for a, b in pairs]
            if names:
                assert pairs[-1][1] == train["open_end"] == state.ends[train["slot"]]
                checked += 1
    assert checked >= 10


def test_trains_are_named_as_the_moves_name_them_and_plays_light_up() -> None:
    game = MexicanTrainGame(players=4, double_set=9, rounds=1)
    state = random_state(game, 3, 9)
    seat = state.current_players[0]
    view = seat_view(state, seat)
    owners = {t["slot"]: t["owner"] for t in view["trains"]}
    assert owners[MEXICAN_SLOT] == "Mexican" and owners[1] == "seat 1" == train_owner(1)
    plays = view["plays"]
    tile_moves = [a for a in state.legal_actions(seat) if a < game.tiles.draw_action]
    assert [p["action"] for p in plays] == tile_moves
    for p in plays:
        assert p["tile"] in view["hand"]
        where = "Mexican train" if p["train"] == MEXICAN_SLOT else f"{owners[p['train']]}'s train"
        assert game.describe_action(p["action"]) == f"{p['tile']} on {where}"
    other = (seat + 1) % 4
    assert seat_view(state, other)["plays"] == []  # not its turn: nothing lights up
    assert not re.search(r"player \d", state.render() + view["text"])  # one name for a seat
