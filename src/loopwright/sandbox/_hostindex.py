"""The host's package index and the container sandbox.

A task's environment image is built inside a container, which sees neither the host's pip or
uv configuration nor its loopback interface: an index the host reaches at `localhost`, at
`127.0.0.1` or as a local directory (a devpi or a `pip download` folder) does not exist there,
so an install that needs it (an inferred `pip install -e .`) fails late, inside the build.
`index_notice` says so before the build, naming the index and the two ways out: ship the wheels
with the task (`--no-index --find-links wheels`), or give the build an index it can reach with
`LOOPWRIGHT_CONTAINER_INDEX_URL` (passed to the build as `PIP_INDEX_URL` and
`UV_DEFAULT_INDEX`; `build_index_variables`). docs/sandbox.md, "The host's package index".
"""

from __future__ import annotations

import configparser
import ipaddress
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from loopwright.tasks import Task

__all__ = [
    "INDEX_URL_ENV",
    "build_index_variables",
    "host_indexes",
    "index_notice",
    "say_index_notice",
]

INDEX_URL_ENV = "LOOPWRIGHT_CONTAINER_INDEX_URL"
"""An index URL the container builds can reach: given to them as PIP_INDEX_URL and
UV_DEFAULT_INDEX (the host's own index settings never reach a container)."""
_INDEX_VARIABLES = (
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX",
    "UV_FIND_LINKS",
)
_PIP_KEYS = ("index-url", "extra-index-url", "find-links")
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")
_said: set[str] = set()


def _pip_config_files(environ: Mapping[str, str]) -> list[Path]:
    """The pip configuration files pip reads on this machine (site, user, $PIP_CONFIG_FILE)."""
    home = Path(environ.get("HOME", str(Path.home())))
    xdg = Path(environ.get("XDG_CONFIG_HOME", str(home / ".config")))
    files = [Path("/etc/pip.conf"), Path(sys.prefix) / "pip.conf", xdg / "pip" / "pip.conf"]
    files.append(home / ".pip" / "pip.conf")
    if environ.get("PIP_CONFIG_FILE"):
        files.append(Path(environ["PIP_CONFIG_FILE"]))
    return files


def host_indexes(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(where it is set, URL or path) for every package index or links location the host's
    pip and uv are told to use: the PIP_*/UV_* index variables and pip's configuration files
    (`index-url`, `extra-index-url`, `find-links` in any section). Unreadable files are skipped."""
    environ = os.environ if environ is None else environ
    found = [(name, url) for name in _INDEX_VARIABLES for url in environ.get(name, "").split()]
    for path in _pip_config_files(environ):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        for section in parser.sections():
            for key in _PIP_KEYS:
                for url in parser.get(section, key, fallback="").split():
                    found.append((f"{path} [{section}] {key}", url))
    return found


def _unreachable(url: str) -> bool:
    """Whether a container cannot reach `url` as the host does: a loopback host, or a local
    path (`file://` or no scheme)."""
    parts = urlsplit(url)
    if parts.scheme in ("", "file"):
        return True
    host = (parts.hostname or "").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _needs_index(task: Task) -> str | None:
    """The first install step of `task`'s environment that fetches from an index (one without
    `--no-index`), as written; None when every step installs offline or there is none."""
    table = task.spec.environment
    if table is None:
        return None
    if table.requirements and "--no-index" not in table.requirements:
        return "pip install " + " ".join(table.requirements)
    for rel in table.requirements_files:
        try:
            text = (task.root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "--no-index" not in text:
            return f"pip install -r {rel}"
    for command in table.install:
        installs = any(tool in command for tool in ("pip ", "pip3 ", "uv "))
        if installs and "--no-index" not in command:
            return command
    return None


def index_notice(task: Task, environ: Mapping[str, str] | None = None) -> str | None:
    """What to tell the user before `task`'s environment is built in a container whose
    install step needs an index the host has set but the container cannot reach; None when
    INDEX_URL_ENV is set, the install is offline, or no such index is set."""
    environ = os.environ if environ is None else environ
    if environ.get(INDEX_URL_ENV):
        return None
    step = _needs_index(task)
    hidden = [(where, url) for where, url in host_indexes(environ) if _unreachable(url)]
    if step is None or not hidden:
        return None
    where, url = hidden[0]
    return (
        f"task {task.id}'s environment is built in a container, which cannot see the "
        f"host's package index {url} (set by {where}; a loopback address or a local path is "
        f"the container's own there), so `{step}` will not find its packages. Ship the "
        "wheels with the task (environment/wheels/ and `--no-index --find-links wheels` in "
        'environment/requirements.txt; docs/importing.md, "Offline installs"), or give the '
        f"build an index it can reach: export {INDEX_URL_ENV}=http://HOST:PORT/simple/ "
        "(passed to the build as PIP_INDEX_URL and UV_DEFAULT_INDEX)."
    )


def say_index_notice(task: Task) -> str | None:
    """`index_notice(task)` printed on stderr, once per process and index; returns it."""
    notice = index_notice(task)
    if notice is not None:
        key = notice.split(" (set by ", 1)[0].split("package index ", 1)[-1]
        if key not in _said:
            _said.add(key)
            print(f"notice: {notice}", file=sys.stderr, flush=True)
    return notice


def build_index_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables a container build gets for its package index: INDEX_URL_ENV's value as
    PIP_INDEX_URL and UV_DEFAULT_INDEX, or nothing (the image's own defaults)."""
    environ = os.environ if environ is None else environ
    url = environ.get(INDEX_URL_ENV, "")
    return {"PIP_INDEX_URL": url, "UV_DEFAULT_INDEX": url} if url else {}
