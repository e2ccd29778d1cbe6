"""The offline meta model of the research loop (`--model sim`): `SimResearcher` answers every
phase by the documented rules of docs/research.md, so the loop runs with no key."""
