from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.scoring import Outcome, parse_junit


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "junit.xml"
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">'
        + body
        + "</testsuite></testsuites>"
    )
    return path


def case(classname: str, name: str, file: str = "tests/test_x.py", child: str = "") -> str:
    return f'<testcase classname="{classname}" name="{name}" file="{file}" time="0.5">{child}</testcase>'


def test_node_ids_rebuilt_for_functions_classes_and_param_ids_with_spaces(tmp_path: Path) -> None:
    report = parse_junit(
        write(
            tmp_path,
            case("tests.test_x", "test_plain")
            + case("tests.test_x.TestA", "test_m")
            + case("tests.test_x.TestA.TestInner", "test_n")
            + case("tests.test_x", "test_p[one [item] x]")
            + case("tests.test_x", "test_p[a::b]"),
        )
    )
    assert set(report.cases) == {
        "tests/test_x.py::test_plain",
        "tests/test_x.py::TestA::test_m",
        "tests/test_x.py::TestA::TestInner::test_n",
        "tests/test_x.py::test_p[one [item] x]",
        "tests/test_x.py::test_p[a::b]",
    }


@pytest.mark.parametrize(
    ("child", "outcome"),
    [
        ("", Outcome.PASSED),
        ('<failure message="boom">tb</failure>', Outcome.FAILED),
        ('<error message="fixture">tb</error>', Outcome.ERROR),
        ('<skipped type="pytest.skip" message="no"/>', Outcome.SKIPPED),
        ('<skipped type="pytest.xfail" message="known"/>', Outcome.XFAILED),
    ],
)
def test_outcome_of_each_child_element(tmp_path: Path, child: str, outcome: Outcome) -> None:
    report = parse_junit(write(tmp_path, case("tests.test_x", "test_a", child=child)))
    assert report.cases["tests/test_x.py::test_a"].outcome is outcome


def test_xfail_counts_as_pass_and_skip_does_not() -> None:
    assert Outcome.XFAILED.counts_as_pass
    assert Outcome.PASSED.counts_as_pass
    assert not Outcome.SKIPPED.counts_as_pass
    assert not Outcome.MISSING.counts_as_pass


def test_repeated_id_takes_the_worst_outcome_like_a_failed_subtest(tmp_path: Path) -> None:
    body = (
        case("tests.test_x.T", "test_sub")
        + case("tests.test_x.T", "test_sub", child='<failure message="SUBFAIL i=1"/>')
        + case("tests.test_x.T", "test_sub")
    )
    report = parse_junit(write(tmp_path, body))
    merged = report.cases["tests/test_x.py::T::test_sub"]
    assert merged.outcome is Outcome.FAILED
    assert merged.message == "SUBFAIL i=1"
    assert merged.duration_s == pytest.approx(1.5)


def test_collection_error_is_reported_not_a_test(tmp_path: Path) -> None:
    body = (
        '<testcase classname="" name="tests.test_x" file="tests/test_x.py" time="0">'
        '<error message="collection failure">Traceback:\ntests/test_x.py:1: in &lt;module&gt;\n'
        "    import nope\nE   ModuleNotFoundError: No module named 'nope'</error></testcase>"
    )
    report = parse_junit(write(tmp_path, body))
    assert report.cases == {}
    assert report.collection_errors == (
        "tests/test_x.py: ModuleNotFoundError: No module named 'nope'",
    )
    assert report.any_failure
    assert not report.empty


def test_malformed_xml_raises_value_error(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text("<testsuites><testcase")
    with pytest.raises(ValueError, match="malformed"):
        parse_junit(path)


def test_wrong_root_element_raises_value_error(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text("<html></html>")
    with pytest.raises(ValueError, match="html"):
        parse_junit(path)
