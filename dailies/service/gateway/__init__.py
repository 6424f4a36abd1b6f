"""The gateway: forwarding tasks to an upstream Seedance (a Generator), its keys, pacing and callbacks."""
