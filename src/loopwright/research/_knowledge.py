"""knowledge.md: append-only bullets; a correction is a new bullet that supersedes older ones.

Each bullet is one line:

    - K7 (iter 3, distill) Adding a visible-tests gate after 'builder' raised the score ...
    - K9 (iter 5, distill; supersedes K7) The gain of K7 did not hold at perf scale ...

Nothing is ever rewritten: `append` opens the file for appending only, and every commit
records the file's length and SHA-256 so the next iteration (and `check_append_only`) can
prove that the committed bytes are still the file's prefix.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from loopwright.errors import ConfigError

__all__ = ["Bullet", "Knowledge", "KnowledgeDigest", "check_append_only", "initial_knowledge"]

_BULLET = re.compile(r"^- (K\d+) \(([^)]*)\) (.*)$")
_HEADER = """# Knowledge

Append-only. What the research loop has learned, one bullet per line. A mistake is corrected
by a later bullet that says `supersedes K<n>`; nothing above a line is ever edited.

"""


class KnowledgeDigest(BaseModel):
    """Length and SHA-256 of knowledge.md at a commit: the prefix later versions must keep."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bytes: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Bullet:
    """One knowledge bullet: id, where it came from, what it supersedes, its text."""

    id: str
    origin: str
    supersedes: tuple[str, ...]
    text: str

    @property
    def iteration(self) -> int | None:
        match = re.match(r"iter (\d+)", self.origin)
        return int(match.group(1)) if match else None


def initial_knowledge() -> str:
    """knowledge.md at bootstrap: the header and the package's seed bullets as K1, K2, ..."""
    seed = resources.files("loopwright.research") / "data" / "seed_knowledge.md"
    lines = [
        ln[2:].strip()
        for ln in seed.read_text(encoding="utf-8").splitlines()
        if ln.startswith("- ")
    ]
    return _HEADER + "".join(f"- K{i} (seed) {text}\n" for i, text in enumerate(lines, 1))


class Knowledge:
    """The knowledge.md of one working directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def bullets(self) -> list[Bullet]:
        """Every bullet, in file order (lines that are not bullets are skipped)."""
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            match = _BULLET.match(line)
            if match is None:
                continue
            kid, meta, text = match.groups()
            parts = [p.strip() for p in meta.split(";")]
            sup: tuple[str, ...] = ()
            for p in parts[1:]:
                if p.startswith("supersedes "):
                    sup = tuple(s.strip() for s in p.removeprefix("supersedes ").split(","))
            out.append(Bullet(kid, parts[0], sup, text))
        return out

    def current(self) -> list[Bullet]:
        """The bullets no later bullet supersedes."""
        all_bullets = self.bullets()
        dead = {s for b in all_bullets for s in b.supersedes}
        return [b for b in all_bullets if b.id not in dead]

    def append(
        self, text: str, *, origin: str, supersedes: tuple[str, ...] = (), by: str | None = None
    ) -> Bullet:
        """Append one bullet and return it; `by` names the model that made it (`model NAME`,
        with `, SIMULATED` for an offline one). ConfigError for empty or multi-line text, or a
        `supersedes` id that no bullet has."""
        body = " ".join(text.split())
        if not body:
            raise ConfigError("a knowledge bullet needs text", got=repr(text[:60]))
        existing = self.bullets()
        known = {b.id for b in existing}
        unknown = [s for s in supersedes if s not in known]
        if unknown:
            raise ConfigError(
                "a knowledge bullet supersedes bullets that do not exist",
                got=", ".join(unknown),
                fix=f"name existing ids ({', '.join(sorted(known)[-5:])} ...)",
            )
        number = max((int(b.id[1:]) for b in existing), default=0) + 1
        meta = origin + (f"; supersedes {', '.join(supersedes)}" if supersedes else "")
        meta += f"; {by}" if by else ""
        bullet = Bullet(f"K{number}", origin, supersedes, body)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(f"- {bullet.id} ({meta}) {body}\n")
        return bullet

    def digest(self) -> KnowledgeDigest:
        data = self.path.read_bytes()
        return KnowledgeDigest(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())


def check_append_only(path: Path, committed: KnowledgeDigest) -> str | None:
    """Why knowledge.md no longer starts with the bytes committed (None when it does); the
    reason completes the sentence "knowledge.md is append-only, but ..."."""
    data = path.read_bytes() if path.is_file() else b""
    if len(data) < committed.bytes:
        return (
            f"knowledge.md is shorter ({len(data)} bytes) than when committed ({committed.bytes})"
        )
    if hashlib.sha256(data[: committed.bytes]).hexdigest() != committed.sha256:
        return "its committed bytes were edited"
    return None
