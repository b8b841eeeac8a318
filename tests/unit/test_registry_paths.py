"""The model registry's paths are relative to its run directory (a copied or moved run reads its
own checkpoints): ``registry.json`` stores ``models/v<k>``, :attr:`ModelVersion.uri` is the
absolute path under the directory as it is now, an old registry with absolute paths is converted
on load when the checkpoint exists under the new root, and URIs outside the run stay as given.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from omega_cluster.model.registry import ModelRegistry


def _run(root: Path) -> ModelRegistry:
    for version in (0, 1):
        (root / "models" / f"v{version}").mkdir(parents=True)
    registry = ModelRegistry(root, game="kuhn_poker")
    registry.add_initial(str(root / "models" / "v0"), elo=1000.0)
    registry.add_candidate(1, parent=0, uri=str(root / "models" / "v1"))
    registry.promote(1, elo=1010.0, elo_low=1000.0, elo_high=1020.0)
    return registry


def _stored_uris(root: Path) -> list[str]:
    return [row["uri"] for row in json.loads((root / "registry.json").read_text())["versions"]]


def test_uris_are_stored_relative_and_read_against_the_current_root(tmp_path: Path) -> None:
    first = _run(tmp_path / "a")
    assert _stored_uris(tmp_path / "a") == ["models/v0", "models/v1"]
    assert first.champion is not None and first.champion.uri == str(tmp_path / "a/models/v1")
    # a retried add_candidate with the absolute path of the same checkpoint is still idempotent
    again = ModelRegistry(tmp_path / "a", game="kuhn_poker")
    assert again.get(1).uri == str(tmp_path / "a/models/v1")

    shutil.copytree(tmp_path / "a", tmp_path / "copy")
    (tmp_path / "a").rename(tmp_path / "moved")
    for name in ("copy", "moved"):
        registry = ModelRegistry(tmp_path / name, game="kuhn_poker")
        assert [v.uri for v in registry.versions] == [
            str(tmp_path / name / "models" / f"v{k}") for k in (0, 1)
        ]
        assert Path(registry.versions[1].uri).is_dir()


def test_an_old_registry_with_absolute_paths_is_converted_on_load(tmp_path: Path) -> None:
    _run(tmp_path / "a")
    path = tmp_path / "a" / "registry.json"
    data = json.loads(path.read_text())
    for row in data["versions"]:  # as registries were written before paths were relative
        row["uri"] = str(tmp_path / "a" / row["uri"])
    path.write_text(json.dumps(data))
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    copy = ModelRegistry(tmp_path / "b", game="kuhn_poker")
    assert [v.uri for v in copy.versions] == [str(tmp_path / "b/models/v0"),
                                              str(tmp_path / "b/models/v1")]  # fmt: skip
    copy.set_champion_elo(1011.0, 1001.0, 1021.0)  # any change rewrites the file, relative
    assert _stored_uris(tmp_path / "b") == ["models/v0", "models/v1"]
    assert json.loads(path.read_text()) == data  # the original is untouched

    # an absolute path whose checkpoint is not under the new root is kept as it was
    shutil.rmtree(tmp_path / "b" / "models" / "v0")
    (tmp_path / "b" / "registry.json").write_text(json.dumps(data))
    again = ModelRegistry(tmp_path / "b", game="kuhn_poker")
    assert again.get(0).uri == str(tmp_path / "a/models/v0")


def test_uris_outside_the_run_are_kept_as_given(tmp_path: Path) -> None:
    registry = ModelRegistry(tmp_path / "run", game="kuhn_poker")
    registry.add_initial("s3://bucket/models/v0", elo=1000.0)
    registry.add_candidate(1, parent=0, uri=str(tmp_path / "elsewhere" / "v1"))
    assert _stored_uris(tmp_path / "run") == ["s3://bucket/models/v0",
                                              str(tmp_path / "elsewhere" / "v1")]  # fmt: skip
    again = ModelRegistry(tmp_path / "run", game="kuhn_poker")
    assert [v.uri for v in again.versions] == _stored_uris(tmp_path / "run")
