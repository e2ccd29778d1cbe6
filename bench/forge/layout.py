"""Write one forge task directory from its plan: repo/, solution/, flawed/, tests/, task.toml,
instruction.md. Pure text assembly; the randomness was drawn by the planner (generate.py)."""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass
from pathlib import Path

from instruction import render_instruction
from ops import Family, Op

PADDING_NOTE = (
    "# --- General helpers below: used across the project, kept in this module so that it has\n"
    "# --- no dependency on the other packages. Not part of this module's own API.\n"
)


@dataclass(frozen=True)
class Axes:
    """The axes a task varies (docs/forge.md): recorded in task.toml's [metadata]."""

    files: int
    edges: str  # "spelled" | "hinted"
    visible_tests: bool
    locate: str  # "named" | "find"
    context: str  # "short" | "long"
    misleading_failure: bool


@dataclass(frozen=True)
class Plan:
    """One task to write: its family, the ops it asks for (one per touched module, in module
    order), its axes, the three flawed kinds, and `pick` (a number in [0, 1) that picks which
    target each flaw lands on)."""

    task_id: str
    family: Family
    others: tuple[Family, ...]
    targets: tuple[str, ...]
    axes: Axes
    kinds: tuple[str, ...]
    pick: float

    def op(self, name: str) -> Op:
        return next(op for op in self.family.ops if op.name == name)

    @property
    def target_ops(self) -> tuple[Op, ...]:
        return tuple(self.op(n) for n in self.targets)

    def existing(self, module: str) -> tuple[Op, ...]:
        return tuple(op for op in self.family.ops_of(module) if op.name not in self.targets)


def _code(op: Op, variant: str) -> str:
    if variant == "edge":
        return op.edge_flaw.strip()
    if variant == "logic":
        return op.logic_flaw.strip()
    if variant == "signature":
        return re.sub(rf"\b{op.kwarg}\b", op.kwarg_alt, op.gold.strip())
    return op.gold.strip()


PADDING_OPS = 12
"""How many general helpers (other families' functions) a long module carries."""


def _padding(plan: Plan) -> list[Op]:
    pool = [op for fam in plan.others for op in fam.ops]
    return sorted(random.Random(plan.pick).sample(pool, PADDING_OPS), key=pool.index)


def _module_text(plan: Plan, module: str, versions: dict[str, str], extra_import: str = "") -> str:
    """The text of `module` holding its existing ops and the targets in `versions`
    (op name -> variant), plus the long-context padding when the task has it."""
    doc = dict(plan.family.modules)[module]
    own = [
        op
        for op in plan.family.ops_of(module)
        if op.name not in plan.targets or op.name in versions
    ]
    padding = _padding(plan) if plan.axes.context == "long" else []
    imports = sorted({imp for op in [*own, *padding] for imp in op.imports})
    if extra_import:
        imports.append(extra_import)
    header = [f'"""{plan.family.package}.{module}: {doc}"""', "from __future__ import annotations"]
    if imports:
        header.append("\n".join(imports))
    parts = ["\n\n".join(header)]
    parts += [_code(op, versions.get(op.name, "gold")) for op in own]
    if padding:
        parts.append(PADDING_NOTE.rstrip("\n"))
        parts += [op.gold.strip() for op in padding]
    return "\n\n\n".join(parts) + "\n"


def _report_text(plan: Plan) -> str:
    """report.py of a misleading-failure task: an existing module that calls every target."""
    pkg = plan.family.package
    modules = sorted({op.module for op in plan.target_ops})
    calls = "\n".join(
        f'    lines.append("{op.name}: " + repr({op.module}.{op.name}({op.main[0][0]})))'
        for op in plan.target_ops
    )
    return f'''"""{pkg}.report: a self-check that runs the package's newest helpers on sample input."""

from __future__ import annotations

from {pkg} import {", ".join(modules)}


def run_checks() -> list[str]:
    """One `name: result` line per helper, in a fixed order."""
    lines: list[str] = []
{calls}
    return lines


def summary_line(lines: list[str]) -> str:
    """A one-line summary of a check report."""
    return f"{{len(lines)}} checks ran"
'''


def _expected_line(op: Op) -> str:
    return f"{op.name}: {ast.literal_eval(op.main[0][1])!r}"


def _assertion(call: str, expected: str) -> str:
    if expected.startswith("raises:"):
        return f"    with pytest.raises({expected.split(':', 1)[1]}):\n        {call}"
    if expected.startswith("ordered:"):
        want = expected.split(":", 1)[1]
        return f"    assert list({call}.items()) == list(({want}).items())"
    return f"    assert {call} == {expected}"


TEST_HEADER = """import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("{pkg}." + name)
"""


def _case_tests(op: Op, cases: tuple[tuple[str, str], ...], stem: str) -> list[tuple[str, str]]:
    """(test name, source) for each case of `op`: one test per case."""
    out = []
    for i, (args, expected) in enumerate(cases, start=1):
        name = f"test_{stem}_{i}"
        call = f'_module("{op.module}").{op.name}({args})'
        out.append((name, f"def {name}():\n{_assertion(call, expected)}\n"))
    return out


def _grouped_test(op: Op, cases: tuple[tuple[str, str], ...], name: str) -> list[tuple[str, str]]:
    """One test `name` asserting every case of `op` in turn."""
    body = "\n".join(
        _assertion(f'_module("{op.module}").{op.name}({args})', expected)
        for args, expected in cases
    )
    return [(name, f"def {name}():\n{body}\n")]


def _test_file(pkg: str, tests: list[tuple[str, str]]) -> str:
    body = "\n\n".join(src for _, src in tests)
    return TEST_HEADER.format(pkg=pkg) + "\n\n" + body


def _hidden_tests(plan: Plan) -> list[tuple[str, str]]:
    tests = []
    for op in plan.target_ops:
        tests += _grouped_test(op, op.main, f"test_{op.name}_main")
        tests += _case_tests(op, op.edge, f"{op.name}_edge")
    for op in plan.target_ops:
        for old in plan.existing(op.module):
            tests += _grouped_test(old, old.main, f"test_{old.name}_unchanged")
    return tests


def _visible_feature_tests(plan: Plan) -> tuple[str, list[tuple[str, str]]]:
    """(file name, tests) of the visible tests of the new feature."""
    pkg = plan.family.package
    if plan.axes.misleading_failure:
        lines = ", ".join(repr(_expected_line(op)) for op in plan.target_ops)
        src = (
            "def test_run_checks_output():\n"
            f'    report = _module("report")\n'
            "    got = report.run_checks()\n"
            f"    assert got == [{lines}], (\n"
            '        "report.run_checks() output changed: check how report.py formats its lines"\n'
            "    )\n"
        )
        return "test_report.py", [("test_run_checks_output", src)]
    tests = []
    for op in plan.target_ops:
        tests += _case_tests(op, op.main[:1], f"{op.name}_basic")
    return f"test_{pkg}_new.py", tests


def _existing_tests(plan: Plan) -> dict[str, list[tuple[str, str]]]:
    files = {}
    for module, _ in plan.family.modules:
        tests = []
        for op in plan.existing(module):
            tests += _case_tests(op, op.main, op.name)
        files[f"test_{module}.py"] = tests
    if plan.axes.misleading_failure:
        src = (
            "def test_summary_line_counts_lines():\n"
            '    assert _module("report").summary_line(["a", "b"]) == "2 checks ran"\n'
        )
        files["test_report_summary.py"] = [("test_summary_line_counts_lines", src)]
    return files


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _flawed_versions(plan: Plan) -> dict[str, tuple[str, dict[str, str], str, str | None, str]]:
    """flaw name -> (kind, versions, extra import module, module left out, description)."""
    rng = random.Random(plan.pick)
    targets = plan.target_ops
    gold = {op.name: "gold" for op in targets}
    out: dict[str, tuple[str, dict[str, str], str, str | None, str]] = {}
    for kind in plan.kinds:
        if kind == "missed_edge_case":
            op = rng.choice(targets)
            out[f"edge_{op.name}"] = (
                kind,
                gold | {op.name: "edge"},
                "",
                None,
                f"{op.name} gets the main behaviour right but misses the edge cases: {op.edges}",
            )
        elif kind == "wrong_logic":
            op = rng.choice(targets)
            out[f"logic_{op.name}"] = (
                kind,
                gold | {op.name: "logic"},
                "",
                None,
                f"{op.name} is wrong on ordinary input: it should be the function that {op.does}.",
            )
        elif kind == "wrong_signature":
            op = rng.choice([t for t in targets if t.kwarg])
            out[f"renamed_{op.kwarg}"] = (
                kind,
                gold | {op.name: "signature"},
                "",
                None,
                f"{op.name} names its parameter {op.kwarg_alt} instead of {op.kwarg}.",
            )
        elif kind == "import_error":
            op = rng.choice(targets)
            line = f"from {plan.family.package}._compat import text_type"
            out[f"bad_import_{op.module}"] = (
                kind,
                gold,
                line,
                op.module,
                f"{op.module}.py imports text_type from {plan.family.package}._compat, a module that does not exist.",
            )
        elif kind == "partial_feature":
            op = targets[-1]
            out[f"missing_{op.name}"] = (
                kind,
                {k: v for k, v in gold.items() if k != op.name},
                "",
                None,
                f"Every function but {op.name} is added: {op.module}.py was never changed.",
            )
        elif kind == "broken_regression":
            op = rng.choice(targets)
            old = rng.choice(plan.existing(op.module))
            out[f"broke_{old.name}"] = (
                kind,
                gold | {old.name: "logic"},
                "",
                None,
                f"Adds {op.name} but rewrites the existing {old.name} in {op.module}.py wrongly.",
            )
    return out


def _repo_modules(plan: Plan) -> dict[str, str]:
    """Every module of the starting repository (path -> text)."""
    pkg = plan.family.package
    files = {f"{pkg}/{m}.py": _module_text(plan, m, {}) for m, _ in plan.family.modules}
    files[f"{pkg}/__init__.py"] = f'"""{pkg}: {plan.family.about}."""\n'
    if plan.axes.misleading_failure:
        files[f"{pkg}/report.py"] = _report_text(plan)
    return files


def _overlay(
    plan: Plan, versions: dict[str, str], extra_import: str = "", import_module: str | None = None
) -> dict[str, str]:
    """The touched modules of one variant whose text differs from the repo's."""
    pkg = plan.family.package
    files = {}
    for op in plan.target_ops:
        extra = extra_import if import_module == op.module else ""
        text = _module_text(plan, op.module, versions, extra)
        if text != _module_text(plan, op.module, {}):
            files[f"{pkg}/{op.module}.py"] = text
    return files


def _readme(plan: Plan) -> str:
    pkg = plan.family.package
    lines = [f"# {pkg}", "", f"`{pkg}` is a package of {plan.family.about}.", "", "Modules:", ""]
    lines += [f"- `{pkg}/{m}.py`: {doc}" for m, doc in plan.family.modules]
    if plan.axes.misleading_failure:
        lines.append(f"- `{pkg}/report.py`: a self-check report over the newest helpers.")
    lines += ["", "Run the tests with `python -m pytest` from the repository root.", ""]
    return "\n".join(lines)


def _toml_list(ids: list[str]) -> str:
    return "[\n" + "".join(f'  "{i}",\n' for i in ids) + "]"


def _task_toml(plan: Plan, f2p: list[str], p2p: list[str], flaws: dict[str, tuple]) -> str:
    a = plan.axes
    names = ", ".join(plan.targets)
    head = f"""schema_version = 1
id = "{plan.task_id}"
level = {1 if a.files == 1 else 2}
summary = "Add {names} to {plan.family.package} ({a.files} file{"s" if a.files > 1 else ""})"
test_dir = "tests"
test_cmd = "python -m pytest"
allow_internet = false

fail_to_pass = {_toml_list(f2p)}
pass_to_pass = {_toml_list(p2p)}

[timeouts]
agent = {600 + 150 * a.files}
grade = 120
per_test = 20

[metadata]
family = "{plan.family.package}"
files = {a.files}
edges = "{a.edges}"
visible_tests = {str(a.visible_tests).lower()}
locate = "{a.locate}"
context = "{a.context}"
misleading_failure = {str(a.misleading_failure).lower()}
"""
    blocks = [
        f'\n[[flawed]]\nname = "{name}"\nkind = "{kind}"\ndescription = {_toml_str(desc)}\n'
        for name, (kind, _, _, _, desc) in flaws.items()
    ]
    return head + "".join(blocks)


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ids(file: str, tests: list[tuple[str, str]]) -> list[str]:
    return [f"tests/{file}::{name}" for name, _ in tests]


def write_task(root: Path, plan: Plan) -> None:
    """Write the task directory `root` (which must not exist) for `plan`."""
    pkg = plan.family.package
    for rel, text in _repo_modules(plan).items():
        _write(root / "repo" / rel, text)
    _write(root / "repo" / "README.md", _readme(plan))
    f2p: list[str] = []
    p2p: list[str] = []
    for name, tests in _existing_tests(plan).items():
        if tests:
            _write(root / "repo" / "tests" / name, _test_file(pkg, tests))
            p2p += _ids(name, tests)
    if plan.axes.visible_tests:
        name, tests = _visible_feature_tests(plan)
        _write(root / "repo" / "tests" / name, _test_file(pkg, tests))
        f2p += _ids(name, tests)
    hidden = _hidden_tests(plan)
    hidden_name = f"test_{pkg}_hidden.py"
    _write(root / "tests" / hidden_name, _test_file(pkg, hidden))
    f2p += _ids(hidden_name, hidden)
    for rel, text in _overlay(plan, {n: "gold" for n in plan.targets}).items():
        _write(root / "solution" / rel, text)
    flaws = _flawed_versions(plan)
    for flaw, (_, versions, extra, module, _) in flaws.items():
        for rel, text in _overlay(plan, versions, extra, module).items():
            _write(root / "flawed" / flaw / rel, text)
    _write(root / "task.toml", _task_toml(plan, f2p, p2p, flaws))
    _write(root / "instruction.md", render_instruction(plan))
