"""`loopwright bench ...` (placeholder until written)."""
