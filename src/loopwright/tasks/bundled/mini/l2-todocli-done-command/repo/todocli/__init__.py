"""todocli: a to-do list with a small command dispatcher."""
