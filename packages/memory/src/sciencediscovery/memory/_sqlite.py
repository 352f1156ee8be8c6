"""Opening the package's SQLite file: WAL journal, owner-only permissions, one connection per file."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

_LOCK = threading.Lock()


def connect(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating if needed) ``path`` with mode 0600 in WAL mode and apply ``schema``."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with _LOCK:
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chmod(path, 0o600)
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA foreign_keys=ON")
    connection.executescript(schema)
    return connection
