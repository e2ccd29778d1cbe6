"""The run index: schema and version, WAL, evaluations with their tests, failed attempts and
ledger written atomically and replaced by identity, the spend query, and the cache table."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from loopwright.errors import ConfigError
from loopwright.evaluation import EvalJob, SerialExecutor
from loopwright.records import CycleRecord
from loopwright.store import (
    INDEX_SCHEMA_VERSION,
    CacheEntry,
    CacheTable,
    EvaluationRow,
    FailedAttemptRow,
    GenerationRow,
    IndividualRow,
    RunIndex,
    connect,
)
from tests.evaluation.test_executor import evaluator, one_builder, tasks


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> CycleRecord:
    tmp = tmp_path_factory.mktemp("index")
    (task,) = tasks(tmp, "calc")
    (done,) = SerialExecutor().run(
        evaluator(tmp / "marks"), [EvalJob(one_builder(), task, 0, tmp / "run", "r")]
    )
    return done.record


def row(record: CycleRecord, **over: Any) -> EvaluationRow:
    base = EvaluationRow.from_record(
        record, run_id="r1", individual_id="ind-1", generation=0, split="train",
        record_path="gen_0/ind-1/calc/rep_0", executor="local",
    )  # fmt: skip
    return replace(base, **over)


def test_a_new_index_is_wal_and_carries_its_schema_version(tmp_path: Path) -> None:
    with RunIndex.of_run(tmp_path) as index:
        conn = index.connection
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert int(version[0]) == INDEX_SCHEMA_VERSION
    assert (tmp_path / "runs.db").is_file()


def _open_at(path: Path, start: float) -> str:
    while time.time() < start:  # all openers reach the new file together
        pass
    try:
        connect(path).close()
        return "ok"
    except ConfigError as exc:
        return str(exc)


def test_processes_opening_one_new_index_at_once_all_open_it(tmp_path: Path) -> None:
    # Switching a new file to WAL does not wait on SQLite's busy handler: before the retry,
    # 10 of 60 such races had an opener fail with "database is locked".
    failures = []
    with multiprocessing.get_context("fork").Pool(3) as pool:
        for attempt in range(25):
            path = tmp_path / f"race-{attempt}.db"
            start = time.time() + 0.05
            failures += [r for r in pool.starmap(_open_at, [(path, start)] * 3) if r != "ok"]
    assert failures == []


def test_another_schema_version_or_a_foreign_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    connect(path).close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    raw.commit()
    raw.close()
    with pytest.raises(ConfigError, match="another schema version"):
        RunIndex(path)
    junk = tmp_path / "junk.db"
    junk.write_text("not a database at all, just text that is long enough " * 20)
    with pytest.raises(ConfigError, match="not a loopwright run index"):
        RunIndex(junk)


def test_an_evaluation_lands_with_its_tests_failures_and_ledger_and_is_replaced_by_identity(
    tmp_path: Path, record: CycleRecord
) -> None:
    crash = FailedAttemptRow(1, "crashed", "killed by SIGKILL", 0.4, "gen_0/x/rep_0.attempt1")
    with RunIndex(tmp_path / "runs.db") as index:
        written = index.add_evaluation(row(record), record, [crash])
        assert written.evaluation_id > 0
        assert record.grade is not None
        tests = index.test_outcomes(written.evaluation_id)
        assert {(t.test_id, t.passed) for t in tests} == {
            (t.id, t.passed) for t in record.grade.tests
        }
        assert [f.attempt for f in index.failures("r1")] == [crash]
        # the same identity again (a resumed run): one row, the new values, children replaced
        again = index.add_evaluation(row(record, score=0.5, attempts=2), record)
        rows = index.evaluations("r1")
        assert [(r.score, r.attempts) for r in rows] == [(0.5, 2)]
        assert rows[0].evaluation_id == again.evaluation_id
        assert index.failures("r1") == []
        ledger = index.connection.execute("SELECT COUNT(*) FROM cost_ledger").fetchone()[0]
        assert ledger == len(record.steps)
        assert index.test_outcomes(written.evaluation_id) == []


def test_spend_separates_paid_from_what_the_cache_saved(
    tmp_path: Path, record: CycleRecord
) -> None:
    assert record.total_cost_usd is not None
    with RunIndex(tmp_path / "runs.db") as index:
        index.add_evaluation(row(record), record)
        index.add_evaluation(row(record, individual_id="ind-2", cached=True), record)
        index.add_evaluation(row(record, run_id="other"), record)
        spend = index.spend("r1")
    assert (spend.evaluations, spend.cached, spend.failed_attempts) == (2, 1, 0)
    assert spend.paid_usd == pytest.approx(record.total_cost_usd)
    assert spend.saved_usd == pytest.approx(record.total_cost_usd)
    assert spend.unpriced_steps == 0


def test_individuals_and_generations_round_trip(tmp_path: Path) -> None:
    ind = IndividualRow(
        "r1", "ind-1", 0, "abc", "builder-only", "seed", (), None, "", "evolve-gen0-ind-1"
    )
    child = IndividualRow(
        "r1", "ind-2", 1, "def", "builder-only", "node_insert", ("ind-1",), "builder", "why", "m"
    )
    gen = GenerationRow(
        "r1", 0, "ind-1", "abc", 0.5, 0.4, None, None, False, 2, 2, 0.1, 4, 0.2, 3.0, "{}"
    )
    with RunIndex(tmp_path / "runs.db") as index:
        index.add_individuals([child, ind])
        index.add_individuals([ind])  # again: replaced, not duplicated
        index.add_generation(gen)
        assert index.individuals("r1") == [ind, child]
        assert index.generations("r1") == [gen]
        assert index.runs() == ["r1"]


def test_a_reader_is_not_blocked_by_an_open_write(tmp_path: Path, record: CycleRecord) -> None:
    path = tmp_path / "runs.db"
    with RunIndex(path) as writer, RunIndex(path) as reader:
        writer.add_evaluation(row(record), record)
        writer.connection.execute("BEGIN IMMEDIATE")
        writer.connection.execute("DELETE FROM evaluations")
        assert len(reader.evaluations("r1")) == 1  # sees the last commit, at once
        writer.connection.execute("ROLLBACK")


def test_the_cache_table_keeps_the_first_entry_of_a_key(tmp_path: Path) -> None:
    entry = CacheEntry("k1", "wf", "calc", "digest", "sim", "{}", 0, '{"a": 1}', "run-a", "/p", "t")
    with CacheTable(tmp_path / "cache.db") as table:
        assert table.put(entry)
        assert not table.put(replace(entry, record_json='{"a": 2}', source_run_id="run-b"))
        found = table.get("k1")
        assert (
            found is not None and found.record_json == '{"a": 1}' and found.source_run_id == "run-a"
        )
        assert table.get("k2") is None
        assert len(table) == 1
        again = table.get("k1")
        assert again is not None and again.hits == 1


def test_a_renamed_run_directory_still_finds_its_rows(tmp_path: Path) -> None:
    # Issue 31: `outer-loop status` on a moved run reported 0 evaluations (rows keep the name).
    ind = IndividualRow("old", "ind-1", 0, "abc", "builder-only", "seed", (), None, "", "m")
    with RunIndex(tmp_path / "runs.db") as index:
        index.add_individuals([ind])
        assert index.run_id_of(tmp_path / "moved" / "new-name") == "old"
        assert index.run_id_of(tmp_path / "old") == "old"
        index.add_individuals([replace(ind, run_id="other")])  # a shared index: no guessing
        assert index.run_id_of(tmp_path / "new-name") == "new-name"
