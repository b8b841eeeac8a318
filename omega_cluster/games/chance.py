"""Seeds and chance draws: the two random helpers every layer above the games shares.

* :func:`derive_seed` — a seed from a tuple of parts (the run seed, ``"chunk"``, the chunk index),
  stable across runs, platforms and Python versions (a hash, not Python's salted ``hash``), so a
  run, a gate or an arena match replays exactly from its seed.
* :func:`sample_chance` — the outcome of an explicit chance node (``State.chance_outcomes()``)
  that one uniform draw ``u`` in [0, 1) selects: the outcomes lie on [0, 1) end to end in their
  listed order, each as wide as its probability, and the draw picks the interval it falls in
  (inverse-transform sampling). Self-play, the arena, both searches and the rollout leaf draw chance
  with this one function, so a seeded game deals the same cards wherever it is played.

The boundary rule is ``r -= p; r < 0`` over the outcomes, the rule self-play and the searches have
always used. Probabilities that sum to slightly under 1 (rounding) give the last outcome to a draw
past the end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

__all__ = ["derive_seed", "sample_chance"]


def derive_seed(*parts: int | str) -> int:
    """A 63-bit seed from ``parts``, stable across runs, platforms and Python versions."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def sample_chance(outcomes: Sequence[tuple[int, float]], u: float) -> int:
    """The action of ``outcomes`` (``(action, probability)`` pairs) that the uniform draw ``u``
    in [0, 1) selects (module docstring); e.g. ``sample_chance(state.chance_outcomes(),
    rng.random())``."""
    for action, probability in outcomes:
        u -= probability
        if u < 0.0:
            return action
    return outcomes[-1][0]  # probabilities summing to 1 - ε
