"""`ab score` writes the scoreboard; `ab apply` writes its promotion into the user's settings,
which the runtime loads back for the Runner; what must not be applied is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigError, UsageError
from loopwright.harness import (
    BriefSuite,
    Cell,
    NothingToApply,
    Provenance,
    Scoreboard,
    apply_promotion,
    build_scoreboard,
    read_scoreboard,
    record,
)
from loopwright.runtime import EngineSettings, Runner
from loopwright.runtime._user_settings import (
    SETTINGS_ENV,
    load_engine_settings,
    user_settings_path,
)
from loopwright.sandbox import Sandbox
from tests.harness.conftest import (
    PROVENANCE,
    native_plan,
    offline_options,
    scripted_source,
)


def react_fails_complex(cell: Cell) -> tuple[str | None, bool]:
    flawed = cell.loop == "react" and cell.brief == "complex-calc"
    return ("left_assoc_power" if flawed else None), False


@pytest.fixture(scope="module")
def recorded(suite: BriefSuite, local: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("apply") / "r"
    plan = native_plan(
        suite, briefs=["simple-wordfreq", "complex-calc"], tiers=["small"], repetitions=1
    )
    record(
        plan,
        suite,
        offline_options(out, local, scripted_source(suite, react_fails_complex, None)),
    )
    return out


def real(sb: Scoreboard) -> Scoreboard:
    """The scoreboard as if real models had answered (only real runs may be applied)."""
    return sb.model_copy(update={"simulated": False})


def test_apply_writes_settings_the_runtime_loads(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: Sandbox
) -> None:
    settings = tmp_path / "home" / "settings.yaml"
    monkeypatch.setenv(SETTINGS_ENV, str(settings))
    sb = real(build_scoreboard(recorded, PROVENANCE))
    # One bucket each; equal standings: the name breaks the tie (see _promotion).
    assert sb.promotion.default_loop_type == "hybrid"
    assert sb.promotion.loop_complexity_overrides == {"simple": "react"}
    path, engine = apply_promotion(sb, PROVENANCE)
    assert path == settings == user_settings_path()
    assert (
        load_engine_settings()
        == engine
        == EngineSettings(default_loop_type="hybrid", loop_complexity_overrides={"simple": "react"})
    )
    assert settings.read_text(encoding="utf-8").startswith("# engine settings written by")
    from loopwright.models import ScriptedModel

    Runner(ScriptedModel([]), sandbox, cost_fn=lambda m, u: None, price_table="t",
           engine=load_engine_settings())  # fmt: skip


def test_apply_refuses_what_is_not_evidence(recorded: Path, tmp_path: Path) -> None:
    sb = build_scoreboard(recorded, PROVENANCE)
    target = tmp_path / "s.yaml"
    with pytest.raises(UsageError, match="simulated models"):
        apply_promotion(sb, PROVENANCE, settings=target)
    later = Provenance(commit="e" * 40, dirty=False, loopwright_version="t")
    with pytest.raises(UsageError, match="stale"):
        apply_promotion(real(sb), later, settings=target)
    assert not target.exists()
    apply_promotion(real(sb), later, settings=target, allow_stale=True)
    assert target.is_file()
    with pytest.raises(UsageError, match="incomplete"):
        apply_promotion(
            real(sb).model_copy(update={"complete": False}), PROVENANCE, settings=target
        )
    empty = real(sb).model_copy(
        update={
            "promotion": sb.promotion.model_copy(update={"default_loop_type": None, "lines": []})
        }
    )
    with pytest.raises(NothingToApply):
        apply_promotion(empty, PROVENANCE, settings=target)


def test_settings_loading_is_never_a_silent_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SETTINGS_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert load_engine_settings() == EngineSettings()  # nothing applied yet
    with pytest.raises(ConfigError, match="does not exist"):
        load_engine_settings(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema_version: 1\nengine:\n  default_loop: react\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="is invalid"):
        load_engine_settings(bad)


def test_score_and_apply_commands(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ab", "score", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert "engine.default_loop_type = hybrid" in out
    assert (recorded / "scoreboard.md").read_text(encoding="utf-8") == out
    sb = read_scoreboard(recorded / "scoreboard.json")
    assert sb.promotion.lines[1] == "engine.loop_complexity_overrides = simple:react"
    # A simulated scoreboard is refused by the command (exit 2, what/got/fix).
    assert main(["ab", "apply", str(recorded), "--settings", str(tmp_path / "s.yaml")]) == 2
    assert "simulated models" in capsys.readouterr().err
    # An empty recommendation exits 1 and leaves the settings alone.
    empty = real(sb).model_copy(
        update={
            "stale": None,
            "promotion": sb.promotion.model_copy(
                update={"default_loop_type": None, "lines": [], "note": "no loop cleared"}
            ),
        }
    )
    path = tmp_path / "empty.json"
    path.write_text(empty.model_dump_json(), encoding="utf-8")
    target = tmp_path / "s.yaml"
    assert main(["ab", "apply", str(path), "--settings", str(target), "--allow-stale"]) == 1
    assert not target.exists()
    good = tmp_path / "good.json"
    good.write_text(real(sb).model_dump_json(), encoding="utf-8")
    assert main(["ab", "apply", str(good), "--settings", str(target), "--allow-stale"]) == 0
    assert load_engine_settings(target).loop_complexity_overrides == {"simple": "react"}
