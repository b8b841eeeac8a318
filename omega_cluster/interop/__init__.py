"""Adapters that make every game of the contract usable from the reinforcement-learning
ecosystem: :mod:`.pettingzoo` (AEC and parallel environments) over :mod:`.table` (one seeded
game with chance played inside, each seat's observation and action mask). The RLlib
environment lives in ``cluster/`` (the only package that imports ray) on the same table.

Nothing here is imported by the service; ``pettingzoo`` and ``gymnasium`` are needed only when
these modules are.
"""
