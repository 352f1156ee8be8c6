"""Durable sessions: the SessionStore interface and its SQLite implementation."""

from .base import RunRecord, SessionRecord, SessionStore, StoredEvent
from .lock import DataDirLock
from .sink import StoreEventSink
from .sqlite import SqliteSessionStore

__all__ = [
    "DataDirLock",
    "RunRecord",
    "SessionRecord",
    "SessionStore",
    "SqliteSessionStore",
    "StoreEventSink",
    "StoredEvent",
]
