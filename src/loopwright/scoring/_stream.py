"""The outcome stream: what the guard sent, as it happened, on the channel the host gave the test
process (`Sandbox.run(channel=True)`), read and held against the junit XML and the exit code.

The guard writes one line per event, space-separated, text fields hex-encoded:
`start`; `report <nodeid> <when> <outcome> <0|1 xfail>` for each test report, before pytest's
junit writer sees it; `tamper <what>` at its first finding; `finish <exit status>` when pytest
finished; `early` at a normal exit before that (a usage error). The channel is a pipe the host
drains while the process runs: nothing the process does later takes a line back. The code under
test can write lines too (it shares the process), but only add: the worst outcome of a test id
wins, so an added `passed` hides no failure, and a second `start` or `finish`, or a line the
guard never writes, is itself tampering.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from loopwright.sandbox import CHANNEL_OVERFLOW
from loopwright.scoring._junit import JunitReport, Outcome

__all__ = ["Stream", "read_stream", "stream_findings"]

_SEVERITY = {
    Outcome.PASSED: 0,
    Outcome.XFAILED: 1,
    Outcome.SKIPPED: 2,
    Outcome.FAILED: 3,
    Outcome.ERROR: 4,
}


@dataclass
class Stream:
    """What one run's stream says. `problem`: it holds what the guard never sends."""

    starts: int = 0
    finishes: list[int | None] = field(default_factory=list)
    early: bool = False
    tamper: str | None = None
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # by node id, the worst
    failed: bool = False  # a test failed or errored (what makes pytest's exit status 1)
    problem: str | None = None


def read_stream(data: bytes) -> Stream:
    """Parse a stream; never raises (a malformed line is `problem`)."""
    stream = Stream()
    if data.endswith(CHANNEL_OVERFLOW):
        stream.problem = "the outcome stream overflowed"
        return stream
    for line in data.decode("ascii", errors="replace").splitlines():
        problem = _take(stream, line.split(" "))
        if problem is not None:
            stream.problem = f"the outcome stream holds a line the guard never writes: {problem}"
            break
    return stream


def _take(stream: Stream, fields: list[str]) -> str | None:
    kind, rest = fields[0], fields[1:]
    try:
        if kind == "start" and not rest:
            stream.starts += 1
        elif kind == "finish" and len(rest) == 1:
            stream.finishes.append(None if rest[0] == "None" else int(rest[0]))
        elif kind == "early" and not rest:
            stream.early = True
        elif kind == "tamper" and len(rest) == 1:
            stream.tamper = stream.tamper or _text(rest[0])
        elif kind == "report" and len(rest) == 4:
            _report(stream, _text(rest[0]), rest[1], rest[2], rest[3] == "1")
        else:
            return " ".join(fields)[:200]
    except ValueError:
        return " ".join(fields)[:200]
    return None


def _text(hexed: str) -> str:
    return bytes.fromhex(hexed).decode("utf-8", errors="surrogateescape")


def _report(stream: Stream, node_id: str, when: str, outcome: str, xfail: bool) -> None:
    """One report's outcome, as pytest's junit writer turns it into a testcase entry."""
    if outcome == "failed":
        got = Outcome.FAILED if when == "call" else Outcome.ERROR
        stream.failed = stream.failed or not xfail
    elif outcome == "skipped":
        got = Outcome.XFAILED if xfail else Outcome.SKIPPED
    elif outcome == "passed":
        got = Outcome.PASSED
    else:
        raise ValueError(outcome)
    before = stream.outcomes.get(node_id)
    if before is None or _SEVERITY[got] > _SEVERITY[before]:
        stream.outcomes[node_id] = got


def stream_findings(
    stream: Stream,
    exit_code: int | None,
    report: JunitReport | None,
    ids: Collection[str],
    canaries: dict[str, str],
) -> str | None:
    """What the stream shows was forged or cut short (a `tamper:` finding without the prefix),
    or None. Not a finding: a stream without `start` (the guard never loaded), or one that
    ended `early` before any test report (a usage error)."""
    if stream.problem is not None:
        return stream.problem
    if stream.starts == 0:
        return None
    if stream.starts > 1 or len(stream.finishes) > 1:
        return "the outcome stream was written to by another hand (two starts or finishes)"
    if stream.tamper is not None:
        return f"{stream.tamper} while the tests ran"
    if not stream.finishes:
        if stream.early and not stream.outcomes:
            return None
        return (
            f"the test process ended before pytest finished (exit code {exit_code}): "
            "the code under test stopped it"
        )
    status = stream.finishes[0]
    if status != exit_code:
        return f"the test process exited with code {exit_code} but pytest finished with {status}"
    if status == 2:
        return "the run was interrupted from inside (pytest.exit or KeyboardInterrupt)"
    if stream.failed and exit_code == 0:
        return "a test failed as it ran but the run exited 0"
    return _canary_finding(stream, canaries) or _junit_finding(stream, report, ids)


def _canary_finding(stream: Stream, canaries: dict[str, str]) -> str | None:
    seen = {node_id.rsplit("::", 1)[-1]: got for node_id, got in stream.outcomes.items()}
    for name, expected in canaries.items():
        got = seen.get(name)
        if got is None or got.value != expected:
            return (
                f"canary test {name} was reported {got.value if got else 'missing'}, expected "
                f"{expected}: test outcomes were forged"
            )
    return None


def _junit_finding(stream: Stream, report: JunitReport | None, ids: Collection[str]) -> str | None:
    if report is None:
        return "pytest finished but its junit XML is gone or unreadable"
    for test_id in ids:
        sent = stream.outcomes.get(test_id)
        case = report.cases.get(test_id)
        if sent is None and case is None:
            continue
        written = case.outcome if case is not None else Outcome.MISSING
        if sent != written:
            return (
                f"test {test_id} was reported {sent.value if sent else 'nothing'} as it ran "
                f"but {written.value} in the junit XML"
            )
    return None
