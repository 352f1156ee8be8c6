"""The SessionStore interface. SQLite is the embedded default; another backend implements the same protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs

from sciencediscovery.runtime_core import Message


@attrs.frozen
class SessionRecord:
    """One session (a context id): its structured input and run configuration."""

    context_id: str
    created_at: float
    structured_input: Mapping[str, Any]
    config: Mapping[str, Any]


@attrs.frozen
class RunRecord:
    """One run of a session and where it ended (``running`` until a terminal status is written)."""

    run_id: str
    context_id: str
    status: str
    reason: str
    turns: int
    started_at: float
    finished_at: float | None
    result: Mapping[str, Any] | None


@attrs.frozen
class StoredEvent:
    """A persisted run event; ``id`` orders events across the whole store (used as the SSE id)."""

    id: int
    context_id: str
    run_id: str
    kind: str
    data: Mapping[str, Any]


class SessionStore(Protocol):
    """Durable sessions, canonical history, runs and events."""

    def create_session(
        self, context_id: str, structured_input: Mapping[str, Any], config: Mapping[str, Any]
    ) -> SessionRecord: ...

    def get_session(self, context_id: str) -> SessionRecord: ...

    def list_sessions(self) -> list[SessionRecord]: ...

    def append_step(
        self, context_id: str, messages: Sequence[Message], resume_state: Mapping[str, Any] | None = None
    ) -> None:
        """Append one committed step atomically (all of its messages or none).

        ``resume_state`` (e.g. how far a scripted model has got) is saved in the
        same transaction, so a resumed run continues exactly after this step.
        """

    def resume_state(self, context_id: str) -> dict[str, Any]: ...

    def replace_history(self, context_id: str, history: Sequence[Message]) -> None:
        """Replace canonical history atomically (after compaction)."""

    def load_history(self, context_id: str) -> tuple[Message, ...]: ...

    def start_run(self, run_id: str, context_id: str) -> RunRecord: ...

    def finish_run(self, run_id: str, status: str, reason: str, turns: int, result: Mapping[str, Any]) -> None: ...

    def get_run(self, run_id: str) -> RunRecord: ...

    def runs_of(self, context_id: str) -> list[RunRecord]: ...

    def mark_unfinished_runs_interrupted(self, context_id: str | None = None) -> list[RunRecord]:
        """Mark runs left ``running`` by a crash (of one session, or all) as ``interrupted``; returns them."""

    def append_event(self, context_id: str, run_id: str, kind: str, data: Mapping[str, Any]) -> int: ...

    def events_after(self, context_id: str, after_id: int, limit: int = 500) -> list[StoredEvent]: ...

    def last_turn(self, context_id: str) -> int:
        """The highest model-turn number any run of the session reached (0 before the first)."""

    def close(self) -> None: ...
