"""The workflow graph (the genome): nodes, edges, gates, validation, hashing and rendering.

A workflow is plain data, read from YAML or JSON into immutable pydantic models. Nothing here
runs a workflow; the runtime does. See docs/workflow.md for the schema and the rules.
"""

from __future__ import annotations

from loopwright.workflow._builtin import (
    WorkflowSource,
    builtin_workflow,
    builtin_workflow_names,
    locate_workflow,
    resolve_task_workflow,
    resolve_workflow,
)
from loopwright.workflow._catalog import OUTER_LOOP_FUNCTIONS, Catalog, default_catalog
from loopwright.workflow._graph import (
    entry_node,
    entry_nodes,
    find_cycles,
    gates,
    predecessors,
    reloop_targets,
    successors,
    to_networkx,
    topological_order,
)
from loopwright.workflow._hash import canonical_form, normalize_prompt, workflow_hash
from loopwright.workflow._io import (
    WorkflowFormat,
    dump_workflow,
    load_workflow,
    workflow_format,
    workflow_from_text,
    workflow_to_json,
    workflow_to_yaml,
)
from loopwright.workflow._lessons import LESSONS_HEADER, add_lesson, prompt_lessons
from loopwright.workflow._library import (
    LIBRARY_ENV,
    PROVENANCE_SCHEMA_VERSION,
    WORKFLOWS_PATH_ENV,
    HoldoutGain,
    LibraryEntry,
    Provenance,
    check_library_name,
    library_dirs,
    library_entries,
    read_provenance,
    user_library_dir,
    write_provenance,
)
from loopwright.workflow._model import (
    EXTERNAL_LOOP_PREFIX,
    MODEL_TIERS,
    PLACEHOLDERS,
    SCHEMA_VERSION,
    AgentNode,
    ArgValue,
    Edge,
    FnNode,
    GateNode,
    Node,
    Workflow,
)
from loopwright.workflow._render import node_label_lines, render_svg, to_dot, to_mermaid
from loopwright.workflow._skill import COMMANDS, to_skill_md
from loopwright.workflow._template import (
    TemplateField,
    fill_prompt,
    parse_template,
    prompt_placeholders,
)
from loopwright.workflow._validate import (
    IssueCode,
    WorkflowIssue,
    check_workflow,
    validate_workflow,
)

__all__ = [
    "COMMANDS",
    "EXTERNAL_LOOP_PREFIX",
    "LESSONS_HEADER",
    "LIBRARY_ENV",
    "MODEL_TIERS",
    "OUTER_LOOP_FUNCTIONS",
    "PLACEHOLDERS",
    "PROVENANCE_SCHEMA_VERSION",
    "SCHEMA_VERSION",
    "WORKFLOWS_PATH_ENV",
    "AgentNode",
    "ArgValue",
    "Catalog",
    "Edge",
    "FnNode",
    "GateNode",
    "HoldoutGain",
    "IssueCode",
    "LibraryEntry",
    "Node",
    "Provenance",
    "TemplateField",
    "Workflow",
    "WorkflowFormat",
    "WorkflowIssue",
    "WorkflowSource",
    "add_lesson",
    "builtin_workflow",
    "builtin_workflow_names",
    "canonical_form",
    "check_library_name",
    "check_workflow",
    "default_catalog",
    "dump_workflow",
    "entry_node",
    "entry_nodes",
    "fill_prompt",
    "find_cycles",
    "gates",
    "library_dirs",
    "library_entries",
    "load_workflow",
    "locate_workflow",
    "node_label_lines",
    "normalize_prompt",
    "parse_template",
    "predecessors",
    "prompt_lessons",
    "prompt_placeholders",
    "read_provenance",
    "reloop_targets",
    "render_svg",
    "resolve_task_workflow",
    "resolve_workflow",
    "successors",
    "to_dot",
    "to_mermaid",
    "to_networkx",
    "to_skill_md",
    "topological_order",
    "user_library_dir",
    "validate_workflow",
    "workflow_format",
    "workflow_from_text",
    "workflow_hash",
    "workflow_to_json",
    "workflow_to_yaml",
    "write_provenance",
]
