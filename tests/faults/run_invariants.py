"""What must hold of a run directory after any fault, checked from the outside: shared by the
fault corpus (``test_corpus.py``) and the soak (``scripts/soak.py``).

The checks read the files a run leaves (``pipeline.json``, ``registry.json``, the shard manifest,
the shards, ``quarantine/``) without the service's own reader, which would quarantine what it
finds bad: a check must not change what it checks. :func:`check_run` returns one list of
problems per invariant (empty: it holds):

* ``games_once`` — every game reported finished is in exactly one shard: no game id in two
  shards, and the games in the shards (visible, or visible and quarantined) are the games
  ``pipeline.json`` counts;
* ``chunks_once`` — no chunk written twice: the writer ids (``chunk%08d``) of the manifest
  entries are unique;
* ``no_half_visible`` — every manifest entry's file exists, has its size and checksum, opens
  and holds its rows with finite values; no temporary file outside ``quarantine/``; every shard
  file has an entry or is in ``quarantine/``;
* ``counters`` — the shard, record and game counters of ``pipeline.json`` equal the manifest
  (with or without the shards quarantined since: a run may count what it wrote or what it can
  train on);
* ``champion_chain`` — the champion only moved through won gates: every version that was ever
  champion (after v0) has a promoting gate row in the Elo log, its parent was the champion
  before it, no promoted row names a version the registry calls rejected, one champion now.

:func:`run_processes` and :func:`listening_sockets` find what a run left running (Linux
``/proc``): processes are recognised by a marker in their environment, which every process a
driver starts (Ray's raylet, GCS, agents, workers) inherits.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

INVARIANTS = ("games_once", "chunks_once", "no_half_visible", "counters", "champion_chain")


def manifest_entries(store: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The parseable manifest entries of a shard store (sorted by file name) and the names of
    the unparseable ones."""
    entries, bad = [], []
    for path in sorted((store / "manifest").glob("*.json")):
        try:
            data = json.loads(path.read_text())
            if not isinstance(data, dict) or not isinstance(data.get("shard_path"), str):
                raise ValueError("not a manifest entry")
        except (OSError, ValueError):
            bad.append(path.name)
            continue
        entries.append(data)
    return entries, bad


def shard_problem(store: Path, entry: dict[str, Any]) -> str | None:
    """Why the entry's shard is not whole and sound, or None."""
    path = store / entry["shard_path"]
    if not path.is_file():
        return f"{entry['shard_path']}: file missing"
    payload = path.read_bytes()
    if len(payload) != entry.get("bytes"):
        return f"{entry['shard_path']}: {len(payload)} bytes, manifest says {entry.get('bytes')}"
    if hashlib.sha256(payload).hexdigest() != entry.get("sha256"):
        return f"{entry['shard_path']}: checksum differs from the manifest"
    try:
        table = pa.ipc.open_file(pa.BufferReader(payload)).read_all()
    except pa.ArrowException as err:
        return f"{entry['shard_path']}: does not open ({err})"
    if table.num_rows != entry.get("rows"):
        return f"{entry['shard_path']}: {table.num_rows} rows, manifest says {entry.get('rows')}"
    for column in ("returns", "weight", "policy_weight", "policy_target"):
        if column in table.column_names:
            values = (
                pc.list_flatten(table[column])
                if "list" in str(table[column].type)
                else table[column]
            )
            if not all(v is None or math.isfinite(v) for v in values.to_pylist()):
                return f"{entry['shard_path']}: non-finite {column}"
    return None


def shard_tables(store: Path, entries: list[dict[str, Any]]) -> list[pa.Table]:
    """The tables of the entries whose shards are sound."""
    tables = []
    for entry in entries:
        if shard_problem(store, entry) is None:
            tables.append(pa.ipc.open_file(str(store / entry["shard_path"])).read_all())
    return tables


def quarantined_files(store: Path) -> set[str]:
    """Names of the files in ``quarantine/`` (reason files included)."""
    folder = store / "quarantine"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def _game_ids(tables: list[pa.Table]) -> list[str]:
    """The game ids of the tables, one per (shard, game)."""
    return [g for t in tables for g in pc.unique(t.column("game_id")).to_pylist()]


def tallies(store: Path, entries: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(shards, records, games) of the visible shards, and of everything written: the visible
    ones plus the quarantined ones (their games None when a quarantined shard does not open).
    A run's counters count the visible ones (the manifest is the truth); the written ones are
    named beside them when they differ."""
    visible = {"shards": len(entries), "records": sum(int(e.get("rows", 0)) for e in entries),
               "games": len(set(_game_ids(shard_tables(store, entries))))}  # fmt: skip
    written = dict(visible)
    games: set[str] | None = set(_game_ids(shard_tables(store, entries)))
    for path in sorted((store / "quarantine").glob("*.manifest.json")):
        try:
            entry = json.loads(path.read_text())
            written["shards"] += 1
            written["records"] += int(entry["rows"])
            shard = store / "quarantine" / Path(entry["shard_path"]).name
            ids = pc.unique(pa.ipc.open_file(str(shard)).read_all().column("game_id")).to_pylist()
            games = None if games is None else games | set(ids)
        except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
            games = None  # unreadable: its games cannot be counted
    written["games"] = None if games is None else len(games)
    return visible, written


def _matches(state: dict[str, Any], counts: dict[str, Any], keys: tuple[str, ...]) -> bool:
    return all(counts[k] is None or state.get(k) == counts[k] for k in keys)


def _games_and_chunks(
    store: Path, entries: list[dict[str, Any]], state: dict[str, Any]
) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {"games_once": [], "chunks_once": []}
    game_ids = _game_ids(shard_tables(store, entries))
    twice = sorted({g for g in game_ids if game_ids.count(g) > 1})
    if twice:
        problems["games_once"].append(f"{len(twice)} games in two shards, e.g. {twice[0]}")
    visible, written = tallies(store, entries)
    if state and not _matches(state, visible, ("games",)):
        problems["games_once"].append(
            f"pipeline.json reports {state.get('games')} games, the shards hold {visible['games']}"
            f" ({written['games']} with the quarantined ones)"
        )
    writers = [e.get("writer_id") for e in entries]
    again = sorted({w for w in writers if writers.count(w) > 1})
    if again:
        problems["chunks_once"].append(f"chunks written twice: {', '.join(map(str, again[:5]))}")
    return problems


def _half_visible(store: Path, entries: list[dict[str, Any]], bad: list[str]) -> list[str]:
    problems = [f"manifest/{name}: unreadable entry outside quarantine" for name in bad]
    problems += [p for p in (shard_problem(store, e) for e in entries) if p]
    named = {Path(e["shard_path"]).name for e in entries}
    quarantine = quarantined_files(store)
    for path in sorted((store / "shards").iterdir()) if (store / "shards").is_dir() else []:
        if path.name.startswith(".") or ".tmp" in path.name:
            problems.append(f"shards/{path.name}: temporary file left outside quarantine")
        elif path.name not in named and path.name not in quarantine:
            problems.append(f"shards/{path.name}: no manifest entry and not in quarantine")
    return problems


def _counters(store: Path, entries: list[dict[str, Any]], state: dict[str, Any]) -> list[str]:
    if not state:
        return ["no pipeline.json"]
    visible, written = tallies(store, entries)
    keys = ("shards", "records", "games")
    problems = [f"pipeline.json {k}={state.get(k)}, the manifest has {visible[k]} "
                f"({written[k]} with the quarantined shards)"
                for k in keys if state.get(k) != visible[k]]  # fmt: skip
    tables = state.get("tables") or {}
    if tables and sum(tables.values()) != visible["games"]:  # the per-table counts add up
        problems.append(f"pipeline.json tables {tables} add up to {sum(tables.values())} games, "
                        f"the manifest has {visible['games']}")  # fmt: skip
    return problems


def champion_chain(run_dir: Path) -> list[str]:
    """Problems of the champion chain (module docstring); [] when it holds."""
    try:
        registry = json.loads((run_dir / "registry.json").read_text())
        state = json.loads((run_dir / "pipeline.json").read_text())
    except (OSError, ValueError) as err:
        return [f"cannot read the registry or pipeline.json: {err}"]
    versions = {v["version"]: v for v in registry.get("versions", [])}
    rows = state.get("elo_log", [])
    promoted = {
        r["version"]: r for r in rows if r.get("promoted") and r.get("verdict") != "initial"
    }
    problems = []
    champions = [k for k, v in versions.items() if v["status"] == "champion"]
    if len(champions) != 1:
        problems.append(f"{len(champions)} champions: {champions}")
    chain = sorted(k for k, v in versions.items() if v["status"] in ("champion", "retired") and k)
    previous = 0
    for k in chain:
        row = promoted.get(k)
        if row is None or row.get("verdict") != "promote":
            problems.append(f"v{k} became champion without a promoting gate row")
        if versions[k].get("parent") != previous:
            problems.append(
                f"v{k}'s parent is v{versions[k].get('parent')}, the champion before it was v{previous}"
            )
        previous = k
    for k in sorted(promoted):
        if versions.get(k, {}).get("status") == "rejected":
            problems.append(f"v{k} has a promoting gate row but the registry rejected it")
    return problems


def check_run(run_dir: Path, store: Path | None = None) -> dict[str, list[str]]:
    """One list of problems per invariant of :data:`INVARIANTS` (module docstring)."""
    store = store or run_dir / "shards"
    try:
        state = json.loads((run_dir / "pipeline.json").read_text())
    except (OSError, ValueError):
        state = {}
    entries, bad = manifest_entries(store)
    problems = _games_and_chunks(store, entries, state)
    problems["no_half_visible"] = _half_visible(store, entries, bad)
    problems["counters"] = _counters(store, entries, state)
    problems["champion_chain"] = champion_chain(run_dir)
    return problems


def data_checked(run_dir: Path, store: Path | None = None) -> dict[str, int]:
    """How much data :func:`check_run` looked at: shards, records, games, quarantined items."""
    store = store or run_dir / "shards"
    entries, _ = manifest_entries(store)
    tables = shard_tables(store, entries)
    games = {g for t in tables for g in pc.unique(t.column("game_id")).to_pylist()}
    quarantined = [n for n in quarantined_files(store) if n.endswith(".reason.json")]
    return {"shards": len(entries), "records": sum(t.num_rows for t in tables),
            "games": len(games), "quarantined": len(quarantined)}  # fmt: skip


# -- processes and sockets a run left behind (Linux /proc) -----------------------------------------
def run_processes(marker: str) -> dict[int, str]:
    """pid -> command line of every live process whose environment holds ``marker``
    (``NAME=value``), except this one."""
    found = {}
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue  # a zombie holds nothing
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        found[int(entry.name)] = command.strip()
    return found


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def _address(hex_address: str) -> str:
    host, port = hex_address.split(":")
    if len(host) == 8:  # IPv4, little-endian
        ip = ".".join(str(int(host[i : i + 2], 16)) for i in (6, 4, 2, 0))
    else:  # IPv6: four little-endian 32-bit words
        words = [host[i : i + 8] for i in range(0, 32, 8)]
        raw = b"".join(bytes.fromhex(w)[::-1] for w in words)
        ip = ":".join(raw[i : i + 2].hex() for i in range(0, 16, 2))
    return f"{ip}:{int(port, 16)}"


def listening_sockets(pids: set[int] | dict[int, Any]) -> list[tuple[int, str]]:
    """(pid, address:port) of every TCP socket in LISTEN state that one of ``pids`` holds."""
    owner = {inode: pid for pid in pids for inode in _socket_inodes(pid)}
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in owner:  # 0A: LISTEN
                found.append((owner[fields[9]], _address(fields[1])))
    return sorted(found)
