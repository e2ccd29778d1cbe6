"""The workflow library: promoted workflows and --workflows-dir directories, by name."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.workflow import (
    LIBRARY_ENV,
    WORKFLOWS_PATH_ENV,
    HoldoutGain,
    Provenance,
    builtin_workflow,
    dump_workflow,
    library_entries,
    load_workflow,
    locate_workflow,
    read_provenance,
    resolve_workflow,
    workflow_hash,
    write_provenance,
)


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    lib = tmp_path / "lib"
    lib.mkdir()
    monkeypatch.setenv(LIBRARY_ENV, str(lib))
    monkeypatch.delenv(WORKFLOWS_PATH_ENV, raising=False)
    return lib


def put(folder: Path, name: str, description: str = "mine") -> Path:
    wf = builtin_workflow("builder-only").model_copy(
        update={"name": name, "description": description}
    )
    path = folder / f"{name}.yaml"
    dump_workflow(wf, path)
    return path


def provenance(name: str) -> Provenance:
    return Provenance(
        name=name, promoted_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), run_dir="/runs/r1",
        mode="evolve-gen1-abcdef12", individual_id="abcdef123456", generation=1,
        workflow_hash="f" * 64, seed_workflow="builder-only", benchmark="mini", model="sim",
        simulated=True, holdout_gain=HoldoutGain(mean=0.2, low=0.05, high=0.4, level=0.95,
                                                 n_tasks=3),
        forced=False, loopwright_version="0",
    )  # fmt: skip


def test_a_library_workflow_resolves_by_name(library: Path) -> None:
    path = put(library, "mine", "from the library")
    assert resolve_workflow("mine").description == "from the library"
    source = locate_workflow("mine")
    assert (source.kind, source.path, source.provenance) == ("library", path, None)


def test_a_workflows_path_directory_resolves_by_name(
    library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    put(extra, "other")
    with pytest.raises(ConfigError, match="neither a built-in"):
        resolve_workflow("other")
    monkeypatch.setenv(WORKFLOWS_PATH_ENV, str(extra))
    assert resolve_workflow("other").name == "other"


def test_a_builtin_name_wins_over_a_library_file(library: Path) -> None:
    put(library, "thorough", "an impostor")
    assert resolve_workflow("thorough") == builtin_workflow("thorough")
    (entry,) = library_entries(["thorough"])
    assert entry.shadowed


def test_a_name_in_two_library_directories_is_ambiguous(
    library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    put(library, "twice")
    put(extra, "twice")
    monkeypatch.setenv(WORKFLOWS_PATH_ENV, str(extra))
    with pytest.raises(ConfigError, match="ambiguous") as err:
        resolve_workflow("twice")
    assert str(library / "twice.yaml") in err.value.render()


def test_provenance_is_kept_beside_the_workflow_and_read_back(library: Path) -> None:
    path = put(library, "promoted")
    written = write_provenance(path, provenance("promoted"))
    assert written.name == "promoted.provenance.json"
    assert json.loads(written.read_text())["schema_version"] == 1
    assert locate_workflow("promoted").provenance == provenance("promoted")
    assert [e.name for e in library_entries([])] == ["promoted"]  # the record is no workflow


def test_an_unreadable_provenance_never_stops_the_workflow(library: Path) -> None:
    path = put(library, "promoted")
    (library / "promoted.provenance.json").write_text("{not json")
    assert read_provenance(path) is None
    assert resolve_workflow("promoted").name == "promoted"


def test_a_mode_file_reads_as_its_workflow(tmp_path: Path) -> None:
    wf = builtin_workflow("builder-only")
    mode = {"mode": "evolve-gen0-aaaaaaaa", "individual_id": "a" * 12, "generation": 0,
            "hash": "h", "workflow": json.loads(wf.model_dump_json())}  # fmt: skip
    path = tmp_path / "evolve-gen0-aaaaaaaa.json"
    path.write_text(json.dumps(mode))
    assert load_workflow(path) == wf
    mode["extra"] = 1  # anything else is not a mode file, and not a workflow either
    path.write_text(json.dumps(mode))
    with pytest.raises(ConfigError, match="not a valid workflow"):
        load_workflow(path)


def test_workflow_list_shows_the_library_and_workflows_dir(
    library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_provenance(put(library, "promoted"), provenance("promoted"))
    extra = tmp_path / "extra"
    extra.mkdir()
    put(extra, "other")
    (extra / "broken.yaml").write_text("name: [")
    assert main(["--workflows-dir", str(extra), "workflow", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["builder-only"]["source"] == "built-in"
    assert rows["promoted"]["provenance"]["run_dir"] == "/runs/r1"
    assert rows["other"]["path"] == str(extra / "other.yaml")
    assert rows["broken"]["description"].startswith("invalid:")
    assert main(["workflow", "list", "--json"]) == 0  # the option lasts one command
    assert "other" not in {r["name"] for r in json.loads(capsys.readouterr().out)}


def test_workflow_show_prints_the_provenance(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_provenance(put(library, "promoted"), provenance("promoted"))
    assert main(["workflow", "show", "promoted"]) == 0
    out = capsys.readouterr().out
    assert "promoted: 2026-01-02T03:04:05+00:00 from run /runs/r1" in out
    assert "+0.200 (95% CI +0.050 .. +0.400, 3 tasks)" in out and "SIMULATED" in out
    assert "changed since it was promoted" in out  # the record's hash is not this file's


def test_workflow_show_has_no_change_note_for_an_unchanged_promotion(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = put(library, "promoted")
    digest = workflow_hash(load_workflow(path))
    write_provenance(path, provenance("promoted").model_copy(update={"workflow_hash": digest}))
    assert main(["workflow", "show", "promoted"]) == 0
    assert "changed since" not in capsys.readouterr().out


def test_a_missing_workflows_dir_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--workflows-dir", str(tmp_path / "nope"), "workflow", "list"]) == 2
    assert "existing directory" in capsys.readouterr().err
