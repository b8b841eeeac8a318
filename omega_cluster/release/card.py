"""The model card of a release (``MODEL_CARD.md``), written from what the run recorded
(:class:`~omega_cluster.release.record.RunRecord`), the checkpoint's metadata and the strength
file, if one was given: the game, the network, how it was trained, its ratings from the run, its
strength table, the command that reproduces the run and the one that made the release.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from omega_cluster import __version__
from omega_cluster.model.checkpoint import CheckpointMetadata
from omega_cluster.release.record import RunRecord
from omega_cluster.release.strength import StrengthTable, strength_markdown

__all__ = ["NO_STRENGTH", "CardInputs", "model_card"]

NO_STRENGTH = "No strength file was given"  # the card's words when there is no strength table


@dataclass(frozen=True)
class CardInputs:
    """Everything the card shows besides the run's record."""

    metadata: CheckpointMetadata  # the released checkpoint's metadata.json
    parameters: int  # trainable parameters of the network
    out: str  # the release folder as given (network:<out> seats it)
    command: str  # the command that made the release
    onnx_difference: float | None  # ONNX Runtime vs torch, max abs difference (None: unchecked)
    strength: StrengthTable | None  # None: no strength file was given
    created: str  # ISO 8601 UTC time of the release


def model_card(record: RunRecord, inputs: CardInputs) -> str:
    """The card's markdown (module docstring)."""
    meta = inputs.metadata
    sections = [
        f"# {meta.game}: released network v{record.model.version}\n\n"
        f"The policy/value network of version {record.model.version} "
        f"({record.model.status}) of the training run `{record.run_dir.name}`. Seat it alone "
        f"(no search) as `network:{inputs.out}` in `omega-cluster arena`, `play` and `serve`; "
        "the weights load without pickle (safetensors).",
        _files(),
        _game(record, meta),
        _model(meta, inputs.parameters, inputs.onnx_difference),
        _training(record, meta),
        _ratings(record),
        _strength(inputs.strength),
        _reproduce(record),
        "## How this release was made\n\n"
        f"```\n{inputs.command}\n```\n\n"
        f"omega_cluster {__version__}, {inputs.created}.",
    ]
    return "\n\n".join(sections) + "\n"


def _files() -> str:
    return _table(
        ("file", "what"),
        [
            ("model.safetensors", "the weights (safetensors: no pickle)"),
            ("metadata.json", "game, encoder, model config, step, version, weights checksum"),
            ("model.onnx", "the network as ONNX (inputs and outputs: ONNX.md)"),
            ("encoder.json", "the encoder's layout, the game and the model config, for ONNX use"),
            ("ONNX.md", "the ONNX inputs and outputs, segment by segment"),
            ("release.json", "this release's identity: run, version, checksum, commands"),
        ],
        title="## Files",
    )


def _game(record: RunRecord, meta: CheckpointMetadata) -> str:
    params = ", ".join(f"`{k}={_text(v)}`" for k, v in meta.game_params.items()) or "none"
    g = record.settings.game
    fleet = ", ".join(f"{n} players: {w:g}" for n, w in g.fleet.items()) or "the one table above"
    objectives = ", ".join(g.objectives) or "the game's own"
    return (
        f"## Game\n\n`{meta.game}`, parameters {params}.\n\n"
        f"Trained on: {fleet}; objectives: {objectives}."
    )


def _model(meta: CheckpointMetadata, parameters: int, onnx: float | None) -> str:
    config = meta.model_config.to_json()
    rows = [(k, f"`{_text(v)}`") for k, v in config.items() if k != "aux_heads"]
    enc = meta.encoder
    check = "not checked" if onnx is None else f"matches torch within {onnx:.2g}"
    return "\n".join(
        [
            f"## Network\n\n{parameters:,} parameters; encoder `{enc.name}` version "
            f"{enc.version} (observations {meta.observation_size}, action features "
            f"{meta.action_feature_size}); learner step {meta.step}; weights sha256 "
            f"`{meta.weights_sha256}`. ONNX: {check}.\n",
            _table(("setting", "value"), rows),
        ]
    )


def _training(record: RunRecord, meta: CheckpointMetadata) -> str:
    s, st = record.settings, record.state
    wall = record.wall_seconds
    rows = [
        ("search", f"{s.search.algorithm}, leaf `{s.search.leaf}`, selection {s.search.selection}"),
        ("simulations per move", f"{s.search.simulations} (fast moves: {s.search.fast_simulations})"),
        ("self-play games", f"{st.games:,} ({st.records:,} records in {st.shards} shards)"),
        ("learner steps", f"{meta.step:,} ({s.learner.steps_per_candidate} per candidate, "
                          f"batch {s.learner.batch_size}, lr {s.learner.lr:g})"),
        ("gate", f"{s.gate.mode}, {st.decisions} decisions, {st.promotions} promotions; "
                 f"bench player {s.gate.player}"),
        ("wall time", "—" if wall is None else f"{_duration(wall)} (first checkpoint to last "
                                                "gate decision)"),
        ("seed", str(s.run.seed)),
        ("code version (git)", _code(record)),
        ("run directory", f"`{record.run_dir}`"),
    ]  # fmt: skip
    return _table(("", ""), rows, title="## How it was trained")


def _code(record: RunRecord) -> str:
    """The run's git SHA as its MLflow run tagged it, or why there is none."""
    code = record.code_version
    if not code:
        return record.code_note
    dirty = " (with uncommitted changes)" if code.get("git.dirty") == "true" else ""
    branch = f", branch `{code['git.branch']}`" if code.get("git.branch") else ""
    return f"`{code['git.sha']}`{dirty}{branch}"


def _ratings(record: RunRecord) -> str:
    parts = ["## Ratings from the run"]
    elo = record.elo_row()
    if elo is None:
        parts.append(f"v{record.model.version} has no row in the run's Elo chain.")
    else:
        parts.append(
            f"Elo chain (each champion rated against its parent at the gate): "
            f"{_num(elo.get('elo'))} [{_num(elo.get('low'))}, {_num(elo.get('high'))}], "
            f"{elo.get('games', 0)} games, {elo.get('verdict') or 'the first champion'}."
        )
    rows = [
        (r.get("objective", ""), r.get("player", ""), _num(r.get("elo")),
         f"[{_num(r.get('low'))}, {_num(r.get('high'))}]", _text(r.get("level")),
         _text(r.get("games")), _text(r.get("clamped")))
        for r in record.ratings()
    ]  # fmt: skip
    if rows:
        header = ("objective", "player", "Elo", "interval", "level", "games", "clamped")
        title = "Anchored ratings (against the game's fixed anchors, by the run):"
        parts.append(_table(header, rows, title=title))
    else:
        parts.append(f"The run measured no anchored ratings of v{record.model.version}.")
    return "\n\n".join(parts)


def _strength(table: StrengthTable | None) -> str:
    if table is None:
        return (
            f"## Strength\n\n{NO_STRENGTH} to the release command: this card has no strength "
            "measurements. Measure them with a bench (e.g. `bench/bench_champion.py`) and release "
            "again with `strength=<json>`."
        )
    note = f"\n\n{table.note}" if table.note else ""
    return f"## Strength\n\nFrom `{table.path.name}`:\n\n{strength_markdown(table.rows)}{note}"


def _reproduce(record: RunRecord) -> str:
    command = shlex.join(["omega-cluster", "train", *record.overrides, "run.dir=<new dir>"])
    text = f"## Reproduce the run\n\n```\n{command}\n```"
    if record.reproducible:
        return text + "\n\nThese overrides compose the run's resolved `config.yaml` exactly."
    wrong = ", ".join(record.unreproduced)
    return (
        text + f"\n\nThese overrides do not compose the run's `config.yaml` exactly ({wrong}): "
        "that file, in the run directory, is the truth."
    )


def _table(header: tuple[str, ...], rows: Iterable[tuple[Any, ...]], title: str = "") -> str:
    lines = [title, ""] if title else []
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    hours, rest = divmod(round(seconds), 3600)
    return f"{hours} h {rest // 60} min" if hours else f"{rest // 60} min {rest % 60} s"


def _num(value: Any) -> str:
    return "—" if value is None else f"{float(value):.0f}"


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(map(_text, value)) + "]"
    return "null" if value is None else str(value)
