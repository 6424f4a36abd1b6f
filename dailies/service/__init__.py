"""The task service: one package per part (docs/architecture.md, "Rooms and layers")."""
