"""The gateway from the command line and the specs: `loopwright run --model openai/NAME
--api-base URL` against the loopback server, `loopwright models`, model specs, tiers and roles."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.models import (
    LEDGER_FILE,
    LiteLLMGateway,
    ModelsConfig,
    SimModel,
    load_models_config,
    model_factory,
    read_ledger,
    resolve_model,
)
from loopwright.tasks import load_benchmark
from tests.models.test_gateway_loopback import gold_files, roman_task
from tests.models.test_gateway_server import DUMMY_KEY, Answer, Loopback, loopback

__all__ = ["loopback"]  # the fixture, re-exported for pytest


def test_cli_run_with_openai_model_and_api_base_resolves_a_task(
    loopback: Loopback,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    run_dir = tmp_path / "run"
    instruction = (
        run_dir / "builder-only" / "l1-roman-numerals" / "rep_0" / "instruction.md"
    ).resolve()
    writes = tuple(
        ("write_file", json.dumps({"path": p, "content": c}))
        for p, c in gold_files(roman_task()).items()
    )
    loopback.script.answers.extend(
        [
            Answer(calls=(("read_file", json.dumps({"path": str(instruction)})),)),
            Answer(calls=writes),
            Answer(calls=(("finish", json.dumps({"summary": "done"})),)),
        ]
    )
    code = main(
        [
            "run",
            "builder-only",
            "--bench",
            "mini",
            "--tasks",
            "l1-roman-numerals",
            "--model",
            "openai/loopback-coder",
            "--api-base",
            loopback.url,
            "--run-dir",
            str(run_dir),
            "--json",
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["simulated"] is False
    (row,) = summary["workflows"][0]["tasks"]
    assert (row["task"], row["mean_score"], row["resolved"]) == ("l1-roman-numerals", 1.0, 1)
    assert row["input_tokens"] == 3 * 100 and row["cost_usd"] is None  # unpriced: unknown
    assert len(loopback.script.requests) == 3
    for path in (p for p in run_dir.rglob("*") if p.is_file()):
        assert DUMMY_KEY not in path.read_text(encoding="utf-8", errors="replace"), path
    # The run's cost ledger: every gateway call, labelled by run, candidate, node and role.
    records = read_ledger(run_dir / LEDGER_FILE)
    assert [r.input_tokens for r in records] == [100, 100, 100]
    labels = {(r.labels.run, r.labels.candidate, r.labels.node, r.labels.role) for r in records}
    assert labels == {("run", "builder-only", "builder", "builder")}


def test_cli_tiers_roles_and_config_choose_the_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The builder's tier (medium) runs the --tier model, not --model; with no --model the
    config's agent role is the default; --meta-model is the meta role; all in models.yaml."""
    never = tmp_path / "never.yaml"
    never.write_text("replies: ['the default model was used']\n")
    tiered = tmp_path / "tiered.yaml"
    tiered.write_text("replies: [{tool_calls: [{name: finish, arguments: {summary: tiered}}]}]\n")
    config = tmp_path / "models.yaml"
    config.write_text(f"roles: {{agent: 'scripted:{never}'}}\n")
    run_dir = tmp_path / "run"
    argv = [
        "run", "builder-only", "--bench", "mini", "--tasks", "l1-roman-numerals",
        "--config", str(config), "--tier", f"medium=scripted:{tiered}",
        "--meta-model", "openai/judge", "--run-dir", str(run_dir), "--json", "--no-report",
    ]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    events = (run_dir / "builder-only" / "l1-roman-numerals" / "rep_0" / "events.jsonl").read_text()
    ends = [json.loads(line) for line in events.splitlines() if '"node_end"' in line]
    assert [e["summary"] for e in ends] == ["tiered"]
    models = yaml.safe_load((run_dir / "models.yaml").read_text())
    assert models["tiers"] == {"medium": f"scripted:{tiered}"}
    assert models["roles"] == {"agent": f"scripted:{never}", "meta": "openai/judge"}
    settings = yaml.safe_load((run_dir / "config.yaml").read_text())["config"]["settings"]
    assert settings["model"] == f"scripted:{never}"  # the agent role: the run's default model
    assert (run_dir / LEDGER_FILE).read_text() == ""  # scripted models make no gateway call


def test_cli_api_base_with_the_sim_model_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "builder-only", "--bench", "mini", "--api-base", "http://127.0.0.1:9/v1"]
    assert main([*argv, "--run-dir", str(tmp_path / "r")]) == 2
    assert "--api-base only applies to a LiteLLM model" in capsys.readouterr().err


def test_models_command_shows_key_names_never_values(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = tmp_path / "models.yaml"
    config.write_text("tiers: {medium: anthropic/claude-sonnet-4-5}\nroles: {agent: medium}\n")
    argv = ["models", "--config", str(config), "--tier", "small=openai/gpt-4o-mini", "--json"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert DUMMY_KEY not in out
    summary = json.loads(out)
    assert summary["keys"]["ANTHROPIC_API_KEY"] is True
    assert summary["keys"]["OPENAI_API_KEY"] is False
    assert summary["models"]["small"] == "openai/gpt-4o-mini"
    assert summary["models"]["agent"] == "anthropic/claude-sonnet-4-5"
    assert summary["models"]["large"] is None
    assert main(["models", "--config", str(config)]) == 0
    assert DUMMY_KEY not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("openai/gpt-4o-mini", "openai/gpt-4o-mini"),
        ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        ("litellm:ollama/qwen2.5-coder", "ollama/qwen2.5-coder"),
        ("litellm:gpt-4o", "gpt-4o"),
    ],
)
def test_litellm_specs_build_the_gateway_without_importing_litellm(spec: str, name: str) -> None:
    model = model_factory(spec, benchmark=None, api_base="http://localhost:8000/v1")(3)
    assert isinstance(model, LiteLLMGateway)
    assert model.name == name and not model.simulated
    assert model.settings.api_base == "http://localhost:8000/v1"


def test_importing_loopwright_and_building_a_gateway_does_not_import_litellm() -> None:
    code = (
        "import sys, loopwright, loopwright.cli, loopwright.models as m; "
        "m.model_factory('openai/x', benchmark=None)(0); "
        "assert 'litellm' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_sim_still_works_and_unknown_specs_list_every_form() -> None:
    assert isinstance(model_factory("sim", benchmark=load_benchmark("mini"))(0), SimModel)
    with pytest.raises(ConfigError) as info:
        model_factory("gpt 4", benchmark=None)
    for form in ("sim", "scripted:FILE", "PROVIDER/MODEL", "litellm:NAME"):
        assert form in str(info.value)


def test_tiers_and_roles_resolve_to_model_names(tmp_path: Path) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(
        "schema_version: 1\ntiers: {small: openai/gpt-4o-mini, medium: anthropic/claude-sonnet-4-5}\n"
        "roles: {agent: small, meta: anthropic/claude-opus-4-1}\n"
    )
    config = load_models_config(path, ["medium=openai/qwen-local"])
    assert resolve_model("small", config) == "openai/gpt-4o-mini"
    assert resolve_model("medium", config) == "openai/qwen-local"  # the override wins
    assert resolve_model("agent", config) == "openai/gpt-4o-mini"  # a role naming a tier
    assert resolve_model("meta", config) == "anthropic/claude-opus-4-1"
    assert resolve_model("openai/other", config) == "openai/other"  # a name passes through
    with pytest.raises(ConfigError, match=r"ModelsConfig\(tiers=\{'large': MODEL\}\)"):
        resolve_model("large", config)  # a Python caller's words (the CLI's: --tier large=MODEL)
    assert resolve_model("large", config, default="openai/fallback") == "openai/fallback"


@pytest.mark.parametrize("bad", ["small", "huge=x", "small=", "=x"])
def test_bad_tier_overrides_are_config_errors(bad: str) -> None:
    with pytest.raises(ConfigError, match="KEY=MODEL"):
        ModelsConfig().with_overrides([bad])


def test_missing_or_invalid_models_config_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_models_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("tiers: {tiny: x}\n")
    with pytest.raises(ConfigError, match="is invalid"):
        load_models_config(bad)
