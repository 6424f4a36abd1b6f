"""Where result files live: `<data_dir>/files/<task_id>/`."""

from __future__ import annotations

import shutil
from pathlib import Path


class ResultFiles:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def dir_for(self, task_id: str) -> Path:
        return self.root / task_id

    def path(self, task_id: str, name: str) -> Path | None:
        """The file, or None when the name would leave the task's folder or does not exist."""
        if "/" in name or "\\" in name or name.startswith(".") or "/" in task_id or task_id.startswith("."):
            return None
        path = self.dir_for(task_id) / name
        return path if path.is_file() else None

    def remove(self, task_id: str) -> None:
        shutil.rmtree(self.dir_for(task_id), ignore_errors=True)
