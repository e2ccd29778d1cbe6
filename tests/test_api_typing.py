"""A typical user script passes `mypy --strict` without loopwright's own mypy settings (no
pydantic plugin, as in a user's project): task ids as a list, the stop handle, the spend and
listener types imported by name (issue 31, items 1 and 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

SCRIPT = """
from pathlib import Path

import loopwright
from loopwright.search import EvolveConfig, Listener, ProgressEvent, Spent


def show(event: ProgressEvent) -> None:
    print(event.event)


listener: Listener = show
config = EvolveConfig(seed_workflow="builder-only", bench="mini",
                      train_tasks=["l1-slugify"], holdout_tasks=["l1-rle-decode"])
handle = loopwright.StopHandle()
result = loopwright.evolve(config, Path("runs/x"), on_event=listener, should_stop=handle)
spent: Spent = result.spent
best: float | None = result.best_score
held: float | None = result.holdout_score
print(spent.dollars(), best, held, result.stopped)
"""


@pytest.mark.slow
def test_a_user_script_passes_mypy_strict(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    script = tmp_path / "user.py"
    script.write_text(SCRIPT, encoding="utf-8")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n", encoding="utf-8")
    out, err, code = api.run([
        "--config-file", str(config), "--cache-dir", str(tmp_path / "cache"), str(script)
    ])  # fmt: skip
    assert code == 0, out + err
