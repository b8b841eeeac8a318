"""The critic leaf: the network's prior and the perfect-information critic's value on each
sampled world. The compiled Mexican Train kernel gives the hidden codes the game's state gives
(2..8 players); the compiled and the Python search build the same tree with a stand-in critic
whose value is a known function of the codes (so the codes reach the leaf on both paths); the
leaf is refused, in one line, for a model without a critic or a game without a hidden state."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
import torch
from fast_helpers import same_result

from omega_cluster.errors import UserError
from omega_cluster.games import make_game
from omega_cluster.games.api import Game, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.games.kuhn_poker import KuhnPokerState
from omega_cluster.games.mexican_train.state import MexicanTrainState
from omega_cluster.model import ModelConfig, PolicyValueNet, encoder_for
from omega_cluster.model import inference as inference_module
from omega_cluster.model.inference import CriticEvaluator
from omega_cluster.players.leaf import LeafSpec
from omega_cluster.search.fast import SplitMixRandom
from omega_cluster.search.fast.game import FastLeaf, fast_game, fast_path
from omega_cluster.search.ismcts import ISMCTS, ISMCTSConfig


def _reference_codes(state: Any, player: int) -> np.ndarray:
    """The hidden codes of a Mexican Train state, written from their definition (HiddenSpec,
    kind locations): 0 seen, 1 boneyard, 1 + k the hand k seats after ``player``."""
    n, tiles = state.game.num_players, state.game.tiles.num_tiles
    out = np.zeros(tiles, np.float32)
    for k in range(1, n):
        hand = state.hands[(player + k) % n]
        for t in range(tiles):
            if hand >> t & 1:
                out[t] = 1 + k
    for t in state.boneyard:
        out[t] = 1
    return out


def _kuhn_reference_codes(state: Any, player: int) -> np.ndarray:
    """Kuhn poker's hidden codes from their definition: 0 own card, 1 not dealt, 1 + k the card
    of the seat k after ``player``."""
    n = state.game.num_players
    out = np.ones(n + 1, np.float32)
    for seat, card in enumerate(state._cards):
        if card >= 0:
            out[card] = 0 if seat == player else 1 + (seat - player) % n
    return out


_REFERENCE = {MexicanTrainState: _reference_codes, KuhnPokerState: _kuhn_reference_codes}


def _hidden_state(state: Any, player: int) -> np.ndarray:
    """``state.hidden_state(player)`` where the game gives it, else the reference codes."""
    given = state.hidden_state(player)
    if given is None:
        return _REFERENCE[type(state)](state, player)
    return np.asarray(given, np.float32)


@pytest.fixture()
def hidden_states(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mexican Train and Kuhn states give their hidden codes (the reference ones where the
    game's own ``hidden_state`` is not there yet)."""
    for cls, reference in _REFERENCE.items():
        if cls.hidden_state is State.hidden_state:
            monkeypatch.setattr(cls, "hidden_state", reference)


def _positions(game: Game, count: int, seed: int) -> list[State]:
    """Decisions a few random moves into a game (Mexican Train: some draws, so the boneyard
    shrinks)."""
    rng = random.Random(seed)
    out: list[State] = []
    g = 0
    while len(out) < count:
        s = game.new_initial_state(seed + g)
        g += 1
        for _ in range(rng.randrange(0, 12)):
            if s.is_terminal():
                break
            if s.is_chance_node():
                s.apply_action(sample_chance(s.chance_outcomes(), rng.random()))
                continue
            legal = s.legal_actions()
            s.apply_action(legal[int(rng.random() * len(legal))])
        while s.is_chance_node():
            s.apply_action(sample_chance(s.chance_outcomes(), rng.random()))
        if not s.is_terminal() and len(s.legal_actions()) > 1:
            out.append(s)
    return out


def test_compiled_kuhn_hidden_codes_are_the_states() -> None:
    for players in (2, 3, 4):
        game = make_game("kuhn_poker", players=players)
        fast, why = fast_game(game)
        assert fast is not None, why
        assert fast.hidden is not None and fast.hidden_size == players + 1
        out = np.zeros(fast.hidden_size, np.float32)
        for state in _positions(game, 10, seed=players):
            for player in range(players):
                fast.hidden(fast.ctx, fast.pack(state), player, out)
                assert np.array_equal(out, _hidden_state(state, player)), (players, player)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6, 7, 8])
def test_compiled_hidden_codes_are_the_states(players: int) -> None:
    game = make_game("mexican_train", players=players, rounds=1)
    fast, why = fast_game(game)
    assert fast is not None and fast.hidden is not None, why
    assert fast.hidden_size == game.tiles.num_tiles
    out = np.zeros(fast.hidden_size, np.float32)
    seen: set[float] = set()
    for state in _positions(game, 30, seed=players):
        for player in range(players):
            fast.hidden(fast.ctx, fast.pack(state), player, out)
            want = _hidden_state(state, player)
            assert np.array_equal(out, want), (players, player)
            seen |= set(out.tolist())
    assert seen == set(range(players + 1))  # every code occurs: own/seen, boneyard, each seat


class StandInCritic:
    """A deterministic critic forward (obs, feats, mask, hidden) -> (logits, values), every row
    computed exactly (``math.fsum``), so batches of any shape agree to the last bit; its values
    are a known function of the hidden codes. ``hidden`` keeps every row it was given."""

    def __init__(self, encoder: Any, hidden_size: int, num_players: int) -> None:
        r = np.random.default_rng(5)
        self.u = r.normal(size=encoder.observation_size) * 0.05
        self.w = r.normal(size=encoder.action_feature_size)
        self.v = r.normal(size=hidden_size) * 0.3
        self.n = num_players
        self.hidden: list[np.ndarray] = []

    def value(self, obs: np.ndarray, hidden: np.ndarray, r: int) -> float:
        z = math.fsum(obs.astype(np.float64) * self.u)
        h = math.fsum(hidden.astype(np.float64) * self.v)
        return math.tanh(z + 0.2 * h + 0.7 * r)

    def __call__(self, obs: np.ndarray, feats: np.ndarray, mask: np.ndarray,
                 hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        logits = np.full(mask.shape, -np.inf)
        values = np.zeros((obs.shape[0], self.n))
        for b in range(obs.shape[0]):
            self.hidden.append(hidden[b].copy())
            for j in range(int(mask[b].sum())):
                logits[b, j] = math.fsum(feats[b, j].astype(np.float64) * self.w)
            values[b] = [self.value(obs[b], hidden[b], r) for r in range(self.n)]
        return logits, values

    def load_state_dict(self, state_dict: Mapping[str, torch.Tensor]) -> None:
        return None


def _model(game: Game) -> tuple[Any, PolicyValueNet]:
    encoder = encoder_for(game)
    config = ModelConfig.for_encoder(encoder, game)
    return encoder, PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)


def _critic_leaf(game: Game, monkeypatch: pytest.MonkeyPatch) -> tuple[CriticEvaluator, Any]:
    """A CriticEvaluator whose runtime is the stand-in critic."""
    encoder, model = _model(game)
    fast, why = fast_game(game)
    assert fast is not None, why
    stand_in = StandInCritic(encoder, fast.hidden_size, game.num_players)
    monkeypatch.setattr(inference_module, "best_critic_forward", lambda model: stand_in)
    return CriticEvaluator(model, encoder), stand_in


@pytest.mark.parametrize(
    ("name", "players", "dirichlet"),
    [("mexican_train", 2, 0.0), ("mexican_train", 2, 0.25), ("mexican_train", 4, 0.0),
     ("mexican_train", 4, 0.25), ("kuhn_poker", 2, 0.25), ("kuhn_poker", 3, 0.0)],
)  # fmt: skip
def test_critic_leaf_searches_as_the_python_search(
    name: str, players: int, dirichlet: float, hidden_states: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = {"rounds": 1} if name == "mexican_train" else {}
    game = make_game(name, players=players, **params)
    leaf, stand_in = _critic_leaf(game, monkeypatch)
    config = ISMCTSConfig(simulations=48, selection="puct", dirichlet_fraction=dirichlet)
    fast, python = ISMCTS(game, leaf, config), ISMCTS(game, leaf, config, fast=False)
    assert fast.fast is not None and python.fast is None, fast.fast_reason
    for state in _positions(game, 3, seed=30 + players):
        player = state.current_players[0]
        a, b = SplitMixRandom(13), SplitMixRandom(13)
        leaf.clear_cache()
        same_result(fast.search(state, player, a), python.search(state, player, b))
        assert a.state == b.state
    rows = np.stack(stand_in.hidden)
    assert (rows >= 1).any(axis=1).all()  # every leaf's world had hidden items
    assert (rows >= 2).any(axis=1).all()  # and another seat's hand among them
    if name == "mexican_train":  # worlds differ (each leaf twice: both paths)
        assert len({r.tobytes() for r in rows}) > len(rows) // 4


def test_the_critic_values_the_world_not_the_information_set(
    hidden_states: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two worlds of one information set: the network leaf cannot tell them apart, the critic
    leaf values each (the stand-in's value moves with the hidden codes)."""
    game = make_game("mexican_train", players=3, rounds=1)
    leaf, _ = _critic_leaf(game, monkeypatch)
    from omega_cluster.search.evaluators import Leaf

    state = _positions(game, 1, seed=3)[0]
    player = state.current_players[0]
    worlds = [state.sample_world(player, random.Random(s)) for s in (1, 2)]
    assert worlds[0].information_set_key(player) == worlds[1].information_set_key(player)
    legal = tuple(state.legal_actions(player))
    answers = leaf.evaluate([Leaf(w, player, legal, random.Random(0)) for w in worlds])
    assert answers[0].prior == answers[1].prior
    assert answers[0].values != answers[1].values
    assert leaf.stats.positions == 2 and leaf.stats.duplicates == 0


def test_the_critic_leaf_is_refused_without_a_critic_or_a_hidden_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    encoder, model = _model(game)  # the default model: no critic
    with pytest.raises(UserError, match=r"model\.critic=false"):
        CriticEvaluator(model, encoder)
    bare = encoder.info()
    import dataclasses

    monkeypatch.setattr(encoder, "info", lambda: dataclasses.replace(bare, hidden=None))
    with pytest.raises(UserError, match="mexican_train gives none"):
        LeafSpec("critic").build(game, model, encoder)


def test_the_compiled_path_refuses_the_critic_where_a_game_has_no_hidden_kernel() -> None:
    config = ISMCTSConfig(simulations=8, selection="puct")
    game = make_game("leduc_poker")
    fast, why = fast_path(game, config, FastLeaf("critic"), encoder=encoder_for(game))
    assert fast is None and why == "leduc_poker has no compiled hidden state for the critic leaf"


def test_selfplay_with_the_critic_leaf_takes_the_compiled_path_and_records_as_python(
    hidden_states: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from omega_cluster.train import SelfPlay, SelfPlayConfig

    game = make_game("mexican_train", players=2, rounds=1)
    leaf, stand_in = _critic_leaf(game, monkeypatch)
    search = ISMCTSConfig(simulations=16, selection="puct")
    config = SelfPlayConfig(games=3, concurrent_games=3, search=search, seed=4)
    fast = SelfPlay(game, leaf.encoder, config, evaluator=leaf)
    assert fast.fast is not None, fast.fast_reason
    records = list(fast.play())
    leaf.clear_cache()
    python = SelfPlay(game, leaf.encoder, config, evaluator=leaf, fast=False)
    assert python.fast is None
    expected = list(python.play())
    assert len(records) == len(expected) > 0 and stand_in.hidden
    for a, b in zip(records, expected, strict=True):
        assert a.game_id == b.game_id and a.history == b.history and a.player == b.player
        assert np.array_equal(a.observation, b.observation)
        assert np.array_equal(a.policy_target, b.policy_target)  # type: ignore[arg-type]
        assert np.allclose(a.root_value, b.root_value, atol=1e-6)  # type: ignore[arg-type]


def test_the_config_refuses_the_critic_leaf_without_a_critic_in_one_line() -> None:
    from omega_cluster.config import ConfigError, Settings, validate
    from omega_cluster.config.schema import GameSettings

    settings = Settings(game=GameSettings("mexican_train", {"players": 2, "rounds": 1}))
    settings.search.leaf = "critic"
    settings.search.selection = "puct"
    with pytest.raises(ConfigError) as info:
        validate(settings)
    assert info.value.problems == (
        "search.leaf='critic' reads the model's critic; set model.critic=true",
    )


class ToyCriticNet(torch.nn.Module):
    """A network with the critic's interface (``forward(..., hidden_state=)`` and
    ``NetOutput.critic``), to check the critic's runtimes on their own."""

    def __init__(self, obs: int, feat: int, hidden: int, seats: int) -> None:
        super().__init__()
        from types import SimpleNamespace

        from omega_cluster.games.encoding import HiddenSpec

        torch.manual_seed(0)
        self.observation_size, self.action_feature_size = obs, feat
        self.config = SimpleNamespace(critic=True, hidden=HiddenSpec("locations", hidden, 5))
        self.trunk = torch.nn.Linear(obs, 8)
        self.action = torch.nn.Linear(feat, 8)
        self.critic = torch.nn.Linear(8 + hidden, seats)

    def forward(self, obs: torch.Tensor, feats: torch.Tensor, mask: torch.Tensor,
                hidden_state: torch.Tensor | None = None) -> Any:  # fmt: skip
        from types import SimpleNamespace

        h = torch.tanh(self.trunk(obs))
        logits = (self.action(feats) * h[:, None, :]).sum(-1).masked_fill(~mask, -torch.inf)
        critic = None
        if hidden_state is not None:
            critic = torch.tanh(self.critic(torch.cat([h, hidden_state], dim=1)))
        return SimpleNamespace(logits=logits, values=torch.zeros(len(obs), 2), critic=critic)


def test_the_critic_runs_alike_in_torch_and_onnx_runtime() -> None:
    from omega_cluster.model.runtime import (
        OrtCriticForward,
        TorchCriticForward,
        best_critic_forward,
    )

    net = ToyCriticNet(6, 4, 10, 3).eval()
    r = np.random.default_rng(1)
    obs, feats = r.normal(size=(5, 6)).astype(np.float32), r.normal(size=(5, 7, 4))
    mask = np.arange(7)[None, :] < np.array([[1], [3], [7], [2], [5]])
    hidden = r.integers(0, 5, size=(5, 10)).astype(np.float32)
    want = TorchCriticForward(net)(obs, feats.astype(np.float32), mask, hidden)
    ort = best_critic_forward(net)
    assert isinstance(ort, OrtCriticForward)
    got = ort(obs, feats.astype(np.float32), mask, hidden)
    assert np.array_equal(np.isinf(got[0]), ~mask)
    assert np.allclose(got[0][mask], want[0][mask], atol=1e-5)
    assert np.allclose(got[1], want[1], atol=1e-5) and got[1].shape == (5, 3)
    other = hidden.copy()
    other[:, :3] = 0.0
    assert not np.allclose(ort(obs, feats.astype(np.float32), mask, other)[1], got[1])
