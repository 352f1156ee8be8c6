"""Persist run events: committed steps into canonical history, every event into the event log."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import HistoryReplaced, RunEvent, StepCommitted
from sciencediscovery.runtime_core.serialization import event_to_json

from .base import SessionStore

NOT_LOGGED = frozenset({"model_stream_delta"})
"""Event kinds too fine-grained to persist (still streamed live)."""


class StoreEventSink:
    """A RunEventSink that makes a run durable.

    ``step_committed`` appends the step (and the run's resume state) in one transaction, ``history_replaced``
    swaps canonical history atomically, and every event is appended to the event
    log that SSE clients replay from.
    """

    def __init__(self, store: SessionStore, resume_state: Callable[[], Mapping[str, Any]] | None = None) -> None:
        self.store = store
        self.resume_state = resume_state

    def emit(self, event: RunEvent) -> None:
        if isinstance(event, StepCommitted):
            state = self.resume_state() if self.resume_state else None
            self.store.append_step(event.context_id, event.messages, state)
        elif isinstance(event, HistoryReplaced):
            self.store.replace_history(event.context_id, event.history)
        if event.kind in NOT_LOGGED:
            return
        data = event_to_json(event)
        if isinstance(event, HistoryReplaced):
            data["history"] = len(event.history)  # the history itself is already stored
        self.store.append_event(event.context_id, event.run_id, event.kind, data)
