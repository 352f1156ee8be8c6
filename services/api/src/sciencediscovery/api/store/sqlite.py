"""SessionStore on SQLite: WAL journal, ``synchronous=FULL``, one transaction per committed step."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from sciencediscovery.runtime_core import DecodeError, Message
from sciencediscovery.runtime_core.serialization import from_json, to_json

from ..errors import SessionExistsError, StoreError, UnknownRunError, UnknownSessionError
from .base import RunRecord, SessionRecord, StoredEvent

INTERRUPTED_REASON = "the process stopped before the run finished; resume it to continue"

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    context_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    structured_input TEXT NOT NULL,
    config TEXT NOT NULL,
    resume_state TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS messages (
    context_id TEXT NOT NULL REFERENCES sessions(context_id),
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (context_id, seq)
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    context_id TEXT NOT NULL REFERENCES sessions(context_id),
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    turns INTEGER NOT NULL DEFAULT 0,
    started_at REAL NOT NULL,
    finished_at REAL,
    result TEXT
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    context_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_context ON events (context_id, id);
"""


class SqliteSessionStore:
    """The embedded default store. Safe to share between the event loop and worker threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh = not self.path.exists()
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            if fresh:
                os.chmod(self.path, 0o600)  # holds prompts and tool results
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
        except (sqlite3.Error, OSError) as error:
            raise StoreError(f"cannot open session store {self.path}: {error}") from error
        self._lock = threading.RLock()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, parameters).fetchall()

    # -- sessions -------------------------------------------------------------
    def create_session(
        self, context_id: str, structured_input: Mapping[str, Any], config: Mapping[str, Any]
    ) -> SessionRecord:
        record = SessionRecord(context_id, time.time(), dict(structured_input), dict(config))
        try:
            with self._transaction() as db:
                db.execute(
                    "INSERT INTO sessions (context_id, created_at, structured_input, config) VALUES (?, ?, ?, ?)",
                    (context_id, record.created_at, json.dumps(record.structured_input), json.dumps(record.config)),
                )
        except sqlite3.IntegrityError as error:
            raise SessionExistsError(context_id) from error
        return record

    def get_session(self, context_id: str) -> SessionRecord:
        rows = self._query(
            "SELECT context_id, created_at, structured_input, config FROM sessions WHERE context_id = ?", (context_id,)
        )
        if not rows:
            raise UnknownSessionError(context_id)
        return self._session(rows[0])

    def list_sessions(self) -> list[SessionRecord]:
        rows = self._query("SELECT context_id, created_at, structured_input, config FROM sessions ORDER BY created_at")
        return [self._session(row) for row in rows]

    @staticmethod
    def _session(row: tuple[Any, ...]) -> SessionRecord:
        return SessionRecord(row[0], row[1], json.loads(row[2]), json.loads(row[3]))

    # -- history --------------------------------------------------------------
    def append_step(
        self, context_id: str, messages: Sequence[Message], resume_state: Mapping[str, Any] | None = None
    ) -> None:
        with self._transaction() as db:
            (next_seq,) = db.execute(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE context_id = ?", (context_id,)
            ).fetchone()
            self._insert(db, context_id, next_seq, messages)
            if resume_state is not None:
                db.execute(
                    "UPDATE sessions SET resume_state = ? WHERE context_id = ?",
                    (json.dumps(dict(resume_state)), context_id),
                )

    def resume_state(self, context_id: str) -> dict[str, Any]:
        rows = self._query("SELECT resume_state FROM sessions WHERE context_id = ?", (context_id,))
        if not rows:
            raise UnknownSessionError(context_id)
        return dict(json.loads(rows[0][0]))

    def replace_history(self, context_id: str, history: Sequence[Message]) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM messages WHERE context_id = ?", (context_id,))
            self._insert(db, context_id, 0, history)

    def _insert(self, db: sqlite3.Connection, context_id: str, first_seq: int, messages: Sequence[Message]) -> None:
        try:
            db.executemany(
                "INSERT INTO messages VALUES (?, ?, ?)",
                [(context_id, first_seq + i, json.dumps(to_json(m))) for i, m in enumerate(messages)],
            )
        except sqlite3.IntegrityError as error:
            raise UnknownSessionError(context_id) from error

    def load_history(self, context_id: str) -> tuple[Message, ...]:
        self.get_session(context_id)
        rows = self._query("SELECT seq, body FROM messages WHERE context_id = ? ORDER BY seq", (context_id,))
        try:
            return tuple(from_json(json.loads(body), Message) for _, body in rows)
        except (DecodeError, json.JSONDecodeError) as error:
            raise StoreError(f"session {context_id!r} has an unreadable message in {self.path}: {error}") from error

    # -- runs -----------------------------------------------------------------
    def start_run(self, run_id: str, context_id: str) -> RunRecord:
        self.get_session(context_id)
        record = RunRecord(run_id, context_id, "running", "", 0, time.time(), None, None)
        with self._transaction() as db:
            db.execute(
                "INSERT INTO runs (run_id, context_id, status, started_at) VALUES (?, ?, 'running', ?)",
                (run_id, context_id, record.started_at),
            )
        return record

    def finish_run(self, run_id: str, status: str, reason: str, turns: int, result: Mapping[str, Any]) -> None:
        with self._transaction() as db:
            updated = db.execute(
                "UPDATE runs SET status = ?, reason = ?, turns = ?, finished_at = ?, result = ? WHERE run_id = ?",
                (status, reason, turns, time.time(), json.dumps(dict(result)), run_id),
            ).rowcount
        if not updated:
            raise UnknownRunError(run_id)

    def get_run(self, run_id: str) -> RunRecord:
        rows = self._query(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise UnknownRunError(run_id)
        return _run(rows[0])

    def runs_of(self, context_id: str) -> list[RunRecord]:
        rows = self._query(f"SELECT {_RUN_COLUMNS} FROM runs WHERE context_id = ? ORDER BY started_at", (context_id,))
        return [_run(row) for row in rows]

    def mark_unfinished_runs_interrupted(self, context_id: str | None = None) -> list[RunRecord]:
        where = "status = 'running'" + (" AND context_id = ?" if context_id else "")
        parameters: tuple[Any, ...] = (context_id,) if context_id else ()
        with self._transaction() as db:
            rows = db.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE {where}", parameters).fetchall()
            db.execute(
                f"UPDATE runs SET status = 'interrupted', reason = ?, finished_at = ? WHERE {where}",
                (INTERRUPTED_REASON, time.time(), *parameters),
            )
        return [attrs.evolve(_run(row), status="interrupted", reason=INTERRUPTED_REASON) for row in rows]

    # -- events ---------------------------------------------------------------
    def append_event(self, context_id: str, run_id: str, kind: str, data: Mapping[str, Any]) -> int:
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO events (context_id, run_id, kind, body, created_at) VALUES (?, ?, ?, ?, ?)",
                (context_id, run_id, kind, json.dumps(dict(data), default=str), time.time()),
            )
        return int(cursor.lastrowid or 0)

    def events_after(self, context_id: str, after_id: int, limit: int = 500) -> list[StoredEvent]:
        rows = self._query(
            "SELECT id, context_id, run_id, kind, body FROM events WHERE context_id = ? AND id > ? ORDER BY id LIMIT ?",
            (context_id, after_id, limit),
        )
        return [StoredEvent(row[0], row[1], row[2], row[3], json.loads(row[4])) for row in rows]

    def last_turn(self, context_id: str) -> int:
        """The highest model-turn number any run of the session reached (0 before the first)."""
        rows = self._query(
            "SELECT MAX(CAST(json_extract(body, '$.turn') AS INTEGER)) FROM events "
            "WHERE context_id = ? AND kind = 'turn_started'",
            (context_id,),
        )
        return int(rows[0][0] or 0)

    def close(self) -> None:
        with self._lock:
            self._db.close()


_RUN_COLUMNS = "run_id, context_id, status, reason, turns, started_at, finished_at, result"


def _run(row: tuple[Any, ...]) -> RunRecord:
    return RunRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], json.loads(row[7]) if row[7] else None)
