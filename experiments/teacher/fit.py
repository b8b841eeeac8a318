"""How closely does a network fit its teacher's policy targets, on rows it trained on and on rows
it never saw? No games are played: this reads shards and runs forward passes only.

For each network and each set of rows (the searched rows: policy weight > 0, two legal moves or
more), it prints the mean cross-entropy to the search's visit distribution, the distribution's
own entropy (what no network can fit away), their difference (the KL the network leaves), and
how often the network's greedy move is the search's most-visited move and the move played.

    python experiments/teacher/fit.py --settings /tmp/refit-wide \\
        --rows trained=/work/runs/4p-long heldout=/work/runs/4p-wide \\
        --net wide-4=/tmp/refit-wide/models/refit-p4 default-4=/tmp/refit-refit/models/refit-p4
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import torch

from omega_cluster import wiring
from omega_cluster.data.batch import table_to_batch
from omega_cluster.model.checkpoint import load_checkpoint


def rows(run: Path, shards: int, rng: random.Random) -> pa.Table:
    """``shards`` shards of a run's store, drawn at random (whole games: a shard holds whole
    games)."""
    files = sorted((run / "shards" / "shards").glob("*.arrow"))
    picked = rng.sample(files, min(shards, len(files)))
    return pa.concat_tables(ipc.open_file(str(f)).read_all() for f in picked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", type=Path, required=True, help="a run (copy) to read "
                        "the encoder and seats from; the learner state is written there")  # fmt: skip
    parser.add_argument("--rows", nargs="+", required=True, help="name=run dir")
    parser.add_argument("--net", nargs="+", required=True, help="name=checkpoint dir")
    parser.add_argument("--shards", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(2)
    settings = wiring.load_run_settings(args.settings, [])
    worker = wiring.learner_worker(settings, run_dir=args.settings,
                                   store_uri=str(args.settings / "shards"))  # fmt: skip
    learner = worker.learner
    nets = {}
    for spec in args.net:
        name, uri = spec.split("=", 1)
        nets[name] = load_checkpoint(uri, load_optimizer=False).model.eval()
    print("| network | rows | searched rows | cross-entropy | target entropy | KL | "
          "greedy = most visited | greedy = played |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for spec in args.rows:
        name, run = spec.split("=", 1)
        table = rows(Path(run), args.shards, random.Random(args.seed))
        tb = learner.tensors(table_to_batch(table))
        keep = (tb.policy_weights > 0) & (tb.legal_mask.sum(-1) >= 2)
        target = tb.policy_targets[keep]
        mask = tb.legal_mask[keep]
        played = tb.action_indices[keep]
        safe = torch.where(target > 0, target, torch.ones_like(target))
        entropy = -(target * safe.log()).sum(-1)
        for net_name, model in nets.items():
            logits = []
            with torch.no_grad():
                for i in range(0, len(tb.observations), 1024):
                    out = model(tb.observations[i : i + 1024], tb.action_features[i : i + 1024],
                                tb.legal_mask[i : i + 1024])  # fmt: skip
                    logits.append(out.logits.float())
            log_p = torch.log_softmax(torch.cat(logits)[keep].masked_fill(~mask, -1e9), -1)
            cross = -(target * torch.where(mask, log_p, torch.zeros_like(log_p))).sum(-1)
            greedy = log_p.argmax(-1)
            most = target.argmax(-1)
            print(f"| {net_name} | {name} | {int(keep.sum()):,} | {cross.mean():.3f} | "
                  f"{entropy.mean():.3f} | {(cross - entropy).mean():.3f} | "
                  f"{(greedy == most).float().mean():.3f} | "
                  f"{(greedy == played).float().mean():.3f} |", flush=True)  # fmt: skip
        del tb


if __name__ == "__main__":
    main()
