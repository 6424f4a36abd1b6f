"""The Review page: results gathered and grouped into shots (`results`, no Streamlit), the grid of
cards and their comment threads, the comparison, reels, reports and share links. Imports only its own
modules and `components.common` (tests/dashboard/test_component_rooms.py)."""
