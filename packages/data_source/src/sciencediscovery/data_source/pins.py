"""The approved tool lists of MCP servers, kept in one JSON file (0600) across runs."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from .errors import PinStoreError
from .fingerprint import RemoteTool, list_fingerprint


class ToolPinStore:
    """Approved tool lists by server name. Without a ``path`` approvals last for the process only."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._memory: dict[str, tuple[RemoteTool, ...]] = {}

    def approved(self, server: str) -> tuple[RemoteTool, ...] | None:
        """The approved list of ``server``, or ``None`` if it was never approved."""
        with self._lock:
            if self.path is None:
                return self._memory.get(server)
            entry = self._read().get(server)
        if entry is None:
            return None
        try:
            tools = tuple(RemoteTool(t["name"], t["description"], t["input_schema"]) for t in entry["tools"])
        except (KeyError, TypeError) as error:
            raise PinStoreError(f"{self.path}: entry {server!r} is malformed ({error})") from None
        if list_fingerprint(tools) != entry.get("fingerprint"):
            raise PinStoreError(f"{self.path}: entry {server!r} does not match its fingerprint (edited by hand?)")
        return tools

    def approve(self, server: str, tools: tuple[RemoteTool, ...]) -> None:
        """Record ``tools`` as the approved list of ``server``."""
        with self._lock:
            if self.path is None:
                self._memory[server] = tools
                return
            data = self._read()
            data[server] = {"fingerprint": list_fingerprint(tools), "tools": [tool.to_data() for tool in tools]}
            self._write(data)

    def _read(self) -> dict[str, Any]:
        assert self.path is not None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, json.JSONDecodeError) as error:
            raise PinStoreError(f"{self.path}: cannot be read ({error})") from None
        if not isinstance(data, dict):
            raise PinStoreError(f"{self.path}: expected a JSON object")
        return data

    def _write(self, data: dict[str, Any]) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".pins-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(data, file, indent=1, sort_keys=True)
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
