"""Tasks: the rules of create, cancel and delete, the store, records, counters and stored requests."""
