"""One page per kind of run directory: `run`, `evolve`, `research` and A/B, each with the module
that reads its directory through the types that wrote it (`_*_data`) and its sections."""
