"""The append-only permission audit log: every decision and its source, in a SQLite file (mode 0600).

Rows are only ever inserted; triggers make the database itself refuse
``UPDATE`` and ``DELETE``. Grants and their revocations, and every epoch a
rotation retired, are logged in the same file; project grants are read from it.
"""

from __future__ import annotations

import datetime
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import attrs

from .errors import AuditLogError
from .grants import Grant, GrantScope
from .rules import Effect, Rule

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    epoch_id TEXT NOT NULL,
    request_id TEXT,
    run_id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    specifier TEXT NOT NULL,
    outcome TEXT NOT NULL,
    source TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS grant_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    event TEXT NOT NULL CHECK (event IN ('granted', 'revoked')),
    grant_id TEXT NOT NULL,
    epoch_id TEXT NOT NULL,
    rule TEXT NOT NULL,
    scope TEXT NOT NULL,
    context_id TEXT NOT NULL,
    source TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS retired_epochs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    epoch_id TEXT NOT NULL,
    successor_id TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS retired_epochs_no_update BEFORE UPDATE ON retired_epochs
    BEGIN SELECT RAISE(ABORT, 'the permission audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS retired_epochs_no_delete BEFORE DELETE ON retired_epochs
    BEGIN SELECT RAISE(ABORT, 'the permission audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS decisions_no_update BEFORE UPDATE ON decisions
    BEGIN SELECT RAISE(ABORT, 'the permission audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS decisions_no_delete BEFORE DELETE ON decisions
    BEGIN SELECT RAISE(ABORT, 'the permission audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS grant_events_no_update BEFORE UPDATE ON grant_events
    BEGIN SELECT RAISE(ABORT, 'the permission audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS grant_events_no_delete BEFORE DELETE ON grant_events
    BEGIN SELECT RAISE(ABORT, 'the permission audit log is append-only'); END;
"""


@attrs.frozen
class AuditRecord:
    """One audited decision. ``outcome`` is allow, deny or ask; ``source`` says who or what decided."""

    epoch_id: str
    run_id: str
    context_id: str
    tool: str
    specifier: str
    outcome: str
    source: str
    reason: str = ""
    request_id: str | None = None
    at: str = attrs.field(factory=lambda: datetime.datetime.now(datetime.UTC).isoformat())


class AuditLog:
    """An append-only SQLite audit log. ``path=":memory:"`` keeps it in memory (tests, throwaway runs)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            if self.path != ":memory:":
                os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
                os.chmod(self.path, 0o600)
            # one connection shared by the event loop and the threads a server may call from, serialized by a lock
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.executescript(_SCHEMA)
            self._lock = threading.Lock()
        except (OSError, sqlite3.Error) as error:
            raise AuditLogError(self.path, str(error)) from None

    def close(self) -> None:
        self._db.close()

    def _query(self, sql: str, parameters: tuple[object, ...] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, parameters).fetchall()

    def _insert(self, table: str, row: dict[str, object]) -> None:
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        try:
            self._query(f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(row.values()))
        except sqlite3.Error as error:
            raise AuditLogError(self.path, f"write failed: {error}") from None

    def record(self, record: AuditRecord) -> None:
        """Append one decision."""
        self._insert("decisions", attrs.asdict(record))

    def records(self) -> list[AuditRecord]:
        """Every decision, oldest first."""
        names = [field.name for field in attrs.fields(AuditRecord)]
        rows = self._query(f"SELECT {', '.join(names)} FROM decisions ORDER BY seq")
        return [AuditRecord(**dict(zip(names, row, strict=True))) for row in rows]

    def grant_event(self, event: str, grant: Grant) -> None:
        """Append a ``granted`` or ``revoked`` event for a grant."""
        self._insert(
            "grant_events",
            {
                "at": datetime.datetime.now(datetime.UTC).isoformat(),
                "event": event,
                "grant_id": grant.grant_id,
                "epoch_id": grant.epoch_id,
                "rule": grant.rule.text,
                "scope": grant.scope.value,
                "context_id": grant.context_id,
                "source": grant.source,
            },
        )

    def retire_epoch(self, epoch_id: str, successor_id: str) -> None:
        """Record that a rotation replaced ``epoch_id``; it can never be current again."""
        now = datetime.datetime.now(datetime.UTC).isoformat()
        self._insert("retired_epochs", {"at": now, "epoch_id": epoch_id, "successor_id": successor_id})

    def is_retired(self, epoch_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM retired_epochs WHERE epoch_id = ?", (epoch_id,)))

    def project_grants(self, epoch_id: str) -> list[Grant]:
        """Project grants of ``epoch_id`` that were granted, not revoked and not retired, in grant order."""
        rows = self._query(
            "SELECT grant_id, rule, context_id, source FROM grant_events g WHERE event = 'granted' AND scope = ? "
            "AND epoch_id = ? AND NOT EXISTS (SELECT 1 FROM grant_events r WHERE r.event = 'revoked' "
            "AND r.grant_id = g.grant_id) AND epoch_id NOT IN (SELECT epoch_id FROM retired_epochs) ORDER BY seq",
            (GrantScope.PROJECT.value, epoch_id),
        )
        return [
            Grant(grant_id, Rule.parse(Effect.ALLOW, rule), GrantScope.PROJECT, epoch_id, context_id, source)
            for grant_id, rule, context_id, source in rows
        ]
