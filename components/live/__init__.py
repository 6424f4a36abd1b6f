"""The Live page's widgets (dashboard/views/live.py): start a live review session, present it, follow it
(members by its address, guests by its link), hand it over; the player syncs in the browser
(components/common/live_sync.py)."""
