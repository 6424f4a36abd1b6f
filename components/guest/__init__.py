"""The guest page (a share link, no key): its session-state keys. What it shares with Review (a
comment as shown, the timecode player, whether guests stay guests) is in `components.common`."""
