"""Live review sessions: a presenter's player state kept for everyone who follows (live.py)."""
