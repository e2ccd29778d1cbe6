"""The cost ledger: records, totals by label, unknown costs, thread safety and JSONL on disk."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from loopwright.models import (
    LEDGER_FILE,
    CallLabels,
    CostLedger,
    LedgerRecord,
    label_scope,
    read_ledger,
)
from loopwright.models._ledger import current_labels


def entry(
    model: str = "m", cost: float | None = 0.5, tokens: int = 10, **labels: str
) -> LedgerRecord:
    return LedgerRecord(
        t=0.0,
        provider="openai",
        model=model,
        attempt=1,
        ok=True,
        input_tokens=tokens,
        output_tokens=1,
        cache_read_tokens=2,
        cache_write_tokens=3,
        latency_s=0.1,
        cost_usd=cost,
        price_table="t-1",
        labels=CallLabels(**labels),
    )


def test_totals_group_by_label_and_model() -> None:
    ledger = CostLedger()
    ledger.record(entry(node="study", role="researcher"))
    ledger.record(entry(node="builder", role="builder", tokens=20))
    ledger.record(entry(node="builder", role="builder", model="n", cost=0.25))
    by_node = ledger.totals(by="node")
    assert set(by_node) == {"study", "builder"}
    assert by_node["builder"].calls == 2 and by_node["builder"].input_tokens == 20 + 10
    assert by_node["builder"].cost_usd == pytest.approx(0.75)
    assert ledger.totals(by="model")["n"].cost_usd == pytest.approx(0.25)
    total = ledger.totals()[None]
    assert (total.calls, total.cache_read_tokens, total.cache_write_tokens) == (3, 6, 9)


def test_one_unpriced_call_makes_the_group_cost_unknown() -> None:
    ledger = CostLedger()
    ledger.record(entry(cost=1.0, run="a"))
    ledger.record(entry(cost=None, run="a"))
    ledger.record(entry(cost=1.0, run="b"))
    by_run = ledger.totals(by="run")
    assert by_run["a"].cost_usd is None and by_run["a"].unpriced_calls == 1
    assert by_run["b"].cost_usd == 1.0


def test_empty_ledger_totals_to_zero() -> None:
    assert CostLedger().totals()[None].calls == 0


def test_ledger_persists_jsonl_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "run" / LEDGER_FILE
    ledger = CostLedger(path)
    ledger.record(entry(run="r", candidate="c1"))
    ledger.record(entry(cost=None))
    assert len(path.read_text().splitlines()) == 2
    assert read_ledger(path) == ledger.records()
    assert read_ledger(path)[0].labels.candidate == "c1"


def test_malformed_ledger_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / LEDGER_FILE
    path.write_text('{"provider": "x"}\n')
    with pytest.raises(ValidationError):
        read_ledger(path)


def test_concurrent_records_are_all_kept(tmp_path: Path) -> None:
    ledger = CostLedger(tmp_path / LEDGER_FILE)

    def work(i: int) -> None:
        for _ in range(50):
            ledger.record(entry(node=f"n{i}"))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ledger.records()) == 400
    assert len(read_ledger(tmp_path / LEDGER_FILE)) == 400


def test_label_scopes_nest_and_reset() -> None:
    with label_scope(run="r1", candidate="c"):
        with label_scope(node="builder", role="builder"):
            assert current_labels() == CallLabels(
                run="r1", candidate="c", node="builder", role="builder"
            )
        assert current_labels() == CallLabels(run="r1", candidate="c")
    assert current_labels() == CallLabels()
