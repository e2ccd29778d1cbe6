"""Runs INSIDE an external agent's network namespace (standard library only: loopwright itself
is not visible there). Copied into the visit's scratch directory and run as

    python -I -S _inner_forwarder.py HOST PORT SOCKET [--connect TARGET] -- AGENT ARGV...

It listens on HOST:PORT, the loopback address and port of the model endpoint's URL (and on
[::1]:PORT too for 127.0.0.1, which `localhost` may name), and forwards every connection to
the unix socket SOCKET, which loopwright's bridge outside the namespace connects to the
endpoint. With `--connect TARGET` (a remote HTTPS endpoint, `host:port`) it is an HTTP proxy
instead (the agent's HTTPS_PROXY) that accepts only `CONNECT TARGET` and answers 403 to
anything else. Then it runs the agent (stdin, stdout, stderr and the
environment inherited) and exits with the agent's exit code. Nothing else leaves the namespace:
it has loopback only.
"""

import contextlib
import socket
import subprocess
import sys
import threading

_CHUNK = 65536


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(_CHUNK)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


_HEAD_LIMIT = 16384


def _read_head(client: socket.socket) -> bytes:
    head = b""
    while b"\r\n\r\n" not in head and len(head) < _HEAD_LIMIT:
        data = client.recv(4096)
        if not data:
            break
        head += data
    return head


def _allowed(client: socket.socket, target: str) -> bool:
    """Read a proxy request; True (after answering 200) for `CONNECT target`, else 403."""
    try:
        head = _read_head(client)
        words = head.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(words) == 3 and words[0].upper() == "CONNECT" and words[1].lower() == target:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            return True
        client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    except OSError:
        pass
    return False


def _relay(client: socket.socket, path: str, target: str | None) -> None:
    if target is not None and not _allowed(client, target):
        client.close()
        return
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(server: socket.socket, path: str, target: str | None) -> None:
    while True:
        try:
            client, _ = server.accept()
        except OSError:
            return
        threading.Thread(target=_relay, args=(client, path, target), daemon=True).start()


def _listen(family: int, host: str, port: int) -> socket.socket | None:
    try:
        server = socket.socket(family, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, port))
        server.listen(64)
    except OSError:
        return None
    return server


def main(argv: list[str]) -> int:
    host, port, path, rest = argv[0], int(argv[1]), argv[2], argv[3:]
    target = None
    if rest[:1] == ["--connect"] and len(rest) > 1:
        target, rest = rest[1].lower(), rest[2:]
    separator, command = (rest[0], rest[1:]) if rest else ("", [])
    if separator != "--" or not command:
        sys.stderr.write("usage: _inner_forwarder.py HOST PORT SOCKET [--connect T] -- CMD...\n")
        return 2
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    main_server = _listen(family, host, port)
    if main_server is None:
        sys.stderr.write(f"loopwright: cannot listen on {host}:{port} for the model endpoint\n")
        return 2
    extra = _listen(socket.AF_INET6, "::1", port) if host == "127.0.0.1" else None
    for server in (main_server, extra):
        if server is not None:
            threading.Thread(target=_serve, args=(server, path, target), daemon=True).start()
    try:
        return subprocess.call(command)
    except OSError as exc:
        sys.stderr.write(f"loopwright: cannot start {command[0]}: {exc}\n")
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
