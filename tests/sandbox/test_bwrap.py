"""What bubblewrap isolates: the network, writes outside the workspace, /tmp; and its command line."""

from __future__ import annotations

import secrets
import shutil
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.errors import MissingDependencyError
from loopwright.sandbox import BubblewrapSandbox, LocalSandbox, Sandbox
from loopwright.sandbox._bwrap import _within, bwrap_argv
from tests.sandbox.conftest import py

CONNECT = """
import socket, sys
try:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as s:
        print("connected:", s.recv(16).decode())
except OSError as exc:
    print("blocked:", exc)
    sys.exit(1)
"""


class _Hello(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(b"hello")


@pytest.fixture
def tcp_port() -> Iterator[int]:
    """A TCP server on 127.0.0.1 in this (unsandboxed) process."""
    with socketserver.TCPServer(("127.0.0.1", 0), _Hello) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield server.server_address[1]
        server.shutdown()
        thread.join()


def test_the_network_is_unreachable_under_bubblewrap(
    bwrap: Sandbox, work: Path, tcp_port: int
) -> None:
    result = bwrap.run([*py(CONNECT), str(tcp_port)], cwd=work, timeout_s=30)
    assert result.exit_code == 1 and result.stdout.startswith("blocked"), result


def test_the_same_connection_works_unsandboxed(work: Path, tcp_port: int) -> None:
    """Proves the test above can fail: only the sandbox stops the connection."""
    result = LocalSandbox().run([*py(CONNECT), str(tcp_port)], cwd=work, timeout_s=30)
    assert result.stdout.strip() == "connected: hello", result


def test_network_true_shares_the_network(bwrap: Sandbox, work: Path, tcp_port: int) -> None:
    result = bwrap.run([*py(CONNECT), str(tcp_port)], cwd=work, timeout_s=30, network=True)
    assert result.stdout.strip() == "connected: hello", result


def test_the_workspace_is_writable(bwrap: Sandbox, work: Path) -> None:
    result = bwrap.run(["sh", "-c", "echo made > made.txt"], cwd=work, timeout_s=30)
    assert result.exit_code == 0, result.stderr
    assert (work / "made.txt").read_text() == "made\n"


def test_extra_writable_paths_are_writable(bwrap: Sandbox, work: Path, tmp_path: Path) -> None:
    out = tmp_path / "private"
    out.mkdir()
    result = bwrap.run(
        ["sh", "-c", f"echo x > {out}/junit.xml"], cwd=work, timeout_s=30, writable=[out]
    )
    assert result.exit_code == 0, result.stderr
    assert (out / "junit.xml").read_text() == "x\n"


def test_a_directory_outside_the_workspace_cannot_be_written(
    bwrap: Sandbox, work: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "escaped.txt"
    result = bwrap.run(["sh", "-c", f"echo x > {target}"], cwd=work, timeout_s=30)
    assert result.exit_code != 0
    assert not target.exists()


def test_the_rest_of_the_filesystem_is_read_only(bwrap: Sandbox, work: Path) -> None:
    # A path outside /tmp, the workspace and any bind: the test directory itself.
    target = Path(__file__).parent / f"lw-escape-{secrets.token_hex(6)}"
    code = f"open({str(target)!r}, 'w').write('x')"
    try:
        result = bwrap.run(py(code), cwd=work, timeout_s=30)
        assert result.exit_code != 0
        # Read-only where the checkout is outside /tmp; not even visible when it is under /tmp.
        refusals = ("Read-only file system", "Permission denied", "No such file or directory")
        assert any(r in result.stderr for r in refusals), result.stderr
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


def test_tmp_is_private_and_starts_empty(bwrap: Sandbox, work: Path) -> None:
    visible = Path("/tmp") / f"lw-host-{secrets.token_hex(6)}"
    inside = f"lw-inside-{secrets.token_hex(6)}"
    visible.write_text("host")
    try:
        script = f"ls -A /tmp; echo ---; echo x > /tmp/{inside} && cat /tmp/{inside}"
        result = bwrap.run(["sh", "-c", script], cwd=work, timeout_s=30)
    finally:
        visible.unlink()
    listing, _, wrote = result.stdout.partition("---\n")
    assert wrote == "x\n"  # /tmp is writable inside...
    assert not (Path("/tmp") / inside).exists()  # ...but private
    # Only the mount points bwrap made under /tmp are there: for the workspace, and for the
    # interpreter's environment when the checkout itself lives under /tmp.
    bound = [work.resolve(), *(Path(p).resolve() for p in (sys.prefix, sys.base_prefix))]
    allowed = {
        p.relative_to("/tmp").parts[0]
        for p in bound
        if p.is_relative_to("/tmp") and p != Path("/tmp")
    }
    assert set(listing.split()) <= allowed
    assert visible.name not in listing


def test_the_venv_python_and_its_packages_work_inside(bwrap: Sandbox, work: Path) -> None:
    result = bwrap.run(py("import pytest, pytest_timeout; print('ok')"), cwd=work, timeout_s=60)
    assert result.stdout.strip() == "ok", result.stderr


def test_loopwright_itself_is_out_of_sight(bwrap: Sandbox, work: Path) -> None:
    """Its bundled benchmarks hold solutions and hidden tests."""
    code = "import importlib.util; print(importlib.util.find_spec('loopwright'))"
    result = bwrap.run(py(code), cwd=work, timeout_s=60)
    assert result.stdout.strip() == "None", result.stderr


def test_processes_inside_have_no_capabilities(bwrap: Sandbox, work: Path) -> None:
    result = bwrap.run(["grep", "CapEff", "/proc/self/status"], cwd=work, timeout_s=30)
    assert result.stdout.split() == ["CapEff:", "0000000000000000"]


def test_a_missing_bwrap_binary_is_a_missing_dependency() -> None:
    with pytest.raises(MissingDependencyError, match="apt-get install bubblewrap"):
        BubblewrapSandbox(bwrap="no-such-bwrap-lw")


def test_bwrap_argv_binds_parents_before_children_and_denies_the_network() -> None:
    ws, inner, other = Path("/w/ws"), Path("/w/ws/sub/deep"), Path("/o")
    argv = bwrap_argv("bwrap", ["true"], cwd=ws, writable=[inner, other, ws])
    binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert binds == ["/o", "/w/ws", "/w/ws/sub/deep"]
    assert argv[-4:] == ["--chdir", "/w/ws", "--", "true"]
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv
    assert argv.index("--tmpfs") < argv.index("--bind")  # binds land on top of the private /tmp
    assert "--unshare-net" not in bwrap_argv("bwrap", ["true"], cwd=ws, network=True)


def test_bwrap_argv_re_exposes_read_only_paths_hidden_by_tmp() -> None:
    venv, ws = Path("/tmp/venv"), Path("/tmp/ws")
    argv = bwrap_argv(
        "bwrap", ["python"], cwd=ws, readonly=[(venv, venv), (Path("/tmp/ws/x"), Path("/tmp/ws/x"))]
    )
    ro = [argv[i + 1 : i + 3] for i, a in enumerate(argv) if a == "--ro-bind"]
    assert ro[-1:] == [["/tmp/venv", "/tmp/venv"]]  # /tmp/ws/x is already visible (rw)
    assert ["/", "/"] not in ro  # the machine's own files are never bound wholesale
    assert (
        argv.index("--tmpfs")
        < argv.index("--ro-bind", argv.index("--tmpfs"))
        < argv.index("--bind")
    )


def test_bwrap_argv_skips_read_only_paths_inside_another_read_only_bind() -> None:
    venv, python = Path("/tmp/venv"), Path("/tmp/venv/bin/python")
    argv = bwrap_argv(
        "bwrap",
        ["python"],
        cwd=Path("/w"),
        readonly=[(Path("/usr/bin/python3"), python), (venv, venv)],
    )
    ro = [argv[i + 1 : i + 3] for i, a in enumerate(argv) if a == "--ro-bind"]
    assert ro[-1:] == [["/tmp/venv", "/tmp/venv"]]
    assert ["/usr/bin/python3", "/tmp/venv/bin/python"] not in ro


def test_find_from_inside_sees_no_task_answers_home_or_loopwright(
    bwrap: Sandbox, work: Path
) -> None:
    """Markers where an agent would look for answers: a task's hidden tests and gold (in a task
    directory beside the checkout, outside /tmp), the home directory, and loopwright's own
    package directory (its bundled benchmarks). `find /` from inside finds none of them."""
    import loopwright

    token = secrets.token_hex(6)
    name = f"lw-marker-{token}"
    task = Path(__file__).resolve().parents[2] / f".lw-task-{token}"
    places = [
        task / "tests" / name,
        task / "solution" / name,
        Path.home() / f".{name}",
        Path(loopwright.__file__).resolve().parent / name,
    ]
    try:
        for marker in places:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("answer")
        script = f"find / -path /proc -prune -o -name '*{name}*' -print 2>/dev/null; echo done"
        result = bwrap.run(["sh", "-c", script], cwd=work, timeout_s=120)
        # Unsandboxed, a search of the same places finds every marker: the test can fail.
        roots = " ".join(str(p.parent) for p in places)
        plain = LocalSandbox().run(
            ["sh", "-c", f"find {roots} -maxdepth 1 -name '*{name}*'"], cwd=work, timeout_s=60
        )
    finally:
        for marker in places:
            marker.unlink(missing_ok=True)
        shutil.rmtree(task, ignore_errors=True)
    assert result.stdout.strip() == "done", result.stdout
    assert len(plain.stdout.split()) == len(places), plain.stdout


def test_bwrap_argv_masks_a_directory_only_where_a_bind_shows_it() -> None:
    venv = Path("/opt/venv")
    package = venv / "lib" / "site-packages" / "loopwright"
    elsewhere = Path("/home/u/src/loopwright")
    argv = bwrap_argv(
        "bwrap", ["true"], cwd=Path("/w"), readonly=[(venv, venv)], masked=[package, elsewhere]
    )
    masks = [argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"]
    assert masks == ["/tmp", str(package)]  # not shown, so not even named
    assert argv.index(str(package)) > argv.index(str(venv))  # laid over the bind, not under it


def test_a_masked_directory_inside_a_read_only_bind_is_empty(bwrap: Sandbox, work: Path) -> None:
    """What the mask does for loopwright's package in a non-editable install."""
    shown = Path(sys.prefix).resolve()
    inside = next(p for p in (shown / "lib").iterdir() if p.is_dir())
    argv = bwrap_argv(
        shutil.which("bwrap") or "bwrap",
        ["ls", "-A", str(inside)],
        cwd=work.resolve(),
        readonly=[(shown, shown)],
        masked=[inside],
    )
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (0, ""), done.stderr


def test_bwrap_argv_binds_nothing_the_system_directories_already_show() -> None:
    sh = (Path("/usr/bin/dash"), Path("/usr/bin/sh"))
    argv = bwrap_argv("bwrap", ["sh"], cwd=Path("/w"), readonly=[sh, (Path("/usr"), Path("/usr"))])
    ro = [argv[i + 1 : i + 3] for i, a in enumerate(argv) if a == "--ro-bind"]
    assert ["/usr/bin/dash", "/usr/bin/sh"] not in ro
    assert ro.count(["/usr", "/usr"]) <= 1  # the system bind alone, where /usr exists


@pytest.mark.parametrize(
    ("path", "place"),
    [
        ("/a/b", "/a/b"),
        ("/a/b/c", "/a/b"),
        ("/a/bc", "/a/b"),  # a sibling that shares a prefix is not inside
        ("/a", "/a/b"),
        ("/usr/lib", "/"),
        ("/", "/"),
        ("/tmp/x", "/tmpx"),
    ],
)
def test_the_string_test_of_containment_agrees_with_pathlib(path: str, place: str) -> None:
    assert _within(Path(path), Path(place)) == Path(path).is_relative_to(place)
