"""Meta-model replies: parsed, validated, retried once with the problem, then given up."""

from __future__ import annotations

import json

import pytest

from loopwright.models import ModelError, ScriptedModel
from loopwright.research import Critique
from loopwright.research._context import RepairContext
from loopwright.research._meta import MetaClient, extract_json
from loopwright.research._schemas import Spec

CTX = RepairContext(
    iteration=1,
    attempt=2,
    spec=Spec(spec_id="s1", title="t", intervention_axis="prompt", hypothesis="h"),
    patch=(),
    error="boom",
    workflow={},
)
OK = json.dumps({"verdict": "WARN", "reason": "close to a refuted pattern"})


def test_json_is_found_inside_fences_and_prose() -> None:
    assert extract_json('Sure!\n```json\n{"a": [1, {"b": 2}]}\n```\nDone.') == {"a": [1, {"b": 2}]}
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("no braces here")


def test_a_malformed_reply_is_retried_with_the_problem() -> None:
    model = ScriptedModel(['{"verdict": "MAYBE", "reason": "x"}', OK])
    client = MetaClient(model)
    got = client.ask("critic", CTX, Critique)
    assert got == Critique(verdict="WARN", reason="close to a refuted pattern")
    assert [c.ok for c in client.calls] == [False, True]
    assert "verdict" in (client.calls[0].error or "")


def test_two_unusable_replies_give_none_and_a_model_error_counts_as_one() -> None:
    def fail(messages, tools):  # type: ignore[no-untyped-def]
        raise ModelError("rate limited")

    client = MetaClient(ScriptedModel(fail))
    assert client.ask("critic", CTX, Critique) is None
    assert len(client.calls) == 2 and all("rate limited" in (c.error or "") for c in client.calls)
    checked = MetaClient(ScriptedModel([OK, OK]))
    assert checked.ask("critic", CTX, Critique, lambda r: "never good enough") is None
