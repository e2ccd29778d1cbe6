"""The package order of DESIGN.md holds: a package imports only the packages below it.

The order is the package table of the design notes, top to bottom. Shared
modules at the root (`errors`, `registry`, `stats`, `_caller`, `_fs`, `_scratch`, `_version`) may be imported from
anywhere. No package imports another package's private module (`loopwright.x._y` outside `x`):
it uses the names `x` exports."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import loopwright

ORDER = (
    "cli",
    "report",
    "harness",
    "research",
    "search",
    "reflection",
    "evaluation",
    "store",
    "runtime",
    "scoring",
    "models",
    "sandbox",
    "tasks",
    "records",
    "workflow",
)
ROOT_MODULES = frozenset({"errors", "registry", "stats", "_caller", "_fs", "_scratch", "_version"})
SRC = Path(loopwright.__file__).parent


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every absolute `loopwright` import in `path`, lazy ones included;
    `from loopwright import x` yields `loopwright.x`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "loopwright":
                found += [(node.lineno, f"loopwright.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name.startswith("loopwright.")]


def _violations(package: str) -> list[str]:
    rank = ORDER.index(package)
    out = []
    for path in sorted((SRC / package).rglob("*.py")):
        if "bundled" in path.relative_to(SRC).parts:  # task repositories, not loopwright code
            continue
        for line, name in _imports(path):
            target = name.split(".")[1]
            if target in ROOT_MODULES:
                continue
            if target not in ORDER:
                out.append(f"{path.relative_to(SRC)}:{line} imports {name} (not a package)")
            elif ORDER.index(target) < rank:
                out.append(f"{path.relative_to(SRC)}:{line} imports {name}, which is above it")
    return out


@pytest.mark.parametrize("package", ORDER)
def test_packages_import_only_downwards(package: str) -> None:
    assert _violations(package) == []


def test_every_package_is_placed() -> None:
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(ORDER)


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    bad = tmp_path / "m.py"
    bad.write_text(
        "def f():\n    from loopwright.search import evolve\n    from loopwright import cli\n"
    )
    assert _imports(bad) == [(2, "loopwright.search"), (3, "loopwright.cli")]


def _private_in(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, module) of each import in `path` (a module of `package`) of a private module of
    another package: `loopwright.x._y`, or a private module deeper in `x`."""
    return [
        (line, name)
        for line, name in _imports(path)
        if name.split(".")[1] != package and any(p.startswith("_") for p in name.split(".")[2:])
    ]


@pytest.mark.parametrize("package", ORDER)
def test_no_package_imports_another_packages_private_module(package: str) -> None:
    bad = [
        f"{path.relative_to(SRC)}:{line} imports {name}"
        for path in sorted((SRC / package).rglob("*.py"))
        if "bundled" not in path.relative_to(SRC).parts
        for line, name in _private_in(path, package)
    ]
    assert bad == []


def test_a_private_import_is_caught(tmp_path: Path) -> None:
    bad = tmp_path / "m.py"
    bad.write_text(
        "from loopwright.search._checkpoint import RunLock\n"
        "import loopwright.search.mutations._core\n"
        "from loopwright.search import RunLock\n"
        "from loopwright.cli._app import app\n"
        "from loopwright._version import __version__\n",
        encoding="utf-8",
    )
    assert _private_in(bad, "cli") == [
        (1, "loopwright.search._checkpoint"),
        (2, "loopwright.search.mutations._core"),
    ]


SIM_TABLES = frozenset(
    {
        "GUIDANCE_KEYWORDS",
        "PITFALLS",
        "FAILURE_PATTERNS",
        "SimParams",
        "REVIEW_CUES",
        "TESTS_FIRST_CUES",
        "RANGES",
        "RANGES_2",
        "LANDSCAPE_FAMILIES",
        "LANDSCAPE_FAMILY",
        "LANDSCAPE_FAMILY_2",
        "BREAKING_KINDS",
        "draw_landscape",
    }
)
"""What the simulator reacts to and how: reading any of it outside the simulator lets search
or reflection aim at the simulator instead of at the task (issue 19)."""


def _sim_reads(path: Path) -> list[str]:
    """Imports in `path` of a simulator module, or of a simulator table by name."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [f"{node.lineno}: import {a.name}" for a in node.names if "._sim" in a.name]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if "_sim" in node.module.rsplit(".", 1)[-1] and node.module.startswith("loopwright"):
                out.append(f"{node.lineno}: from {node.module}")
            out += [
                f"{node.lineno}: {a.name} from {node.module}"
                for a in node.names
                if a.name in SIM_TABLES
            ]
    return out


def test_nothing_outside_the_models_package_reads_the_simulator() -> None:
    bad = [
        f"{path.relative_to(SRC)}:{line}"
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).parts[0] != "models"
        and "bundled" not in path.relative_to(SRC).parts  # task repositories, not loopwright code
        for line in _sim_reads(path)
    ]
    assert bad == []


def test_the_simulator_check_sees_each_way_of_reading_it(tmp_path: Path) -> None:
    bad = tmp_path / "m.py"
    bad.write_text(
        "from loopwright.models import GUIDANCE_KEYWORDS\n"
        "import loopwright.models._sim_policy\n"
        "from loopwright.models._sim_task import TaskFacts\n"
        "from loopwright.models import SimModel\n",
        encoding="utf-8",
    )
    assert _sim_reads(bad) == [
        "1: GUIDANCE_KEYWORDS from loopwright.models",
        "2: import loopwright.models._sim_policy",
        "3: from loopwright.models._sim_task",
    ]


# What the sim may know of a task beyond its tools' results, by documented design
# (docs/sim-model.md): the gold's and flawed variants' files and the flawed variants' kinds,
# read in `_sim_task.py` (TaskFacts), and handed to the decision model by `_sim.py` alone. The
# study notes, the landscape draw and the decision model never open a task directory.
_TASK_SECRETS = frozenset({"solution_dir", "flawed_dir", "tests_dir", "test_dir", "root"})
_SECRET_READERS = {"_sim_task.py": _TASK_SECRETS}


def _secret_reads(path: Path, allowed: frozenset[str]) -> list[str]:
    """Attribute reads in `path` of a task's directories (gold, flawed, hidden tests, root)
    that its module is not allowed."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.name}:{node.lineno} .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in _TASK_SECRETS - allowed
    ]


def test_only_the_task_facts_open_a_tasks_gold_or_flawed_files() -> None:
    sim_modules = sorted((SRC / "models").glob("_sim*.py"))
    assert {p.name for p in sim_modules} >= {"_sim.py", "_sim_landscape.py", "_sim_policy.py"}
    bad = [
        hit
        for path in sim_modules
        for hit in _secret_reads(path, _SECRET_READERS.get(path.name, frozenset()))
    ]
    assert bad == []


def test_the_task_secret_check_sees_a_read(tmp_path: Path) -> None:
    bad = tmp_path / "_sim_landscape.py"
    bad.write_text("def draw(task):\n    return task.solution_dir / 'x.py'\n", encoding="utf-8")
    assert _secret_reads(bad, frozenset()) == ["_sim_landscape.py:2 .solution_dir"]


def _words(text: str, n: int) -> set[str]:
    words = re.findall(r"[a-z']+", text.lower())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def _sim_phrases_in(sentence: str) -> list[str]:
    """What of the simulator's tables `sentence` holds: a GUIDANCE_KEYWORDS phrase (the sim
    reacts to it as a substring), a four-word run of a PITFALLS line, a match of an instruction
    cue or of a failing-feedback pattern."""
    from loopwright.models import GUIDANCE_KEYWORDS
    from loopwright.models._sim_policy import FAILURE_PATTERNS
    from loopwright.models._sim_study import _PITFALL_CUES, PITFALLS

    text = sentence.lower()
    hits = [p for phrases in GUIDANCE_KEYWORDS.values() for p in phrases if p in text]
    hits += sorted(g for line in PITFALLS.values() for g in _words(line, 4) & _words(text, 4))
    hits += [f"cue {kind}" for kind, cue in _PITFALL_CUES.items() if cue.search(sentence)]
    return hits + [f"pattern {p.pattern}" for p in FAILURE_PATTERNS if p.search(sentence)]


def test_the_prompt_mutation_library_shares_no_phrase_with_the_simulator() -> None:
    """The offline prompt mutation's sentences are generic advice, not the simulator's trigger
    phrases: a sim figure for prompt mutation must not be a lookup of what the sim reacts to."""
    from loopwright.search import GUIDANCE

    shared = {s[:50]: _sim_phrases_in(s) for ss in GUIDANCE.values() for s in ss}
    assert {k: v for k, v in shared.items() if v} == {}


def test_the_phrase_check_sees_each_sim_table() -> None:
    assert _sim_phrases_in("Mind the corner case.") == ["corner case"]
    assert _sim_phrases_in("so keep existing behaviour: do it") == [
        "existing behaviour",
        "keep existing behaviour do",
        "cue broken_regression",
    ]
    assert _sim_phrases_in("see the __init__ file") == ["cue import_error"]
    assert _sim_phrases_in("got 3 failed") == ["pattern \\b\\d+ (?:failed|errors?)\\b"]
