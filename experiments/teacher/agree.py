"""How often does the teacher agree with itself? Two independent searches of the self-play
teacher at the same recorded position: how often the moves they play (the most visited, for the
tree root) are the same, and how often each is the recorded target's most-visited move. It is the ceiling of a network that
fits the teacher's expected visits (``fit.py``'s "greedy = most visited"): a network cannot
agree with one noisy search more often than another search of the same teacher does.

    PYTHONPATH=. python experiments/teacher/agree.py --run /work/runs/4p-wide --positions 300 --seed 0 \\
        --teacher ismcts:commander_rollout:800:c_uct=0.7 --net network:/tmp/refit-wide2/models/refit-p4
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from experiments.teacher.fit import rows
from omega_cluster.games.registry import make_game
from omega_cluster.players.registry import make_player


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--teacher", default="ismcts:commander_rollout:800:c_uct=0.7")
    parser.add_argument("--net", help="a network player spec: its greedy move against both")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    keep = ["game_params", "game_seed", "history", "policy_target", "policy_weight",
            "legal_actions"]  # fmt: skip
    cols = rows(args.run, 30, rng).select(keep).to_pylist()
    picked = [r for r in cols if r["policy_weight"] > 0 and len(r["legal_actions"]) >= 2]
    positions = rng.sample(picked, args.positions)
    params = json.loads(positions[0]["game_params"])
    game = make_game("mexican_train", **params)
    net = make_player(args.net, game) if args.net else None
    agree = first = second = 0
    net_any = net_sure = sure = 0
    for i, row in enumerate(positions):
        state = game.replay(row["game_seed"], [tuple(h) if len(h) > 1 else h[0]
                                               for h in row["history"]])  # fmt: skip
        seat = state.current_player
        target = row["policy_target"]
        recorded = row["legal_actions"][max(range(len(target)), key=target.__getitem__)]
        picks = []
        for _ in range(2):
            player = make_player(args.teacher, game)
            result = player.search.search(state, seat, random.Random(rng.randrange(2**31)))
            picks.append(result.action)  # the move it plays: its most visited (tree root)
        agree += picks[0] == picks[1]
        if net is not None:
            move = net.act(state, seat, random.Random(0))
            net_any += (move == picks[0]) + (move == picks[1])
            if picks[0] == picks[1]:
                sure += 1
                net_sure += move == picks[0]
        first += picks[0] == recorded
        second += picks[1] == recorded
        if (i + 1) % 50 == 0 or i + 1 == len(positions):
            n = i + 1
            print(f"{n} positions: two searches agree {agree / n:.3f}; a search agrees with the "
                  f"recorded target {(first + second) / (2 * n):.3f}", flush=True)  # fmt: skip
            if net is not None:
                print(f"  the network agrees with a search {net_any / (2 * n):.3f}; where the "
                      f"two searches agree ({sure}), with them {net_sure / max(1, sure):.3f}",
                      flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
