"""Why a grade fell short, for `bench validate`: the tests that did not pass, which of them failed
for want of a network (the sandbox has none), and the tail of the test run's output."""

from __future__ import annotations

import re

from loopwright.scoring._junit import Outcome
from loopwright.scoring._result import GradeResult

__all__ = ["NETWORK_SIGNS", "failing_tests", "missing_tests", "needs_network", "output_tail"]

NETWORK_SIGNS = re.compile(
    r"Name or service not known|Temporary failure in name resolution|nodename nor servname"
    r"|Network is unreachable|No route to host|Failed to establish a new connection"
    r"|getaddrinfo failed|gaierror|ConnectTimeout|ConnectionError|Connection refused"
    r"|urlopen error|Max retries exceeded|timed out.*connect|connect.*timed out"
    r"|Could not resolve host|NewConnectionError",
    re.IGNORECASE,
)
"""What a test's failure message says when it needed the network (DNS, connect, refused)."""


def failing_tests(grade: GradeResult) -> list[str]:
    """The listed test ids that did not count as passed, in the task's order."""
    return [t.id for t in grade.tests if not t.passed]


def missing_tests(grade: GradeResult) -> list[str]:
    """The listed test ids that never appeared in the results (outcome `missing`): most often
    an id the task lists that no test of the repository has (a typo, a renamed test)."""
    return [t.id for t in grade.tests if t.outcome == Outcome.MISSING]


def needs_network(grade: GradeResult) -> list[str]:
    """The failing test ids whose failure message reads as a network failure, not a code one."""
    return [t.id for t in grade.tests if not t.passed and NETWORK_SIGNS.search(t.message)]


def output_tail(grade: GradeResult, lines: int = 15) -> str:
    """The last `lines` lines of the test run's output (or of the verifier's, for a command)."""
    return "\n".join(grade.output_tail.rstrip().splitlines()[-lines:])
