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
    # What a test wrote to the real stderr may precede the status on its line ("... noiseok").
    r" \.\.\. .*?(?P<status>ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$"
)
_BLOCK = re.compile(
    r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<name>\w+) \((?P<where>[\w.]+)\)"
)
_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
# Class and module fixtures report their errors on lines of their own; they are not tests.
_FIXTURES = frozenset({"setUpClass", "tearDownClass", "setUpModule", "tearDownModule"})
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
    """The outcomes read from unittest's verbose output. `ran` is the N of the last `Ran N
    tests` summary (None: the run was cut short before it); `reported` is how many distinct
    tests the per-test lines name (failed imports included, as unittest counts them). The two
    differ when lines were forged or could not be read."""

    report: JunitReport
    ran: int | None
    reported: int

    @property
    def finished(self) -> bool:
        """True when unittest wrote its `Ran N tests` summary."""
        return self.ran is not None


def parse_unittest(text: str) -> UnittestReport:
    """Every test id reported in `text` (unittest's stderr) with its worst outcome; modules
    that failed to import (`unittest.loader._FailedTest`) are collection errors."""
    cases: dict[str, JunitCase] = {}
    errors: list[str] = []
    current: str | None = None
    heads: set[str] = set()
    for line in text.splitlines():
        block = _BLOCK.match(line)
        if block is not None:
            if block["name"] not in _FIXTURES:
                test_id = _test_id(block["name"], block["where"])
                _record(cases, errors, test_id, _OUTCOMES[block["kind"]])
            continue
        head = _HEAD.match(line)
        if head is not None:
            fixture = head["name"] in _FIXTURES
            current = None if fixture else _test_id(head["name"], head["where"])
            heads.update([current] if current is not None else [])
        status = _STATUS.search(line)
        if status is not None and current is not None:
            word = status["status"]
            _record(cases, errors, current, _outcome(word), "" if word == "ok" else word)
    report = JunitReport(cases, tuple(dict.fromkeys(errors)))
    ran = [int(n) for n in _RAN.findall(text)]
    return UnittestReport(report, ran[-1] if ran else None, len(heads))


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
