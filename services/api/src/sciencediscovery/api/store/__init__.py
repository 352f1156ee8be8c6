"""Durable sessions: the SessionStore interface and its SQLite implementation."""

from .base import RunRecord, SessionRecord, SessionStore, StoredEvent
from .sink import StoreEventSink
from .sqlite import SqliteSessionStore

__all__ = ["RunRecord", "SessionRecord", "SessionStore", "SqliteSessionStore", "StoreEventSink", "StoredEvent"]
