"""A network's strength at every table size, for a release's model card.

``python -m bench.bench_release --network <checkpoint or release dir> --run <run dir>
--players 2 3 4 --games 2400 --seed <fresh seed> [--against <dir>] [--strength <json>]``
benches the network as the greedy network alone against the game's rule-based player (Commander
for Mexican Train) at each table size of ``--players``: the run's game and bench settings with
``players`` changed, ``--games`` games on fresh deals, each deal played once per seat. With
``--against`` a second network plays the same deals, and the two meet head to head at each
size. The statistic is ``bench/bench_scaling.py``'s: against Commander at more than 2 players
the fair share (1.0 par), else the score against the other seats (0.5 par), by deal with the 95%
Student-t interval. ``--strength`` writes the first network's rows in the shape ``omega-cluster
release strength=`` reads: a released network is seated at any table size (``omega``), so its
card shows each.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench.bench_champion import _init, _play
from bench.bench_scaling import network_alone, strength_row
from omega_cluster.eval.stats import ConfidenceInterval
from omega_cluster.wiring import gate_service_config, load_run_settings


def table_rows(args: argparse.Namespace, players: int, command: str) -> list[dict[str, Any]]:
    """The strength rows of ``args.network`` at one table size (module docstring)."""
    settings = load_run_settings(args.run, [f"game.params.players={players}",
                                            f"run.seed={args.seed}"])  # fmt: skip
    config = gate_service_config(settings)
    assert config.fleet is not None
    table = config.fleet.slices[0]
    with ProcessPoolExecutor(args.workers, initializer=_init, initargs=(config,)) as pool:

        def bench(uri: Path, anchor: str) -> ConfidenceInterval:
            # one pseudo-version for every network: the same deals at this table size
            return network_alone(config, table, 1, str(uri), lambda t: list(pool.map(_play, t)),
                                 args.games, anchor, f"{uri} at {players}p")[1]  # fmt: skip

        rows = [strength_row("commander", players, bench(args.network, "heuristic"), command,
                             args.seed)]  # fmt: skip
        if args.against is not None:
            bench(args.against, "heuristic")
            head = bench(args.network, f"network:{args.against}")
            rows.append(strength_row(f"network:{args.against}", players, head, command,
                                     args.seed))  # fmt: skip
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--network", type=Path, required=True, help="checkpoint or release")
    parser.add_argument("--run", type=Path, required=True, help="the game and bench settings")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--games", type=int, default=2400, help="games per table size")
    parser.add_argument("--seed", type=int, required=True, help="fresh: never used to choose")
    parser.add_argument("--against", type=Path, help="a second network on the same deals")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--strength", type=Path, help="write the network's rows as a strength "
                        "file for `omega-cluster release strength=`")  # fmt: skip
    args = parser.parse_args(argv)
    given = list(sys.argv[1:] if argv is None else argv)
    command = shlex.join(["python", "-m", "bench.bench_release", *given])
    rows = [row for players in args.players for row in table_rows(args, players, command)]
    if args.strength is not None:
        note = (f"{args.network} as the greedy network alone, fresh deals each played once per "
                "seat at each table size (one round).")  # fmt: skip
        args.strength.write_text(json.dumps({"rows": rows, "note": note}, indent=1) + "\n")
        print(f"strength rows written to {args.strength}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
