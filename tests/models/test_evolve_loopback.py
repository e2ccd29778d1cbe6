"""From a real provider string to an evolved run, every call metered: `loopwright evolve` with
`--model openai/...`, `--api-base`, a tier and a meta model against a loopback OpenAI-compatible
server that answers by what each request is (an agent turn: finish; a reflection: a valid
report; a prompt rewrite: a valid prompt) and counts the calls it receives per role (the
`X-Loopwright-Role` header). The server's counts equal the run ledger's rows, per role, and
`--max-usd` stops the run at the call that reached it."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from loopwright.cli import main
from loopwright.models import LEDGER_FILE, ROLE_HEADER, read_ledger, role_kind
from loopwright.search._checkpoint import load_checkpoint
from tests.models.test_gateway_server import DUMMY_KEY, Answer, completion_body

AGENT_MODEL = "openai/loopback-coder"
TIER_MODEL = "openai/loopback-medium"
META_MODEL = "openai/loopback-meta"
TRAIN = "l1-roman-numerals"
HOLDOUT = "l1-rle-decode"
# Made-up prices for the loopback models: $10 per million input tokens, output free, so every
# call (100 input tokens) costs exactly $0.001.
PRICES = "prices:\n" + "".join(
    f"  {m}: {{input_per_mtok: 10, output_per_mtok: 0}}\n"
    for m in (AGENT_MODEL, TIER_MODEL, META_MODEL)
)
CALL_USD = 100 * 10 / 1_000_000

REFLECTION = {
    "failure_patterns": [
        {
            "description": "the builder finished without changing the code",
            "kind": "no_change",
            "evidence": {"candidates": [], "tasks": [TRAIN.split(",")[0]], "count": 1},
        }
    ],
    "success_patterns": [],
    "mutation_suggestions": [
        {
            "operator": "prompt_mutate",
            "target": "builder",
            "kind": "prompt_finish_the_work",
            "rationale": "the builder stops before it writes anything",
            "confidence": 0.9,
            "role": None,
            "max_loops": None,
            "evidence": {"candidates": [], "tasks": [TRAIN.split(",")[0]], "count": 1},
        }
    ],
    "prompt_improvements": [],
    "structural_recommendations": [],
}


@dataclass
class Counting:
    """What the server received: the role header of every request, and (role, had tools)."""

    roles: Counter[str] = field(default_factory=Counter)
    shapes: set[tuple[str, bool]] = field(default_factory=set)
    models: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict[str, Any], role: str) -> Answer:
        tools = bool(body.get("tools"))
        with self.lock:
            self.roles[role] += 1
            self.shapes.add((role, tools))
            self.models[str(body.get("model"))] += 1
        if tools:  # an agent's turn: finish at once
            return Answer(calls=(("finish", json.dumps({"summary": "done"})),))
        text = str(body["messages"][-1]["content"])
        if "<<<DIGEST" in text:
            return Answer(text=json.dumps(REFLECTION))
        if "<<<PROMPT\n" in text:
            prompt = text.split("<<<PROMPT\n", 1)[1].split("\nPROMPT>>>", 1)[0]
            return Answer(text=prompt + "\nFinish the change before you stop.")
        return Answer(text="{}")  # anything else: a reply its caller refuses (and falls back)


def _handler(counting: Counting) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            answer = counting.answer(body, self.headers.get(ROLE_HEADER, "(none)"))
            data = json.dumps(completion_body(answer, str(body.get("model")), 1)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    return Handler


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Counting]]:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    counting = Counting()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(counting))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", counting
    finally:
        httpd.shutdown()
        httpd.server_close()


def meta_calls(counting: Counting) -> int:
    return sum(n for role, n in counting.roles.items() if role_kind(role) == "meta")


def _prices(tmp_path: Path) -> Path:
    config = tmp_path / "models.yaml"
    config.write_text(PRICES)
    return config


def _evolve(url: str, run_dir: Path, tmp_path: Path, *extra: str) -> int:
    config = _prices(tmp_path)
    settings = tmp_path / "settings.yaml"  # no user settings file leaks in from HOME
    settings.write_text("schema_version: 1\nengine: {default_loop_type: react}\n")
    argv = [
        "evolve", "--bench", "mini", "--seed-workflow", "builder-only",
        "--model", AGENT_MODEL, "--tier", f"medium={TIER_MODEL}", "--meta-model", META_MODEL,
        "--api-base", url, "--config", str(config),
        "--train", TRAIN, "--holdout", HOLDOUT, "--population", "2", "--generations", "2",
        "--holdout-reps", "1", "--exploration", "0", "--sandbox", "local", "--no-report",
        "--run-dir", str(run_dir), *extra,
    ]  # fmt: skip
    return main(argv)


def test_evolve_on_a_real_provider_meters_every_role_into_the_ledger(
    server: tuple[str, Counting],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, counting = server
    monkeypatch.setenv("LOOPWRIGHT_SETTINGS", str(tmp_path / "settings.yaml"))
    run_dir = tmp_path / "run"
    assert _evolve(url, run_dir, tmp_path, "--workers", "2") == 0
    out = capsys.readouterr().out
    records = read_ledger(run_dir / LEDGER_FILE)
    ledger_roles = Counter(r.labels.role or "(none)" for r in records)
    assert ledger_roles == counting.roles  # every call the server got is a ledger row, per role
    assert sum(counting.roles.values()) == len(records)
    # Agents ran with tools (the builder on its tier's model); meta roles on the meta model.
    assert {(role, tools) for role, tools in counting.shapes if role.startswith("meta:")} == {
        ("meta:reflector", False),
        ("meta:mutator", False),
    }
    assert all(tools for role, tools in counting.shapes if not role.startswith("meta:"))
    assert ("builder", True) in counting.shapes
    assert counting.models[META_MODEL.removeprefix("openai/")] == meta_calls(counting)
    assert counting.models[TIER_MODEL.removeprefix("openai/")] >= counting.roles["builder"]
    assert counting.roles["meta:reflector"] == 2  # once per generation
    assert counting.roles["meta:mutator"] >= 1
    assert {r.labels.run for r in records} == {run_dir.name}
    assert all(r.cost_usd == pytest.approx(CALL_USD) for r in records)
    checkpoint = load_checkpoint(run_dir)
    assert checkpoint.stop_reason == "max_generations"
    assert len(checkpoint.summaries) == 2
    meta = meta_calls(counting)
    assert checkpoint.spent.meta_usd == pytest.approx(meta * CALL_USD)
    assert checkpoint.spent.usd == pytest.approx(len(records) * CALL_USD)
    assert "model calls by role" in out and "meta:reflector" in out and "all meta" in out
    assert "SIMULATED" not in out
    assert capsys.readouterr().out == ""
    assert main(["outer-loop", "status", "--run-dir", str(run_dir)]) == 0
    status = capsys.readouterr().out
    assert "all agents" in status and "all meta" in status
    assert f"meta ${meta * CALL_USD:.2f}" in status
    assert main(["report", str(run_dir)]) == 0  # the HTML report splits spend by role too
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "agents and meta (ledger.jsonl)" in html and "meta:mutator" in html
    assert "of which meta roles" in html
    for path in (p for p in run_dir.rglob("*") if p.is_file()):
        assert DUMMY_KEY not in path.read_text(encoding="utf-8", errors="replace"), path
    _promote_then_run_by_name(url, counting, run_dir, tmp_path, monkeypatch, capsys)


def _promote_then_run_by_name(
    url: str,
    counting: Counting,
    run_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The last steps of the path: the winner promoted into the library (--force: one holdout
    task cannot make its gain significant), then run by name on the same provider."""
    monkeypatch.setenv("LOOPWRIGHT_WORKFLOW_LIBRARY", str(tmp_path / "library"))
    assert (
        main(["outer-loop", "promote", "--run-dir", str(run_dir), "evolved-loopback", "--force"])
        == 0
    )
    assert "use it by name" in capsys.readouterr().out
    before = counting.roles["builder"]
    argv = [
        "run", "evolved-loopback", "--bench", "mini", "--tasks", TRAIN, "--model", AGENT_MODEL,
        "--tier", f"medium={TIER_MODEL}", "--api-base", url, "--config", str(_prices(tmp_path)),
        "--sandbox", "local", "--no-report", "--run-dir", str(tmp_path / "used"),
    ]  # fmt: skip
    assert main(argv) == 0
    assert counting.roles["builder"] > before  # the promoted workflow's builder ran on it


@pytest.mark.parametrize("calls", [3, 5])
def test_max_usd_stops_the_run_at_the_call_that_reached_it(
    server: tuple[str, Counting],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    calls: int,
) -> None:
    """With a budget of `calls` calls and a little less, the call that reaches it is the last
    one the server sees; the run ends with max_usd."""
    url, counting = server
    monkeypatch.setenv("LOOPWRIGHT_SETTINGS", str(tmp_path / "settings.yaml"))
    run_dir = tmp_path / "run"
    budget = (calls - 0.5) * CALL_USD
    code = _evolve(url, run_dir, tmp_path, "--workers", "1", "--max-usd", str(budget))
    assert code == 0
    capsys.readouterr()
    assert sum(counting.roles.values()) == calls
    assert len(read_ledger(run_dir / LEDGER_FILE)) == calls
    assert load_checkpoint(run_dir).stop_reason == "max_usd"


def test_max_usd_with_an_unpriced_model_is_refused_before_anything_runs(
    server: tuple[str, Counting], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, counting = server
    argv = [
        "evolve", "--bench", "mini", "--seed-workflow", "builder-only",
        "--model", "openai/no-price", "--api-base", url, "--max-usd", "1",
        "--run-dir", str(tmp_path / "run"),
    ]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--max-usd cannot bound models without a price" in err and "openai/no-price" in err
    assert not (tmp_path / "run").exists()
    assert not counting.roles


def test_research_run_meters_its_meta_phases_on_a_real_provider(
    server: tuple[str, Counting], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`research run --meta-model openai/... --api-base URL`: every THINK/CRITIC/DISTILL/
    REFLECT call reaches the server and the working directory's ledger, with its phase role
    (the replies are refused, so each phase falls back to its rule: still one call each)."""
    url, counting = server
    root = tmp_path / "v1"
    init = [
        "research", "init", "--dir", str(root), "--goal", "raise mean partial credit",
        "--workflow", "builder-only", "--bench", "mini", "--tasks", "l1-semver-compare",
        "--max-specs", "1", "--heartbeat", "1", "--sandbox", "local",
    ]  # fmt: skip
    assert main(init) == 0
    run = ["research", "run", "--dir", str(root), "--meta-model", META_MODEL, "--api-base", url,
           "--config", str(_prices(tmp_path)), "--iterations", "1", "--no-report"]  # fmt: skip
    assert main(run) == 0
    capsys.readouterr()
    records = read_ledger(root / LEDGER_FILE)
    assert Counter(r.labels.role or "(none)" for r in records) == counting.roles
    assert counting.roles["meta:think"] >= 1  # THINK asked (its empty reply: a stalled loop)
    assert all(role.startswith("meta:") for role in counting.roles)  # the agents ran on sim
    assert all(r.cost_usd == pytest.approx(CALL_USD) for r in records)
    assert {r.labels.run for r in records} == {root.name}  # was null (issue 31)
    # The stamp names the meta model the run used, not init's `sim` (issue 31).
    assert main(["report", str(root)]) == 0
    html = (root / "report.html").read_text(encoding="utf-8")
    stamp = html.split("agents ", 1)[0].rsplit("meta ", 1)[-1]
    assert "loopback-meta" in stamp and "sim" not in stamp
    assert "the meta model (sim" not in html  # the banner: only the agents are simulated


def test_an_unpriced_provider_is_shown_as_unpriced_never_as_zero_dollars(
    server: tuple[str, Counting],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No price for the models: evolve's generation lines, its final summary, checkpoint,
    result.json and the report count the unpriced evaluations and meta calls (they said $0.00)."""
    url, counting = server
    monkeypatch.setenv("LOOPWRIGHT_SETTINGS", str(tmp_path / "settings.yaml"))
    (tmp_path / "settings.yaml").write_text(
        "schema_version: 1\nengine: {default_loop_type: react}\n"
    )
    run_dir = tmp_path / "run"
    code = main([
        "evolve", "--bench", "mini", "--seed-workflow", "builder-only", "--model", AGENT_MODEL,
        "--meta-model", META_MODEL, "--api-base", url, "--train", TRAIN, "--holdout", HOLDOUT,
        "--population", "2", "--generations", "1", "--holdout-reps", "1", "--exploration", "0",
        "--sandbox", "local", "--workers", "1", "--run-dir", str(run_dir),
    ])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, out + err
    spent = load_checkpoint(run_dir).spent
    assert spent.usd == 0.0 and spent.evaluations > 0
    assert spent.unpriced_evaluations == spent.evaluations
    assert spent.unpriced_meta_calls == meta_calls(counting) > 0
    result = json.loads((run_dir / "result.json").read_text(encoding="utf-8"))
    assert result["spent"]["unpriced_evaluations"] == spent.evaluations
    assert "$0.00" not in out + err
    assert f"unpriced ({spent.unpriced})" in out and "lower bound" in out
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert f"unknown ({spent.unpriced} unpriced)" in html
