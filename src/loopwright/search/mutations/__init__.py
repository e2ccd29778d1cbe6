"""How children are made: the operator registry and `mutate` (`_core`), the structural
operators on the graph and its nodes (`_graph`, `_node`, `_base`), prompt rewriting (`_prompt`),
LLM crossover (`_crossover`), the role library node_insert draws from (`_roles`), and the guided
strategy that turns a reflection report into operator choices (`_guided`, `_guided_ops`).
docs/mutations.md describes them."""
