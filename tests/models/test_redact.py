"""Redaction: keys in env vars and key-shaped strings never leave the gateway, whether through a
ModelError, a run's events and record, or the cost ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.models import (
    DEFAULT_PRICES,
    LEDGER_FILE,
    CostLedger,
    GatewayError,
    LiteLLMGateway,
    Message,
    import_litellm,
    redact,
    secret_env_names,
)
from loopwright.models._redact import REDACTED
from loopwright.sandbox import default_sandbox
from loopwright.tasks import load_benchmark
from loopwright.workflow import builtin_workflow

ENV_KEY = "plain-looking-secret-4f9a8b7c6d"  # no known key shape: only the env pass can catch it
SHAPED_KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


def test_redact_removes_env_secrets_and_key_shapes() -> None:
    env = {"ANTHROPIC_API_KEY": ENV_KEY, "HF_TOKEN": "hf_abcdefghijkl", "HOME": "/root"}
    text = (
        f"key={ENV_KEY} hf=hf_abcdefghijkl other={SHAPED_KEY} "
        "Authorization: Bearer abc.def-ghi_jkl x-api-key: qwertyuiop123 home=/root"
    )
    out = redact(text, environ=env)
    for secret in (ENV_KEY, "hf_abcdefghijkl", SHAPED_KEY, "abc.def-ghi_jkl", "qwertyuiop123"):
        assert secret not in out
    assert "Bearer [REDACTED]" in out and "home=/root" in out
    assert out.count(REDACTED) == 5


def test_redact_leaves_short_env_values_and_plain_text_alone() -> None:
    env = {"SOME_KEY": "1", "SOME_TOKEN": ""}
    assert redact("1 plus 1 is 2", environ=env) == "1 plus 1 is 2"


def test_redact_removes_explicit_extra_secrets() -> None:
    assert redact("the key is hunter2hunter2", extra=["hunter2hunter2"], environ={}) == (
        f"the key is {REDACTED}"
    )


def test_secret_env_names_lists_names_only() -> None:
    env = {"OPENAI_API_KEY": "sk-x", "GITHUB_TOKEN": "t", "PATH": "/bin"}
    assert secret_env_names(env) == ["GITHUB_TOKEN", "OPENAI_API_KEY"]


class LeakyProvider:
    """A completion that fails with the key in its message, as badly written SDKs do."""

    def __init__(self) -> None:
        self.litellm = import_litellm()

    def __call__(self, **request: Any) -> Any:
        raise self.litellm.AuthenticationError(
            message=f"invalid key {ENV_KEY} (also tried {SHAPED_KEY})",
            llm_provider="anthropic",
            model="claude-test",
        )


def leaky_gateway(ledger: CostLedger) -> LiteLLMGateway:
    return LiteLLMGateway(
        "anthropic/claude-test", ledger=ledger, completion=LeakyProvider(), sleep=lambda s: None
    )


def test_key_in_a_provider_error_reaches_neither_model_error_nor_ledger(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    ledger = CostLedger(tmp_path / LEDGER_FILE)
    with pytest.raises(GatewayError) as info:
        leaky_gateway(ledger).chat([Message("user", "hi")], [])
    message = str(info.value)
    assert "invalid key" in message and REDACTED in message
    assert ENV_KEY not in message and SHAPED_KEY not in message
    (entry,) = ledger.records()
    assert entry.error is not None and ENV_KEY not in entry.error
    on_disk = (tmp_path / LEDGER_FILE).read_text()
    assert ENV_KEY not in on_disk and SHAPED_KEY not in on_disk and "invalid key" in on_disk


def test_key_in_a_provider_error_reaches_no_event_or_record_of_a_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    run_dir = tmp_path / "run"
    ledger = CostLedger(run_dir / LEDGER_FILE)
    spec = TaskRunSpec(
        workflow=builtin_workflow("research-build-verify"),
        task=load_benchmark("mini").task("l1-slugify"),
        model=leaky_gateway(ledger),
        sandbox=default_sandbox(),
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id="leak",
        seed=0,
    )
    record = run_task(spec)
    assert record.score_end == 0.0 and any("invalid key" in e for e in record.errors)
    events = (run_dir / "events.jsonl").read_text()
    assert "invalid key" in events  # the error was recorded...
    for path in (p for p in run_dir.rglob("*") if p.is_file()):
        data = path.read_text(encoding="utf-8", errors="replace")
        assert ENV_KEY not in data and SHAPED_KEY not in data, path  # ...without the key
