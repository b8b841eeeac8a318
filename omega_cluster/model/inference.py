"""Batched, cached network inference for search, and the pure-network player.

:class:`NetworkEvaluator` implements the search's
:class:`~omega_cluster.search.evaluators.Evaluator` protocol: given a batch of leaves (from one
search, or from many searches driven together by :func:`omega_cluster.search.batching.run_searches`)
it encodes every new position, runs **one** forward pass per ``max_batch`` positions and answers
each leaf with its values in **absolute** seat order (the network's are seat-relative) and the
prior over ``leaf.legal``. Terminal leaves get the game's returns.

The cache is keyed by ``(player, information_set_key(player))``: the network only sees what the
player knows, so two worlds of one information set (two determinizations) give the same answer —
ISMCTS revisits the same information sets across determinizations and simulations, and those are
cache hits. It is an LRU of ``cache_size`` entries; :meth:`NetworkEvaluator.clear_cache` (called by
:meth:`NetworkEvaluator.load_state_dict`) must run whenever the weights change.

Device: ``device=None`` means CPU (pass ``"auto"`` for CUDA → MPS → CPU); the evaluator moves the
model there and puts it in eval mode. The forward pass runs in ONNX Runtime for a CPU model
when onnxruntime is installed, else in torch (:func:`~omega_cluster.model.runtime.best_forward`:
ONNX Runtime measured faster on CPU at every batch size, most at the small ones). CPU actors: ``threads`` pins torch's intra-op threads
(:func:`~omega_cluster.model.threads.pin_threads`, process-wide) so N actor processes on N cores
do not oversubscribe them; ``torch.inference_mode`` skips autograd bookkeeping.

:class:`NetworkPlayer` plays from the policy alone, no search: greedy (argmax) or sampled at a
temperature. :func:`network_player_from_checkpoint` builds one from a checkpoint directory (the
``network:<dir>`` player spec of :mod:`omega_cluster.players.registry`).
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from omega_cluster.games.api import Game, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.games.encoding import Encoder
from omega_cluster.model.checkpoint import load_checkpoint
from omega_cluster.model.encoders import encoder_from_info
from omega_cluster.model.network import PolicyValueNet, select_device
from omega_cluster.model.runtime import CriticForward, Forward, best_critic_forward, best_forward
from omega_cluster.model.threads import pin_threads
from omega_cluster.search.evaluators import Leaf, LeafEvaluation

__all__ = [
    "CriticEvaluator",
    "InferenceStats",
    "NetworkEvaluator",
    "NetworkPlayer",
    "network_player_from_checkpoint",
]


@dataclass
class InferenceStats:
    """Counters of a :class:`NetworkEvaluator` (reset with :meth:`NetworkEvaluator.reset_stats`)."""

    leaves: int = 0  # leaves asked for
    terminal: int = 0  # leaves answered with the game's returns
    cache_hits: int = 0  # answered from the cache
    duplicates: int = 0  # same information set twice in one batch: encoded once
    positions: int = 0  # positions encoded and run through the network
    forward_calls: int = 0  # forward passes

    @property
    def hit_rate(self) -> float:
        asked = self.leaves - self.terminal
        return (self.cache_hits + self.duplicates) / asked if asked else 0.0


class NetworkEvaluator:
    """Leaf evaluator backed by a :class:`PolicyValueNet` (see the module docstring)."""

    def __init__(
        self,
        model: PolicyValueNet,
        encoder: Encoder,
        *,
        device: str | torch.device | None = None,
        cache_size: int = 65_536,
        max_batch: int = 256,
        threads: int | None = None,
    ) -> None:
        if cache_size < 0 or max_batch < 1:
            raise ValueError(f"cache_size={cache_size} must be >= 0, max_batch={max_batch} >= 1")
        if threads is not None:
            pin_threads(threads)
        _check_sizes(model, encoder)
        self.device = select_device(device or "cpu")
        self.model = model.to(self.device).eval()
        self.runtime: Any = self._make_runtime()  # ONNX Runtime on CPU when installed
        self.encoder = encoder
        self.cache_size = cache_size
        self.max_batch = max_batch
        self.stats = InferenceStats()
        self._cache: OrderedDict[tuple[int, Hashable], LeafEvaluation] = OrderedDict()
        self._perm: dict[tuple[int, int], np.ndarray] = {}

    leaf_name = "network"  # the compiled tree's name of this leaf

    def _make_runtime(self) -> Forward | CriticForward:
        return best_forward(self.model)

    def _key(self, leaf: Leaf) -> tuple[int, Hashable]:
        """The cache key: what the network reads of a leaf (the player's information set)."""
        return (leaf.player, leaf.state.information_set_key(leaf.player))

    def _extra(self, leaves: Sequence[Leaf]) -> tuple[np.ndarray, ...]:
        """Inputs beyond the observation and the actions (none: the network sees no more)."""
        return ()

    # -- weights and cache ------------------------------------------------------------------
    def load_state_dict(self, state_dict: Mapping[str, torch.Tensor]) -> None:
        """New weights (e.g. a new champion): loads them (an ONNX Runtime forward exports the
        network again) and clears the cache. The only way to change the weights: a change made to
        ``model`` behind the evaluator's back reaches neither the cache nor the runtime."""
        self.runtime.load_state_dict(state_dict)
        self.clear_cache()

    def clear_cache(self) -> None:
        self._cache.clear()

    def reset_stats(self) -> None:
        self.stats = InferenceStats()

    # -- the Evaluator protocol ----------------------------------------------------------------
    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        stats = self.stats
        stats.leaves += len(leaves)
        out: list[LeafEvaluation | None] = [None] * len(leaves)
        pending: dict[tuple[int, Hashable], list[int]] = {}
        cache, caching = self._cache, self.cache_size > 0
        for i, leaf in enumerate(leaves):
            state = leaf.state
            if not state.current_players:
                out[i] = LeafEvaluation(tuple(float(r) for r in state.returns()))
                stats.terminal += 1
                continue
            key = self._key(leaf)
            if caching:
                hit = cache.get(key)
                if hit is not None:
                    cache.move_to_end(key)
                    out[i] = hit
                    stats.cache_hits += 1
                    continue
            slots = pending.get(key)
            if slots is None:
                pending[key] = [i]
            else:
                slots.append(i)
                stats.duplicates += 1
        keys = list(pending)
        for start in range(0, len(keys), self.max_batch):
            chunk = keys[start : start + self.max_batch]
            answers = self.evaluate_positions([leaves[pending[k][0]] for k in chunk])
            for key, answer in zip(chunk, answers, strict=True):
                for i in pending[key]:
                    out[i] = answer
                if caching:
                    cache[key] = answer
                    if len(cache) > self.cache_size:
                        cache.popitem(last=False)
        return out  # type: ignore[return-value]  # every slot is filled above

    def evaluate_positions(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        """One uncached forward pass over decision leaves (no terminal states)."""
        encoder = self.encoder
        obs = [encoder.encode_observation(leaf.state, leaf.player) for leaf in leaves]
        feats = [encoder.encode_actions(leaf.state, leaf.player, leaf.legal) for leaf in leaves]
        priors, values = self.forward(obs, feats, *self._extra(leaves))
        self.stats.positions += len(leaves)
        answers = []
        for i, leaf in enumerate(leaves):
            n = leaf.state.game.num_players
            absolute = values[i, self._permutation(leaf.player, n)]
            prior = priors[i, : len(leaf.legal)]
            answers.append(LeafEvaluation(tuple(absolute.tolist()), tuple(prior.tolist())))
        return answers

    def forward(
        self,
        observations: Sequence[np.ndarray],
        action_features: Sequence[np.ndarray],
        *extra: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Priors ``float64[B, L]`` (zero past each row's actions) and seat-relative values
        ``float64[B, S]`` of encoded positions, in one forward pass (``extra``: the critic's
        hidden codes)."""
        batch = len(observations)
        width = self.encoder.action_feature_size
        longest = max(1, max(len(f) for f in action_features))
        obs = np.stack(observations)
        feats = np.zeros((batch, longest, width), np.float32)
        mask = np.zeros((batch, longest), np.bool_)
        for i, f in enumerate(action_features):
            feats[i, : len(f)] = f
            mask[i, : len(f)] = True
        return self.forward_padded(obs, feats, mask, *extra)

    def forward_padded(
        self, obs: np.ndarray, feats: np.ndarray, mask: np.ndarray, *extra: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`forward` on inputs already stacked and padded: ``obs`` float32[B, O], ``feats``
        float32[B, A, F], ``mask`` bool[B, A] (the compiled search fills these buffers itself)."""
        logits, values = self.runtime(obs, feats, mask, *extra)
        self.stats.forward_calls += 1
        return softmax(logits), values.astype(np.float64)

    def fast_leaf(self) -> tuple[Any, str]:
        """The network leaf of the compiled search (see
        :class:`~omega_cluster.search.fast.game.LeafPlan`): one forward pass per batch of
        leaves the compiled tree has encoded."""
        from omega_cluster.search.fast.game import FastLeaf, LeafPlan

        return LeafPlan(FastLeaf(self.leaf_name), self.forward_columns, self.encoder), ""

    def forward_columns(
        self, obs: np.ndarray, feats: np.ndarray, mask: np.ndarray, *extra: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`forward_padded` on buffers as wide as a game's most legal moves: the network
        runs on the columns some row uses (its action head costs per column) and the priors
        come back as wide as ``mask``."""
        self.stats.leaves += len(obs)
        self.stats.positions += len(obs)
        width = max(1, int(mask.sum(axis=1).max()))
        if width == mask.shape[1]:
            return self.forward_padded(obs, feats, mask, *extra)
        priors, values = self.forward_padded(
            obs,
            np.ascontiguousarray(feats[:, :width]),
            np.ascontiguousarray(mask[:, :width]),
            *extra,
        )
        full = np.zeros(mask.shape, np.float64)
        full[:, :width] = priors
        return full, values

    def _permutation(self, player: int, n: int) -> np.ndarray:
        """Indices that turn relative values into absolute seat order: ``abs[p] = rel[(p -
        player) % n]``."""
        perm = self._perm.get((player, n))
        if perm is None:
            perm = self._perm[(player, n)] = np.array([(p - player) % n for p in range(n)])
        return perm

    def __repr__(self) -> str:
        return (
            f"NetworkEvaluator({self.encoder.name} v{self.encoder.version}, device={self.device}, "
            f"cache_size={self.cache_size}, max_batch={self.max_batch})"
        )


class CriticEvaluator(NetworkEvaluator):
    """The critic leaf (``search.leaf=critic``): the network's prior, and the value of its
    perfect-information critic, which reads the leaf's world in full — a determinized world is
    a full state, so what the player cannot see there (``State.hidden_state``) is defined. The
    cache keys on the information set and the hidden state together; the model must have a
    critic (:func:`~omega_cluster.model.runtime.best_critic_forward` refuses one without)."""

    leaf_name = "critic"

    def _make_runtime(self) -> Forward | CriticForward:
        return best_critic_forward(self.model)

    def _key(self, leaf: Leaf) -> tuple[int, Hashable]:
        hidden = _hidden_state(leaf)
        return (leaf.player, (leaf.state.information_set_key(leaf.player), hidden.tobytes()))

    def _extra(self, leaves: Sequence[Leaf]) -> tuple[np.ndarray, ...]:
        return (np.stack([_hidden_state(leaf) for leaf in leaves]),)

    def __repr__(self) -> str:
        return "Critic" + super().__repr__().removeprefix("Network")


def _hidden_state(leaf: Leaf) -> np.ndarray:
    hidden = leaf.state.hidden_state(leaf.player)
    if hidden is None:
        raise ValueError(
            f"search.leaf=critic reads the hidden state of each leaf's world, and "
            f"{leaf.state.game.spec.name} gives none (State.hidden_state)"
        )
    return np.asarray(hidden, np.float32)


class NetworkPlayer:
    """Plays the network's policy without search: greedy (argmax) or sampled at ``temperature``."""

    def __init__(
        self,
        game: Game,
        model: PolicyValueNet,
        encoder: Encoder,
        *,
        greedy: bool = True,
        temperature: float = 1.0,
        device: str | torch.device | None = None,
        name: str = "network",
    ) -> None:
        if not temperature > 0.0:
            raise ValueError(f"temperature={temperature!r} must be > 0")
        _check_sizes(model, encoder)
        if encoder.game_name != game.spec.name:
            raise ValueError(
                f"encoder {encoder.name} serves {encoder.game_name}, not {game.spec.name}"
            )
        self.game = game
        self.greedy = greedy
        self.temperature = temperature
        self.name = name
        self._evaluator = NetworkEvaluator(model, encoder, device=device, cache_size=0)

    def policy(self, state: State, player: int) -> tuple[list[int], np.ndarray]:
        """``player``'s legal actions and the network's probabilities over them (at
        ``temperature``)."""
        legal = list(state.legal_actions(player))
        enc = self._evaluator.encoder
        obs = enc.encode_observation(state, player)
        feats = enc.encode_actions(state, player, legal)
        mask = np.ones((1, len(legal)), np.bool_)
        logits, _ = self._evaluator.runtime(obs[None], feats[None], mask)
        return legal, softmax(logits / self.temperature)[0]

    def act(self, state: State, player: int, rng: random.Random) -> int:
        legal = state.legal_actions(player)
        if len(legal) == 1:
            return legal[0]
        legal, probs = self.policy(state, player)
        if self.greedy:
            return legal[int(np.argmax(probs))]
        return sample_chance(list(zip(legal, probs, strict=True)), rng.random())

    def __repr__(self) -> str:
        mode = "greedy" if self.greedy else f"sampled, temperature {self.temperature:g}"
        return f"NetworkPlayer({self.game.spec.name}, {mode})"


def network_player_from_checkpoint(
    game: Game,
    checkpoint: str | Path,
    greedy: bool = True,
    temperature: float = 1.0,
    device: str = "cpu",
) -> NetworkPlayer:
    """A :class:`NetworkPlayer` from a checkpoint directory, checked against ``game``."""
    loaded = load_checkpoint(checkpoint, expected_game=game.spec.name, device=device)
    encoder = encoder_from_info(game, loaded.metadata.encoder)
    return NetworkPlayer(
        game,
        loaded.model,
        encoder,
        greedy=greedy,
        temperature=temperature,
        device=device,
        name=f"network:{Path(checkpoint).name}",
    )


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax in float64 (``-inf`` logits, the masked actions, get 0)."""
    z = logits.astype(np.float64)
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def _check_sizes(model: PolicyValueNet, encoder: Any) -> None:
    if (model.observation_size, model.action_feature_size) != (
        encoder.observation_size,
        encoder.action_feature_size,
    ):
        raise ValueError(
            f"model expects observations of {model.observation_size} and action features of "
            f"{model.action_feature_size}, encoder {encoder.name} v{encoder.version} gives "
            f"{encoder.observation_size} and {encoder.action_feature_size}"
        )
    if model.config.num_value_seats < encoder.max_players:
        raise ValueError(
            f"model has {model.config.num_value_seats} value seats, encoder {encoder.name} "
            f"needs {encoder.max_players}"
        )
