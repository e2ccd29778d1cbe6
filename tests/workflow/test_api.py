from __future__ import annotations

import loopwright.workflow as workflow

EXPECTED = {
    "EXTERNAL_LOOP_PREFIX",
    "MODEL_TIERS",
    "OUTER_LOOP_FUNCTIONS",
    "PLACEHOLDERS",
    "SCHEMA_VERSION",
    "AgentNode",
    "ArgValue",
    "Catalog",
    "Edge",
    "FnNode",
    "GateNode",
    "IssueCode",
    "Node",
    "TemplateField",
    "Workflow",
    "WorkflowFormat",
    "WorkflowIssue",
    "builtin_workflow",
    "builtin_workflow_names",
    "canonical_form",
    "check_workflow",
    "default_catalog",
    "dump_workflow",
    "entry_node",
    "entry_nodes",
    "fill_prompt",
    "find_cycles",
    "gates",
    "load_workflow",
    "node_label_lines",
    "normalize_prompt",
    "parse_template",
    "predecessors",
    "prompt_placeholders",
    "reloop_targets",
    "render_svg",
    "resolve_task_workflow",
    "resolve_workflow",
    "successors",
    "to_dot",
    "to_mermaid",
    "to_skill_md",
    "COMMANDS",
    "to_networkx",
    "topological_order",
    "validate_workflow",
    "workflow_format",
    "workflow_from_text",
    "workflow_hash",
    "workflow_to_json",
    "workflow_to_yaml",
    "LIBRARY_ENV",
    "PROVENANCE_SCHEMA_VERSION",
    "WORKFLOWS_PATH_ENV",
    "HoldoutGain",
    "LibraryEntry",
    "Provenance",
    "WorkflowSource",
    "check_library_name",
    "library_dirs",
    "library_entries",
    "locate_workflow",
    "read_provenance",
    "user_library_dir",
    "write_provenance",
    "LESSONS_HEADER",
    "add_lesson",
    "prompt_lessons",
}


def test_public_names_are_pinned() -> None:
    assert set(workflow.__all__) == EXPECTED
    assert len(workflow.__all__) == len(EXPECTED)


def test_every_public_name_exists() -> None:
    missing = [name for name in workflow.__all__ if not hasattr(workflow, name)]
    assert missing == []
