"""config.yaml of a research working directory: settings, caps, and the files manifest.

The working directory (conventionally `.../<workflow>/vN/`) holds the eleven files of the
research loop; `WorkDir` names them, `MANIFEST` says what each is and who writes it (it is
written into config.yaml so tools can read the layout), and `ResearchConfig` is config.yaml.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright._caller import spoken
from loopwright._fs import atomic_write
from loopwright._version import __version__
from loopwright.errors import ConfigError
from loopwright.runtime import EngineSettings
from loopwright.store import RunLifecycle, RunSpec

__all__ = [
    "CONFIG_SCHEMA_VERSION",
    "MANIFEST",
    "RESEARCH_RUN",
    "Caps",
    "EvalConfig",
    "ManifestEntry",
    "ReflectSettings",
    "ResearchConfig",
    "WorkDir",
    "atomic_write",
]

CONFIG_SCHEMA_VERSION = 2
"""2 added the holdout (`EvalConfig.holdout`, `holdout_passes`, `overfit_gap`); a version-1
config.yaml still loads, with no holdout."""
READABLE_CONFIG_VERSIONS = (1, 2)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ManifestEntry(_Frozen):
    """One file of the working directory: its type, purpose, access rule and writers."""

    path: str
    type: Literal["markdown", "jsonl", "json", "yaml", "directory"]
    purpose: str
    access: Literal["read-only", "append-only", "append", "rewrite", "frozen-between-commits"]
    written_by: tuple[str, ...]


MANIFEST: tuple[ManifestEntry, ...] = (
    ManifestEntry(path="config.yaml", type="yaml", access="read-only",
                  written_by=("init", "run --max-usd"),
                  purpose="settings, caps, the dollar budget and this manifest"),
    ManifestEntry(path="goal.md", type="markdown", access="read-only", written_by=("init", "user"),
                  purpose="Ultimate / Escalation / Termination; polled every iteration"),
    ManifestEntry(path="constraints.md", type="markdown", access="read-only",
                  written_by=("init", "user"),
                  purpose="rules merged from four layers; directives the loop enforces"),
    ManifestEntry(path="knowledge.md", type="markdown", access="append-only",
                  written_by=("init", "think", "distill", "resume"),
                  purpose="what was learned; corrections supersede, never edit"),
    ManifestEntry(path="experience.jsonl", type="jsonl", access="append", written_by=("distill",),
                  purpose="one line per spec experiment: pattern, outcome, verdict, delta"),
    ManifestEntry(path="hypotheses.jsonl", type="jsonl", access="append",
                  written_by=("think", "distill"), purpose="hypothesis add/remove events"),
    ManifestEntry(path="search_space.md", type="markdown", access="rewrite",
                  written_by=("init", "reflect"),
                  purpose="axis taxonomy, coverage map per REFLECT, ranked frontier"),
    ManifestEntry(path="experiment_design.md", type="markdown", access="append",
                  written_by=("init", "think"),
                  purpose="the measurement protocol and each iteration's design"),
    ManifestEntry(path="tools/", type="directory", access="rewrite", written_by=("think",),
                  purpose="helper files THINK writes; stored, never run by the loop"),
    ManifestEntry(path="workspace/", type="directory", access="frozen-between-commits",
                  written_by=("init", "reconcile"),
                  purpose="the current workflow and its measured scores; the rollback anchor"),
    ManifestEntry(path="iteration/iter_N/record.json", type="json", access="read-only",
                  written_by=("commit",),
                  purpose="IterRecord: per-spec blocks, summary, reflect block; plus artifacts"),
    ManifestEntry(path="holdout/", type="directory", access="append", written_by=("init", "loop"),
                  purpose="the holdout's runs, scores per workflow and checks; never shown to "
                          "the meta model"),
    ManifestEntry(path="run_state.json", type="json", access="rewrite", written_by=("loop",),
                  purpose="running / paused / terminated / saturated / stalled / budget, and why"),
    ManifestEntry(path=".staging/iter_N/", type="directory", access="rewrite",
                  written_by=("think", "critic", "experiment", "distill"),
                  purpose="the iteration in progress; moved to iteration/iter_N at commit"),
)  # fmt: skip
"""Every file of the working directory (the eleven working files plus run_state and staging)."""


class Caps(_Frozen):
    """Limits of one iteration. `workers` is the method-wide cap of a wave; each submission is
    clamped to `submission_workers`."""

    max_specs_per_iter: int = Field(default=3, ge=1, le=8)
    smoke_attempts: int = Field(default=3, ge=1, le=5)
    max_think_escalations: int = Field(default=2, ge=1, le=5)
    workers: int = Field(default=4, ge=1, le=64)
    submission_workers: int = Field(default=4, ge=1, le=64)


class ReflectSettings(_Frozen):
    """REFLECT's triggers: a heartbeat every `heartbeat_every` committed iterations, and axis
    concentration over the last `axis_window`; an axis whose last `exhaust_after` experiments
    were all refuted counts as exhausted."""

    heartbeat_every: int = Field(default=3, ge=1)
    axis_window: int = Field(default=3, ge=2)
    exhaust_after: int = Field(default=3, ge=1)


class EvalConfig(_Frozen):
    """How experiments are measured: the benchmark, the eval tasks, the smoke task, the model
    the agents run on, the sandbox and the base seed. `engine` picks each agent node's loop:
    the user's settings file (what `loopwright ab apply` writes) when the directory was
    created; None in directories made before it was stored (the defaults).

    `holdout` is the run's holdout: tasks split off at init, never shown to THINK, CRITIC,
    DISTILL or REFLECT, measured (`holdout_passes` repetitions each) at every adoption and when
    a run ends; a train gain more than `overfit_gap` above the holdout gain is the overfit
    signal. Empty in directories made before config schema 2 (no holdout)."""

    bench: str
    tasks: tuple[str, ...] = Field(min_length=1)
    smoke_task: str
    model: str = "sim"
    sandbox: str = "auto"
    seed: int = 0
    run_timeout_s: float | None = Field(default=None, gt=0)
    engine: EngineSettings | None = None
    holdout: tuple[str, ...] = ()
    holdout_passes: int = Field(default=1, ge=1, le=20)
    overfit_gap: float = Field(default=0.2, gt=0.0, le=1.0)


class ResearchConfig(_Frozen):
    """config.yaml. `meta_model` answers THINK, CRITIC, DISTILL and REFLECT (`sim` = the
    documented offline rules); `workflow` is where the seed workflow came from. `git_commit`
    (the loopwright source, None outside a checkout) and `benchmark_digest` are stamped at
    init (absent from directories made before 2026-12-01: None). `max_usd` is the run's dollar
    budget (None: none), set by `research init --max-usd` and changed by `research run
    --max-usd` (absent from directories made before it existed: None)."""

    schema_version: int = CONFIG_SCHEMA_VERSION
    kind: Literal["research"] = "research"
    loopwright_version: str = __version__
    git_commit: str | None = None
    benchmark_digest: str | None = None
    workflow: str
    meta_model: str = "sim"
    seed: int = 0
    eval: EvalConfig
    caps: Caps = Field(default_factory=Caps)
    reflect: ReflectSettings = Field(default_factory=ReflectSettings)
    max_usd: float | None = Field(default=None, gt=0)
    manifest: tuple[ManifestEntry, ...] = MANIFEST


RESEARCH_RUN = RunSpec(
    kind="research",
    header="config.yaml",
    lock=".research.lock",
    flag="--dir",
    noun="research loop",
    resume="loopwright research run --dir {path}",
    param="dir",
    api_resume="loopwright.research({path})",
    busy_fix="wait for it to finish, or stop it; `research run` then resumes",
    api_busy_fix="wait for it to finish, or stop it; loopwright.research(dir) then resumes",
)
"""A research working directory to the shared run lifecycle (store.RunLifecycle): whether it
finished is run_state.json's status, so `state` says new or partial."""


class WorkDir:
    """The paths of one research working directory, and its run lifecycle."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = root / "config.yaml"
        self.goal = root / "goal.md"
        self.constraints = root / "constraints.md"
        self.knowledge = root / "knowledge.md"
        self.experience = root / "experience.jsonl"
        self.hypotheses = root / "hypotheses.jsonl"
        self.search_space = root / "search_space.md"
        self.experiment_design = root / "experiment_design.md"
        self.tools = root / "tools"
        self.workspace = root / "workspace"
        self.iterations = root / "iteration"
        self.staging_root = root / ".staging"
        self.run_state = root / "run_state.json"
        self.holdout = root / "holdout"
        self.lifecycle: RunLifecycle = RESEARCH_RUN.at(root)
        self.lock = self.lifecycle.lock_path

    def iter_dir(self, n: int) -> Path:
        return self.iterations / f"iter_{n}"

    def staging(self, n: int) -> Path:
        return self.staging_root / f"iter_{n}"

    def committed(self) -> list[int]:
        """Numbers of the committed iterations (those with a record.json), ascending."""
        if not self.iterations.is_dir():
            return []
        found = []
        for entry in self.iterations.iterdir():
            match = re.fullmatch(r"iter_(\d+)", entry.name)
            if match and (entry / "record.json").is_file():
                found.append(int(match.group(1)))
        return sorted(found)

    def load_config(self) -> ResearchConfig:
        """config.yaml as a ResearchConfig. ConfigError when this is not a research directory."""
        if not self.config.is_file():
            raise ConfigError(
                f"{self.root} is not a research working directory (no config.yaml)",
                fix="create one with "
                + spoken(
                    "loopwright.research(DIR, init=InitOptions(goal=TEXT, ...))",
                    "`loopwright research init --dir DIR --goal TEXT ...`",
                ),
            )
        data = yaml.safe_load(self.config.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("kind") != "research":
            raise ConfigError(f"{self.config} is not a research config", got=str(data)[:80])
        if data.get("schema_version") not in READABLE_CONFIG_VERSIONS:
            raise ConfigError(
                f"{self.config} has another schema version",
                got=str(data.get("schema_version")),
                fix=f"this loopwright reads schema_version {READABLE_CONFIG_VERSIONS}",
            )
        data = {**data, "schema_version": CONFIG_SCHEMA_VERSION}  # 1 -> 2: no holdout
        try:
            return ResearchConfig.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"{self.config} is malformed", got=str(exc.errors()[0])) from None

    def write_config(self, config: ResearchConfig) -> None:
        text = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, width=100)
        atomic_write(self.config, text)
