"""The journal schema's revisions, oldest first (0001, 0002, ...)."""
