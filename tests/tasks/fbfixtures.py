"""FeatureBench rows in the real shape, built from a small git repository made in the test.

Derived from how the FeatureBench harness reads a row: `instance_id`
(`<owner>__<repo>.<commit8>.<test file stem>.<hash8>.lv1|lv2`), `repo`, `base_commit` (the
original repository, the harness's `/root/my_repo`), `patch` (level 1: the masking patch that
removes the feature; the harness applies it forward, its reverse is the gold), `test_patch`
(level 1: the diff that deletes the FAIL_TO_PASS files, applied reversed at grading; level 2:
an adjustment of those files, applied forward), FAIL_TO_PASS / PASS_TO_PASS (test files, as JSON
strings), `image_name`, `repo_settings` (a JSON string: test_cmd, timeout_run, timeout_one,
use_uv, docker_specs) and the keys loopwright ignores (instance_image, lines, files, functions,
top_objects, ...).
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.tasks.importfixtures import git

FB_REPO = "pypa/packaging"
# The package is named minipkg, not packaging: the grader's own pytest imports the installed
# `packaging`, which a workspace module of that name can never shadow.
VERSION = "def parse(text):\n    return tuple(int(part) for part in text.split('.'))\n"
METADATA = textwrap.dedent(
    """\
    def _clean(value):
        return value.strip()


    def parse_email(text):
        fields = {}
        for line in text.splitlines():
            if ":" in line:
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = _clean(value)
        return fields
    """
)
METADATA_MASKED = "def _clean(value):\n    return value.strip()\n"
TEST_METADATA = textwrap.dedent(
    """\
    import pytest

    from minipkg.metadata import parse_email


    @pytest.mark.parametrize(
        ("text", "want"), [("Name: x", {"name": "x"}), ("Version: 1.0", {"version": "1.0"})]
    )
    def test_parse_email(text, want):
        assert parse_email(text) == want


    class TestSeveral:
        def test_two_fields(self):
            assert parse_email("Name: a\\nVersion: 2") == {"name": "a", "version": "2"}
    """
)
TEST_VERSION = (
    "from minipkg.version import parse\n\n\ndef test_parse():\n    assert parse('1.2') == (1, 2)\n"
)
F2P_FILE = "tests/test_metadata.py"
P2P_FILE = "tests/test_version.py"


@dataclass(frozen=True)
class FeatureFixture:
    repos: Path
    original: str  # the repository as the harness starts from it
    mask_patch: str  # removes parse_email
    removal_patch: str  # deletes the FAIL_TO_PASS file (level 1's test_patch)
    adjust_patch: str  # adjusts the FAIL_TO_PASS file (level 2's test_patch)

    def row(self, level: int, **fields: Any) -> dict[str, Any]:
        record: dict[str, Any] = {
            "instance_id": f"pypa__packaging.{self.original[:8]}.test_metadata.e00b5801.lv{level}",
            "repo": FB_REPO,
            "base_commit": self.original,
            "patch": self.mask_patch if level == 1 else "",
            "test_patch": self.removal_patch if level == 1 else self.adjust_patch,
            "problem_statement": "Implement minipkg.metadata.parse_email(text).",
            "FAIL_TO_PASS": json.dumps([F2P_FILE]),
            "PASS_TO_PASS": json.dumps([P2P_FILE] if level == 1 else []),
            "image_name": None,
            "repo_settings": json.dumps(
                {
                    "test_cmd": "pytest -rA -p no:cacheprovider --color=no",
                    "timeout_run": 300,
                    "timeout_one": 20,
                    "use_uv": False,
                    "docker_specs": {
                        "custom_docker_args": ["-e PKG_MODE=strict", "-e HTTP_PROXY=x"]
                    },
                }
            ),
            "instance_image": "libercoders/featurebench-specs_packaging-instance_abc",
            "lines": 12,
            "files": json.dumps(["minipkg/metadata.py"]),
            "functions": json.dumps(["parse_email"]),
            "top_objects": json.dumps(["minipkg.metadata.parse_email"]),
            # None, as the harness records them when it cannot render them; a row that carries
            # them has its image built here (tests/tasks/test_import_fb_dockerfile.py)
            "base_dockerfile": None,
            "instance_dockerfile": None,
            "build_setup_env_sh": None,
        }
        record.update(fields)
        return record


def _commit_on(clone: Path, branch: str, start: str, change: dict[str, str | None]) -> str:
    git(clone, "checkout", "-q", "-b", branch, start)
    for rel, text in change.items():
        if text is None:
            git(clone, "rm", "-q", rel)
        else:
            (clone / rel).write_text(text)
            git(clone, "add", rel)
    git(clone, "commit", "-q", "-m", branch)
    head = git(clone, "rev-parse", "HEAD").strip()
    git(clone, "checkout", "-q", "main")
    return head


def make_feature_fixture(root: Path) -> FeatureFixture:
    repos = root / "repos"
    clone = repos / "pypa__packaging"
    clone.mkdir(parents=True)
    git(clone, "init", "-q", "-b", "main")
    files = {
        "minipkg/__init__.py": "",
        "minipkg/version.py": VERSION,
        "minipkg/metadata.py": METADATA,
        F2P_FILE: TEST_METADATA,
        P2P_FILE: TEST_VERSION,
    }
    for rel, text in files.items():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text(text)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "original")
    original = git(clone, "rev-parse", "HEAD").strip()
    masked = _commit_on(clone, "masked", original, {"minipkg/metadata.py": METADATA_MASKED})
    removed = _commit_on(clone, "removed", original, {F2P_FILE: None})
    adjusted_text = TEST_METADATA.replace(
        "class TestSeveral:",
        "class TestSeveral:\n    def test_empty(self):\n        assert parse_email('') == {}\n",
    )
    adjusted = _commit_on(clone, "adjusted", original, {F2P_FILE: adjusted_text})
    return FeatureFixture(
        repos=repos,
        original=original,
        mask_patch=git(clone, "diff", original, masked),
        removal_patch=git(clone, "diff", original, removed),
        adjust_patch=git(clone, "diff", original, adjusted),
    )
