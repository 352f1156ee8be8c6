"""The embedded Memory Graph: one SQLite file (WAL, 0600) with FTS5 full-text search over observations."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from ._sqlite import connect
from .errors import InvalidMemoryInputError
from .graph import NO_SOURCE, Entity, Observation, Relation, SearchHit, Source

FILENAME = "memory.sqlite3"
MAX_TEXT_CHARS = 4000
"""Longest observation text accepted."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS entities (
    name TEXT PRIMARY KEY, kind TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS relations (
    source TEXT NOT NULL REFERENCES entities (name), relation TEXT NOT NULL,
    target TEXT NOT NULL REFERENCES entities (name),
    run_id TEXT, context_id TEXT, call_id TEXT, tool TEXT, event TEXT, created_at TEXT NOT NULL,
    UNIQUE (source, relation, target));
CREATE TABLE IF NOT EXISTS observations (
    observation_id TEXT PRIMARY KEY, entity TEXT NOT NULL REFERENCES entities (name), text TEXT NOT NULL,
    run_id TEXT, context_id TEXT, call_id TEXT, tool TEXT, event TEXT, created_at TEXT NOT NULL,
    UNIQUE (entity, text));
CREATE INDEX IF NOT EXISTS observations_context ON observations (context_id, created_at);
CREATE INDEX IF NOT EXISTS observations_created ON observations (created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS observations_fts USING fts5(
    entity, text, content='observations', content_rowid='rowid', tokenize='unicode61');
CREATE TRIGGER IF NOT EXISTS observations_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts (rowid, entity, text) VALUES (new.rowid, new.entity, new.text);
END;
"""

_TOKEN = re.compile(r"\w+", re.UNICODE)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _text(value: object, field: str, limit: int = 200) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidMemoryInputError(f"{field} must be a non-empty string, got {value!r}")
    text = value.strip()
    if len(text) > limit:
        raise InvalidMemoryInputError(f"{field} is {len(text)} characters; the limit is {limit}")
    return text


def _source(row: sqlite3.Row) -> Source:
    return Source(row["run_id"], row["context_id"], row["call_id"], row["tool"], row["event"])


def _observation(row: sqlite3.Row) -> Observation:
    return Observation(row["observation_id"], row["entity"], row["text"], _source(row), row["created_at"])


def fts_query(query: str) -> str:
    """A user query as an FTS5 expression: each word quoted (so it is data, never syntax), any word may match."""
    words = _TOKEN.findall(query)
    if not words:
        raise InvalidMemoryInputError(f"query must contain at least one word, got {query!r}")
    return " OR ".join(f'"{word}"' for word in words)


class SQLiteMemoryGraph:
    """The default :class:`MemoryClient`, stored in ``<data_dir>/memory.sqlite3``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = connect(path, SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the lock (one WAL commit for an entity upsert and its row)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _entity(self, name: str, kind: str) -> None:
        stamp = _now()
        self._db.execute(
            "INSERT INTO entities (name, kind, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO "
            "UPDATE SET updated_at = excluded.updated_at, kind = CASE WHEN excluded.kind = '' THEN entities.kind "
            "ELSE excluded.kind END",
            (name, kind, stamp, stamp),
        )

    def upsert_entity(self, name: str, kind: str = "") -> Entity:
        name = _text(name, "entity")
        with self._transaction():
            self._entity(name, kind.strip() if isinstance(kind, str) else "")
            row = self._db.execute("SELECT * FROM entities WHERE name = ?", (name,)).fetchone()
        return Entity(**dict(row))

    def add_relation(self, source: str, relation: str, target: str, provenance: Source = NO_SOURCE) -> Relation:
        source, target = _text(source, "source"), _text(target, "target")
        relation = _text(relation, "relation", 100)
        stamp = _now()
        with self._transaction():
            self._entity(source, "")
            self._entity(target, "")
            self._db.execute(
                "INSERT INTO relations (source, relation, target, run_id, context_id, call_id, tool, event, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source, relation, target) DO NOTHING",
                (
                    source,
                    relation,
                    target,
                    provenance.run_id,
                    provenance.context_id,
                    provenance.call_id,
                    provenance.tool,
                    provenance.event,
                    stamp,
                ),
            )
        return next(r for r in self.relations(source) if r.relation == relation and r.target == target)

    def add_observation(self, entity: str, text: str, provenance: Source = NO_SOURCE, kind: str = "") -> Observation:
        entity = _text(entity, "entity")
        text = _text(text, "observation", MAX_TEXT_CHARS)
        with self._transaction():
            self._entity(entity, kind.strip() if isinstance(kind, str) else "")
            self._db.execute(
                "INSERT INTO observations (observation_id, entity, text, run_id, context_id, call_id, tool, event, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (entity, text) DO NOTHING",
                (
                    f"obs-{uuid.uuid4().hex[:12]}",
                    entity,
                    text,
                    provenance.run_id,
                    provenance.context_id,
                    provenance.call_id,
                    provenance.tool,
                    provenance.event,
                    _now(),
                ),
            )
            row = self._db.execute(
                "SELECT * FROM observations WHERE entity = ? AND text = ?", (entity, text)
            ).fetchone()
        return _observation(row)

    def search(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        expression = fts_query(query)
        with self._lock:
            rows = self._db.execute(
                "SELECT o.*, bm25(observations_fts) AS score FROM observations_fts f "
                "JOIN observations o ON o.rowid = f.rowid WHERE observations_fts MATCH ? "
                "ORDER BY score, o.created_at DESC LIMIT ?",
                (expression, limit),
            ).fetchall()
        return [SearchHit(_observation(row), -float(row["score"])) for row in rows]

    def recent(self, *, context_id: str | None = None, limit: int = 20) -> list[Observation]:
        sql = "SELECT * FROM observations"
        params: tuple[object, ...] = (limit,)
        if context_id is not None:
            sql += " WHERE context_id = ?"
            params = (context_id, limit)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY created_at DESC, rowid DESC LIMIT ?", params).fetchall()
        return [_observation(row) for row in rows]

    def relations(self, entity: str) -> list[Relation]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM relations WHERE source = ? OR target = ? ORDER BY rowid", (entity, entity)
            ).fetchall()
        return [
            Relation(row["source"], row["relation"], row["target"], _source(row), row["created_at"]) for row in rows
        ]


_OPEN: dict[Path, SQLiteMemoryGraph] = {}
_OPEN_LOCK = threading.Lock()


def open_graph(data_dir: Path) -> SQLiteMemoryGraph:
    """The process-wide graph of ``data_dir`` (opened once, shared by the sink, tools and contributor)."""
    path = (Path(data_dir) / FILENAME).resolve()
    with _OPEN_LOCK:
        graph = _OPEN.get(path)
        if graph is None or not path.exists():  # a deleted file is a new, empty graph
            graph = _OPEN[path] = SQLiteMemoryGraph(path)
        return graph
