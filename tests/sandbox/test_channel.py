"""The outcome channel (`Sandbox.run(channel=True)`): a pipe the host drains while the command
runs, in every sandbox that can pass one; what was written stays written, whatever the command
does afterwards."""

from __future__ import annotations

from pathlib import Path

from loopwright.sandbox import CHANNEL_ENV, Sandbox

WRITER = f"""
import os
fd = int(os.environ[{CHANNEL_ENV!r}])
os.write(fd, b"one\\n")
os.write(fd, b"two\\n")
os._exit(3)
"""


def test_what_the_command_writes_to_its_channel_comes_back(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    python = sandbox.interpreter()
    result = sandbox.run([python, "-c", WRITER], cwd=tmp_path, timeout_s=60, channel=True)
    assert result.exit_code == 3, result.stderr
    if not sandbox.channels:  # the docker CLI: no descriptor is passed, no variable set
        assert result.channel is None
        return
    assert result.channel == b"one\ntwo\n"


def test_without_a_channel_the_command_has_none(sandbox: Sandbox, tmp_path: Path) -> None:
    probe = f"import os; print(os.environ.get({CHANNEL_ENV!r}, 'none'))"
    result = sandbox.run([sandbox.interpreter(), "-c", probe], cwd=tmp_path, timeout_s=60)
    assert (result.stdout.strip(), result.channel) == ("none", None)
