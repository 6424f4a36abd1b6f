"""The Compose page: the request's fields and body (pure: `fields`, `body`), the form and its media
inputs, prefill from a journaled request, the request preview and sending. Imports only its own
modules and `components.common` (tests/dashboard/test_component_rooms.py)."""
