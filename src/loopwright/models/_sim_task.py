"""What the sim knows about a task once it has recognised the instruction: the files the gold
changes and the content of each variant. A builder uses it to write a variant and to measure
how many of the gold's files its notes name; study notes never come from here (_sim_study.py).

Read from the task directory (never from a workspace), once per task, and cached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from loopwright.models._sim_policy import GOLD
from loopwright.tasks import Benchmark, Task

__all__ = ["TaskFacts", "match_instruction"]


def _read_overlay(root: Path) -> dict[str, str]:
    files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and "__pycache__" not in rel.parts and rel.suffix != ".pyc":
            files[rel.as_posix()] = path.read_text(encoding="utf-8")
    return files


@dataclass(frozen=True)
class TaskFacts:
    """A task as the sim knows it: `repo` (path -> text of the files any variant touches),
    `variants` ("gold" and each flawed name -> {path: text}), and `changed` (the paths whose
    gold text differs from the repo, in order). Immutable after construction."""

    task: Task
    repo: Mapping[str, str]
    variants: Mapping[str, Mapping[str, str]]
    changed: tuple[str, ...]

    @staticmethod
    def load(task: Task) -> TaskFacts:
        """Read the task's solution/ and flawed/ overlays. ValueError when there is no gold."""
        if task.solution_dir is None:
            raise ValueError(f"task {task.id} has no solution/: the sim needs a gold overlay")
        variants = {GOLD: _read_overlay(task.solution_dir)}
        variants |= {v.name: _read_overlay(task.flawed_dir(v.name)) for v in task.spec.flawed}
        touched = sorted({p for files in variants.values() for p in files})
        repo = {
            p: (task.repo_dir / p).read_text(encoding="utf-8")
            for p in touched
            if (task.repo_dir / p).is_file()
        }
        gold = variants[GOLD]
        changed = tuple(p for p in gold if repo.get(p) != gold[p])
        return TaskFacts(
            task,
            MappingProxyType(repo),
            MappingProxyType({k: MappingProxyType(v) for k, v in variants.items()}),
            changed,
        )

    def coverage(self, text: str) -> float:
        """The fraction of the gold's changed files whose path appears in `text`."""
        if not self.changed:
            return 0.0
        return sum(p in text for p in self.changed) / len(self.changed)

    def target_files(self, variant: str, written_before: set[str]) -> dict[str, str]:
        """The files to write so that the workspace holds `variant`: each file it changes, and
        each file written earlier in the run that it leaves as in the repo (reverted)."""
        files = self.variants[variant]
        paths = [p for p in files if self.repo.get(p) != files[p]]
        paths += sorted(p for p in written_before if p not in paths and p in self.repo)
        return {p: files.get(p, self.repo.get(p, "")) for p in paths}


def match_instruction(text: str, benchmark: Benchmark) -> Task | None:
    """The task whose instruction `text` is: an exact match (surrounding whitespace ignored),
    else the one task whose instruction the text contains (a tool may add a header). None when
    no task, or more than one, matches."""
    stripped = text.strip()
    if not stripped:
        return None
    exact = [t for t in benchmark.tasks if t.instruction.strip() == stripped]
    if len(exact) == 1:
        return exact[0]
    contained = [t for t in benchmark.tasks if t.instruction.strip() in text]
    return contained[0] if len(contained) == 1 else None
