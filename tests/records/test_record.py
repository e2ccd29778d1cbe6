from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.records import RECORD_FILE, CycleAnalyzer, load_record, write_record
from tests.records.test_analyzer import write_reloop_run


def test_record_json_round_trips(tmp_path: Path) -> None:
    write_reloop_run(tmp_path)
    record = CycleAnalyzer(tmp_path).analyze(frozen_nodes=("gate_verify",))
    path = write_record(record, tmp_path)
    assert path == tmp_path / RECORD_FILE
    assert load_record(path) == record
    assert load_record(tmp_path) == record  # a run directory names its record.json
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_wrong_schema_version_names_the_file_and_both_versions(tmp_path: Path) -> None:
    write_reloop_run(tmp_path)
    path = write_record(CycleAnalyzer(tmp_path).analyze(), tmp_path)
    raw = json.loads(path.read_text())
    path.write_text(json.dumps(raw | {"schema_version": 4}))
    with pytest.raises(ConfigError) as info:
        load_record(path)
    message = str(info.value)
    assert str(path) in message
    assert "schema_version 4" in message
    assert "reads versions (1, 2, 3)" in message


def test_record_that_does_not_validate_is_a_config_error(tmp_path: Path) -> None:
    write_reloop_run(tmp_path)
    path = write_record(CycleAnalyzer(tmp_path).analyze(), tmp_path)
    raw = json.loads(path.read_text())
    path.write_text(json.dumps(raw | {"surprise": 1}))
    with pytest.raises(ConfigError, match="is not a valid CycleRecord"):
        load_record(path)


def test_missing_or_non_json_record_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_record(tmp_path / RECORD_FILE)
    (tmp_path / RECORD_FILE).write_text("{")
    with pytest.raises(ConfigError, match="is not JSON"):
        load_record(tmp_path / RECORD_FILE)
