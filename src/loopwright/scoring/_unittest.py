"""Parse `python -m unittest -v` output (Python 3.11's format) into per-test outcomes.

The verbose runner writes one line per test to stderr, `test_x (pkg.mod.Class.test_x) ... ok`
(a test with a docstring puts its first line, then ` ... ok`, on the next line; a failing
subtest writes an indented line of its own), then a `FAIL:`/`ERROR:` block per problem and a
`Ran N tests` summary. Ids are `pkg.mod.Class.test_x`; Python 3.10's `test_x (pkg.mod.Class)`
is read too. Standard library only; deterministic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loopwright.scoring._junit import _SEVERITY, JunitCase, JunitReport, Outcome

__all__ = ["UnittestReport", "parse_unittest"]

_MESSAGE_CAP = 400
_HEAD = re.compile(r"^ *(?P<name>\w+) \((?P<where>[\w.]+)\)(?: \(.*?\))?(?P<tail> \.\.\. .*)?$")
_STATUS = re.compile(
    r" \.\.\. (?P<status>ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$"
)
_BLOCK = re.compile(
    r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<name>\w+) \((?P<where>[\w.]+)\)"
)
_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
_FAILED_IMPORT = "unittest.loader._FailedTest"
_OUTCOMES = {
    "ok": Outcome.PASSED,
    "FAIL": Outcome.FAILED,
    "ERROR": Outcome.ERROR,
    "expected failure": Outcome.XFAILED,
    "unexpected success": Outcome.FAILED,  # unittest counts it against wasSuccessful()
    "UNEXPECTED SUCCESS": Outcome.FAILED,
}


@dataclass(frozen=True, slots=True)
class UnittestReport:
    """The outcomes read from unittest's verbose output; `finished` says whether the
    `Ran N tests` summary was written (the run was not cut short)."""

    report: JunitReport
    finished: bool


def parse_unittest(text: str) -> UnittestReport:
    """Every test id reported in `text` (unittest's stderr) with its worst outcome; modules
    that failed to import (`unittest.loader._FailedTest`) are collection errors."""
    cases: dict[str, JunitCase] = {}
    errors: list[str] = []
    current: str | None = None
    for line in text.splitlines():
        block = _BLOCK.match(line)
        if block is not None:
            _record(
                cases, errors, _test_id(block["name"], block["where"]), _OUTCOMES[block["kind"]]
            )
            continue
        head = _HEAD.match(line)
        if head is not None:
            current = _test_id(head["name"], head["where"])
        status = _STATUS.search(line)
        if status is not None and current is not None:
            word = status["status"]
            _record(cases, errors, current, _outcome(word), "" if word == "ok" else word)
    report = JunitReport(cases, tuple(dict.fromkeys(errors)))
    return UnittestReport(report, _RAN.search(text) is not None)


def _test_id(name: str, where: str) -> str:
    return where if where.endswith("." + name) else f"{where}.{name}"


def _outcome(status: str) -> Outcome:
    return Outcome.SKIPPED if status.startswith("skipped") else _OUTCOMES[status]


def _record(
    cases: dict[str, JunitCase],
    errors: list[str],
    test_id: str,
    outcome: Outcome,
    message: str = "",
) -> None:
    if test_id.startswith(_FAILED_IMPORT + "."):
        errors.append(f"{test_id[len(_FAILED_IMPORT) + 1 :]}: failed to import")
        return
    case = JunitCase(test_id, outcome, 0.0, message[:_MESSAGE_CAP])
    previous = cases.get(test_id)
    if previous is None or _SEVERITY[outcome] > _SEVERITY[previous.outcome]:
        cases[test_id] = case
