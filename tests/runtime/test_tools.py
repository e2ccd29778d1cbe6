"""The built-in tools through `execute_tool_call`: workspace confinement, allowlists, malformed
calls, and each tool's contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.errors import ConfigError, UsageError
from loopwright.models import ToolCall
from loopwright.records import NotesWritten, read_events
from loopwright.runtime import (
    FINISH,
    INSTRUCTION_VIEW,
    TOOLS,
    Registry,
    ToolContext,
    default_registries,
    execute_tool_call,
    runtime_catalog,
    tool,
)
from loopwright.workflow import OUTER_LOOP_FUNCTIONS, default_catalog
from tests.runtime.conftest import Harness, call

ALL = tuple(n for n in TOOLS.names() if n != FINISH)


def run(ctx: ToolContext, tc: ToolCall, allowed: tuple[str, ...] = ALL) -> tuple[str, str | None]:
    out = execute_tool_call(tc, allowed, TOOLS, ctx)
    return out.output, out.error


@pytest.fixture
def ctx(h: Harness) -> ToolContext:
    context, _ = h.tool_context()
    return context


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("secret\n")
    return path


# --- confinement -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["read_file", "write_file", "edit_file", "list_files", "search_code"]
)
def test_paths_leaving_the_workspace_are_refused(
    ctx: ToolContext, outside: Path, name: str
) -> None:
    for raw in ["../outside/secret.txt", str(outside / "secret.txt"), "calc/../../outside/x.txt"]:
        args = {"read_file": {"path": raw}, "write_file": {"path": raw, "content": "x"},
                "edit_file": {"path": raw, "old": "secret", "new": "pwned"},
                "list_files": {"path": raw}, "search_code": {"pattern": "s", "path": raw}}[name]  # fmt: skip
        output, error = run(ctx, call(name, **args))
        assert error is not None and "leaves the workspace" in error, (name, raw, output)
        assert output.startswith(f"error: path {raw} leaves the workspace")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret\n"


def test_a_symlink_pointing_out_is_refused_for_reading_and_writing(
    ctx: ToolContext, outside: Path
) -> None:
    (ctx.workspace / "link").symlink_to(outside)
    (ctx.workspace / "filelink").symlink_to(outside / "secret.txt")
    (ctx.workspace / "dangling").symlink_to(outside / "new.txt")
    for tc in [
        call("read_file", path="link/secret.txt"),
        call("read_file", path="filelink"),
        call("write_file", path="link/new.txt", content="x"),
        call("write_file", path="filelink", content="x"),
        call("write_file", path="dangling", content="x"),
        call("edit_file", path="filelink", old="secret", new="pwned"),
    ]:
        _output, error = run(ctx, tc)
        assert error is not None and "leaves the workspace" in error, tc
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret\n"


def test_search_code_does_not_follow_a_file_link_out(ctx: ToolContext, outside: Path) -> None:
    (ctx.workspace / "filelink").symlink_to(outside / "secret.txt")
    output, error = run(ctx, call("search_code", pattern="secret"))
    assert error is None
    assert "filelink" not in output


def test_the_instruction_file_is_readable_though_outside(h: Harness, ctx: ToolContext) -> None:
    assert not h.instruction.resolve().is_relative_to(ctx.workspace)
    output, error = run(ctx, call("read_file", path=str(h.instruction)))
    assert error is None
    assert output == h.instruction.read_text()


def test_the_instruction_file_is_read_at_its_fixed_path(h: Harness, ctx: ToolContext) -> None:
    output, error = run(ctx, call("read_file", path=INSTRUCTION_VIEW))
    assert error is None and output == h.instruction.read_text()


def test_no_host_path_reaches_the_agent(ctx: ToolContext, outside: Path) -> None:
    """Refusals, command output and paths an agent writes itself show the workspace as it is
    told it ("." under the local sandbox) and the instruction at INSTRUCTION_VIEW."""
    root = str(ctx.workspace)
    _, error = run(ctx, call("read_file", path=str(outside / "secret.txt")))
    assert error is not None and "leaves the workspace" in error and root not in error
    output, _ = run(ctx, call("run_command", command=f"pwd; echo {ctx.instruction_file}"))
    assert output.splitlines()[1:] == [".", INSTRUCTION_VIEW]
    output, _ = run(ctx, call("read_file", path=f"{INSTRUCTION_VIEW}/../../etc/passwd"))
    assert output.startswith("error:") and "root:" not in output


def test_writing_inside_git_metadata_is_refused(ctx: ToolContext) -> None:
    _, error = run(ctx, call("write_file", path=".git/hooks/pre-commit", content="x"))
    assert error is not None and ".git" in error
    assert not (ctx.workspace / ".git/hooks/pre-commit").exists()


# --- allowlist, unknown tools, malformed calls -----------------------------------------------------


def test_a_disallowed_tool_is_refused_naming_the_allowed(ctx: ToolContext) -> None:
    output, error = run(
        ctx, call("write_file", path="x.py", content="x"), ("read_file", "list_files")
    )
    assert error is not None
    assert "'write_file' is not allowed" in output
    assert "allowed tools: read_file, list_files, finish" in output
    assert not (ctx.workspace / "x.py").exists()


def test_an_unknown_tool_is_refused(ctx: ToolContext) -> None:
    output, _ = run(ctx, call("web_search", query="x"), ("read_file",))
    assert output == (
        "error: tool 'web_search' does not exist (node 'n'); allowed tools: read_file, finish"
    )


def test_finish_is_always_allowed(ctx: ToolContext) -> None:
    out = execute_tool_call(call("finish", summary="ok"), (), TOOLS, ctx)
    assert (out.output, out.error, out.finished) == ("ok", None, True)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"path": ', "not valid JSON"),
        ('["calc/core.py"]', "must be a JSON object"),
        ("{}", "read_file is missing argument 'path'; it takes: path"),
        ('{"path": "a", "mode": "r"}', "unexpected arguments ['mode']"),
        ('{"path": 3}', "argument 'path' of read_file must be a string, got int"),
    ],
)
def test_malformed_arguments_become_tool_errors(ctx: ToolContext, raw: str, expected: str) -> None:
    output, error = run(ctx, ToolCall("c1", "read_file", raw))
    assert error is not None and expected in error, output


def test_optional_arguments_may_be_null_or_left_out(ctx: ToolContext) -> None:
    assert run(ctx, ToolCall("c", "list_files", "{}"))[1] is None
    assert run(ctx, ToolCall("c", "list_files", '{"path": null}'))[1] is None
    assert run(ctx, ToolCall("c", "list_files", ""))[1] is None


# --- each tool ---------------------------------------------------------------------------------


def test_read_file_reads_and_caps_long_files(ctx: ToolContext) -> None:
    assert (
        run(ctx, call("read_file", path="calc/core.py"))[0] == "def add(a, b):\n    return a + b\n"
    )
    (ctx.workspace / "big.txt").write_text("x" * 150_000)
    output, _ = run(ctx, call("read_file", path="big.txt"))
    assert output.startswith("x" * 100_000)
    assert output.endswith("[truncated: showing the first 100000 of 150000 characters]")
    assert "no such file: nope.py" in run(ctx, call("read_file", path="nope.py"))[0]
    assert "is a directory" in run(ctx, call("read_file", path="calc"))[0]


def test_list_files_is_recursive_sorted_and_skips_git(ctx: ToolContext) -> None:
    (ctx.workspace / "calc" / "__pycache__").mkdir()
    (ctx.workspace / "calc" / "__pycache__" / "core.pyc").write_text("")
    output, _ = run(ctx, call("list_files"))
    assert output.splitlines() == ["calc/__init__.py", "calc/core.py", "tests/test_add.py"]
    assert run(ctx, call("list_files", path="tests"))[0] == "tests/test_add.py"


def test_search_code_finds_regex_and_falls_back_to_literal(ctx: ToolContext) -> None:
    output, _ = run(ctx, call("search_code", pattern=r"def \w+\(a"))
    assert output.splitlines() == ["calc/core.py:1: def add(a, b):"]
    output, error = run(ctx, call("search_code", pattern="add(", path="calc"))
    assert error is None
    assert "searched for it literally" in output
    assert "calc/__init__.py:1: from calc.core import add" not in output
    assert "calc/core.py:1: def add(a, b):" in output
    assert "no match" in run(ctx, call("search_code", pattern="zzz"))[0]


def test_write_file_creates_parents(ctx: ToolContext) -> None:
    output, error = run(ctx, call("write_file", path="pkg/sub/new.py", content="X = 1\n"))
    assert error is None and output == "wrote 6 characters to pkg/sub/new.py"
    assert (ctx.workspace / "pkg/sub/new.py").read_text() == "X = 1\n"


def test_edit_file_needs_exactly_one_occurrence(ctx: ToolContext) -> None:
    path = ctx.workspace / "calc" / "core.py"
    path.write_text("a = 1\na = 1\nb = 2\n")
    _, error = run(ctx, call("edit_file", path="calc/core.py", old="c = 3", new="x"))
    assert error is not None and "occurs 0 times" in error
    _, error = run(ctx, call("edit_file", path="calc/core.py", old="a = 1", new="x"))
    assert error is not None and "occurs 2 times" in error
    assert path.read_text() == "a = 1\na = 1\nb = 2\n"
    output, error = run(ctx, call("edit_file", path="calc/core.py", old="b = 2", new="b = 3"))
    assert error is None and "replaced 1 occurrence" in output
    assert path.read_text() == "a = 1\na = 1\nb = 3\n"


def test_run_tests_runs_the_visible_tests(ctx: ToolContext) -> None:
    output, error = run(ctx, call("run_tests"))
    assert error is None
    assert output.startswith("exit code 0\n") and "2 passed" in output
    (ctx.workspace / "calc" / "core.py").write_text("def add(a, b):\n    return a - b\n")
    output, _ = run(ctx, call("run_tests", path="tests/test_add.py"))
    assert output.startswith("exit code 1\n") and "FAILED tests/test_add.py::test_add" in output
    assert not (ctx.workspace / ".pytest_cache").exists()
    _, error = run(ctx, call("run_tests", path="../elsewhere"))
    assert error is not None and "leaves the workspace" in error


def test_run_command_returns_exit_code_and_output(ctx: ToolContext) -> None:
    output, error = run(ctx, call("run_command", command="echo hi; echo oops >&2; exit 3"))
    assert error is None
    assert output == "exit code 3\nhi\n\noops"


def test_commands_get_only_the_time_left(h: Harness) -> None:
    ctx, _ = h.tool_context(deadline_s=0.5)
    output, _ = run(ctx, call("run_command", command="sleep 5"))
    assert output.startswith("timed out after")
    ctx, _ = h.tool_context(deadline_s=0)
    _, error = run(ctx, call("run_command", command="true"))
    assert error is not None and "no time left" in error


def test_notes_are_appended_read_back_and_recorded(h: Harness) -> None:
    ctx, writer = h.tool_context(node_id="study")
    assert run(ctx, call("read_notes"))[0] == "(no notes yet)"
    run(ctx, call("write_notes", text="first"))
    run(ctx, call("write_notes", text="second\n"))
    assert run(ctx, call("read_notes"))[0] == "first\n\nsecond"
    writer.close()
    notes = [e for e in read_events(h.events_path) if isinstance(e, NotesWritten)]
    assert [(e.node_id, e.chars) for e in notes] == [("study", 5), ("study", 7)]


# --- registry and catalog ------------------------------------------------------------------------


def test_every_tool_offers_a_json_schema() -> None:
    specs = {name: TOOLS.get(name).spec() for name in TOOLS.names()}
    assert specs["edit_file"].parameters["required"] == ["path", "old", "new"]
    assert specs["run_tests"].parameters["required"] == []
    assert specs["read_notes"].parameters["properties"] == {}
    for spec in specs.values():
        json.dumps(spec.parameters)
        assert spec.description and "\n" not in spec.description


def test_the_runtime_implements_every_catalog_tool_function_and_check() -> None:
    regs, cat = default_registries(), default_catalog()
    assert set(regs.tools.names()) == cat.tools | {FINISH}
    # The outer loop's steps are implemented by loopwright.search.OuterLoop, bound to one run.
    assert set(regs.functions.names()) == cat.functions - set(OUTER_LOOP_FUNCTIONS)
    assert set(regs.checks.names()) == cat.checks - {"outer_converged"}
    assert runtime_catalog().tools == cat.tools
    assert "react" in runtime_catalog().loops


def test_unknown_names_list_the_known_and_names_are_unique() -> None:
    with pytest.raises(ConfigError, match="unknown tool 'grep'") as info:
        TOOLS.get("grep")
    assert "read_file" in str(info.value)
    local = TOOLS.copy()
    with pytest.raises(UsageError, match="already registered"):

        @tool("read_file", registry=local)
        def again(ctx: ToolContext) -> str:
            return ""


def test_a_custom_tool_registers_in_its_own_registry(ctx: ToolContext) -> None:
    local: Registry = TOOLS.copy()

    @tool("shout", params={"word": "what to shout"}, registry=local)
    def shout(ctx: ToolContext, word: str, times: int = 1) -> str:
        """Shout a word."""
        return (word.upper() + " ") * times

    assert "shout" not in TOOLS
    assert local.get("shout").spec().parameters["required"] == ["word"]
    out = execute_tool_call(call("shout", word="hi", times=2), ("shout",), local, ctx)
    assert out.output == "HI HI "
    out = execute_tool_call(call("shout", word="hi", times=True), ("shout",), local, ctx)
    assert out.error == "argument 'times' of shout must be an integer, got bool 'True'"
