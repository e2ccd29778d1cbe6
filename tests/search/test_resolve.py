"""A run resolved once: `evolve` resolves its config once (one `resolve_run`, one benchmark
read) into a frozen `ResolvedRun`, and the engine takes its tasks, components, ledger and
models from that object, on a new run and on a reopened one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import loopwright.search._api as api
import loopwright.search._checkpoint as checkpoint_module
import loopwright.tasks._registry as registry
from loopwright import search
from loopwright._caller import called_from_cli
from loopwright.errors import ConfigError, UsageError
from loopwright.search import EvolutionEngine, ResolvedRun
from tests.search.test_engine import make_config


def _config() -> search.EvolveConfig:
    return make_config(
        model="sim", population=2, budgets={"max_generations": 1, "max_train_evaluations": 2}
    )


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[object]]:
    """Every `resolve_run` result and every benchmark read made through the search API."""
    seen: dict[str, list[object]] = {"resolved": [], "reads": [], "engines": []}
    real_resolve, real_read = api.resolve_run, registry.load_benchmark_dir
    real_start, real_open = EvolutionEngine.start.__func__, EvolutionEngine.open.__func__  # type: ignore[attr-defined]

    def resolve(*args: object, **kwargs: object) -> ResolvedRun:
        run = real_resolve(*args, **kwargs)  # type: ignore[arg-type]
        seen["resolved"].append(run)
        return run

    def read(path: Path, name: str | None = None) -> object:
        seen["reads"].append(str(name or path))
        return real_read(path, name=name)

    def engine(real: object) -> classmethod[EvolutionEngine, ..., EvolutionEngine]:
        def made(cls: type[EvolutionEngine], *args: object, **kwargs: object) -> EvolutionEngine:
            built = real(cls, *args, **kwargs)  # type: ignore[operator]
            seen["engines"].append(built)
            return built  # type: ignore[no-any-return]

        return classmethod(made)

    monkeypatch.setattr(api, "resolve_run", resolve)
    monkeypatch.setattr(registry, "load_benchmark_dir", read)
    monkeypatch.setattr(EvolutionEngine, "start", engine(real_start))
    monkeypatch.setattr(EvolutionEngine, "open", engine(real_open))
    return seen


def _reads_from(engine: EvolutionEngine, run: ResolvedRun) -> None:
    """The engine's tasks, components and models are the resolved run's own objects."""
    assert engine.parts is run.components
    assert engine.parts.ledger is run.ledger
    assert engine.evaluator.make_model is run.make_model
    assert engine.evaluator.sandbox is run.sandbox
    assert list(engine.tasks.values()) == list(run.benchmark.tasks)
    assert all(engine.tasks[t.id] is t for t in run.benchmark.tasks)


def test_evolve_resolves_the_run_once_and_the_engine_reads_it(
    tmp_path: Path, counted: dict[str, list[object]]
) -> None:
    result = search.evolve(_config(), tmp_path / "r", executor=search.Execution(use_cache=False))
    assert result.stop_reason is not None and not result.stopped
    assert len(counted["resolved"]) == 1
    assert counted["reads"] == ["mini"]
    (run,) = counted["resolved"]
    (engine,) = counted["engines"]
    assert isinstance(run, ResolvedRun) and isinstance(engine, EvolutionEngine)
    assert run.run_dir == tmp_path / "r" and run.config.engine is not None  # with_engine applied
    _reads_from(engine, run)


def test_a_checked_run_is_not_resolved_again(
    tmp_path: Path, counted: dict[str, list[object]]
) -> None:
    checked = search.check_inputs(_config(), tmp_path / "r")
    engine = search.start(_config(), tmp_path / "r", checked=checked)
    assert counted["resolved"] == [checked] and counted["reads"] == ["mini"]
    _reads_from(engine, checked)
    reopened = search.open_run(tmp_path / "r")  # a reopened run: resolved once, not checked
    assert len(counted["resolved"]) == 2 and counted["reads"] == ["mini", "mini"]
    again = counted["resolved"][1]
    assert isinstance(again, ResolvedRun)
    _reads_from(reopened, again)


def test_a_reopened_run_reads_its_checkpoint_and_side_files_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    search.start(_config(), tmp_path / "r")
    (tmp_path / "r" / "result.json").write_text("{}")  # a side file load_checkpoint checks
    read: list[str] = []
    real = checkpoint_module.read_json_mapping

    def counting(path: Path, **kwargs: str) -> object:
        read.append(path.name)
        return real(path, **kwargs)

    monkeypatch.setattr(checkpoint_module, "read_json_mapping", counting)
    search.open_run(tmp_path / "r")
    assert sorted(read) == ["checkpoint.json", "result.json"]


def test_the_agent_reflector_on_a_run_that_never_reflects_is_refused(tmp_path: Path) -> None:
    reflection = {"reflector": "agent", "meta_model": "openai/gpt-4o"}
    never = make_config(strategy="random", reflection=reflection)
    with pytest.raises(ConfigError, match="would never run") as info:
        search.check_inputs(never, tmp_path / "r")
    assert "strategy='random'" in str(info.value.got)  # a Python caller's words only
    assert "strategy='guided'" in str(info.value.fix) and "--" not in info.value.render()
    with called_from_cli(), pytest.raises(ConfigError, match="would never run") as at_cli:
        search.check_inputs(never, tmp_path / "r")
    assert "--strategy random" in str(at_cli.value.got)
    assert "--strategy guided" in str(at_cli.value.fix) and "strategy=" not in at_cli.value.render()
    disabled = make_config(strategy="guided", reflection={**reflection, "enabled": False})
    with pytest.raises(ConfigError, match=r"reflection\.enabled is false"):
        search.check_inputs(disabled, tmp_path / "r")
    assert not (tmp_path / "r").exists()
    # Reflecting on a random run on purpose, or the guided strategy, takes the agent reflector.
    for config in (
        make_config(strategy="random", reflection={**reflection, "enabled": True}),
        make_config(strategy="guided", reflection=reflection),
    ):
        assert search.check_inputs(config, tmp_path / "r").config.reflection.reflector == "agent"


def test_the_resolved_run_is_frozen_and_bound_to_its_directory(tmp_path: Path) -> None:
    checked = search.check_inputs(_config(), tmp_path / "r")
    with pytest.raises(dataclasses.FrozenInstanceError):
        checked.benchmark = checked.benchmark  # type: ignore[misc]
    with pytest.raises(UsageError, match="resolved for"):
        search.evolve(_config(), tmp_path / "other", checked=checked)
    assert not (tmp_path / "r").exists() and not (tmp_path / "other").exists()
