"""Per-turn context traces: one private JSON file per model turn, written atomically.

Layout: ``<trace-dir>/<context-id>/turn-0001.json``; a forced overflow
recovery goes beside it as ``turn-0001-recovery-1.json``. Files are mode
0600 and folders 0700: traces hold complete prompts and tool output.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 5
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def trace_file_name(turn: int, recovery_attempt: int = 0) -> str:
    name = f"turn-{turn:04d}"
    return f"{name}-recovery-{recovery_attempt}.json" if recovery_attempt else f"{name}.json"


def safe_context_dir(context_id: str) -> str:
    """A folder name for ``context_id`` that cannot leave the trace directory."""
    cleaned = _UNSAFE.sub("_", context_id).lstrip(".")
    return cleaned or "_"


class TraceWriter:
    """Writes trace documents under ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def write(self, context_id: str, turn: int, recovery_attempt: int, document: dict[str, Any]) -> Path:
        """Write ``document`` (with ``schemaVersion``) atomically; returns the file path."""
        folder = self.directory / safe_context_dir(context_id)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        target = folder / trace_file_name(turn, recovery_attempt)
        payload = json.dumps({"schemaVersion": SCHEMA_VERSION, **document}, ensure_ascii=False, indent=2, default=str)
        descriptor, temporary = tempfile.mkstemp(prefix=".turn-", suffix=".tmp", dir=folder)  # created 0600
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return target
