"""The task's test files compiled on the host (scoring/_precompile.py): the guard runs the host's
code only for a file whose source, as the guard read it when it loaded, is the source that code was
compiled from (keyed by its SHA-256), and only for its own Python and pytest; anything else it
compiles itself. A grade with the host's code is the grade it would be without it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
from pathlib import Path
from typing import Any

import pytest

from loopwright.scoring import _grader, _precompile
from loopwright.tasks import Task
from tests.evaluation.test_local_task_dir import PASSING_STUBS
from tests.scoring.conftest import GradeFn
from tests.taskfactory import GOLD, PARTIAL


@pytest.fixture
def hidden(calc_task: Task) -> bytes:
    """The hidden test file's source, as the task holds it."""
    return (calc_task.hidden_tests_dir / "test_ops_hidden.py").read_bytes()


def _table(entries: dict[bytes, bytes], *, magic: bytes | None = None) -> bytes:
    """A kit table mapping the SHA-256 of each key to the host's code of its value."""
    code = {}
    for digest_of, source in entries.items():
        compiled = _precompile._rewritten(source)
        assert compiled is not None
        code[hashlib.sha256(digest_of).hexdigest()] = compiled
    header = {"magic": magic or importlib.util.MAGIC_NUMBER, "pytest": pytest.__version__}
    return marshal.dumps({**header, "code": code})


def _with_table(monkeypatch: pytest.MonkeyPatch, table: bytes) -> list[bytes | None]:
    """Every grade's kit gets `table` instead of the host's own; returns the host's own tables."""
    seen: list[bytes | None] = []

    def forged(sources: Any) -> bytes:
        seen.append(_precompile.precompiled(sources))
        return table

    monkeypatch.setattr(_grader, "precompiled", forged)
    return seen


def test_the_host_compiles_the_test_files_and_a_grade_is_unchanged(
    grade_with: GradeFn, monkeypatch: pytest.MonkeyPatch, hidden: bytes
) -> None:
    tables: list[bytes | None] = []
    original = _grader.precompiled

    def spy(sources: Any) -> bytes | None:
        tables.append(original(sources))
        return tables[-1]

    monkeypatch.setattr(_grader, "precompiled", spy)
    partial = grade_with(core=PARTIAL)
    gold = grade_with(core=GOLD)
    assert tables and all(tables), "the host compiled nothing for the kit"
    loaded = marshal.loads(tables[0] or b"")
    assert hashlib.sha256(hidden).hexdigest() in loaded["code"]
    assert not gold.invalid and gold.score == 1.0, gold.invalid_reason
    assert not partial.invalid, partial.invalid_reason
    assert partial.score == 0.5
    failed = [t for t in partial.tests if not t.passed]
    assert failed and all("div" in t.id for t in failed)


def test_code_compiled_from_another_source_is_never_run(
    grade_with: GradeFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry for the passing stubs (honestly keyed by their digest) does not match the hidden
    test file the guard read: the guard compiles that file itself, and no code scores 0."""
    stubs = PASSING_STUBS.encode()
    # An entry for each file pytest rewrites here (pytest-timeout, two test files) and one more,
    # all for sources the run does not hold: a guard that ignored the digests and gave them out
    # in order would run the stubs for the hidden test file.
    _with_table(monkeypatch, _table({stubs + b"\n" * i: stubs for i in range(4)}))
    grade = grade_with()  # no code for the task: mul and div are missing
    assert not grade.invalid, grade.invalid_reason  # every file ran its own code
    assert grade.score == 0.0, grade
    assert not grade.resolved


def test_an_entry_for_another_python_is_ignored(
    grade_with: GradeFn, monkeypatch: pytest.MonkeyPatch, hidden: bytes
) -> None:
    """Keyed by the hidden file's own digest but made for another bytecode magic: not used (here
    it would make the stubs pass)."""
    stubs = PASSING_STUBS.encode()
    _with_table(monkeypatch, _table({hidden: stubs}, magic=b"\x00\x00\r\n"))
    grade = grade_with()
    assert not grade.invalid, grade.invalid_reason
    assert grade.score == 0.0, grade


def test_the_guard_runs_the_kits_code_for_the_source_it_holds(
    grade_with: GradeFn, monkeypatch: pytest.MonkeyPatch, hidden: bytes
) -> None:
    """The other side of the rule above, shown by a kit no host would write (the stubs' code keyed
    by the hidden file's digest): the guard runs it. The kit is the host's, made after the agent
    finished and shown read-only; this is why the table is trusted exactly as the plugin is."""
    stubs = PASSING_STUBS.encode()
    _with_table(monkeypatch, _table({hidden: stubs}))
    grade = grade_with()
    assert grade.score == 1.0, grade


def test_a_source_that_would_warn_is_left_to_the_run() -> None:
    assert _precompile._rewritten(b"def test_x():\n    assert (1, 'always true')\n") is None
    assert _precompile._rewritten(b"def test_x(:\n") is None
    assert _precompile._rewritten(b"def test_x():\n    assert 1\n") is not None


def test_pytest_timeout_is_compiled_too(tmp_path: Path) -> None:
    table = marshal.loads(_precompile.precompiled([]) or b"")
    (origin,) = [
        spec.origin
        for spec in [importlib.util.find_spec(name) for name in _precompile.PLUGINS]
        if spec is not None and spec.origin
    ]
    assert hashlib.sha256(Path(origin).read_bytes()).hexdigest() in table["code"]
