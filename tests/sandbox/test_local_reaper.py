"""LocalSandbox runs each command under the process reaper: a scripted hostile command starts a
daemon that leaves its process group (`setsid`, `setpgid`, a double fork) and would later write
into the workspace (a forged conftest.py, say); when `run` returns the daemon must be dead, whether
the command exited 0, exited non-zero or was killed at its timeout. Well-behaved commands see no
difference. The tests on the `local` fixture run both ways a command can be reaped: host-reaped
(a marked shell, the host itself the subreaper that sweeps, the default where `setpriv` exists)
and under the Python reaper (what a command running beside a host-reaped one gets)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import subprocess
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.errors import SandboxError
from loopwright.sandbox import LocalSandbox
from loopwright.sandbox._process import reaper_supported, run_process
from loopwright.sandbox._spawn import host_reaper
from loopwright.sandbox._strays import host_can_adopt
from tests.sandbox.conftest import processes_with, py, sleep_marker, wait_until

pytestmark = pytest.mark.skipif(not reaper_supported(), reason="the reaper needs Linux and /proc")

DELAY_S = 2.0  # the daemon writes late.txt this long after it started
CHECK_AFTER_S = 3.0  # ... and the test looks for it this long after the command started

# Daemonises (fork, leave the group, fork, the middle exits so the daemon is orphaned), records
# the daemon's PID, then ends as the test asks. The daemon writes late.txt after DELAY_S.
DAEMON = textwrap.dedent(
    """
    import os, sys, time
    leave, ending = sys.argv[1], sys.argv[2]
    if os.fork() == 0:
        os.setsid() if leave == "setsid" else os.setpgid(0, 0)
        if os.fork() == 0:
            with open("daemon.pid.tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename("daemon.pid.tmp", "daemon.pid")
            time.sleep({delay})
            with open("late.txt", "w") as f:
                f.write("forged")
            os._exit(0)
        os._exit(0)
    os.wait()
    while not os.path.exists("daemon.pid"):
        time.sleep(0.01)
    if ending == "ignore-term":
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if ending in ("sleep", "ignore-term"):
        time.sleep(1000)
    sys.exit(int(ending))
    """
).format(delay=DELAY_S)


HOST_REAPED = host_reaper() is not None and host_can_adopt()


@pytest.fixture(
    params=[
        pytest.param(
            "host-reaped",
            marks=pytest.mark.skipif(not HOST_REAPED, reason="no setpriv, or cannot adopt"),
        ),
        "reaper",
    ]
)
def local(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> LocalSandbox:
    if request.param == "reaper":  # as for a command that runs beside a host-reaped one
        monkeypatch.setattr("loopwright.sandbox._process.host_reaper", lambda: None)
    return LocalSandbox()


def assert_daemon_dead_and_silent(work: Path, started: float) -> None:
    """The daemon is gone now (not even a zombie), and late.txt never appears."""
    pid = int((work / "daemon.pid").read_text())
    assert not Path(f"/proc/{pid}").exists(), f"daemon {pid} outlived the command"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    time.sleep(max(0.0, started + CHECK_AFTER_S - time.monotonic()))
    assert not (work / "late.txt").exists()


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs util-linux setsid")
def test_a_setsid_daemon_is_dead_when_run_returns(local: LocalSandbox, work: Path) -> None:
    daemon = f'echo $$ > daemon.pid; sleep {DELAY_S}; echo late > "$PWD/late.txt"'
    script = f"setsid sh -c '{daemon}' & while [ ! -s daemon.pid ]; do sleep 0.01; done"
    started = time.monotonic()
    result = local.run(["sh", "-c", script], cwd=work, timeout_s=60)
    assert (result.exit_code, result.timed_out) == (0, False)
    assert_daemon_dead_and_silent(work, started)


@pytest.mark.parametrize("leave", ["setsid", "setpgid"])
def test_a_double_forked_daemon_is_dead_when_run_returns(
    local: LocalSandbox, work: Path, leave: str
) -> None:
    started = time.monotonic()
    result = local.run([*py(DAEMON), leave, "0"], cwd=work, timeout_s=60)
    assert (result.exit_code, result.timed_out) == (0, False), result.stderr
    assert_daemon_dead_and_silent(work, started)


def test_a_daemon_of_a_failing_command_is_dead_when_run_returns(
    local: LocalSandbox, work: Path
) -> None:
    started = time.monotonic()
    result = local.run([*py(DAEMON), "setsid", "3"], cwd=work, timeout_s=60)
    assert (result.exit_code, result.timed_out) == (3, False), result.stderr
    assert_daemon_dead_and_silent(work, started)


@pytest.mark.parametrize("ending", ["sleep", "ignore-term"])
def test_a_daemon_of_a_timed_out_command_is_dead_when_run_returns(
    local: LocalSandbox, work: Path, ending: str
) -> None:
    started = time.monotonic()
    result = local.run([*py(DAEMON), "setsid", ending], cwd=work, timeout_s=1.5)
    assert (result.exit_code, result.timed_out) == (None, True), result.stderr
    assert_daemon_dead_and_silent(work, started)


class Unadopting(LocalSandbox):
    adopt = False


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs util-linux setsid")
@pytest.mark.parametrize("outputs", ["kept", "closed"])
@pytest.mark.parametrize("adopt", [True, False], ids=["adopted", "inherited"])
def test_a_setsid_daemon_that_kills_the_reaper_is_dead_when_run_returns(
    work: Path, outputs: str, adopt: bool
) -> None:
    """The daemon kills the reaper (`kill -9 $PPID` from the command). Adopted by the host, it is
    killed as such; without adoption (`adopt = False`: orphaned to init) it is still found by
    the output pipes it inherited, or (when it closed them) by the command's private HOME in its
    environment."""
    local = LocalSandbox() if adopt else Unadopting()
    redirect = " </dev/null >/dev/null 2>&1" if outputs == "closed" else ""
    daemon = f'echo $$ > daemon.pid; sleep {DELAY_S}; echo late > "$PWD/late.txt"'
    script = (
        f"setsid sh -c '{daemon}'{redirect} & "
        "while [ ! -s daemon.pid ]; do sleep 0.01; done; kill -9 $PPID; sleep 0.2"
    )
    started = time.monotonic()
    local.run(["sh", "-c", script], cwd=work, timeout_s=60)
    # Orphaned to init, the killed daemon may stay a zombie until init reaps it: dead all the same.
    stat = Path(f"/proc/{(work / 'daemon.pid').read_text().strip()}/stat")
    with contextlib.suppress(FileNotFoundError):
        assert stat.read_text().rsplit(")", 1)[1].split()[0] == "Z", "the daemon outlived run"
    time.sleep(max(0.0, started + CHECK_AFTER_S - time.monotonic()))
    assert not (work / "late.txt").exists()


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs util-linux setsid")
def test_a_command_that_keeps_starting_daemons_leaves_none(local: LocalSandbox, work: Path) -> None:
    marker = sleep_marker()
    spawner = f"while true; do setsid sleep {marker} & sleep 0.01; done"
    result = local.run(["sh", "-c", f"({spawner}) & sleep 0.3"], cwd=work, timeout_s=60)
    assert (result.exit_code, result.timed_out) == (0, False)
    assert processes_with(marker) == []


def test_a_well_behaved_command_sees_no_difference(local: LocalSandbox, work: Path) -> None:
    script = 'read line; echo "got $line"; echo err >&2; exit 7'
    result = local.run(["sh", "-c", script], cwd=work, timeout_s=30, stdin="hello\n")
    assert (result.exit_code, result.stdout, result.stderr) == (7, "got hello\n", "err\n")
    assert result.argv == ("sh", "-c", script)  # the caller's argv, not the reaper's
    assert not result.timed_out and not result.truncated
    killed = local.run(["sh", "-c", "kill -9 $$"], cwd=work, timeout_s=30)
    assert killed.exit_code == 128 + 9


def test_the_command_inherits_the_same_signal_state_as_without_the_reaper(work: Path) -> None:
    class Unreaped(LocalSandbox):
        reap = False

    # grep reports its own ignored, blocked and caught signal masks.
    argv = ["grep", "-E", "^Sig(Ign|Blk|Cgt)", "/proc/self/status"]
    reaped = LocalSandbox().run(argv, cwd=work, timeout_s=30)
    plain = Unreaped().run(argv, cwd=work, timeout_s=30)
    assert reaped.exit_code == 0 and reaped.stdout.count("\n") == 3
    assert reaped.stdout == plain.stdout


def test_the_command_and_the_reaper_get_only_the_built_environment(
    local: LocalSandbox, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    script = "env; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ"
    # No LANG: the reaper's interpreter would add LC_CTYPE (PEP 538) to its own environment.
    result = local.run(["sh", "-c", script], cwd=work, timeout_s=30, env={"FOO": "bar"})
    own, reaper = result.stdout.split("---\n")
    assert "sk-must-not-leak" not in result.stdout
    assert {line.split("=")[0] for line in own.splitlines()} - {"PWD"} == {"FOO", "PATH", "HOME"}
    assert {line.split("=")[0] for line in reaper.splitlines()} == {"FOO", "PATH", "HOME"}


@pytest.mark.parametrize("content", [b"\x7fELF but not really\n", b"echo not a script\n"])
def test_the_reaper_reports_a_command_it_cannot_execute(
    local: LocalSandbox, work: Path, content: bytes
) -> None:
    """Neither an ELF executable nor a `#!` script: the exec fails (a shell would run the second
    as a shell script; the host-reaped start must refuse it as the exec does)."""
    script = work / "not-a-program"
    script.write_bytes(content)
    script.chmod(0o755)
    with pytest.raises(SandboxError, match=r"not-a-program.*[Ee]xec format error"):
        local.run(["./not-a-program"], cwd=work, timeout_s=30)
    assert not (work / "ran").exists()


@pytest.mark.skipif(not HOST_REAPED, reason="no setpriv, or this process cannot adopt")
def test_a_host_reaped_command_runs_under_a_marked_shell_never_under_the_host(work: Path) -> None:
    """The command's parent is the shell (a `kill -9 $PPID` kills that, not loopwright), marked
    with no_new_privs like the command; without adoption the Python reaper is the parent."""
    argv = ["sh", "-c", "cat /proc/$PPID/comm; grep NoNewPrivs /proc/$PPID/status"]
    reaped = LocalSandbox().run(argv, cwd=work, timeout_s=30)
    assert reaped.stdout == "sh\nNoNewPrivs:\t1\n"
    assert Unadopting().run(argv, cwd=work, timeout_s=30).stdout.startswith("python")
    builtin = LocalSandbox().run(["echo", "-n", "a\\tb"], cwd=work, timeout_s=30)
    assert builtin.stdout == "a\\tb"  # /bin/echo, not the shell's builtin (which expands \t)


@pytest.mark.skipif(not HOST_REAPED, reason="no setpriv, or this process cannot adopt")
def test_a_command_ending_beside_a_host_reaped_one_leaves_that_ones_daemon_alone(
    work: Path, marker: str
) -> None:
    """A host-reaped command's orphans are adopted by the host and swept when it ends; a second
    command ending while the first still runs must not sweep them (it runs under the reaper):
    the first command's own daemon lives as long as the first command, and no longer."""
    first = (
        f"(setsid sleep {marker} & echo $! > daemon.pid); sleep 1.5; "
        'kill -0 "$(cat daemon.pid)" && exit 0; exit 3'
    )
    results: list[int | None] = []
    running = threading.Thread(
        target=lambda: results.append(
            LocalSandbox().run(["sh", "-c", first], cwd=work, timeout_s=30).exit_code
        )
    )
    running.start()
    assert wait_until(lambda: bool(processes_with(marker)))
    beside = LocalSandbox().run(["sh", "-c", "echo $PPID"], cwd=work, timeout_s=30)
    assert beside.exit_code == 0
    running.join()
    assert results == [0], "the daemon of the running command was killed by the other's sweep"
    assert processes_with(marker) == []


def test_killing_the_reaper_still_kills_the_process_group(local: LocalSandbox, work: Path) -> None:
    marker = sleep_marker()
    result = local.run(
        ["sh", "-c", f"sleep {marker} & kill -9 $PPID; wait"], cwd=work, timeout_s=60
    )
    assert not result.timed_out
    assert wait_until(lambda: not processes_with(marker)), processes_with(marker)


def test_without_the_reaper_commands_still_run(
    local: LocalSandbox, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("loopwright.sandbox._process.reaper_supported", lambda: False)
    result = local.run(["sh", "-c", "echo $PPID; exit 4"], cwd=work, timeout_s=30)
    assert (result.exit_code, result.stdout) == (4, f"{os.getpid()}\n")


# The hardest daemon to find: it leaves the session, kills the reaper, closes every descriptor it
# inherited (0..1023) and re-executes itself with an empty environment in `/`, so that it holds
# neither the command's pipes nor its HOME; then it writes late.txt into the workspace again and
# again (or, with a last argument `spawn`, starts a new daemon every 5 ms). argv: REAPER_PID
# WORKSPACE MARKER TARGET CONTENT [spawn] (the marker is an argument of the re-executed daemon,
# for the test to find it).
SCRUBBED_DAEMON = textwrap.dedent(
    """
    import os, sys
    reaper, work, marker = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    if os.fork():
        os._exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
    os.kill(reaper, 9)
    os.closerange(0, 1024)
    os.chdir("/")
    LOOP = (
        "import sys, time\\n"
        "while True:\\n"
        "    try:\\n"
        "        with open(sys.argv[1], 'w') as f:\\n"
        "            f.write(sys.argv[2])\\n"
        "    except OSError:\\n"
        "        pass\\n"
        "    time.sleep(0.02)\\n"
    )
    SPAWN = (
        "import os, time\\n"
        "while True:\\n"
        "    if os.fork() == 0:\\n"
        "        os.setsid()\\n"
        "        time.sleep(100)\\n"
        "        os._exit(0)\\n"
        "    time.sleep(0.005)\\n"
    )
    target, content = os.path.join(work, sys.argv[4]), sys.argv[5]
    code = SPAWN if sys.argv[6:] == ["spawn"] else LOOP
    os.execve(sys.executable, [sys.executable, "-c", code, target, content, marker], {})
    """
)


def scrubbed_daemon_command(marker: str, target: str, content: str, mode: str = "") -> str:
    """A `sh -c` script that starts SCRUBBED_DAEMON (which kills the script's reaper) and waits."""
    script = SCRUBBED_DAEMON.replace("'", "'\"'\"'")
    return (
        f"python3 -c '{script}' \"$PPID\" \"$PWD\" {marker} {target} '{content}' {mode} & "
        "sleep 1; echo still here"
    )


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique argument to find the test's daemon by; whatever still carries it at the end is
    killed, so that a failing test leaves nothing running."""
    chosen = sleep_marker()
    yield chosen
    kill_all_with(chosen)


def kill_all_with(marker: str) -> None:
    """SIGKILL every process with `marker`, again until none is left (one may keep forking)."""
    end = time.monotonic() + 10
    while (found := processes_with(marker)) and time.monotonic() < end:
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        time.sleep(0.02)


def test_a_daemon_that_kills_the_reaper_and_drops_all_it_inherited_is_dead_when_run_returns(
    local: LocalSandbox, work: Path, marker: str
) -> None:
    """Neither its pipes nor its HOME give it away: the host adopted it (a child subreaper
    itself) and it carries the command's no_new_privs mark, which no process can drop."""
    command = scrubbed_daemon_command(marker, "late.txt", "forged")
    local.run(["sh", "-c", command], cwd=work, timeout_s=60)
    assert processes_with(marker) == [], "the daemon outlived run"
    (work / "late.txt").unlink(missing_ok=True)
    time.sleep(0.5)
    assert not (work / "late.txt").exists()


@pytest.mark.skipif(not host_can_adopt(), reason="this process cannot adopt (no_new_privs set)")
def test_an_adopted_daemon_that_keeps_starting_daemons_leaves_none(
    local: LocalSandbox, work: Path, marker: str
) -> None:
    command = scrubbed_daemon_command(marker, "late.txt", "forged", "spawn")
    local.run(["sh", "-c", command], cwd=work, timeout_s=60)
    assert processes_with(marker) == []


def test_the_command_is_marked_only_with_adoption_and_the_host_a_subreaper_only_meanwhile(
    work: Path,
) -> None:
    argv = ["grep", "NoNewPrivs", "/proc/self/status"]
    marked = LocalSandbox().run(argv, cwd=work, timeout_s=30)
    unmarked = Unadopting().run(argv, cwd=work, timeout_s=30)
    assert "\t1" in marked.stdout if host_can_adopt() else "\t0" in marked.stdout
    assert "\t0" in unmarked.stdout
    busy = threading.Thread(
        target=LocalSandbox().run, args=(["sleep", "1"],), kwargs={"cwd": work, "timeout_s": 30}
    )
    busy.start()
    time.sleep(0.5)
    during = _host_is_subreaper()
    busy.join()
    assert during == host_can_adopt()
    assert not _host_is_subreaper()  # switched off after the last command


def _has_no_new_privs(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return "NoNewPrivs:\t1" in Path(f"/proc/{pid}/status").read_text()
    return False


def _host_is_subreaper() -> bool:
    flag = ctypes.c_int(0)
    assert ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0) == 0
    return bool(flag.value)


@pytest.mark.skipif(not host_can_adopt(), reason="this process cannot adopt (no_new_privs set)")
def test_adoption_takes_nothing_from_the_hosts_other_children(work: Path, marker: str) -> None:
    """While a hostile command's orphans are adopted and swept, the host's own children (started
    outside loopwright, and other commands in other threads, one of them marked by bwrap-like
    no_new_privs of its own) keep running and keep their exit statuses: only the adopted ones
    are killed and reaped, never with `waitpid(-1)`."""
    plain = subprocess.Popen(["sh", "-c", "sleep 1.5; exit 3"])
    mark = sleep_marker()
    marked_code = (
        "import ctypes; ctypes.CDLL(None).prctl(38, 1, 0, 0, 0); import time; time.sleep(1.5)"
    )
    results: dict[str, int | None] = {}

    def other(name: str, argv: list[str], sandbox_reap: bool) -> None:
        outcome = run_process(
            argv,
            cwd=work,
            env={"PATH": os.environ["PATH"]},
            timeout_s=30,
            output_cap=10_000,
            reap=sandbox_reap,
        )
        results[name] = outcome.exit_code

    threads = [
        threading.Thread(target=other, args=("reaped", ["sh", "-c", "sleep 1.5; exit 5"], True)),
        threading.Thread(target=other, args=("marked", [*py(marked_code), mark], False)),
    ]
    for thread in threads:
        thread.start()
    assert wait_until(lambda: any(_has_no_new_privs(pid) for pid in processes_with(mark)))
    command = scrubbed_daemon_command(marker, "late.txt", "forged")
    LocalSandbox().run(["sh", "-c", command], cwd=work, timeout_s=60)
    assert processes_with(marker) == []
    for thread in threads:
        thread.join()
    assert results == {"reaped": 5, "marked": 0}
    assert plain.wait(timeout=10) == 3


@pytest.mark.skipif(not host_can_adopt(), reason="this process cannot adopt (no_new_privs set)")
def test_a_process_forked_while_a_command_runs_still_adopts(work: Path, marker: str) -> None:
    """A worker forked (a process pool's) while another thread runs a command inherits none of
    that command's state: it becomes a subreaper of its own when it runs a command."""
    busy = threading.Thread(
        target=LocalSandbox().run, args=(["sleep", "1"],), kwargs={"cwd": work, "timeout_s": 30}
    )
    busy.start()
    time.sleep(0.3)
    pid = os.fork()
    if pid == 0:  # the worker: exit status 0 when its daemon is dead
        code = 1
        try:
            command = scrubbed_daemon_command(marker, "late.txt", "forged")
            LocalSandbox().run(["sh", "-c", command], cwd=work, timeout_s=60)
            code = 0 if processes_with(marker) == [] else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    busy.join()
    assert os.waitstatus_to_exitcode(status) == 0, "the worker's daemon outlived its command"
