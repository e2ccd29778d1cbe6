"""The canonical hash of a workflow: its identity for caching and novelty."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from loopwright.workflow._model import Workflow

__all__ = ["canonical_form", "normalize_prompt", "workflow_hash"]

# Labels, not behaviour: two workflows that differ only here are the same genome.
_LABEL_FIELDS = ("name", "description")
_PROMPT_FIELDS = ("prompt", "judge")


def normalize_prompt(text: str) -> str:
    """`text` with line-end whitespace stripped from every line and trailing newlines removed.

    Only line ends are touched: leading indentation and blank lines inside stay significant.
    Windows line ends count as line ends.
    """
    return "\n".join(line.rstrip() for line in text.splitlines()).rstrip("\n")


def canonical_form(wf: Workflow) -> dict[str, Any]:
    """The JSON-ready structure `workflow_hash` digests.

    Every field with its default filled in, except `name` and `description`; prompts
    normalised by `normalize_prompt`; nodes sorted by id, edges by (source, target), and
    `tools` and `frozen` sorted (their order carries no meaning).
    """
    data = wf.model_dump(mode="json", exclude=set(_LABEL_FIELDS))
    nodes = [_canonical_node(node) for node in data["nodes"]]
    data["nodes"] = sorted(nodes, key=lambda n: (n["id"], _dumps(n)))
    data["edges"] = sorted(data["edges"], key=lambda e: (e["source"], e["target"]))
    data["frozen"] = sorted(data["frozen"])
    return data


def workflow_hash(wf: Workflow) -> str:
    """The sha256 hex digest of the workflow's behaviour (its `canonical_form`).

    Identity is behaviour, not label: `name` and `description` are left out, so renaming a
    workflow keeps its hash. Formatting, key order, node order, edge order, tool order and
    line-end whitespace in prompts do not change it; writing a default out explicitly does not
    either. Any change to a prompt's wording, a node field or an edge does. Deterministic
    across processes and platforms.
    """
    return hashlib.sha256(_dumps(canonical_form(wf)).encode("utf-8")).hexdigest()


def _canonical_node(node: dict[str, Any]) -> dict[str, Any]:
    out = dict(node)
    for key in _PROMPT_FIELDS:
        if isinstance(out.get(key), str):
            out[key] = normalize_prompt(out[key])
    if "tools" in out:
        out["tools"] = sorted(out["tools"])
    return out


def _dumps(data: object) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
