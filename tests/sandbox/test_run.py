"""Behaviour every sandbox shares: results, timeouts that kill the whole tree, output caps, stdin,
the clean environment and the errors for commands that cannot start."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from loopwright.errors import SandboxError, UsageError
from loopwright.sandbox import Sandbox
from tests.sandbox.conftest import processes_with, sleep_marker, wait_until


def py(sandbox: Sandbox, code: str) -> list[str]:
    """argv running `code` with the Python the sandbox offers its commands (its own, else ours)."""
    return [sandbox.python or sys.executable, "-c", code]


def by_design(sandbox: Sandbox, reason: str) -> None:
    """Skip for the container sandbox, which differs here on purpose (tests/sandbox/test_docker.py
    checks what it does instead)."""
    if sandbox.name == "docker":
        pytest.skip(f"the container sandbox differs by design: {reason}")


def test_exit_code_and_both_streams_are_reported(sandbox: Sandbox, work: Path) -> None:
    result = sandbox.run(["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=work, timeout_s=30)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.timed_out and not result.truncated and not result.ok
    assert result.argv == ("sh", "-c", "echo out; echo err >&2; exit 3")
    assert result.sandbox == sandbox.name


def test_a_runaway_command_is_killed_at_its_timeout_with_its_children(
    sandbox: Sandbox, work: Path
) -> None:
    marker = sleep_marker()
    script = f"sleep {marker} & sleep {marker} & wait"
    started = time.monotonic()
    result = sandbox.run(["sh", "-c", script], cwd=work, timeout_s=1)
    assert result.timed_out
    assert result.exit_code is None
    assert time.monotonic() - started < 60  # far below the 1000 s the command asked for
    assert wait_until(lambda: not processes_with(marker)), processes_with(marker)


def test_a_command_ignoring_sigterm_is_still_killed(sandbox: Sandbox, work: Path) -> None:
    marker = sleep_marker()
    result = sandbox.run(
        ["sh", "-c", f"trap '' TERM; sleep {marker}; echo survived"], cwd=work, timeout_s=1
    )
    assert result.timed_out and "survived" not in result.stdout
    assert wait_until(lambda: not processes_with(marker)), processes_with(marker)


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs util-linux setsid")
def test_a_child_that_left_the_process_group_is_killed_at_the_timeout(
    sandbox: Sandbox, work: Path
) -> None:
    marker = sleep_marker()
    result = sandbox.run(["sh", "-c", f"setsid sleep {marker} & wait"], cwd=work, timeout_s=1)
    assert result.timed_out
    assert wait_until(lambda: not processes_with(marker)), processes_with(marker)


def test_background_leftovers_die_when_the_command_ends(sandbox: Sandbox, work: Path) -> None:
    marker = sleep_marker()
    result = sandbox.run(["sh", "-c", f"sleep {marker} & echo started"], cwd=work, timeout_s=60)
    assert (result.exit_code, result.stdout, result.timed_out) == (0, "started\n", False)
    assert result.duration_s < 30
    assert wait_until(lambda: not processes_with(marker)), processes_with(marker)


def test_output_beyond_the_cap_is_dropped_while_the_command_finishes(
    sandbox: Sandbox, work: Path
) -> None:
    code = "import sys; sys.stdout.write('x' * 5_000_000); sys.stderr.write('e' * 5_000_000)"
    result = sandbox.run(py(sandbox, code), cwd=work, timeout_s=60, output_cap=10_000)
    assert result.exit_code == 0 and not result.timed_out
    assert result.truncated
    assert result.stdout.startswith("x" * 10_000)
    assert len(result.stdout) < 10_200 and len(result.stderr) < 10_200
    assert "output truncated by loopwright: 4990000 bytes dropped" in result.stdout
    assert "4990000 bytes dropped" in result.stderr


def test_output_within_the_cap_is_kept_whole(sandbox: Sandbox, work: Path) -> None:
    result = sandbox.run(py(sandbox, "print('é' * 1000)"), cwd=work, timeout_s=30, output_cap=2002)
    assert result.stdout == "é" * 1000 + "\n"
    assert not result.truncated


def test_invalid_utf8_is_replaced_not_fatal(sandbox: Sandbox, work: Path) -> None:
    result = sandbox.run(["printf", "a\\377b"], cwd=work, timeout_s=30)
    assert result.stdout == "a\ufffdb"


def test_large_stdin_is_fed_without_deadlock(sandbox: Sandbox, work: Path) -> None:
    data = "0123456789abcdef\n" * 200_000  # 3.4 MB: far more than a pipe buffer, both ways
    result = sandbox.run(["cat"], cwd=work, timeout_s=60, stdin=data, output_cap=len(data))
    assert result.exit_code == 0 and not result.truncated
    assert result.stdout == data


def test_without_stdin_the_command_reads_end_of_file(sandbox: Sandbox, work: Path) -> None:
    result = sandbox.run(["cat"], cwd=work, timeout_s=30)
    assert (result.exit_code, result.stdout, result.timed_out) == (0, "", False)


def test_parent_secrets_do_not_reach_the_command(
    sandbox: Sandbox, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_design(sandbox, "the image's environment (PATH, HOSTNAME...) is kept under the clean one")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    result = sandbox.run(["env"], cwd=work, timeout_s=30)
    assert "sk-must-not-leak" not in result.stdout and "OPENAI_API_KEY" not in result.stdout
    env = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert env["LANG"] == "C.UTF-8" and env["PYTHONHASHSEED"] == "0"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["PATH"]
    assert set(env) - {"PWD"} == {
        "PATH",
        "HOME",
        "LANG",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
    }


def test_a_given_env_is_used_as_is_plus_path_and_home(
    sandbox: Sandbox, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_design(sandbox, "the image's environment (PATH, HOSTNAME...) is kept under the given one")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    result = sandbox.run(["env"], cwd=work, timeout_s=30, env={"FOO": "bar"})
    env = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert env["FOO"] == "bar"
    assert set(env) - {"PWD"} == {"FOO", "PATH", "HOME"}


def test_home_is_private_and_writable(sandbox: Sandbox, work: Path) -> None:
    script = 'echo hi > "$HOME/probe" && cat "$HOME/probe" && echo "$HOME"'
    result = sandbox.run(["sh", "-c", script], cwd=work, timeout_s=30)
    assert result.exit_code == 0, result.stderr
    said, home = result.stdout.splitlines()
    assert said == "hi"
    assert home != str(Path.home())
    assert not (Path(home) / "probe").exists()  # gone (local) or never on this side (bwrap)


def test_cwd_is_resolved_through_symlinks(sandbox: Sandbox, work: Path, tmp_path: Path) -> None:
    by_design(sandbox, "every workspace is at the fixed path /testbed inside")
    link = tmp_path / "link"
    link.symlink_to(work)
    result = sandbox.run(["pwd", "-P"], cwd=link, timeout_s=30)
    assert result.stdout.strip() == str(work.resolve())


def test_a_missing_binary_is_a_sandbox_error_naming_it(sandbox: Sandbox, work: Path) -> None:
    with pytest.raises(SandboxError, match="no-such-binary-lw"):
        sandbox.run(["no-such-binary-lw", "--help"], cwd=work, timeout_s=30)
    with pytest.raises(SandboxError, match=r"missing\.sh"):
        sandbox.run(["./missing.sh"], cwd=work, timeout_s=30)


def test_a_missing_cwd_is_a_sandbox_error(sandbox: Sandbox, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="does not exist"):
        sandbox.run(["true"], cwd=tmp_path / "nope", timeout_s=30)


def test_a_missing_writable_path_is_a_sandbox_error(sandbox: Sandbox, work: Path) -> None:
    with pytest.raises(SandboxError, match="writable path"):
        sandbox.run(["true"], cwd=work, timeout_s=30, writable=[work / "nope"])


def test_a_missing_read_only_path_is_a_sandbox_error(sandbox: Sandbox, work: Path) -> None:
    with pytest.raises(SandboxError, match="read-only path"):
        sandbox.run(["true"], cwd=work, timeout_s=30, readonly=[work / "nope"])


@pytest.mark.parametrize(
    ("argv", "timeout_s", "cap"), [([], 1.0, 10), (["true"], 0.0, 10), (["true"], 1.0, 0)]
)
def test_impossible_requests_are_usage_errors(
    sandbox: Sandbox, work: Path, argv: list[str], timeout_s: float, cap: int
) -> None:
    with pytest.raises(UsageError):
        sandbox.run(argv, cwd=work, timeout_s=timeout_s, output_cap=cap)


def test_a_signal_death_is_reported_as_a_shell_would(sandbox: Sandbox, work: Path) -> None:
    result = sandbox.run(["sh", "-c", "kill -9 $$"], cwd=work, timeout_s=30)
    assert result.exit_code == 128 + 9 and not result.timed_out


def test_a_sandbox_is_a_context_manager(sandbox: Sandbox, work: Path) -> None:
    with sandbox as sb:
        assert sb.run(["true"], cwd=work, timeout_s=30).ok
    assert sandbox.name in repr(sandbox)
