"""The dashboard's settings remembered per scope (a name and a JSON value)."""

from __future__ import annotations

import json
from typing import Any

from .view import View


class PreferencesMixin(View):
    def preference(self, name: str, default: Any = None) -> Any:
        table = self._table("preferences")
        rows = self._preferred("preferences", table.c.name == name, columns=[table.c.value], limit=1)
        return json.loads(rows[0].value) if rows else default

    def set_preference(self, name: str, value: Any) -> None:
        self._write("preferences", [{"scope": self._writes_as, "name": name, "value": json.dumps(value)}])
