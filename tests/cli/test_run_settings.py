"""`loopwright run` applies the user's engine settings (what `loopwright ab apply` writes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from loopwright.cli import main

RUN = ("run", "builder-only", "--bench", "mini", "--tasks", "l1-slugify", "--sandbox", "local",
       "--no-report")  # fmt: skip


def test_run_uses_the_settings_file_and_records_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text(
        "schema_version: 1\nengine:\n  default_loop_type: plan_execute\n", encoding="utf-8"
    )
    monkeypatch.setenv("LOOPWRIGHT_SETTINGS", str(settings))
    code = main([*RUN, "--run-dir", str(tmp_path / "r")])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    config = yaml.safe_load((tmp_path / "r" / "config.yaml").read_text())
    assert config["config"]["settings"]["engine"]["default_loop_type"] == "plan_execute"
    # plan_execute opens with a planning call that offers no tools; react's first call acts.
    assert first_call_tool_calls(tmp_path / "r") == 0
    monkeypatch.delenv("LOOPWRIGHT_SETTINGS")
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.loopwright/settings.yaml: the defaults
    assert main([*RUN, "--run-dir", str(tmp_path / "react")]) == 0
    assert first_call_tool_calls(tmp_path / "react") > 0


def first_call_tool_calls(run_dir: Path) -> int:
    path = run_dir / "builder-only" / "l1-slugify" / "rep_0" / "events.jsonl"
    calls = [json.loads(x) for x in path.read_text().splitlines() if '"model_call"' in x]
    return int(calls[0]["tool_calls"])


def test_a_broken_settings_file_is_a_user_error_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text("schema_version: 1\nengine:\n  default_loop_type: [\n", encoding="utf-8")
    monkeypatch.setenv("LOOPWRIGHT_SETTINGS", str(settings))
    code = main(["run", "builder-only", "--bench", "mini", "--tasks", "l1-slugify",
                 "--run-dir", str(tmp_path / "r")])  # fmt: skip
    text = "".join(capsys.readouterr())
    assert code == 2 and "settings file" in text and "fix:" in text
    assert not (tmp_path / "r").exists()
