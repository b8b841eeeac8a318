"""Torch's intra-op threads, pinned once per process that runs a network.

A self-play actor, a bench worker, the gatekeeper or an arena runs many *small* forward passes
(a batch of a few hundred positions through a small MLP). Torch's default is one intra-op thread
per core; each forward pass then wakes that many threads, and several such processes on one
machine spin-wait against each other for the same cores, far slower than with one thread each
(``python -m bench.bench_threads`` measures it).
So every process that plays with a network calls :func:`pin_threads` with the run's
``cluster.torch_threads`` (default 1) before it plays; the arena and bench commands take
``threads=`` (default 1).

Only the intra-op pool is set: the inter-op pool serves only work forked by TorchScript
(``torch.jit.fork``), which nothing here runs, and torch refuses to resize it once any parallel
work has started — setting it could fail in a process that has already run a forward pass.
"""

from __future__ import annotations

import torch

__all__ = ["pin_threads"]


def pin_threads(threads: int) -> int:
    """Set torch's intra-op threads of this process to ``threads`` (>= 1); returns the count now
    in effect (``torch.get_num_threads()``). Process-wide: every model in the process shares it."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"torch threads must be an int >= 1, got {threads!r}")
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return torch.get_num_threads()
