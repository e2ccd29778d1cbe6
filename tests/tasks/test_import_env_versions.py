"""`--env-spec` keyed by the row's `version`, as SWE-bench's own specs are: one repository's
instances span years of Python and pinned packages, so one table per repository is not enough."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.sandbox import EnvironmentCache
from loopwright.tasks import load_task
from loopwright.tasks.importers import ImportOptions, import_swebench, load_env_spec
from tests.tasks.importfixtures import Fixture, make_fixture, write_jsonl

SPEC = """
[environment]
env = { WHICH = "default" }

[repos."acme/calc".environment]
env = { WHICH = "repo" }

[repos."acme/calc".versions."0.1".environment]
env = { WHICH = "v0.1" }

[repos."acme/calc".versions."0.2".environment]
env = { WHICH = "v0.2" }
"""


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return make_fixture(tmp_path_factory.mktemp("fixture"))


def test_the_rows_version_picks_the_environment(fx: Fixture, tmp_path: Path) -> None:
    (tmp_path / "env.toml").write_text(SPEC)
    spec = load_env_spec(tmp_path / "env.toml")
    assert spec.for_repo("acme/calc", "0.3") == spec.for_repo("acme/calc")  # the repo's table
    assert spec.for_repo("other/x", "0.1") == spec.environment  # the default table
    rows = [
        fx.instance(instance_id="acme__calc-1", version="0.1"),
        fx.instance(instance_id="acme__calc-2", version="0.2"),
        fx.instance(instance_id="acme__calc-3", version="9.9"),
    ]
    source = write_jsonl(tmp_path / "rows.jsonl", rows)
    out = tmp_path / "out"
    report = import_swebench(source, out, ImportOptions(repos=fx.repos, env_spec=spec))
    assert not report.skipped, report.skipped
    tasks = [load_task(out / f"acme__calc-{n}") for n in (1, 2, 3)]
    which = [t.spec.environment.env["WHICH"] for t in tasks if t.spec.environment]
    assert which == ["v0.1", "v0.2", "repo"]
    # Two versions of one repository: two environments built, each with its own variables.
    cache = EnvironmentCache(tmp_path / "cache", builder="pip")
    first, second = cache.ensure(tasks[0]), cache.ensure(tasks[1])
    assert first.built and second.built
    assert first.manifest.key != second.manifest.key
    assert dict(first.manifest.variables)["WHICH"] == "v0.1"
    assert dict(second.manifest.variables)["WHICH"] == "v0.2"
