"""Expected errors at every entry point are one line and exit status 2, never a traceback.

A table of bad inputs a new user meets — a missing, corrupt or foreign checkpoint behind
``network:<dir>``; a run directory behind ``champion:<run>`` that is not one, has no or a corrupt
``registry.json`` or lost its champion; a ``run.dir`` that cannot be written; a resume whose
champion or ``pipeline.json`` is corrupt; bad overrides, cohorts, players and counts — runs
through ``omega_cluster.cli.main([...])`` in-process; a few run as real ``python -m`` processes to
show no traceback reaches the terminal. The checkpoints and the run directory are made once with
the model API (no training). A path under a regular file stands for an unwritable directory:
it cannot be created even by root, for whom permission bits stop nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from train_helpers import champion_run

from omega_cluster.cli import main
from omega_cluster.pipeline.run_state import PipelineState

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ["run=smoke", "game=kuhn_poker", "cluster=inprocess", "tracking.enabled=false",
         "run.progress=false"]  # fmt: skip
ARENA = ["game=kuhn_poker", "games=2", "quiet=true"]
KUHN = ["game=kuhn_poker", "quiet=true"]


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:64])


def _make_run(root: Path) -> Path:
    """A run directory as training leaves it after its first champion (config, state, registry,
    ``models/v0``), for kuhn_poker."""
    settings = champion_run(root, TRAIN)
    PipelineState(game=settings.game.name).save(root / "pipeline.json")
    return root


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every path the table names, by name."""
    base = tmp_path_factory.mktemp("cli_errors")
    p: dict[str, Path] = {"missing": base / "missing", "file": base / "a_file"}
    p["file"].write_text("not a directory\n")
    p["run"] = _make_run(base / "run")
    p["ckpt"] = p["run"] / "models" / "v0"
    for name, mutate in {
        "run_no_registry": lambda r: (r / "registry.json").unlink(),
        "run_bad_registry": lambda r: (r / "registry.json").write_text("{not json"),
        "run_bad_rows": lambda r: (r / "registry.json").write_text(
            json.dumps({"game": "kuhn_poker", "versions": [{"version": 0}]})
        ),
        "run_no_champion": lambda r: [f.unlink() for f in (r / "models" / "v0").iterdir()],
        "run_bad_champion": lambda r: _truncate(r / "models" / "v0" / "model.safetensors"),
        "run_bad_state": lambda r: (r / "pipeline.json").write_text("{garbage"),
        "run_bad_config": lambda r: (r / "config.yaml").write_text("run: [unclosed\n"),
    }.items():
        p[name] = _make_run(base / name)
        mutate(p[name])
    p["ck_truncated"] = p["run_bad_champion"] / "models" / "v0"
    p["ck_garbage"] = _make_run(base / "ck_garbage") / "models" / "v0"
    (p["ck_garbage"] / "metadata.json").write_text("garbage{")
    p["ck_no_keys"] = _make_run(base / "ck_no_keys") / "models" / "v0"
    (p["ck_no_keys"] / "metadata.json").write_text("{}")
    return p


# (id, command, arguments with {path} fields, words the one line must hold)
CASES: list[tuple[str, str, list[str], list[str]]] = [
    ("network-missing", "arena", [*ARENA, "seats=network:{missing},random"],
     ["checkpoint {missing}", "does not exist"]),
    ("network-truncated", "arena", [*ARENA, "seats=network:{ck_truncated},random"],
     ["{ck_truncated}/model.safetensors", "checksum mismatch"]),
    ("network-garbage-json", "arena", [*ARENA, "seats=network:{ck_garbage},random"],
     ["{ck_garbage}/metadata.json", "not valid checkpoint metadata"]),
    ("network-json-without-keys", "arena", [*ARENA, "seats=network:{ck_no_keys},random"],
     ["{ck_no_keys}/metadata.json", "no key 'game'"]),
    ("network-run-dir", "arena", [*ARENA, "seats=network:{run},random"],
     ["{run} is not a checkpoint", "it is a training run: its checkpoints are {run}/models/v<k>"]),
    ("network-foreign-game", "arena",
     ["game=leduc_poker", "games=2", "quiet=true", "seats=network:{ckpt},random"],
     ["checkpoint {ckpt} is for game 'kuhn_poker', not 'leduc_poker'"]),
    ("network-bad-greedy", "arena", [*ARENA, "seats=network:{ckpt}:maybe,random"],
     ["network: greedy must be true or false, got 'maybe'"]),
    ("network-bad-temperature", "arena", [*ARENA, "seats=network:{ckpt}:false:-1,random"],
     ["network: temperature must be a number > 0, got -1"]),
    ("champion-missing-run", "arena", [*ARENA, "seats=champion:{missing},random"],
     ["{missing}: not a run directory (no config.yaml)"]),
    ("champion-no-registry", "arena", [*ARENA, "seats=champion:{run_no_registry},random"],
     ["run {run_no_registry} has no champion yet (no registry.json)"]),
    ("champion-corrupt-registry", "arena", [*ARENA, "seats=champion:{run_bad_registry},random"],
     ["cannot read the model registry {run_bad_registry}/registry.json"]),
    ("champion-registry-bad-rows", "arena", [*ARENA, "seats=champion:{run_bad_rows},random"],
     ["{run_bad_rows}/registry.json: a version row does not fit"]),
    ("champion-checkpoint-missing", "arena", [*ARENA, "seats=champion:{run_no_champion},random"],
     ["{run_no_champion}/models/v0", "is not a checkpoint: metadata.json is missing"]),
    ("champion-checkpoint-corrupt", "arena",
     [*ARENA, "seats=champion:{run_bad_champion},random"], ["checksum mismatch"]),
    ("champion-corrupt-config", "arena", [*ARENA, "seats=champion:{run_bad_config},random"],
     ["{run_bad_config}/config.yaml is not a valid run config"]),
    ("champion-bad-simulations", "arena", [*ARENA, "seats=champion:{run}:abc,random"],
     ["champion: simulations must be a positive int, got 'abc'"]),
    ("champion-bad-version", "arena", [*ARENA, "seats=champion:{run}:version=x,random"],
     ["champion: version must be a non-negative int, got 'x'"]),
    ("champion-foreign-game", "arena",
     ["game=leduc_poker", "games=2", "quiet=true", "seats=champion:{run},random"],
     ["trained kuhn_poker with 2 players; this table is leduc_poker"]),
    ("arena-zero-games", "arena", [*KUHN, "games=0"], ["games='0' must be an int >= 1"]),
    ("arena-negative-games", "arena", [*KUHN, "games=-1"], ["games='-1' must be an int >= 1"]),
    ("arena-word-games", "arena", [*KUHN, "games=abc"], ["games='abc' must be an int >= 1"]),
    ("arena-zero-threads", "arena", [*KUHN, "threads=0"], ["threads='0' must be an int >= 1"]),
    ("arena-seat-count", "arena", ["game=kuhn_poker", "players=2", "seats=random,random,random"],
     ["3 seats (random,random,random) for a 2-player game"]),
    ("export-missing", "export", ["checkpoint={missing}", "out={missing}_out"],
     ["checkpoint {missing} does not exist"]),
    ("export-corrupt", "export", ["checkpoint={ck_truncated}", "out={missing}_out"],
     ["checksum mismatch"]),
    ("export-out-under-a-file", "export", ["checkpoint={ckpt}", "out={file}/bundle", "verify=2"],
     ["cannot write the bundle to {file}/bundle: {file} is a file"]),
    ("release-missing-run", "release", ["run={missing}", "out={missing}_out"],
     ["run={missing}: no such directory"]),
    ("release-not-a-run", "release", ["run={ckpt}", "out={missing}_out"],
     ["run={ckpt}: not a run directory (no config.yaml)"]),
    ("release-no-champion", "release", ["run={run_no_registry}", "out={missing}_out"],
     ["run={run_no_registry} has no champion yet (no registry.json)"]),
    ("release-unknown-version", "release", ["run={run}", "version=9", "out={missing}_out"],
     ["run={run}: unknown model version 9; known: 0"]),
    ("release-word-version", "release", ["run={run}", "version=x", "out={missing}_out"],
     ["version='x' must be an int >= 0"]),
    ("release-unknown-key", "release", ["run={run}", "outdir={missing}_out"],
     ["unknown key 'outdir'; release keys: run, out, version, strength, force, verify"]),
    ("release-no-out", "release", ["run={run}"], ["release needs out=<dir>"]),
    ("release-bad-force", "release", ["run={run}", "out={missing}_out", "force=maybe"],
     ["force='maybe' must be true or false"]),
    ("release-strength-not-json", "release",
     ["run={run}", "out={missing}_out", "strength={file}"], ["strength={file}: not a JSON file"]),
    ("release-out-is-the-run", "release", ["run={run}", "out={run}", "verify=0"],
     ["out={run} is the run directory"]),
    ("release-out-under-a-file", "release", ["run={run}", "out={file}/rel"],
     ["out='{file}/rel': cannot write there: {file} is a file"]),
    ("bench-unknown-cohort", "bench", ["a=commander", "b=lieutenant", "cohort=nope"],
     ["no cohort named 'nope'", "registered cohorts: "]),
    ("bench-malformed-player", "bench", ["a=commander:", "b=lieutenant", "cohort=mt2p-64"],
     ["player spec 'commander:': too many arguments"]),
    ("bench-word-threads", "bench", ["a=commander", "b=lieutenant", "cohort=mt2p-64",
     "threads=all"], ["threads='all' must be an int >= 1"]),
    ("bench-out-under-a-file", "bench",
     ["a=commander", "b=lieutenant", "cohort=mt2p-64", "out={file}/report"],
     ["out='{file}/report': cannot write there: {file} is a file"]),
    ("arena-absurd-search-budget", "arena", [*ARENA, "seats=ismcts:random:1000000000000,random"],
     ["ISMCTSConfig.simulations=1000000000000 needs ~", "for the search tree; this machine "
      "allows at most "]),
    ("train-absurd-search-budget", "train", [*TRAIN, "search.simulations=1000000000000"],
     ["search.simulations=1000000000000 needs ~", "this machine allows at most "]),
    ("train-bad-override-syntax", "train", ["run.iterations=[1", "--cfg"],
     ["no viable alternative at input '[1'"]),
    ("train-unknown-group-option", "train", ["game=nosuch", "--cfg"],
     ["unknown option 'nosuch' of config group 'game'", "available: "]),
    ("train-import-path-as-game-option", "train", ["game=blind_war:BlindWarGame", "--cfg"],
     ["unknown option 'blind_war:BlindWarGame'", "game.name=blind_war:BlindWarGame"]),
    ("train-run-dir-under-a-file", "train", [*TRAIN, "run.dir={file}/run"],
     ["run.dir='{file}/run': cannot write the run directory: {file} is a file"]),
    ("train-resume-missing", "train", [*TRAIN, "run.resume={missing}"],
     ["run.resume='{missing}'", "is not a run directory (no pipeline.json)"]),
    ("train-resume-corrupt-champion", "train", [*TRAIN, "run.resume={run_bad_champion}"],
     ["{run_bad_champion}/models/v0/model.safetensors", "checksum mismatch"]),
    ("train-resume-corrupt-state", "train", [*TRAIN, "run.resume={run_bad_state}"],
     ["{run_bad_state}/pipeline.json is unreadable"]),
]  # fmt: skip


def _fill(texts: list[str], paths: dict[str, Path]) -> list[str]:
    names: dict[str, Any] = {name: str(path) for name, path in paths.items()}
    return [text.format(**names) for text in texts]


@pytest.mark.parametrize(("command", "argv", "words"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_an_expected_error_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str],
    paths: dict[str, Path],
    command: str,
    argv: list[str],
    words: list[str],
) -> None:
    status = main([command, *_fill(argv, paths)])
    _, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"omega-cluster {command}: error: ")
    for word in _fill(words, paths):
        assert word in lines[0]
    assert "Traceback" not in err


def test_nothing_is_written_where_a_command_failed(paths: dict[str, Path]) -> None:
    """The failed commands of the table left no half-written output behind."""
    assert not paths["missing"].exists() and not Path(f"{paths['missing']}_out").exists()
    assert paths["file"].read_text() == "not a directory\n"
    assert (paths["run_bad_state"] / "pipeline.json").read_text() == "{garbage"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["omega_cluster", "arena", *ARENA, "seats=network:{ck_truncated},random"],
         "omega-cluster arena: error: {ck_truncated}/model.safetensors: checksum mismatch"),
        (["omega_cluster", "train", *TRAIN, "run.dir={file}/run"],
         "omega-cluster train: error: run.dir='{file}/run': cannot write the run directory"),
        (["bench", "champion", "--run={missing}"],
         "bench bench_champion: error: {missing}: not a run directory (no config.yaml)"),
    ],
    ids=["arena-network-corrupt", "train-run-dir-under-a-file", "bench-champion-missing-run"],
)  # fmt: skip
def test_no_traceback_reaches_the_terminal(
    paths: dict[str, Path], argv: list[str], words: str
) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", *_fill(argv, paths)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert _fill([words], paths)[0] in done.stderr.strip().splitlines()[-1]


def test_ctrl_c_is_one_line_and_status_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import omega_cluster.cli.arena as arena

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(arena, "play_match", interrupted)
    status = main(["arena", *ARENA])
    err = capsys.readouterr().err
    assert status == 130
    assert err == "omega-cluster arena: interrupted\n"
