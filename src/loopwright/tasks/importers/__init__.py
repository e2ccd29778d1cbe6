"""Importers: external benchmark formats (SWE-bench, FeatureBench, Harbor) written into
loopwright's one task directory format (docs/task-format.md, docs/importing.md)."""
