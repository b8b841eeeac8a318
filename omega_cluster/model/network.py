"""The action-conditioned policy/value network: legal actions scored by their features.

A state encoder (the *trunk*) turns an encoded observation into a state vector; an action encoder
turns each legal action's features into an action vector; the policy logit of an action scores
the pair (state vector, action vector) — an MLP on their concatenation plus a dot product — so one
network handles a legal set that changes every move (Mexican Train: a handful of tile × train
plays out of 821 ids). Heads on the state vector: one value per seat and optional auxiliary heads.

Shapes (``B`` batch, ``D`` observation size, ``L`` legal actions after padding, ``F`` action
features, ``S`` value seats, ``H`` hidden-state size): ``forward(observations [B, D],
action_features [B, L, F], legal_mask [B, L] bool, hidden_state [B, H] | None = None) ->
NetOutput(logits [B, L], values [B, S], aux {name: [B, size]}, belief, critic)``.

* ``logits`` are masked: padded entries (``legal_mask`` False) are ``-inf``, so a softmax over a
  row is the prior over that row's legal actions.
* ``values[:, k]`` is the expected return of relative seat ``k`` — absolute seat
  ``(player + k) % num_players``, ``player`` being the seat the observation was encoded for
  (column 0 is the acting player's own value). Seats beyond the table size are padding.
  Values are in the game's own return units: with ``ModelConfig.value_range = (lo, hi)`` they are
  ``lo + (hi - lo) · sigmoid(raw)`` (Mexican Train win shares: ``(0, 1)``; Leduc chips:
  ``(-13, 13)`` heads-up); with ``None`` they are raw linear outputs.
* ``aux`` holds one tensor per :class:`~omega_cluster.games.encoding.AuxHeadSpec` in the
  config: raw regression outputs or classification logits.
* ``belief`` (``ModelConfig.belief_head``, hidden state of kind "locations"): logits
  ``[B, size, classes]`` of where each hidden item is (the codes of
  :class:`~omega_cluster.games.encoding.HiddenSpec`), from the public trunk state only.
* ``critic`` (``ModelConfig.critic``): the perfect-information critic's values ``[B, S]``, in the
  value head's range, from the trunk state and ``hidden_state`` (the records' training-only
  column; ``forward(..., hidden_state=None)`` gives ``critic=None``). It is a training signal
  (the critic's values can be the value head's targets) and a leaf value on a sampled world,
  where the whole state is known.

Trunks: ``"mlp"`` (default: input projection + pre-norm residual MLP blocks) and ``"transformer"``
(a small pre-norm transformer over state tokens: the observation cut into fixed chunks of
``token_size`` entries, each a token with a learned position embedding, plus a summary token whose
output is the state vector), in :mod:`._trunks`. :func:`select_device` picks CUDA, then MPS,
then CPU.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from omega_cluster.fields import FieldChecks, FieldError
from omega_cluster.games.api import Game
from omega_cluster.games.encoding import AuxHeadSpec, Encoder, HiddenSpec
from omega_cluster.model._trunks import MLPTrunk, TransformerTrunk

__all__ = [
    "DEVICE_NAMES",
    "TRUNKS",
    "ModelConfig",
    "ModelConfigError",
    "NetOutput",
    "PolicyValueNet",
    "is_device_name",
    "pad_batch",
    "select_device",
]

TRUNKS = ("mlp", "transformer")


class ModelConfigError(FieldError):
    """A model configuration value outside its allowed range (naming the field)."""


@dataclass(frozen=True)
class ModelConfig:
    """Sizes and options of a :class:`PolicyValueNet` (validated on construction)."""

    trunk: str = "mlp"  # "mlp" or "transformer"
    hidden_size: int = 256  # width of the state vector (the transformer's model width)
    num_layers: int = 2  # residual MLP blocks, or transformer layers
    action_embedding_size: int = 128  # width of each action vector
    policy_hidden_size: int = 128  # hidden width of the (state, action) scorer
    value_hidden_size: int = 128  # hidden width of the value and aux heads
    num_value_seats: int = (
        2  # values per seat, relative to the encoded player (encoder.max_players)
    )
    value_range: tuple[float, float] | None = None  # sigmoid-squash values into [lo, hi]; None: raw
    token_size: int = 64  # transformer: observation entries per state token
    num_heads: int = 4  # transformer: attention heads (hidden_size a multiple of it)
    dropout: float = 0.0  # dropout in the trunk (0 for self-play nets)
    aux_heads: tuple[AuxHeadSpec, ...] = field(default_factory=tuple)  # extra targets
    hidden: HiddenSpec | None = None  # the records' hidden state (the encoder's), if any
    belief_head: bool = False  # predict each hidden item's location (needs hidden "locations")
    critic: bool = False  # a perfect-information value that also reads the hidden state

    def __post_init__(self) -> None:
        check = FieldChecks(self, ModelConfigError)
        check.choice("trunk", TRUNKS)
        for name in ("hidden_size", "action_embedding_size", "policy_hidden_size",
                     "value_hidden_size", "num_value_seats", "token_size", "num_heads"):  # fmt: skip
            check.integer(name, 1)
        check.integer("num_layers", 1 if self.trunk == "transformer" else 0)
        if self.trunk == "transformer" and self.hidden_size % self.num_heads:
            check.refuse(
                "hidden_size",
                f"must be a multiple of num_heads={self.num_heads} (the transformer's heads)",
            )
        check.number("dropout", 0.0, 1.0, open_high=True)
        if self.value_range is not None:
            lo, hi = self.value_range
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise ModelConfigError(f"value_range={self.value_range!r} must be finite lo < hi")
            object.__setattr__(self, "value_range", (float(lo), float(hi)))
        heads = tuple(a if isinstance(a, AuxHeadSpec) else AuxHeadSpec(**a) for a in self.aux_heads)
        for head in heads:
            if head.kind not in ("regression", "classification") or head.size < 1:
                raise ModelConfigError(
                    f"aux head {head!r}: kind regression/classification, size>=1"
                )
        if len({h.name for h in heads}) != len(heads):
            raise ModelConfigError(f"aux head names must be unique: {[h.name for h in heads]}")
        object.__setattr__(self, "aux_heads", heads)
        self._check_hidden()

    def _check_hidden(self) -> None:
        hidden = self.hidden
        if isinstance(hidden, dict):
            hidden = HiddenSpec(**hidden)
            object.__setattr__(self, "hidden", hidden)
        if hidden is not None and (
            hidden.kind not in ("locations", "vector")
            or hidden.size < 1
            or (hidden.kind == "locations" and hidden.classes < 2)
        ):
            raise ModelConfigError(
                f"hidden={hidden!r}: kind locations (classes >= 2) or vector, size >= 1"
            )
        check = FieldChecks(self, ModelConfigError)
        check.flag("belief_head")
        check.flag("critic")
        if self.belief_head and (hidden is None or hidden.kind != "locations"):
            kind = "none" if hidden is None else repr(hidden.kind)
            raise ModelConfigError(
                "belief_head=true predicts where hidden items are and needs an encoder whose "
                f"hidden state is 'locations'; this one's is {kind}"
            )
        if self.critic and hidden is None:
            raise ModelConfigError(
                "critic=true reads the hidden state and needs an encoder that declares one; "
                "this one declares none"
            )

    @classmethod
    def for_encoder(
        cls, encoder: Encoder, game: Game | None = None, *, aux: bool = False, **overrides: Any
    ) -> ModelConfig:
        """A config sized for ``encoder``: its value seats, the game's return range (when the
        spec bounds it), its hidden-state spec and, with ``aux=True``, its auxiliary heads."""
        info = encoder.info()
        kwargs: dict[str, Any] = {"num_value_seats": encoder.max_players, "hidden": info.hidden}
        if game is not None:
            lo, hi = game.spec.min_return, game.spec.max_return
            if lo is not None and hi is not None and lo < hi:
                kwargs["value_range"] = (float(lo), float(hi))
        if aux:
            kwargs["aux_heads"] = info.aux_heads
        kwargs.update(overrides)
        return cls(**kwargs)

    def replace(self, **changes: Any) -> ModelConfig:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["value_range"] = list(self.value_range) if self.value_range else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelConfig:
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ModelConfigError(
                f"unknown model config field(s) {unknown}; known: {sorted(known)}"
            )
        kwargs = dict(data)
        if kwargs.get("value_range") is not None:
            kwargs["value_range"] = tuple(kwargs["value_range"])
        kwargs["aux_heads"] = tuple(AuxHeadSpec(**a) for a in kwargs.get("aux_heads", ()))
        if kwargs.get("hidden") is not None:
            kwargs["hidden"] = HiddenSpec(**kwargs["hidden"])
        return cls(**kwargs)


@dataclass(frozen=True)
class NetOutput:
    """What :meth:`PolicyValueNet.forward` returns."""

    logits: torch.Tensor  # float[B, L]: policy logits, -inf where legal_mask is False
    values: torch.Tensor  # float[B, S]: value per relative seat (0 = the encoded player)
    aux: dict[str, torch.Tensor]  # name -> float[B, size]: aux regression outputs or logits
    belief: torch.Tensor | None = None  # float[B, size, classes]: location logits (belief head)
    critic: torch.Tensor | None = None  # float[B, S]: perfect-information values (given hidden)


class _Critic(nn.Module):
    """The perfect-information critic: an MLP on (trunk state, an embedding of the hidden
    state). Location codes are read one-hot (compared with ``0 .. classes - 1``, so the graph has
    no casts or data-dependent branches and traces to ONNX); a vector hidden state as it is."""

    codes: torch.Tensor  # float[classes]: 0 .. classes - 1 (a buffer)

    def __init__(self, spec: HiddenSpec, config: ModelConfig) -> None:
        super().__init__()
        h, v = config.hidden_size, config.value_hidden_size
        self.classes = spec.classes if spec.kind == "locations" else 0
        width = spec.size * self.classes if self.classes else spec.size
        self.register_buffer("codes", torch.arange(max(self.classes, 1), dtype=torch.float32))
        self.embed = nn.Sequential(nn.Linear(width, v), nn.GELU())
        self.mlp = nn.Sequential(
            nn.Linear(h + v, v), nn.GELU(), nn.Linear(v, v), nn.GELU(),
            nn.Linear(v, config.num_value_seats),
        )  # fmt: skip

    def forward(self, state: torch.Tensor, hidden_state: torch.Tensor) -> torch.Tensor:
        x = hidden_state.float()
        if self.classes:
            x = (x.round().unsqueeze(-1) == self.codes).float().flatten(1)
        return self.mlp(torch.cat((state, self.embed(x.to(state.dtype))), dim=-1))


class PolicyValueNet(nn.Module):
    """Action-conditioned policy/value network; see the module docstring for shapes."""

    def __init__(self, config: ModelConfig, observation_size: int, action_feature_size: int):
        super().__init__()
        if observation_size < 1 or action_feature_size < 1:
            raise ModelConfigError(
                f"observation_size={observation_size} and action_feature_size="
                f"{action_feature_size} must be >= 1"
            )
        self.config = config
        self.observation_size = observation_size
        self.action_feature_size = action_feature_size
        h, a, p, v = (
            config.hidden_size,
            config.action_embedding_size,
            config.policy_hidden_size,
            config.value_hidden_size,
        )
        trunk = MLPTrunk if config.trunk == "mlp" else TransformerTrunk
        self.trunk: nn.Module = trunk(observation_size, config)
        self.action_encoder = nn.Sequential(
            nn.Linear(action_feature_size, a), nn.GELU(), nn.Linear(a, a), nn.LayerNorm(a)
        )
        # score(s, a) = w · gelu(W_s s + W_a a + b) + (U s) · a: an MLP on the concatenation
        # (its first layer split in two, so the state half runs once per row, not per action)
        self.policy_state = nn.Linear(h, p)
        self.policy_action = nn.Linear(a, p, bias=False)
        self.policy_out = nn.Linear(p, 1)
        self.policy_dot = nn.Linear(h, a, bias=False)
        self.value_head = nn.Sequential(
            nn.Linear(h, v), nn.GELU(), nn.Linear(v, config.num_value_seats)
        )
        self.aux_heads = nn.ModuleDict(
            {
                spec.name: nn.Sequential(nn.Linear(h, v), nn.GELU(), nn.Linear(v, spec.size))
                for spec in config.aux_heads
            }
        )
        spec = config.hidden
        self.belief_head = (
            nn.Linear(h, spec.size * spec.classes) if config.belief_head and spec else None
        )
        self.critic = _Critic(spec, config) if config.critic and spec else None
        # A fresh network is neutral: uniform priors, values at the middle of the range.
        last = [self.policy_out, self.value_head[-1]]
        if self.critic is not None:
            last.append(self.critic.mlp[-1])
        for layer in last:
            assert isinstance(layer, nn.Linear)
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)
        nn.init.zeros_(self.policy_dot.weight)
        lo, hi = config.value_range or (0.0, 1.0)
        self._value_low, self._value_span = lo, hi - lo

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(
        self,
        observations: torch.Tensor,
        action_features: torch.Tensor,
        legal_mask: torch.Tensor,
        hidden_state: torch.Tensor | None = None,
    ) -> NetOutput:
        """The policy logits, values and aux outputs of a batch; the belief logits when the net
        has a belief head (from the observations only) and, when ``hidden_state`` (float32[B, H]:
        the records' column) is given and the net has a critic, the critic's values."""
        state = self.trunk(observations)  # [B, H]
        actions = self.action_encoder(action_features)  # [B, L, A]
        hidden = F.gelu(self.policy_state(state).unsqueeze(1) + self.policy_action(actions))
        logits = self.policy_out(hidden).squeeze(-1)
        logits = logits + (self.policy_dot(state).unsqueeze(1) * actions).sum(-1)
        logits = logits.masked_fill(~legal_mask, float("-inf"))
        values = self._squash(self.value_head(state))
        aux = {name: head(state) for name, head in self.aux_heads.items()}
        belief = None
        if self.belief_head is not None and self.config.hidden is not None:
            spec = self.config.hidden
            belief = self.belief_head(state).reshape(-1, spec.size, spec.classes)
        critic = None
        if self.critic is not None and hidden_state is not None:
            critic = self._squash(self.critic(state, hidden_state))
        return NetOutput(logits, values, aux, belief, critic)

    def _squash(self, raw: torch.Tensor) -> torch.Tensor:
        """Raw value outputs into the value range (``lo + span · sigmoid``), or as they are."""
        if self.config.value_range is None:
            return raw
        return self._value_low + self._value_span * torch.sigmoid(raw)


def pad_batch(
    observations: Sequence[np.ndarray],
    action_features: Sequence[np.ndarray],
    *,
    min_actions: int = 1,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Stack encoded positions into a padded batch: ``observations [B, D]``, ``action_features
    [B, L, F]`` (zeros past each row's legal actions) and ``legal_mask [B, L]`` (bool), with
    ``L = max(len(row), min_actions)``."""
    if len(observations) != len(action_features):
        raise ValueError(
            f"{len(observations)} observations but {len(action_features)} action feature sets"
        )
    if not observations:
        raise ValueError("pad_batch needs at least one position")
    obs = np.stack(observations).astype(np.float32, copy=False)
    width = action_features[0].shape[1]
    longest = max(max(len(f) for f in action_features), min_actions)
    feats = np.zeros((len(obs), longest, width), np.float32)
    mask = np.zeros((len(obs), longest), np.bool_)
    for i, f in enumerate(action_features):
        feats[i, : len(f)] = f
        mask[i, : len(f)] = True
    return torch.from_numpy(obs), torch.from_numpy(feats), torch.from_numpy(mask)


DEVICE_NAMES = "auto, cpu, mps, cuda, cuda:<index>"
_DEVICE = re.compile(r"auto|cpu|mps|cuda(:\d+)?")


def is_device_name(name: str) -> bool:
    """Whether ``name`` is one of :data:`DEVICE_NAMES` (whatever this machine has)."""
    return _DEVICE.fullmatch(name) is not None


def select_device(preference: str | torch.device = "auto") -> torch.device:
    """``"auto"``: CUDA if available, then Apple MPS, then CPU; or the named device, checked."""
    if isinstance(preference, torch.device):
        preference = str(preference)
    choice = preference.strip().lower()
    mps = getattr(torch.backends, "mps", None)
    mps_ok = mps is not None and mps.is_available()
    if choice == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps" if mps_ok else "cpu")
    if not is_device_name(choice):
        raise ValueError(f"device {preference!r} is not allowed; allowed: {DEVICE_NAMES}")
    kind = choice.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {preference!r} requested but CUDA is not available here")
    if kind == "mps" and not mps_ok:
        raise ValueError(f"device {preference!r} requested but MPS is not available here")
    return torch.device(choice)
