"""Parse pytest's junit XML (xunit1 family) into per-test outcomes, with the standard library only."""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

__all__ = ["JunitCase", "JunitReport", "Outcome", "parse_junit"]

_MESSAGE_CAP = 400


class Outcome(StrEnum):
    """What happened to one test id. `missing` means the id never appeared in the results."""

    PASSED = "passed"
    XFAILED = "xfailed"
    SKIPPED = "skipped"
    FAILED = "failed"
    ERROR = "error"
    MISSING = "missing"

    @property
    def counts_as_pass(self) -> bool:
        """xfail counts as passed (the anchors' rule); skipped, failed, error and missing do not."""
        return self in (Outcome.PASSED, Outcome.XFAILED)


# When one id is reported several times (subtests, a teardown error after a pass), the worst wins.
_SEVERITY = {
    Outcome.PASSED: 0,
    Outcome.XFAILED: 1,
    Outcome.SKIPPED: 2,
    Outcome.FAILED: 3,
    Outcome.ERROR: 4,
    Outcome.MISSING: 5,
}


@dataclass(frozen=True, slots=True)
class JunitCase:
    """One test id's merged outcome: the worst of its testcase entries, their summed time."""

    test_id: str
    outcome: Outcome
    duration_s: float
    message: str


@dataclass(frozen=True, slots=True)
class JunitReport:
    """Every test id found, and the collection errors (files that failed to import)."""

    cases: dict[str, JunitCase]
    collection_errors: tuple[str, ...]

    @property
    def any_failure(self) -> bool:
        """True when any test failed or errored, or a file failed to collect."""
        bad = (Outcome.FAILED, Outcome.ERROR)
        return bool(self.collection_errors) or any(c.outcome in bad for c in self.cases.values())

    @property
    def empty(self) -> bool:
        return not self.cases and not self.collection_errors

    def case(self, test_id: str) -> JunitCase | None:
        """`test_id`'s case, or None when absent. An id without parameters that names a
        parametrised test (`tests/test_x.py::test_p`, as a test listed by its file is) stands
        for all its parametrisations (`test_p[...]`), merged: the worst outcome wins."""
        found = self.cases.get(test_id)
        if found is not None or test_id.endswith("]"):
            return found
        prefix = test_id + "["
        params = [case for key, case in self.cases.items() if key.startswith(prefix)]
        if not params:
            return None
        merged = functools.reduce(_merge, params)
        return JunitCase(test_id, merged.outcome, merged.duration_s, merged.message)


def parse_junit(
    path: Path,
    *,
    canaries: Collection[str] = (),
    node_ids: bool = True,
    files: Collection[str] = (),
) -> JunitReport:
    """Parse a pytest junit XML file written with `-o junit_family=xunit1`.

    Node ids are rebuilt from the `file`, `classname` and `name` attributes
    (`tests/test_x.py::TestA::test_b[param id]`). A test whose name is in `canaries` (the
    grader's own tests, which live outside the rootdir) is keyed by that bare name. Raises
    ValueError when the file is not junit XML; the caller decides that this makes a grade
    invalid. With `node_ids` False (junit from any tool, not pytest's), a test's id is
    `classname.name` (`name` alone without a classname) and nothing is a collection error.
    `files` are the test files the run collected (posix, rootdir-relative): a test defined in
    another file (imported, or inherited from a base class in a helper module) has that file
    as its `file`, and is keyed by the collected file whose module its `classname` starts with.
    Deterministic.
    """
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"junit XML is malformed: {exc}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"junit XML root is <{root.tag}>, expected <testsuites> or <testsuite>")
    cases: dict[str, JunitCase] = {}
    errors: list[str] = []
    for element in root.iter("testcase"):
        name = element.get("name", "")
        if not node_ids:
            classname = element.get("classname", "")
            test_id: str | None = f"{classname}.{name}" if classname else name
        else:
            test_id = name if name in canaries else _node_id(element, files)
        if test_id is None:
            errors.append(_collection_error(element))
            continue
        case = _case(test_id, element)
        previous = cases.get(test_id)
        cases[test_id] = case if previous is None else _merge(previous, case)
    return JunitReport(cases=cases, collection_errors=tuple(errors))


def _module(file: str) -> str:
    return file[:-3].replace("/", ".") if file.endswith(".py") else file


def _node_id(element: ET.Element, files: Collection[str] = ()) -> str | None:
    file = element.get("file")
    name = element.get("name", "")
    classname = element.get("classname", "")
    if not file or not name or not classname:
        return None  # a collection error: classname="" name="tests.test_x"
    module = _module(file)
    if classname != module and not classname.startswith(module + "."):
        collected = [
            f for f in files if classname == _module(f) or classname.startswith(_module(f) + ".")
        ]
        if collected:  # defined elsewhere: keyed by the file it was collected from
            file = max(collected, key=len)
            module = _module(file)
    parts = [file]
    if classname.startswith(module + "."):
        parts.extend(classname[len(module) + 1 :].split("."))
    elif classname and classname != module:
        # The classname did not start with the module path (rootdir mismatch): keep the
        # trailing class names, the part that is reliable.
        parts.extend(p for p in classname.split(".") if p[:1].isupper())
    parts.append(name)
    return "::".join(parts)


def _case(test_id: str, element: ET.Element) -> JunitCase:
    outcome, message = Outcome.PASSED, ""
    for child in element:
        if child.tag == "error":
            outcome, message = Outcome.ERROR, child.get("message", "")
        elif child.tag == "failure":
            outcome, message = Outcome.FAILED, child.get("message", "")
        elif child.tag == "skipped":
            is_xfail = child.get("type") == "pytest.xfail"
            outcome = Outcome.XFAILED if is_xfail else Outcome.SKIPPED
            message = child.get("message", "")
        else:
            continue
        if outcome in (Outcome.ERROR, Outcome.FAILED):
            break
    try:
        duration = float(element.get("time", "0") or 0)
    except ValueError:
        duration = 0.0
    return JunitCase(test_id, outcome, duration, message[:_MESSAGE_CAP])


def _merge(a: JunitCase, b: JunitCase) -> JunitCase:
    worst = a if _SEVERITY[a.outcome] >= _SEVERITY[b.outcome] else b
    return JunitCase(a.test_id, worst.outcome, a.duration_s + b.duration_s, worst.message)


def _collection_error(element: ET.Element) -> str:
    where = element.get("file") or element.get("name") or "?"
    child = next((c for c in element if c.tag in ("error", "failure")), None)
    detail = child.get("message", "") if child is not None else ""
    # The useful line of a collection traceback is its last "E   " line (the exception).
    text = child.text or "" if child is not None else ""
    error_lines = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    if error_lines:
        detail = error_lines[-1]
    return f"{where}: {detail}"[:_MESSAGE_CAP]
