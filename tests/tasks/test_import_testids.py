"""SWE-bench test ids mapped to the grader's: pytest node ids kept, Django's unittest names to
unittest ids under the test directory, bare names and test files resolved statically."""

from __future__ import annotations

import pytest

from loopwright.tasks.importers._gitrepo import SkipInstance
from loopwright.tasks.importers._testids import TreeView, map_test_ids

FILES = {
    "tests/admin_views/tests.py": b"class AdminViewTests: ...\n",
    "tests/__init__.py": b"",
    "lib/tests/test_core.py": b"def test_alpha():\n    pass\n\n\ndef helper():\n    pass\n",
    "lib/tests/test_params.py": (
        b"import pytest\n\n@pytest.mark.parametrize('x', [1])\ndef test_p(x):\n    pass\n"
    ),
}


def tree(patched: dict[str, bytes | None] | None = None) -> TreeView:
    files = dict(FILES)
    return TreeView(
        patched=patched if patched is not None else {},
        exists=lambda rel: rel in files or any(f.startswith(rel + "/") for f in files),
        read=files.get,
    )


def test_pytest_node_ids_are_kept_and_deduplicated() -> None:
    ids = ["a/test_x.py::T::test_y[a b-1]", "a/test_x.py::test_z"]
    mapped = map_test_ids(ids + ids[:1], [*ids[1:], "a/test_x.py::test_w"], tree())
    assert mapped.runner == "pytest" and mapped.test_dir == "a"
    assert mapped.fail_to_pass == ids and mapped.pass_to_pass == ["a/test_x.py::test_w"]


def test_django_names_become_unittest_ids_under_the_tests_package() -> None:
    f2p = ["test_change (admin_views.tests.AdminViewTests)\nChanging an object works."]
    p2p = ["test_add (admin_views.tests.AdminViewTests.test_add)"]
    mapped = map_test_ids(f2p, p2p, tree())
    assert mapped.runner == "unittest" and mapped.test_dir == "tests"
    assert mapped.fail_to_pass == ["tests.admin_views.tests.AdminViewTests.test_change"]
    assert mapped.pass_to_pass == ["tests.admin_views.tests.AdminViewTests.test_add"]


def test_a_bare_name_resolves_to_the_one_patched_file_defining_it() -> None:
    patched: dict[str, bytes | None] = {"lib/tests/test_core.py": FILES["lib/tests/test_core.py"]}
    mapped = map_test_ids(["test_alpha"], [], tree(patched))
    assert mapped.fail_to_pass == ["lib/tests/test_core.py::test_alpha"]
    with pytest.raises(SkipInstance, match="no file of the test patch defines it"):
        map_test_ids(["test_beta"], [], tree(patched))


def test_a_test_file_expands_to_its_tests_a_parametrised_one_listed_once() -> None:
    mapped = map_test_ids(["lib/tests/test_core.py"], [], tree())
    assert mapped.fail_to_pass == ["lib/tests/test_core.py::test_alpha"]
    mapped = map_test_ids(["lib/tests/test_params.py"], [], tree())
    assert mapped.fail_to_pass == ["lib/tests/test_params.py::test_p"]  # stands for test_p[...]


@pytest.mark.parametrize(
    ("f2p", "p2p", "reason"),
    [
        ([], [], "FAIL_TO_PASS is empty"),
        (["what is this?"], [], "unknown test id format"),
        (["test_x (nowhere.Mod)"], [], "is not a file of the repo"),
        (["test_x (admin_views.tests.AdminViewTests)"], ["a/test_b.py::t"], "mix"),
    ],
)
def test_unmappable_ids_skip_the_instance_saying_why(
    f2p: list[str], p2p: list[str], reason: str
) -> None:
    with pytest.raises(SkipInstance, match=reason):
        map_test_ids(f2p, p2p, tree())
