"""Every built-in game's plugin resolves every hook it declares, and the players follow the plugin.

A plugin names its extras as lazy ``"module:attribute"`` strings, so a moved module shows up only
when a hook is asked for; this test asks for all of them (rules, encoder, rule-based players,
public deductions, report counts) and uses each once on a fresh game.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from omega_cluster.errors import UserError
from omega_cluster.games import registry as games
from omega_cluster.games.api import CHANCE, Game, State
from omega_cluster.games.kuhn_poker import KuhnPokerGame
from omega_cluster.games.player import Player
from omega_cluster.games.plugin import GamePlugin
from omega_cluster.games.registry import game_plugin, make_game, register_plugin
from omega_cluster.players import registry as players
from omega_cluster.players.registry import PlayerSpecError, available_players, make_player

# (registry name, parameters of a small game)
BUILTIN: list[tuple[str, dict[str, Any]]] = [
    ("mexican_train", {"players": 2, "rounds": 1}),
    ("kuhn_poker", {}),
    ("leduc_poker", {}),
    ("goofspiel", {"num_cards": 4}),
    ("openspiel:tic_tac_toe", {}),
]


def _acting_state(game: Game, seed: int = 3) -> State:
    """A state where a player (not chance) acts, reached by seeded chance moves."""
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    while state.current_players == (CHANCE,):
        state.apply_action(rng.choice(state.legal_actions(CHANCE)))
    return state


def test_every_builtin_game_has_a_plugin() -> None:
    names = {name.split(":")[0] for name, _ in BUILTIN}
    # other tests in this process may have registered user games; every built-in one is covered
    assert names <= set(games.available_games())
    for name in games.available_games():
        assert game_plugin(name).name == name


@pytest.mark.parametrize(("name", "params"), BUILTIN, ids=[name for name, _ in BUILTIN])
def test_plugin_resolves_every_hook_it_declares(name: str, params: dict[str, Any]) -> None:
    if name.startswith("openspiel:"):
        pytest.importorskip("pyspiel")
    game = make_game(name, **params)
    plugin = game_plugin(game)
    assert isinstance(plugin, GamePlugin) and game_plugin(plugin.name) is plugin
    assert isinstance(game, plugin.rules())
    if plugin.encoder is not None:
        encoder = plugin.hook("encoder")(game)  # type: ignore[misc]
        assert encoder.game_name in (game.spec.name, plugin.name)
    state = _acting_state(game)
    seat = state.current_players[0]
    if plugin.world_constraints is not None:
        deduce = plugin.hook("world_constraints")(game)  # type: ignore[misc]
        deduce(state, seat)  # None or the constraints: either is an answer
    if plugin.report_counts is not None:
        counts = plugin.hook("report_counts")(game)  # type: ignore[misc]
        assert callable(counts)
    for player_name in plugin.players:
        factory = plugin.player(player_name)
        assert factory is not None
        try:
            player = make_player(player_name, game)
        except UserError as err:  # a player of some of the plugin's games (OpenSpiel's bots)
            assert "\n" not in str(err)
            continue
        assert isinstance(player, Player)
        if not game.spec.simultaneous:
            assert player.act(state, seat, random.Random(0)) in state.legal_actions(seat)


def test_rule_based_players_come_from_the_plugin() -> None:
    kuhn = make_game("kuhn_poker")
    with pytest.raises(
        PlayerSpecError,
        match=r"player 'commander' does not support game 'kuhn_poker' "
        r"\(its rule-based players: heuristic\); valid players for kuhn_poker: .*heuristic",
    ):
        make_player("commander", kuhn)
    assert "commander" not in available_players(kuhn)
    assert {"commander", "lieutenant", "heuristic"} <= set(available_players("mexican_train"))


class MyKuhn(KuhnPokerGame):
    """A user's game: Kuhn's rules under another name."""

    name = "my_kuhn"


def test_a_user_plugin_brings_its_own_players(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(games, "_REGISTERED", dict(games._REGISTERED))
    monkeypatch.setattr(games, "_REGISTERED_PLUGINS", dict(games._REGISTERED_PLUGINS))
    monkeypatch.setattr(players, "_ENTRIES", dict(players._ENTRIES))
    first = "omega_cluster.games.player:RandomPlayer"
    register_plugin(
        GamePlugin(name="my_kuhn", game=MyKuhn, players={"first": first, "heuristic": first})
    )
    game = make_game("my_kuhn")
    assert "first" in available_players(game) and "commander" not in available_players(game)
    assert make_player("first", game).name == make_player("heuristic", game).name
    with pytest.raises(PlayerSpecError, match="unknown player 'second'"):
        make_player("second", game)
