"""wordsmith: small text utilities: cleaning, case, measuring, splitting and padding strings."""
