"""seqkit: small helpers over lists and dicts: chunking, de-duplication, grouping, windows and lookups."""
