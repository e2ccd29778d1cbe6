"""RunIndex: the SQLite index of runs, written as results arrive and queried by status/reports.

Only the process driving a run writes its rows (executors' workers never open the index), so
there is one writer per run; several runs may share one file (a shared fitness cache).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, fields, replace
from math import fsum
from pathlib import Path
from types import TracebackType
from typing import Any

from loopwright.records import CycleRecord
from loopwright.store._rows import (
    EvaluationRow,
    FailedAttemptRow,
    FailureRow,
    GenerationRow,
    IndividualRow,
    Spend,
    StageRow,
    TestOutcomeRow,
    ledger_rows,
)
from loopwright.store._schema import INDEX_FILE, connect

__all__ = ["RunIndex"]

_EVAL_COLUMNS = [f.name for f in fields(EvaluationRow) if f.name != "evaluation_id"]
_GEN_COLUMNS = [f.name for f in fields(GenerationRow)]
_IDENTITY = "run_id = ? AND individual_id = ? AND split = ? AND task_id = ? AND repetition = ?"


class RunIndex:
    """The run index in one SQLite file (WAL). Not thread-safe: one instance per thread.

    Writes are transactions (an evaluation with its test outcomes, failed attempts and ledger
    rows lands all at once or not at all). Every query returns typed rows in a stable order.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path)

    @classmethod
    def of_run(cls, run_dir: Path) -> RunIndex:
        """The index of the run directory `run_dir` (`<run>/runs.db`), created when missing."""
        return cls(run_dir / INDEX_FILE)

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection (for the fitness cache, which keeps its table in this file)."""
        return self._conn

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RunIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # -- writes ---------------------------------------------------------------------------------

    def add_individuals(self, rows: Iterable[IndividualRow]) -> None:
        """Insert or update individuals (same run and id: the row is replaced)."""
        values = [
            (r.run_id, r.individual_id, r.generation, r.workflow_hash, r.workflow_name,
             r.operator, json.dumps(list(r.parents)), r.target, r.reason, r.mode)
            for r in rows
        ]  # fmt: skip
        with self._transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO individuals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values
            )

    def add_evaluation(
        self,
        row: EvaluationRow,
        record: CycleRecord,
        failed: Sequence[FailedAttemptRow] = (),
    ) -> EvaluationRow:
        """Write one evaluation with its per-test outcomes, failed attempts and ledger rows,
        replacing an earlier evaluation of the same identity. Returns the row with its id."""
        with self._transaction() as conn:
            identity = (row.run_id, row.individual_id, row.split, row.task_id, row.repetition)
            conn.execute(f"DELETE FROM evaluations WHERE {_IDENTITY}", identity)
            marks = ", ".join("?" for _ in _EVAL_COLUMNS)
            cursor = conn.execute(
                f"INSERT INTO evaluations ({', '.join(_EVAL_COLUMNS)}) VALUES ({marks})",
                astuple(row)[:-1],
            )
            evaluation_id = int(cursor.lastrowid or 0)
            tests = record.grade.tests if record.grade else []
            conn.executemany(
                "INSERT OR REPLACE INTO test_outcomes VALUES (?, ?, ?, ?, ?)",
                [(evaluation_id, t.id, t.outcome, t.fail_to_pass, t.passed) for t in tests],
            )
            conn.executemany(
                "INSERT INTO job_failures VALUES (?, ?, ?, ?, ?, ?)",
                [(evaluation_id, *astuple(f)) for f in failed],
            )
            conn.executemany(
                "INSERT INTO cost_ledger (evaluation_id, run_id, node_id, role, attempt, model,"
                " input_tokens, output_tokens, cached_tokens, cost_usd, paid)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (e.evaluation_id, row.run_id, e.node_id, e.role, e.attempt, e.model,
                     e.input_tokens, e.output_tokens, e.cached_tokens, e.cost_usd, e.paid)
                    for e in ledger_rows(record, evaluation_id, paid=not row.cached)
                ],
            )  # fmt: skip
        return replace(row, evaluation_id=evaluation_id)

    def add_stage_verdict(self, row: StageRow) -> None:
        """Insert or replace a child's verdict after one stage of staged evaluation."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO stage_verdicts (run_id, individual_id, generation, stage,"
                " parent_id, tasks_json, child_mean, parent_mean, margin, stopped, reason)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row.run_id, row.individual_id, row.generation, row.stage, row.parent_id,
                 json.dumps(list(row.tasks)), row.child_mean, row.parent_mean, row.margin,
                 int(row.stopped), row.reason),
            )  # fmt: skip

    def stage_verdicts(self, run_id: str) -> list[StageRow]:
        """The run's stage verdicts by (generation, individual, stage)."""
        rows = self._conn.execute(
            "SELECT run_id, individual_id, generation, stage, parent_id, tasks_json, child_mean,"
            " parent_mean, margin, stopped, reason FROM stage_verdicts WHERE run_id = ?"
            " ORDER BY generation, individual_id, stage",
            (run_id,),
        )
        return [_stage_row(r) for r in rows]

    def add_generation(self, row: GenerationRow) -> None:
        """Insert or replace one generation's summary."""
        marks = ", ".join("?" for _ in _GEN_COLUMNS)
        with self._transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO generation_summaries ({', '.join(_GEN_COLUMNS)}) "
                f"VALUES ({marks})",
                astuple(row),
            )

    # -- queries --------------------------------------------------------------------------------

    def runs(self) -> list[str]:
        """The run ids that have evaluations or individuals here, sorted."""
        rows = self._conn.execute(
            "SELECT run_id FROM evaluations UNION SELECT run_id FROM individuals ORDER BY 1"
        )
        return [r[0] for r in rows]

    def run_id_of(self, run_dir: Path) -> str:
        """The id this index files `run_dir`'s rows under: its directory's name, or, for a run
        directory renamed or moved since (its rows keep the old name), the one run this index
        holds. The name when the index holds several runs and none is named so."""
        known = self.runs()
        if run_dir.name in known or len(known) != 1:
            return run_dir.name
        return known[0]

    def individuals(self, run_id: str) -> list[IndividualRow]:
        """The run's individuals by (generation, id)."""
        rows = self._conn.execute(
            "SELECT run_id, individual_id, generation, workflow_hash, workflow_name, operator,"
            " parents_json, target, reason, mode FROM individuals WHERE run_id = ?"
            " ORDER BY generation, individual_id",
            (run_id,),
        )
        return [
            IndividualRow(
                r[0], r[1], r[2], r[3], r[4], r[5], tuple(json.loads(r[6])), r[7], r[8], r[9]
            )
            for r in rows
        ]

    def evaluations(
        self, run_id: str, *, individual_id: str | None = None, split: str | None = None
    ) -> list[EvaluationRow]:
        """The run's evaluations (optionally of one individual or split), by identity."""
        sql = f"SELECT {', '.join(_EVAL_COLUMNS)}, evaluation_id FROM evaluations WHERE run_id = ?"
        args: list[object] = [run_id]
        if individual_id is not None:
            sql += " AND individual_id = ?"
            args.append(individual_id)
        if split is not None:
            sql += " AND split = ?"
            args.append(split)
        sql += " ORDER BY individual_id, split, task_id, repetition"
        return [_evaluation_row(r) for r in self._conn.execute(sql, args)]

    def test_outcomes(self, evaluation_id: int) -> list[TestOutcomeRow]:
        """One evaluation's per-test outcomes, by test id."""
        rows = self._conn.execute(
            "SELECT evaluation_id, test_id, outcome, fail_to_pass, passed FROM test_outcomes"
            " WHERE evaluation_id = ? ORDER BY test_id",
            (evaluation_id,),
        )
        return [TestOutcomeRow(r[0], r[1], r[2], bool(r[3]), bool(r[4])) for r in rows]

    def failures(self, run_id: str) -> list[FailureRow]:
        """Every failed executor attempt of the run (crashes, timeouts), by identity, attempt."""
        rows = self._conn.execute(
            "SELECT e.individual_id, e.split, e.task_id, e.repetition, f.attempt, f.status,"
            " f.message, f.duration_s, f.kept_at FROM job_failures f"
            " JOIN evaluations e USING (evaluation_id) WHERE e.run_id = ?"
            " ORDER BY e.individual_id, e.split, e.task_id, e.repetition, f.attempt",
            (run_id,),
        )
        return [
            FailureRow(r[0], r[1], r[2], r[3], FailedAttemptRow(r[4], r[5], r[6], r[7], r[8]))
            for r in rows
        ]

    def generations(self, run_id: str) -> list[GenerationRow]:
        """The run's generation summaries, in generation order."""
        rows = self._conn.execute(
            f"SELECT {', '.join(_GEN_COLUMNS)} FROM generation_summaries WHERE run_id = ?"
            " ORDER BY generation",
            (run_id,),
        )
        return [
            GenerationRow(
                run_id=r[0],
                generation=r[1],
                best_id=r[2],
                best_hash=r[3],
                train_best=r[4],
                train_mean=r[5],
                holdout_best=r[6],
                overfit_gap=r[7],
                overfit_alarm=bool(r[8]),
                diversity=r[9],
                population_size=r[10],
                archive_coverage=r[11],
                evaluations=r[12],
                spent_usd=r[13],
                spent_wall_s=r[14],
                summary_json=r[15],
            )
            for r in rows
        ]

    def spend(self, run_id: str) -> Spend:
        """What the run paid and what the cache saved, from its ledger (exact sums)."""
        ledger = self._conn.execute(
            "SELECT cost_usd, paid FROM cost_ledger WHERE run_id = ?", (run_id,)
        ).fetchall()
        counts = self._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(cached), 0) FROM evaluations WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        failed = self._conn.execute(
            "SELECT COUNT(*) FROM job_failures JOIN evaluations USING (evaluation_id)"
            " WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        return Spend(
            evaluations=int(counts[0]),
            cached=int(counts[1]),
            failed_attempts=int(failed[0]),
            paid_usd=fsum(c for c, paid in ledger if paid and c is not None),
            saved_usd=fsum(c for c, paid in ledger if not paid and c is not None),
            unpriced_steps=sum(1 for c, _ in ledger if c is None),
        )


def _evaluation_row(r: Sequence[object]) -> EvaluationRow:
    values = dict(zip([*_EVAL_COLUMNS, "evaluation_id"], r, strict=True))
    for name in ("simulated", "resolved", "invalid", "cached"):
        values[name] = bool(values[name])
    return EvaluationRow(**values)  # type: ignore[arg-type]  # columns mirror the dataclass


def _stage_row(r: tuple[Any, ...]) -> StageRow:
    tasks = tuple(json.loads(r[5]))
    return StageRow(r[0], r[1], r[2], r[3], r[4], tasks, r[6], r[7], r[8], bool(r[9]), r[10])
