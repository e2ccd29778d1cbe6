"""The model gateway under load: forked workers calling a loopback OpenAI-compatible server.

The parent makes one call first (as evolve's reflection does), then forks `--workers` processes
that share the `--calls` calls between them, each through its own LiteLLMGateway into one
ledger.jsonl. The server (tests/models/loopback.py) keeps connections alive and injects faults
at a fixed seed (429 with Retry-After, 500, slow replies). Printed:

  throughput       calls answered per second of wall time (all workers)
  added latency    p50/p99 of (time `chat` took in the worker - time the server spent on that
                   request), over calls answered at the first attempt: what the gateway
                   (LiteLLM, our retries' bookkeeping, the ledger append) adds to a call
  agreement        server requests vs ledger rows, by role, and tokens; bodies that did not
                   parse; requests that arrived on a connection two processes held
  start            p50/max of the time from starting a worker process to its first reply
                   (what a start method costs each worker: the local executor starts one
                   process per job)

    python bench/provider_load.py [--workers 8] [--calls 400] [--seed 33]
        [--rate-limit 0.02] [--server-error 0.01] [--slow 0.01] [--timeout 300]
        [--start-method fork|forkserver|spawn]

Bounded: --calls is the total, and workers still running after --timeout seconds are killed
(exit code -9 in the first line) and the figures are of what was done by then. The default
finishes in well under a minute on a busy 2-core machine.
Timings depend on how busy the machine is. No model is involved (the server's replies are
scripted), so nothing here is a model's output.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.models.loopback

from loopwright.models import (
    LEDGER_FILE,
    CostLedger,
    GatewaySettings,
    LiteLLMGateway,
    Message,
    label_scope,
    read_ledger,
)
from tests.models.loopback import Faults, LoopbackServer, role_answers

KEY = "sk-loopback-bench-0123456789"


def gateway(url: str, ledger: CostLedger, seed: int) -> LiteLLMGateway:
    settings = GatewaySettings(
        api_base=url, timeout_s=30, max_attempts=6, backoff_base_s=0.05, backoff_max_s=0.5
    )
    return LiteLLMGateway("openai/bench", settings, api_key=KEY, ledger=ledger, seed=seed)


def worker(
    url: str, ledger_path: Path, out: Path, index: int, calls: int, started_at: float
) -> None:
    model = gateway(url, CostLedger(ledger_path), index)
    timings = {}
    first: float | None = None
    for k in range(calls):
        role = f"w{index}-{k}"
        with label_scope(role=role):
            started = time.monotonic()
            model.chat([Message("user", f"call {k} of worker {index}")], [])
            timings[role] = time.monotonic() - started
            first = first or time.time() - started_at
    out.write_text(json.dumps({"timings": timings, "first_reply_s": first}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--rate-limit", type=float, default=0.02)
    parser.add_argument("--server-error", type=float, default=0.01)
    parser.add_argument("--slow", type=float, default=0.01)
    parser.add_argument(
        "--timeout", type=float, default=300, help="seconds before hung workers are killed"
    )
    parser.add_argument(
        "--start-method", choices=("fork", "forkserver", "spawn"), default="fork",
        help="how workers are started (the local executor forks)",
    )  # fmt: skip
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", KEY)
    faults = Faults(args.seed, args.rate_limit, args.server_error, args.slow, slow_s=0.3)
    scratch = Path(tempfile.mkdtemp(prefix="lw-provider-load-"))
    ledger_path = scratch / LEDGER_FILE
    server = LoopbackServer(role_answers, faults, track_pids=False)
    with server.serving():
        with label_scope(role="meta:reflector"):  # the parent's own call before the fork
            gateway(server.url, CostLedger(ledger_path), 0).chat([Message("user", "hi")], [])
        ctx = multiprocessing.get_context(args.start_method)  # the executor: fork
        shares = [
            args.calls // args.workers + (i < args.calls % args.workers)
            for i in range(args.workers)
        ]
        outs = [scratch / f"w{i}.json" for i in range(args.workers)]
        started = time.monotonic()
        procs = [
            ctx.Process(
                target=worker,
                args=(server.url, ledger_path, outs[i], i, shares[i], time.time()),
            )
            for i in range(args.workers)
        ]
        for p in procs:
            p.start()
        deadline = started + args.timeout
        for p in procs:
            p.join(timeout=max(deadline - time.monotonic(), 0))
        for p in procs:
            if p.exitcode is None:  # hung (e.g. on a connection or lock inherited at the fork)
                p.kill()
                p.join()
        wall = time.monotonic() - started
    report(server, read_ledger(ledger_path), outs, wall, args, [p.exitcode for p in procs])


def report(
    server: LoopbackServer, records: list, outs: list[Path], wall: float, args: argparse.Namespace,
    exits: list[int | None],
) -> None:  # fmt: skip
    received = server.log.snapshot()
    timings: dict[str, float] = {}
    firsts: list[float] = []
    for out in outs:
        if out.exists():
            data = json.loads(out.read_text())
            timings.update(data["timings"])
            firsts += [data["first_reply_s"]] if data["first_reply_s"] is not None else []
    served = {e.role: e.added_s for e in received if e.status == 200}
    first_try = Counter(e.role for e in received)
    added = sorted(
        (timings[r] - served[r]) * 1000 for r in timings if r in served and first_try[r] == 1
    )
    answered = sum(1 for e in received if e.status == 200 and e.role.startswith("w"))
    print(
        f"workers {args.workers} ({args.start_method}), calls {args.calls}, "
        f"worker exit codes {sorted(set(exits))}"
    )
    if firsts:
        print(
            f"start: worker start to first reply p50 {statistics.median(firsts) * 1000:.0f} ms, "
            f"max {max(firsts) * 1000:.0f} ms"
        )
    print(f"throughput: {answered / wall:.1f} calls/s ({answered} answered in {wall:.1f}s)")
    if added:
        p50 = statistics.median(added)
        p99 = added[min(len(added) - 1, int(len(added) * 0.99))]
        print(
            f"added latency (gateway): p50 {p50:.1f} ms, p99 {p99:.1f} ms over {len(added)} calls"
        )
    faults = Counter(e.fault for e in received)
    print(f"faults injected: {dict(faults)}")
    server_roles = Counter(e.role for e in received if e.parsed)
    ledger_roles = Counter(r.labels.role or "(none)" for r in records)
    server_tokens = server.log.tokens()
    ledger_tokens = (sum(r.input_tokens for r in records), sum(r.output_tokens for r in records))
    print(
        f"server requests {len(received)}, ledger rows {len(records)}; "
        f"roles equal: {server_roles == ledger_roles}; tokens server {server_tokens} "
        f"ledger {ledger_tokens}; unparsed bodies {len(server.log.unparsed())}"
    )
    exact = len(received) == len(records) and server_roles == ledger_roles
    print("agreement: EXACT" if exact and server_tokens == ledger_tokens else "agreement: MISMATCH")


if __name__ == "__main__":
    main()
