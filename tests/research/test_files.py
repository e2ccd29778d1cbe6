"""The working files: bootstrap layout and manifest, constraints layers, knowledge.md."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loopwright.errors import ConfigError
from loopwright.research import MANIFEST, Knowledge
from loopwright.research._constraints import merge_constraints, parse_directives
from loopwright.research._knowledge import check_append_only
from tests.research.conftest import make_workdir


def test_bootstrap_writes_every_manifest_file(tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1")
    config = yaml.safe_load(wd.config.read_text())
    assert config["kind"] == "research" and config["schema_version"] == 2
    assert [m["path"] for m in config["manifest"]] == [m.path for m in MANIFEST]
    for entry in MANIFEST:
        if "iter_N" in entry.path:
            continue
        assert (wd.root / entry.path).exists(), entry.path
    assert (wd.workspace / "workflow.yaml").is_file() and (wd.workspace / "state.json").is_file()
    assert "| topology |" in wd.search_space.read_text()


def test_constraints_merge_four_layers_in_order(tmp_path: Path) -> None:
    layer = tmp_path / "cons.md"
    layer.write_text("- forbid-operator: edge_rewire\n")
    text = merge_constraints("builder-only", layer, "- max-nodes: 3\n- protect-node: builder")
    heads = [line for line in text.splitlines() if line.startswith("## Layer")]
    assert heads == [
        "## Layer: common (loopwright built-in)",
        "## Layer: workflow builder-only (loopwright built-in)",
        f"## Layer: --cons-file {layer}",
        "## Layer: --constraints",
    ]
    d = parse_directives(text)
    assert d.forbid_operators == ("edge_rewire",) and d.max_nodes == 3
    assert d.protect_nodes == ("builder",)
    assert "(absent)" in merge_constraints("thorough", None, None)
    with pytest.raises(ConfigError):
        merge_constraints("builder-only", tmp_path / "missing.md", None)


def test_knowledge_is_appended_and_superseded_never_edited(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.md"
    path.write_text("# Knowledge\n\n- K1 (seed) gates help.\n")
    book = Knowledge(path)
    before = book.digest()
    k2 = book.append(
        "gates help only with RELOOP feedback", origin="iter 2, distill", supersedes=("K1",)
    )
    assert k2.id == "K2" and [b.id for b in book.current()] == ["K2"]
    assert path.read_text().endswith(
        "- K2 (iter 2, distill; supersedes K1) gates help only with RELOOP feedback\n"
    )
    assert check_append_only(path, before) is None
    with pytest.raises(ConfigError, match="do not exist"):
        book.append("x", origin="iter 3, distill", supersedes=("K9",))
    path.write_text(path.read_text().replace("gates help.", "gates hurt."))
    assert check_append_only(path, before) == "its committed bytes were edited"
