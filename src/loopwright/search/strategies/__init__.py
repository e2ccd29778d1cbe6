"""The engine's policies, each a small class behind a Protocol that takes the one run state
(`_state.RunState`): spend accounting and budgets (`_spend`), stopping (`_stopping`), the
evaluation round (`_evaluation`), staged acceptance (`_acceptance`), parent selection
(`_parents`), merging two parents (`_merge`), making children (`_proposal`), survivors
(`_survivors`) and the generation summary (`_summary`). `search/_engine.py` runs them in order.
docs/evolve.md describes the algorithm."""
