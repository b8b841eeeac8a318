"""The searches' shared defaults, each set here once: ``ISMCTSConfig`` and ``SMMCTSConfig`` and
every config above them (self-play, the gate, the run schema) refer to these values."""

from __future__ import annotations

__all__ = ["C_UCT", "SIMULATIONS"]

SIMULATIONS = 400  # simulations per search
C_UCT = 1.4  # the UCT exploration constant (UCB1's sqrt(2), rounded)
