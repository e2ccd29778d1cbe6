"""What is done to a virtualenv once its build succeeded: the checkout directories its editable
installs import from (passed on to the workspace), and the move from the build directory to its
final path (a virtualenv is not relocatable)."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["editable_roots", "relocate"]

_QUOTED = re.compile(r"""['"](/[^'"\n]*)['"]""")


def editable_roots(env_dir: Path, checkout_seen: str) -> list[str]:
    """The checkout's directories that editable installs import from, relative ("" is the root):
    path lines of `.pth` files, and the parents of the paths setuptools' editable finders map.
    Sorted; paths with a newline or a colon are left out (they could not be passed on)."""
    roots: set[str] = set()
    for site in env_dir.glob("lib/*/site-packages"):
        for pth in site.glob("*.pth"):
            for line in pth.read_text(encoding="utf-8", errors="replace").splitlines():
                rel = _inside(line.strip(), checkout_seen)
                if rel is not None and not line.startswith(("import ", "import\t")):
                    roots.add(rel)
        for finder in site.glob("__editable__*finder.py"):
            for match in _QUOTED.finditer(finder.read_text(encoding="utf-8", errors="replace")):
                rel = _inside(str(Path(match.group(1)).parent), checkout_seen)
                if rel is not None:
                    roots.add(rel)
    return sorted(r for r in roots if ":" not in r and "\n" not in r)


def _inside(path: str, root: str) -> str | None:
    if path == root:
        return ""
    if path.startswith(root + "/"):
        return path[len(root) + 1 :].rstrip("/")
    return None


def relocate(env_dir: Path, final: Path) -> None:
    """Rewrite the build directory's path to `final` in the environment's scripts (shebangs,
    activate) and pyvenv.cfg: a virtualenv is not relocatable, so it is built elsewhere and
    renamed only once complete."""
    old, new = str(env_dir).encode(), str(final).encode()
    candidates = [*(env_dir / "bin").iterdir(), env_dir / "pyvenv.cfg"]
    for path in candidates:
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if old in data and b"\0" not in data[:8000]:
            path.write_bytes(data.replace(old, new))
