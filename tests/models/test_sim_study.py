"""The sim's study notes come from what the study agent saw (instruction, list_files, the files
it read), never from the task's solution/ or flawed/ overlays."""

from __future__ import annotations

import shutil
from pathlib import Path

from loopwright.models import SimModel
from loopwright.models._sim_study import (
    MAX_READS,
    PITFALLS,
    InstructionRefs,
    files_to_study,
    parse_listing,
    study_notes,
)
from loopwright.tasks import Benchmark, FailureKind, load_benchmark_dir
from tests.models.conftest import fresh_tools
from tests.models.driver import Tools, agent, render, run_node

STUDY = agent("research-build-verify", "study")
MINI = Path(__file__).parents[2] / "src/loopwright/tasks/bundled/mini"

NO_PATHS = """# Let `wrap` keep tabs

`wrap(text, width)` currently counts a tab as one character. Give `wrap` and `truncate` a
keyword-only `tab_size: int = 4` parameter. Raise `ValueError` when `tab_size` is less than 1.
"""


def _copy_task(tmp_path: Path, task_id: str = "l1-slugify") -> Path:
    root = tmp_path / "bench" / task_id
    shutil.copytree(MINI / task_id, root)
    return root


def _study(bench: Benchmark, tmp_path: Path, seed: int = 0) -> tuple[str, list[str]]:
    """The notes a study node writes on the benchmark's only task, and the paths it read."""
    (task,) = bench.tasks
    tools = fresh_tools(task, tmp_path / "ws")
    run = run_node(SimModel(bench, seed), render(STUDY.prompt, task, tools), STUDY.tools, tools)
    (notes,) = tools.notes
    reads = [str(c.arguments()["path"]) for c in run.calls if c.name == "read_file"]
    return notes, reads[1:]


def _bench(tmp_path: Path) -> Benchmark:
    return load_benchmark_dir(tmp_path / "bench")


def test_the_answer_overlays_do_not_reach_the_notes(tmp_path: Path) -> None:
    root = _copy_task(tmp_path)
    before, _ = _study(_bench(tmp_path), tmp_path / "a")
    gold = root / "solution/textkit/transform.py"
    gold.write_text(gold.read_text() + "\n\ndef secret_helper() -> None:\n    pass\n")
    (root / "solution/textkit/answer_module.py").write_text("ANSWER = 42\n")
    shutil.rmtree(root / "flawed/missing_module")
    toml = root / "task.toml"
    text = toml.read_text()
    text = text[: text.index('[[flawed]]\nname = "missing_module"')]
    text = text.replace('kind = "missed_edge_case"', 'kind = "wrong_logic"')
    toml.write_text(text)
    after, _ = _study(_bench(tmp_path), tmp_path / "b")
    assert after == before
    assert "answer_module" not in after and "secret_helper" not in after


def test_an_instruction_without_paths_gets_files_from_its_identifiers(tmp_path: Path) -> None:
    root = _copy_task(tmp_path)
    (root / "instruction.md").write_text(NO_PATHS)
    notes, reads = _study(_bench(tmp_path), tmp_path)
    assert reads == ["textkit/wrap.py"]  # the stem of `wrap`; no test file, none named
    files = notes.split("Files that look relevant:\n")[1].split("\n\n")[0]
    assert files == "- textkit/wrap.py"
    assert "transform" not in notes  # never hinted at by the instruction
    assert "1. Change textkit/wrap.py." in notes
    assert PITFALLS[FailureKind.MISSED_EDGE_CASE] in notes  # it says to raise ValueError
    assert PITFALLS[FailureKind.BROKEN_REGRESSION] not in notes  # nothing about existing tests


def test_renaming_a_file_changes_the_notes(tmp_path: Path) -> None:
    root = _copy_task(tmp_path)
    (root / "instruction.md").write_text(NO_PATHS)
    (root / "repo/textkit/wrap.py").rename(root / "repo/textkit/truncate.py")
    notes, reads = _study(_bench(tmp_path), tmp_path)
    assert reads == ["textkit/truncate.py"]  # the stem of `truncate` now
    assert "- textkit/truncate.py" in notes and "wrap.py" not in notes


def test_notes_are_the_same_for_a_seed_and_do_not_depend_on_it(
    mini: Benchmark, tmp_path: Path
) -> None:
    task = mini.task("l2-shopcart-discounts")
    runs = []
    for seed in (0, 0, 5):
        tools = fresh_tools(task, tmp_path)
        run_node(SimModel(mini, seed), render(STUDY.prompt, task, tools), STUDY.tools, tools)
        runs.append(tools.notes[0])
    assert runs[0] == runs[1] == runs[2]


def test_a_named_path_missing_from_the_listing_is_a_new_file() -> None:
    instruction = "Add `pkg/new_mod.py` and export `thing` from `pkg/__init__.py`."
    listing = ["pkg/__init__.py", "pkg/core.py", "tests/test_core.py"]
    assert files_to_study(instruction, listing) == ["pkg/__init__.py"]
    notes = study_notes(instruction, listing, {"pkg/__init__.py": "from pkg.core import thing\n"})
    assert "- pkg/__init__.py\n- pkg/new_mod.py (new file)\n" in notes
    assert PITFALLS[FailureKind.IMPORT_ERROR] in notes


def test_dotted_modules_map_to_listed_files() -> None:
    listing = ["src/pkg/mod.py", "src/pkg/sub/__init__.py", "src/pkg/other.py"]
    refs = InstructionRefs.of("Use `pkg.mod.helper` and `pkg.sub`; see `decimal.Decimal`.")
    assert refs.modules == ("pkg.mod.helper", "pkg.sub", "decimal.Decimal")
    chosen = files_to_study("Use `pkg.mod.helper` and `pkg.sub`.", listing)
    assert chosen == ["src/pkg/mod.py", "src/pkg/sub/__init__.py"]


def test_without_a_listing_it_reads_only_named_paths() -> None:
    instruction = "Change `a/b.py` and `c.py` so `thing` works (see `a.d`)."
    assert files_to_study(instruction, None) == ["a/b.py", "c.py"]
    # a named path whose read failed is a new file; a file read that names nothing is left out
    notes = study_notes(instruction, None, {"a/b.py": "def thing(): ...\n"})
    assert "- a/b.py\n- c.py (new file)\n" in notes


def test_reads_are_capped_and_tests_need_a_name() -> None:
    names = " ".join(f"`mod{i}`" for i in range(12))
    listing = [f"pkg/mod{i}.py" for i in range(12)] + ["tests/test_mod0.py", "tests/mod1.py"]
    chosen = files_to_study(f"Touch {names} as `tests/test_mod0.py` shows.", listing)
    assert len(chosen) == MAX_READS
    assert chosen[0] == "tests/test_mod0.py" and "tests/mod1.py" not in chosen


def test_the_listing_is_parsed_from_the_tool_result() -> None:
    text = "a.py\npkg/b.py\n[... 3 more files; list a subdirectory to see them]"
    assert parse_listing(text) == ("a.py", "pkg/b.py")
    assert parse_listing("(no files under .)") == ()
    assert parse_listing("error: no such directory: x") is None
    assert parse_listing(None) is None


def test_a_study_with_no_list_tool_reads_what_the_instruction_names(
    mini: Benchmark, tmp_path: Path
) -> None:
    task = mini.task("l2-logsum-min-level")
    tools: Tools = fresh_tools(task, tmp_path)
    offered = [t for t in STUDY.tools if t != "list_files"]
    run = run_node(SimModel(mini, 0), render(STUDY.prompt, task, tools), offered, tools)
    names = [c.name for c in run.calls]
    assert "list_files" not in names and names.count("read_file") > 1
    assert "logsum/parser.py" in tools.notes[0]
