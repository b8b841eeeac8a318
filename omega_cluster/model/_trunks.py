"""The state encoders (trunks) of :class:`~omega_cluster.model.network.PolicyValueNet`.

``MLPTrunk``: an input projection and pre-norm residual MLP blocks. ``TransformerTrunk``: a small
pre-norm transformer over state tokens (the observation cut into chunks of ``token_size``
entries, each with a learned position embedding, plus a summary token whose output is the state
vector), written out as plain ops so it exports to ONNX.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

if TYPE_CHECKING:
    from omega_cluster.model.network import ModelConfig

__all__ = ["MLPTrunk", "TransformerTrunk"]


class _ResidualBlock(nn.Module):
    """Pre-norm residual MLP block."""

    def __init__(self, width: int, dropout: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 2 * width)
        self.fc2 = nn.Linear(2 * width, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.norm(x)))))


class MLPTrunk(nn.Module):
    def __init__(self, observation_size: int, config: ModelConfig) -> None:
        super().__init__()
        width = config.hidden_size
        self.inp = nn.Linear(observation_size, width)
        self.blocks = nn.ModuleList(
            _ResidualBlock(width, config.dropout) for _ in range(config.num_layers)
        )
        self.norm = nn.LayerNorm(width)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = F.gelu(self.inp(obs))
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


class _AttentionBlock(nn.Module):
    """Pre-norm transformer block (written out so it exports to ONNX as plain ops)."""

    def __init__(self, width: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width)
        )
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens, width = x.shape[1], x.shape[2]
        head = width // self.heads
        qkv = self.qkv(self.norm1(x)).reshape(-1, tokens, 3, self.heads, head)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each [B, heads, tokens, head]
        weights = torch.softmax(q @ k.transpose(-2, -1) * (1.0 / math.sqrt(head)), dim=-1)
        attended = (weights @ v).transpose(1, 2).reshape(-1, tokens, width)
        x = x + self.drop(self.proj(attended))
        return x + self.drop(self.mlp(self.norm2(x)))


class TransformerTrunk(nn.Module):
    def __init__(self, observation_size: int, config: ModelConfig) -> None:
        super().__init__()
        width, size = config.hidden_size, config.token_size
        self.token_size = size
        self.num_tokens = -(-observation_size // size)
        self.pad = self.num_tokens * size - observation_size
        self.embed = nn.Linear(size, width)
        self.position = nn.Parameter(torch.randn(1, self.num_tokens + 1, width) * 0.02)
        self.summary = nn.Parameter(torch.zeros(1, 1, width))
        self.blocks = nn.ModuleList(
            _AttentionBlock(width, config.num_heads, config.dropout)
            for _ in range(config.num_layers)
        )
        self.norm = nn.LayerNorm(width)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if self.pad:
            obs = F.pad(obs, (0, self.pad))
        tokens = self.embed(obs.reshape(-1, self.num_tokens, self.token_size))
        summary = self.summary.expand(tokens.shape[0], -1, -1)
        x = torch.cat((summary, tokens), dim=1) + self.position
        for block in self.blocks:
            x = block(x)
        return self.norm(x[:, 0])
