"""The model registry of a run (omega_cluster.model.registry.ModelRegistry).

Version 0 is the first champion; candidates are promoted (the old champion retires) or rejected;
exactly one champion at any time; every change is in ``registry.json`` so a new instance on the
same run directory sees the same versions; a run directory of another game is refused; a retried
``add_candidate`` with the same arguments is idempotent; impossible changes raise RegistryError.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omega_cluster.model.registry import STATUSES, ModelRegistry, RegistryError


def _registry(root: Path, game: str = "kuhn_poker") -> ModelRegistry:
    return ModelRegistry(root, game=game)


def _with_champion(root: Path) -> ModelRegistry:
    reg = _registry(root)
    reg.add_initial(str(root / "models" / "v0"), elo=1000.0)
    return reg


def test_empty_registry_has_no_champion_and_starts_at_version_0(tmp_path: Path) -> None:
    reg = _registry(tmp_path)
    assert reg.champion is None
    assert reg.versions == []
    assert reg.next_version == 0
    assert not (tmp_path / ModelRegistry.FILE).exists()  # nothing written before a change


def test_add_initial_makes_version_0_the_champion(tmp_path: Path) -> None:
    reg = _with_champion(tmp_path)
    champion = reg.champion
    assert champion is not None
    assert (champion.version, champion.status, champion.parent) == (0, "champion", None)
    assert (champion.elo, champion.elo_low, champion.elo_high) == (1000.0, 1000.0, 1000.0)
    assert reg.next_version == 1
    with pytest.raises(RegistryError, match="already holds versions"):
        reg.add_initial("elsewhere", elo=0.0)


def test_promote_retires_the_old_champion(tmp_path: Path) -> None:
    reg = _with_champion(tmp_path)
    cand = reg.add_candidate(1, parent=0, uri="models/v1", metrics={"loss": 1.5})
    assert (cand.status, cand.parent, cand.elo) == ("candidate", 0, None)
    assert reg.champion is not None and reg.champion.version == 0  # a candidate is not champion
    row = reg.promote(1, elo=1050.0, elo_low=1010.0, elo_high=1090.0, reason="won",
                      metrics={"gate_score": 0.6})  # fmt: skip
    assert row.status == "champion"
    assert (row.elo, row.elo_low, row.elo_high, row.reason) == (1050.0, 1010.0, 1090.0, "won")
    assert row.decided is not None
    assert dict(row.metrics) == {"loss": 1.5, "gate_score": 0.6}  # learner's and gate's merged
    assert reg.get(0).status == "retired"
    assert reg.champion is not None and reg.champion.version == 1
    assert [v.status for v in reg.versions] == ["retired", "champion"]


def test_reject_keeps_the_champion(tmp_path: Path) -> None:
    reg = _with_champion(tmp_path)
    reg.add_candidate(1, parent=0, uri="models/v1")
    row = reg.reject(1, reason="lost", metrics={"gate_score": 0.3})
    assert (row.status, row.reason, dict(row.metrics)) == ("rejected", "lost", {"gate_score": 0.3})
    assert row.decided is not None
    assert reg.champion is not None and reg.champion.version == 0
    assert reg.next_version == 2  # a rejected version's number is never reused


def test_exactly_one_champion_over_a_sequence_of_decisions(tmp_path: Path) -> None:
    reg = _with_champion(tmp_path)
    decisions = [True, False, True, True, False]
    for version, promoted in enumerate(decisions, start=1):
        champion = reg.champion
        assert champion is not None
        reg.add_candidate(version, parent=champion.version, uri=f"models/v{version}")
        if promoted:
            reg.promote(version, elo=1000.0 + version, elo_low=990.0, elo_high=1100.0)
        else:
            reg.reject(version)
        assert sum(v.status == "champion" for v in reg.versions) == 1
    assert reg.champion is not None and reg.champion.version == 4
    assert [v.status for v in reg.versions] == [
        "retired", "retired", "rejected", "retired", "champion", "rejected",
    ]  # fmt: skip
    assert [v.parent for v in reg.versions] == [None, 0, 1, 1, 3, 4]


def test_state_persists_across_instances(tmp_path: Path) -> None:
    reg = _with_champion(tmp_path)
    reg.add_candidate(1, parent=0, uri="models/v1", metrics={"loss": 2.0})
    reg.promote(1, elo=1040.0, elo_low=1000.0, elo_high=1080.0, reason="r1")
    reg.add_candidate(2, parent=1, uri="models/v2")
    reg.reject(2, reason="r2")
    reg.add_candidate(3, parent=1, uri="models/v3")  # still a candidate when "the driver dies"
    reg.set_champion_elo(1045.0, 1005.0, 1085.0)
    again = _registry(tmp_path)
    assert again.snapshot() == reg.snapshot()
    assert again.champion is not None and again.champion.version == 1
    assert again.champion.elo == 1045.0
    assert again.get(3).status == "candidate"
    assert again.next_version == 4
    # the recovered registry goes on where the first stopped
    again.promote(3, elo=1100.0, elo_low=1050.0, elo_high=1150.0)
    assert _registry(tmp_path).champion is not None
    assert _registry(tmp_path).get(1).status == "retired"
    data = json.loads((tmp_path / ModelRegistry.FILE).read_text())
    assert data["game"] == "kuhn_poker"
    assert [v["version"] for v in data["versions"]] == [0, 1, 2, 3]
    assert not list(tmp_path.glob("*.tmp"))  # the atomic write left no temporary file


def test_a_run_directory_of_another_game_is_refused(tmp_path: Path) -> None:
    _with_champion(tmp_path)
    with pytest.raises(RegistryError, match=r"belongs to a run of game 'kuhn_poker', not 'leduc"):
        ModelRegistry(tmp_path, game="leduc_poker")


def test_add_candidate_is_idempotent_for_the_same_arguments(tmp_path: Path) -> None:
    reg = _with_champion(tmp_path)
    first = reg.add_candidate(1, parent=0, uri="models/v1", metrics={"loss": 1.0})
    again = reg.add_candidate(1, parent=0, uri="models/v1", metrics={"loss": 1.0})
    assert again == first
    assert len(reg.versions) == 2
    with pytest.raises(RegistryError, match="version 1 is already registered"):
        reg.add_candidate(1, parent=0, uri="models/other")
    reg.promote(1, elo=1.0, elo_low=0.0, elo_high=2.0)
    with pytest.raises(RegistryError, match=r"version 0 is already registered \(retired\)"):
        reg.add_candidate(0, parent=1, uri="models/v0b")


def test_impossible_changes_raise(tmp_path: Path) -> None:
    reg = _registry(tmp_path)
    with pytest.raises(RegistryError, match="no champion yet"):
        reg.set_champion_elo(1.0, 0.0, 2.0)
    reg.add_initial("models/v0", elo=1000.0)
    with pytest.raises(RegistryError, match="unknown model version 7; known: 0"):
        reg.get(7)
    with pytest.raises(RegistryError, match="unknown model version 5"):
        reg.add_candidate(1, parent=5, uri="models/v1")  # the parent must exist
    assert reg.next_version == 1  # the failed call registered nothing
    with pytest.raises(RegistryError, match="only a candidate can be promoted; v0 is champion"):
        reg.promote(0, elo=1.0, elo_low=0.0, elo_high=2.0)
    reg.add_candidate(1, parent=0, uri="models/v1")
    reg.reject(1)
    with pytest.raises(RegistryError, match="only a candidate can be promoted; v1 is rejected"):
        reg.promote(1, elo=1.0, elo_low=0.0, elo_high=2.0)
    with pytest.raises(RegistryError, match="only a candidate can be rejected; v1 is rejected"):
        reg.reject(1)
    with pytest.raises(RegistryError, match="unknown model version 9"):
        reg.reject(9)


def test_unreadable_or_invalid_registry_files_raise(tmp_path: Path) -> None:
    path = tmp_path / ModelRegistry.FILE
    path.write_text("{not json")
    with pytest.raises(RegistryError, match="cannot read the model registry"):
        _registry(tmp_path)
    row = {"version": 0, "status": "winner", "parent": None, "uri": "u", "created": 0.0}
    path.write_text(json.dumps({"game": "kuhn_poker", "versions": [row]}))
    with pytest.raises(RegistryError, match="unknown status winner"):
        _registry(tmp_path)
    assert "winner" not in STATUSES
