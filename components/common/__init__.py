"""What several pages of the dashboard share: the connection and who is using it (connection, identity,
sign-in, remembered keys, outbound origins), the data layer, the player, costs and charges, kept copies,
the links between pages. Nothing here imports a page's package (tests/dashboard/test_component_rooms.py)."""
