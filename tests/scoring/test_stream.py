"""The outcome stream read and held against the junit XML and the exit code (scoring/_stream.py):
what was sent stays sent, lines can only be added, and an added line hides no failure."""

from __future__ import annotations

from loopwright.sandbox import CHANNEL_OVERFLOW
from loopwright.scoring._junit import JunitCase, JunitReport, Outcome
from loopwright.scoring._stream import read_stream, stream_findings

CANARIES = {"test_lw_ab_pass": "passed", "test_lw_ab_fail": "xfailed"}
TEST = "tests/test_x.py::test_one"


def _hex(text: str) -> str:
    return text.encode().hex()


def _report(node_id: str, when: str, outcome: str, xfail: bool = False) -> str:
    return f"report {_hex(node_id)} {when} {outcome} {int(xfail)}"


def _run(*lines: str, finish: str | None = "finish 1") -> bytes:
    canaries = [
        _report("../kit/g.py::test_lw_ab_pass", "call", "passed"),
        _report("../kit/g.py::test_lw_ab_fail", "call", "skipped", xfail=True),
    ]
    body = ["start", *lines, *canaries, *([finish] if finish else [])]
    return ("\n".join(body) + "\n").encode()


def _junit(outcome: Outcome) -> JunitReport:
    cases = {TEST: JunitCase(TEST, outcome, 0.0, "")}
    for name, expected in CANARIES.items():
        cases[name] = JunitCase(name, Outcome(expected), 0.0, "")
    return JunitReport(cases=cases, collection_errors=())


def _finding(data: bytes, exit_code: int | None, junit: JunitReport | None) -> str | None:
    return stream_findings(read_stream(data), exit_code, junit, [TEST], CANARIES)


def test_a_stream_that_agrees_with_junit_and_the_exit_code_is_no_finding() -> None:
    failed = _run(_report(TEST, "setup", "passed"), _report(TEST, "call", "failed"))
    assert _finding(failed, 1, _junit(Outcome.FAILED)) is None


def test_a_failure_sent_as_it_ran_cannot_be_taken_back_by_the_junit_file() -> None:
    failed = _run(_report(TEST, "call", "failed"))
    finding = _finding(failed, 1, _junit(Outcome.PASSED))
    assert finding is not None and TEST in finding and "junit" in finding


def test_an_added_passed_line_hides_no_failure() -> None:
    forged = _run(_report(TEST, "call", "failed"), _report(TEST, "call", "passed"))
    assert read_stream(forged).outcomes[TEST] is Outcome.FAILED
    assert _finding(forged, 1, _junit(Outcome.PASSED)) is not None


def test_a_teardown_error_after_a_pass_is_an_error_as_in_junit() -> None:
    stream = _run(_report(TEST, "call", "passed"), _report(TEST, "teardown", "failed"))
    assert _finding(stream, 1, _junit(Outcome.ERROR)) is None


def test_an_exit_status_other_than_pytest_s_is_a_finding() -> None:
    failed = _run(_report(TEST, "call", "failed"))
    assert "exited with code 0" in (_finding(failed, 0, _junit(Outcome.FAILED)) or "")


def test_a_run_cut_short_after_tests_ran_is_a_finding_even_when_it_says_early() -> None:
    cut = _run(_report(TEST, "call", "failed"), "early", finish=None)
    assert "ended before pytest finished" in (_finding(cut, 0, None) or "")


def test_a_usage_error_before_any_test_is_no_finding() -> None:
    assert _finding(b"start\nearly\n", 4, None) is None


def test_no_start_means_the_guard_never_loaded() -> None:
    assert _finding(b"", 4, None) is None


def test_lines_the_guard_never_writes_are_a_finding() -> None:
    for data in (
        _run("passed everything"),
        _run(_report(TEST, "call", "passed"), "finish 0"),
        b"start\nstart\n" + _run()[6:],
        _run() + CHANNEL_OVERFLOW,
    ):
        assert _finding(data, 0, _junit(Outcome.PASSED)) is not None, data


def test_a_missing_junit_after_pytest_finished_is_a_finding() -> None:
    failed = _run(_report(TEST, "call", "failed"))
    assert "junit" in (_finding(failed, 1, None) or "")


def test_a_guard_finding_is_the_reason() -> None:
    found = _run(f"tamper {_hex('TestReport.from_item_and_call was replaced')}")
    assert "from_item_and_call" in (_finding(found, 1, _junit(Outcome.FAILED)) or "")


def test_a_canary_reported_wrong_in_the_stream_is_a_finding() -> None:
    data = b"start\n" + _report("../kit/g.py::test_lw_ab_fail", "call", "passed").encode()
    data += b"\nfinish 0\n"
    assert "canary" in (_finding(data, 0, _junit(Outcome.PASSED)) or "")
