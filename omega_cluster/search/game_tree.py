"""ISMCTS over a whole game from its start: every player's average policy at every information set.

A search from one information state (:class:`~omega_cluster.search.ismcts.ISMCTS`) draws its worlds
uniformly from what the searching player knows, ignoring how likely the opponents' past moves made
each world under their own strategies; so its visit distribution answers a wrong belief, and no
selection rule makes it converge to an equilibrium of a game with hidden information. Heinrich &
Silver's Smooth UCT (2015) converges because its simulations start at the *start* of the game:
chance deals every card, each player's nodes (keyed by information set, one tree per player as in
ISMCTS) are visited as often as play reaches them, and each node's visit counts are the average
policy there. :func:`game_tree_policy` runs that search (the same tree, selection rules and
backup as ISMCTS, ``selection`` ``uct`` or ``smooth_uct``) and returns the visit distributions,
what :mod:`omega_cluster.eval.exploitability` measures as the search's policy.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from omega_cluster.games.api import Game, State
from omega_cluster.search._defaults import C_UCT
from omega_cluster.search._ismcts_run import Run
from omega_cluster.search._ismcts_tree import Tree
from omega_cluster.search.evaluators import Evaluator

__all__ = ["GameTreePolicy", "game_tree_policy"]


class GameTreePolicy:
    """The visit distributions of a whole-game search: ``(state, player) -> {action: p}``
    (uniform at an information set the search never reached)."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree

    def __call__(self, state: State, player: int) -> dict[int, float]:
        legal = list(state.legal_actions(player))
        node = self.tree.tables[player].get(state.information_set_key(player))
        total = sum(node.visits) if node is not None else 0
        if node is None or total == 0:
            return dict.fromkeys(legal, 1.0 / len(legal))
        probs = dict.fromkeys(legal, 0.0)
        for action, n in zip(node.acts, node.visits, strict=False):
            probs[action] = n / total
        return probs


def game_tree_policy(
    game: Game,
    evaluator: Evaluator,
    *,
    simulations: int,
    selection: str = "smooth_uct",
    c_uct: float = C_UCT,
    seed: int = 0,
) -> GameTreePolicy:
    """Run ``simulations`` simulations from the start of ``game`` (module docstring)."""
    if selection not in ("uct", "smooth_uct"):
        raise ValueError(
            f"game_tree_policy: selection must be uct or smooth_uct, got {selection!r}"
        )
    if game.spec.simultaneous:
        raise ValueError(f"game_tree_policy: {game.spec.name} has simultaneous moves")
    tree = Tree(game.num_players, puct=False, c_uct=c_uct, c_puct=0.0, virtual_loss=None,
                smooth=selection == "smooth_uct")  # fmt: skip
    rng = random.Random(seed)

    def starts() -> Iterator[tuple[State, int]]:
        for _ in range(simulations):
            yield game.new_initial_state(rng.getrandbits(32)), -1

    steps = Run(tree, rng, 1).play(starts())
    try:
        requests = next(steps)
        while True:
            requests = steps.send(evaluator.evaluate(requests))
    except StopIteration:
        pass
    return GameTreePolicy(tree)
