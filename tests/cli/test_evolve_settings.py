"""One settings file: `evolve --config FILE` reads the run's settings from its `evolve:` section
beside the models, flags given on the command line override it, EvolveConfig fills the rest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loopwright import search
from loopwright.cli import main
from loopwright.search import EvolveConfig

SETTINGS = """\
tiers: {small: sim}
evolve:
  bench: mini
  seed_workflow: builder-only
  population: 3
  novelty_threshold: 0.11
  designs: [minimal]
  operators: [prompt_mutate]
  reflection: {max_retries: 0}
  budgets: {max_generations: 2, max_usd: 5}
"""


class Resolved(Exception):
    def __init__(self, config: EvolveConfig) -> None:
        super().__init__("resolved")
        self.config = config


@pytest.fixture
def resolved(monkeypatch: pytest.MonkeyPatch) -> list[EvolveConfig]:
    """The config `evolve` resolved, caught before anything runs or is written."""
    seen: list[EvolveConfig] = []

    def stop(config: EvolveConfig, *args: Any, **kwargs: Any) -> Any:
        seen.append(config)
        raise Resolved(config)

    monkeypatch.setattr(search, "check_inputs", stop)
    return seen


def _evolve(tmp_path: Path, *flags: str) -> None:
    with pytest.raises(Resolved):
        main(["evolve", "--run-dir", str(tmp_path / "r"), *flags])


def test_the_settings_file_sets_what_no_flag_can_and_flags_override_it(
    tmp_path: Path, resolved: list[EvolveConfig]
) -> None:
    file = tmp_path / "settings.yaml"
    file.write_text(SETTINGS, encoding="utf-8")
    _evolve(tmp_path, "--config", str(file), "--population", "4", "--max-wall-s", "60")
    config = resolved[-1]
    assert config.bench == "mini" and config.seed_workflow == "builder-only"
    assert config.novelty_threshold == 0.11 and config.designs == ("minimal",)
    assert config.operators == ("prompt_mutate",) and config.reflection.max_retries == 0
    assert config.population == 4  # the flag wins over the file's 3
    assert config.budgets.max_generations == 2 and config.budgets.max_usd == 5  # the file's
    assert config.budgets.max_wall_s == 60  # a flag merged into the file's budgets
    assert config.models.tiers == {"small": "sim"}  # the same file's models
    assert config.strategy == "guided" and config.elitism == 2  # the defaults, one place


def test_without_a_settings_section_every_option_counts_as_before(
    tmp_path: Path, resolved: list[EvolveConfig]
) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("tiers: {small: sim}\n", encoding="utf-8")
    _evolve(tmp_path, "--bench", "mini", "--seed-workflow", "builder-only", "--config",
            str(models), "--population", "2")  # fmt: skip
    config = resolved[-1]
    assert config.population == 2 and config.elitism == 1 and config.models.tiers
    assert config.budgets.max_generations == 4


def test_a_settings_section_naming_the_models_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "settings.yaml"
    file.write_text("evolve: {bench: mini, seed_workflow: builder-only, model: sim}\n")
    assert main(["evolve", "--config", str(file), "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "names the models" in err and "model" in err
    assert not (tmp_path / "r").exists()
