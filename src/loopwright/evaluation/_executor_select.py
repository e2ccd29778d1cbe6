"""Choosing an executor by name (`--executor local|ray`), with the fitness cache around it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright.errors import ConfigError
from loopwright.evaluation._cache import CachedExecutor, FitnessCache
from loopwright.evaluation._executor import Executor, SerialExecutor
from loopwright.evaluation._executor_local import LocalExecutor

__all__ = ["EXECUTOR_KINDS", "ExecutorSettings", "executor_settings", "make_executor"]

EXECUTOR_KINDS = ("local", "ray", "serial")
# What Ray's init takes as an address: a cluster's HOST:PORT (or ray://HOST:PORT for Ray
# Client), or "auto" for the cluster this machine is part of.
_RAY_ADDRESS = re.compile(r"auto|(?:ray://)?[A-Za-z0-9_.\-]+:\d{1,5}")


class ExecutorSettings(BaseModel):
    """How evaluations are executed. None of it changes a result, so none of it belongs to a
    run's config: a run may be resumed with other workers or on a cluster.

    `workers`: jobs at once (local default: the cores; Ray default: the cluster's CPUs).
    `job_timeout_s`: cap per job (default per task: agent + grade timeouts + 60 s).
    `ray_address`: an existing cluster ("HOST:PORT" or "auto"); None starts a local Ray.
    `ray_num_cpus`: CPUs each Ray job asks for. `retries`: reruns of a crashed job.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["local", "ray", "serial"] = "local"
    workers: int | None = Field(default=None, ge=1)
    job_timeout_s: float | None = Field(default=None, gt=0)
    ray_address: str | None = None
    ray_num_cpus: float = Field(default=1.0, gt=0)
    retries: int = Field(default=1, ge=0)


def executor_settings(
    kind: str,
    *,
    workers: int | None = None,
    job_timeout_s: float | None = None,
    ray_address: str | None = None,
) -> ExecutorSettings:
    """Validate CLI input into ExecutorSettings; ConfigError saying what to write instead, and
    MissingDependencyError for "ray" when ray is not installed."""
    if kind not in EXECUTOR_KINDS:
        raise ConfigError(
            f"unknown executor {kind!r}",
            got=kind,
            fix=f"use one of: {', '.join(EXECUTOR_KINDS)}",
        )
    if kind == "ray":
        from loopwright.evaluation._executor_ray import import_ray

        import_ray()  # MissingDependencyError now, before any run directory is made
    if ray_address is not None and kind != "ray":
        raise ConfigError(
            "--ray-address only applies to the Ray executor",
            got=f"--executor {kind} --ray-address {ray_address}",
            fix="add --executor ray, or drop --ray-address",
        )
    if ray_address is not None and not _RAY_ADDRESS.fullmatch(ray_address.strip()):
        raise ConfigError(
            "--ray-address is not a Ray cluster address",
            got=ray_address,
            fix="pass HOST:PORT (e.g. 127.0.0.1:6379, as `ray start --head` prints), "
            "ray://HOST:PORT or auto; or omit it to start a local Ray instance",
        )
    try:
        return ExecutorSettings(
            kind=kind,
            workers=workers,
            job_timeout_s=job_timeout_s,
            ray_address=ray_address,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(
            f"invalid executor option {'.'.join(str(p) for p in first['loc'])}: {first['msg']}",
            got=str(first.get("input")),
            fix="pass --workers 1 or more and a positive --job-timeout",
        ) from None


def make_executor(
    settings: ExecutorSettings, *, cache: Path | None = None, log_dir: Path | None = None
) -> Executor:
    """The executor `settings` name, wrapped by the fitness cache at `cache` when given.
    `log_dir` (the run directory) receives Ray's own output (`ray.log`).

    For Ray, checks here that `ray` imports (MissingDependencyError saying how to install it,
    before any run directory is filled); it connects to the cluster at its first job."""
    inner: Executor
    if settings.kind == "serial":
        inner = SerialExecutor()
    elif settings.kind == "ray":
        from loopwright.evaluation._executor_ray import RayExecutor, import_ray

        import_ray()  # fail now, before a run directory is filled, when ray is missing
        inner = RayExecutor(
            settings.ray_address,
            workers=settings.workers,
            job_timeout_s=settings.job_timeout_s,
            num_cpus=settings.ray_num_cpus,
            max_retries=settings.retries,
            log_dir=log_dir,
        )
    else:
        inner = LocalExecutor(
            settings.workers, job_timeout_s=settings.job_timeout_s, retries=settings.retries
        )
    return inner if cache is None else CachedExecutor(inner, FitnessCache(cache))
