"""The Tasks page: the task table (rows and filters pure in `rows`), one task in full below it (detail,
actions, callback log) and the charts. Imports only its own modules and `components.common`
(tests/dashboard/test_component_rooms.py)."""
