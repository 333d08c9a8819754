"""Items live in one JSON file: ``$TODO_FILE``, or /app/todo.json when unset."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Item:
    id: int
    text: str
    done: bool = False

    def render(self) -> str:
        return f"{self.id}. [{'x' if self.done else ' '}] {self.text}"


def store_path() -> Path:
    return Path(os.environ.get("TODO_FILE", "/app/todo.json"))


def load() -> list[Item]:
    path = store_path()
    if not path.exists():
        return []
    return [Item(**raw) for raw in json.loads(path.read_text())]


def save(items: list[Item]) -> None:
    store_path().write_text(json.dumps([asdict(i) for i in items], indent=2) + "\n")
