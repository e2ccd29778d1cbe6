"""Workspaces: a faithful, independent copy committed once; diffs that see every change."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from loopwright.errors import ConfigError, SandboxError, UsageError
from loopwright.sandbox import (
    BINARY_SIZES,
    NO_DIFF,
    Workspace,
    _workspace,
    create_workspace,
    remove_workspace,
)

CLEAN_GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "HOME": os.devnull,
}


def git_out(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=CLEAN_GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A task's repo/: a package, an executable script, a symlink, an ignored file, a .git."""
    src = tmp_path / "task" / "repo"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "core.py").write_text("def f():\n    return 1\n")
    (src / "pkg" / "old.py").write_text("OLD = True\n")
    (src / "run.sh").write_text("#!/bin/sh\necho run\n")
    (src / "run.sh").chmod(0o755)
    (src / "link.py").symlink_to("pkg/core.py")
    (src / ".gitignore").write_text("*.log\n")
    (src / "kept.log").write_text("part of the task, ignored or not\n")
    (src / ".git").mkdir()
    (src / ".git" / "from-the-source").write_text("must not be copied\n")
    (src / "pkg" / "__pycache__").mkdir()
    (src / "pkg" / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\0stale")
    return src


@pytest.fixture
def ws(source: Path, tmp_path: Path) -> Workspace:
    return create_workspace(source, tmp_path / "ws")


def test_the_workspace_holds_the_source_files(ws: Workspace) -> None:
    assert (ws.path / "pkg" / "core.py").read_text() == "def f():\n    return 1\n"
    assert os.access(ws.path / "run.sh", os.X_OK)
    assert (ws.path / "link.py").is_symlink()
    assert (ws.path / "link.py").readlink() == Path("pkg/core.py")
    assert (ws.path / "kept.log").exists()


def test_the_sources_git_and_bytecode_are_not_copied(ws: Workspace) -> None:
    assert not (ws.path / ".git" / "from-the-source").exists()
    assert not (ws.path / "pkg" / "__pycache__").exists()


def test_one_commit_no_history_and_a_clean_status(ws: Workspace) -> None:
    assert git_out(ws.path, "rev-parse", "HEAD").strip() == ws.base_commit
    assert git_out(ws.path, "rev-list", "--count", "HEAD").strip() == "1"
    assert git_out(ws.path, "status", "--porcelain", "--ignored") == ""
    tracked = git_out(ws.path, "ls-files").split()
    assert "kept.log" in tracked  # committed even though .gitignore matches it
    assert git_out(ws.path, "log", "-1", "--format=%an|%cn|%ad", "--date=unix") == (
        "loopwright|loopwright|946684800\n"
    )


def test_the_base_commit_is_reproducible(source: Path, tmp_path: Path) -> None:
    first = create_workspace(source, tmp_path / "a")
    second = create_workspace(source, tmp_path / "b")
    assert first.path != second.path
    assert first.base_commit == second.base_commit


def test_editing_the_workspace_leaves_the_source_untouched(ws: Workspace, source: Path) -> None:
    copy, original = ws.path / "pkg" / "core.py", source / "pkg" / "core.py"
    assert copy.stat().st_ino != original.stat().st_ino
    with copy.open("r+") as f:  # in place, as an editor that does not replace the file would
        f.write("BROKEN")
    assert original.read_text() == "def f():\n    return 1\n"
    assert original.stat().st_nlink == 1


def test_an_untouched_workspace_has_no_changes(ws: Workspace) -> None:
    assert ws.diff() == ""
    assert ws.changed_files() == []


def test_diff_and_changed_files_see_edits_additions_and_deletions(ws: Workspace) -> None:
    (ws.path / "pkg" / "core.py").write_text("def f():\n    return 2\n")
    (ws.path / "pkg" / "new.py").write_text("NEW = 1\n")
    (ws.path / "pkg" / "old.py").unlink()
    (ws.path / "blob.bin").write_bytes(bytes(range(256)))
    (ws.path / "pkg" / "__pycache__").mkdir()
    (ws.path / "pkg" / "__pycache__" / "new.cpython-311.pyc").write_bytes(b"\0junk")
    assert ws.changed_files() == ["blob.bin", "pkg/core.py", "pkg/new.py", "pkg/old.py"]
    diff = ws.diff()
    assert "-    return 1\n+    return 2\n" in diff
    assert "new file mode 100644" in diff and "+NEW = 1\n" in diff
    assert "deleted file mode 100644" in diff and "-OLD = True\n" in diff
    assert "Binary files /dev/null and b/blob.bin differ\n" in diff
    assert "__pycache__" not in diff


def test_a_binary_file_is_named_with_its_sizes_never_its_content(
    source: Path, tmp_path: Path
) -> None:
    (source / "data.bin").write_bytes(b"\0" * 10)
    ws = create_workspace(source, tmp_path / "with-binary")
    (ws.path / "data.bin").write_bytes(b"\0" * 2048)
    (ws.path / "new.bin").write_bytes(bytes(range(256)))
    (ws.path / "pkg" / "core.py").unlink()
    (ws.path / "pkg" / "core.py").write_bytes(b"\0binary now")
    diff = ws.diff()
    assert "GIT binary patch" not in diff and "literal" not in diff
    assert (
        "Binary files a/data.bin and b/data.bin differ\n" + BINARY_SIZES + "10 -> 2048 bytes\n"
        in diff
    )
    assert (
        "Binary files /dev/null and b/new.bin differ\n" + BINARY_SIZES + "none -> 256 bytes\n"
        in diff
    )
    # text before, binary after: the text side is a blob like any other
    assert BINARY_SIZES + "22 -> 11 bytes\n" in diff


def test_the_diff_is_text_whatever_the_workspace_gitattributes_say(
    source: Path, tmp_path: Path
) -> None:
    """An agent's .gitattributes must not turn its change into a blob or rewrite it."""
    attacks = [
        "*.py binary\n",
        "*.py -diff\n",
        "*.py diff=nothing\n",
        "*.py filter=x\n",
        "*.py working-tree-encoding=UTF-16\n",
        "*.py ident\n",
        "*.py text eol=crlf\n",
        "*.py -text\n",
        "[attr]hide -diff -text\n*.py hide\n",
    ]
    changed = b"def f():\r\n    return 2  # $Id: planted $\r\n"
    for number, attack in enumerate(attacks):
        ws = create_workspace(source, tmp_path / f"attack{number}")
        (ws.path / ".gitattributes").write_text(attack)
        (ws.path / "pkg" / "core.py").write_bytes(changed)
        diff = ws.diff_bytes()
        assert b"+    return 2  # $Id: planted $\r\n" in diff, attack
        assert b"Binary" not in diff, attack


def test_a_gitattributes_in_a_subdirectory_is_ignored_too(ws: Workspace) -> None:
    (ws.path / "pkg" / ".gitattributes").write_text("core.py binary\n")
    (ws.path / "pkg" / "core.py").write_text("def f():\n    return 2\n")
    assert "+    return 2\n" in ws.diff()


def test_the_text_diff_applies_to_a_fresh_workspace_exactly(
    ws: Workspace, source: Path, tmp_path: Path
) -> None:
    (ws.path / "pkg" / "core.py").write_text("def f():\n    return 2\n")
    (ws.path / "pkg" / "old.py").unlink()
    (ws.path / "added.txt").write_text("hello\n")
    patch = tmp_path / "change.patch"
    patch.write_bytes(ws.diff_bytes())
    fresh = create_workspace(source, tmp_path / "fresh")
    git_out(fresh.path, "apply", str(patch))
    assert fresh.changed_files() == ws.changed_files()
    assert (fresh.path / "pkg" / "core.py").read_text() == "def f():\n    return 2\n"


def test_evidence_is_the_diff_when_git_works(ws: Workspace) -> None:
    (ws.path / "pkg" / "core.py").write_text("changed\n")
    evidence = ws.evidence()
    assert evidence.text == ws.diff() and evidence.error is None and evidence.tamper is None


def test_a_removed_git_directory_is_tamper_evidence_not_an_exception(ws: Workspace) -> None:
    (ws.path / "pkg" / "core.py").write_text("changed\n")
    subprocess.run(["rm", "-rf", str(ws.path / ".git")], check=True)
    with pytest.raises(SandboxError):
        ws.diff()
    evidence = ws.evidence()
    assert evidence.text.startswith(NO_DIFF) and evidence.text.endswith("\n")
    assert evidence.error is not None and "no .git/objects" in evidence.error
    assert evidence.tamper is not None and "removed or corrupted" in evidence.tamper


def test_a_corrupted_base_object_is_tamper_evidence(ws: Workspace) -> None:
    (ws.path / "pkg" / "core.py").write_text("changed\n")
    objects = ws.path / ".git" / "objects"
    for obj in [*objects.glob("??/*"), *objects.glob("pack/*")]:  # loose or packed
        obj.chmod(0o644)
        obj.write_bytes(b"garbage")
    evidence = ws.evidence()
    assert evidence.error is not None and evidence.tamper is not None
    assert NO_DIFF in evidence.text


def test_an_unreadable_file_is_a_diff_error_but_not_tampering(ws: Workspace) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    secret = ws.path / "pkg" / "secret.py"
    secret.write_text("x = 1\n")
    secret.chmod(0)
    evidence = ws.evidence()
    assert evidence.error is not None and "secret.py" in evidence.error
    assert evidence.tamper is None


def test_reading_changes_does_not_stage_anything(ws: Workspace) -> None:
    (ws.path / "added.py").write_text("x = 1\n")
    index_before = (ws.path / ".git" / "index").read_bytes()
    ws.diff()
    ws.changed_files()
    assert (ws.path / ".git" / "index").read_bytes() == index_before
    assert git_out(ws.path, "status", "--porcelain") == "?? added.py\n"


def test_reading_changes_never_runs_the_workspaces_git_config(
    ws: Workspace, tmp_path: Path
) -> None:
    """An agent controls .git/config; git run outside the sandbox must not execute it."""
    marker = tmp_path / "pwned"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    hook.chmod(0o755)
    with (ws.path / ".git" / "config").open("a") as config:
        config.write(f'[core]\n\tfsmonitor = {hook}\n[filter "evil"]\n\tclean = {hook}\n')
        config.write(f"[diff]\n\texternal = {hook}\n")
    (ws.path / ".gitattributes").write_text("* filter=evil\n")
    (ws.path / "pkg" / "core.py").write_text("changed\n")
    assert ws.changed_files() == [".gitattributes", "pkg/core.py"]
    assert "+changed" in ws.diff()
    assert not marker.exists()


def test_an_agent_can_commit_in_the_workspace(ws: Workspace) -> None:
    (ws.path / "pkg" / "core.py").write_text("committed\n")
    git_out(ws.path, "commit", "-q", "-am", "agent work")
    assert ws.changed_files() == ["pkg/core.py"]  # still measured against the base


def test_a_missing_source_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        create_workspace(tmp_path / "nope", tmp_path / "ws")


def test_a_named_workspace_lands_at_that_name_and_cannot_be_reused(
    source: Path, tmp_path: Path
) -> None:
    ws = create_workspace(source, tmp_path / "parent", name="attempt-1")
    assert ws.path == (tmp_path / "parent" / "attempt-1").resolve()
    with pytest.raises(UsageError, match="already exists"):
        create_workspace(source, tmp_path / "parent", name="attempt-1")
    with pytest.raises(UsageError, match="plain directory name"):
        create_workspace(source, tmp_path / "parent", name="../escape")


def test_without_a_parent_the_workspace_goes_to_the_temp_dir(source: Path) -> None:
    ws = create_workspace(source)
    try:
        assert ws.path.name.startswith("lw-ws-")
        assert (ws.path / "pkg" / "core.py").exists()
    finally:
        remove_workspace(ws)
    assert not ws.path.exists()


def test_remove_workspace_copes_with_read_only_dirs_and_is_idempotent(ws: Workspace) -> None:
    locked = ws.path / "pkg"
    (locked / "inner").mkdir()
    (locked / "inner" / "f").write_text("x")
    (locked / "inner").chmod(stat.S_IRUSR | stat.S_IXUSR)
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    remove_workspace(ws)
    assert not ws.path.exists()
    remove_workspace(ws)


def test_a_git_failure_with_the_repository_intact_is_not_tampering(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise SandboxError("git add failed: simulated")

    monkeypatch.setattr(_workspace, "staged_snapshot", broken)
    evidence = ws.evidence()
    assert evidence.text == f"{NO_DIFF}{evidence.error}\n"
    assert evidence.error is not None and "simulated" in evidence.error
    assert evidence.tamper is None


# --- templates: later workspaces of a source are written from memory ---------------------------


def _tree(root: Path) -> dict[str, tuple[int, bytes | str]]:
    found: dict[str, tuple[int, bytes | str]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git/index":  # holds stat data (inodes, times) of the files it was made from
            continue
        info = path.lstat()
        if path.is_symlink():
            found[rel] = (info.st_mode, str(path.readlink()))
        elif path.is_file():
            found[rel] = (stat.S_IMODE(info.st_mode), path.read_bytes())
        else:
            found[rel] = (stat.S_IMODE(info.st_mode), "dir")
    return found


def test_a_second_workspace_of_a_source_is_the_same_and_needs_no_git(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = create_workspace(source, tmp_path / "a")

    def no_commit(dest: Path) -> str:
        raise AssertionError("the second workspace ran git to commit")

    monkeypatch.setattr(_workspace, "_commit_base", no_commit)
    second = create_workspace(source, tmp_path / "b")
    assert second.base_commit == first.base_commit
    assert _tree(second.path) == _tree(first.path)
    assert git_out(second.path, "status", "--porcelain") == ""
    assert second.changed_files() == []
    (second.path / "pkg" / "core.py").write_text("changed\n")
    assert second.changed_files() == ["pkg/core.py"]


def test_an_agent_editing_a_workspace_cannot_change_later_ones(
    source: Path, tmp_path: Path
) -> None:
    first = create_workspace(source, tmp_path / "a")
    (first.path / "pkg" / "core.py").write_text("solved = True\n")
    (first.path / ".git" / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    later = create_workspace(source, tmp_path / "b")
    assert (later.path / "pkg" / "core.py").read_text() == "def f():\n    return 1\n"
    assert later.base_commit == first.base_commit and later.changed_files() == []


def test_a_changed_source_is_committed_afresh(source: Path, tmp_path: Path) -> None:
    first = create_workspace(source, tmp_path / "a")
    (source / "pkg" / "core.py").write_text("def f():\n    return 2\n")
    later = create_workspace(source, tmp_path / "b")
    assert later.base_commit != first.base_commit
    assert (later.path / "pkg" / "core.py").read_text() == "def f():\n    return 2\n"
