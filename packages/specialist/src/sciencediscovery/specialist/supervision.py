"""One delegation under supervision: its record, its transitions, and what its child run reports.

The runner binds the supervision to the child run through a context variable
while it awaits the composition root's factory; :class:`ChildEventRelay`, a
sink every run gets through ``register_event_sinks``, hands the child's events
(its external waits) back to it. Runs outside a supervised child see nothing.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable

from sciencediscovery.orchestration import ChildRunSpec
from sciencediscovery.runtime_core import ExternalWaitFinished, ExternalWaitStarted, RunEvent, RunEventSink

from .lifecycle import (
    SubagentBriefChecked,
    SubagentRecord,
    SubagentState,
    SubagentStateChanged,
    Transition,
    check_transition,
)

DETAIL_CHARS = 200

_CURRENT: contextvars.ContextVar[Supervision | None] = contextvars.ContextVar(
    "sciencediscovery_specialist_supervision", default=None
)


def _clip(text: str) -> str:
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"


class Supervision:
    """Tracks one delegation from ``created`` to its terminal state; every move is an event."""

    def __init__(
        self, spec: ChildRunSpec, sinks: Iterable[RunEventSink], publish: Callable[[SubagentRecord], None]
    ) -> None:
        self.spec = spec
        self.child_context_ids = {spec.context_id}
        self._sinks = tuple(sinks)
        self._publish = publish
        self._waits: set[tuple[str, str]] = set()
        parent = spec.parent
        self._ids = {"run_id": parent.run_id if parent else "", "context_id": parent.context_id if parent else ""}
        self.record = SubagentRecord(spec.context_id, spec.specialist, ())
        self._enter(SubagentState.CREATED, None, "waiting for a concurrency slot", None)

    @property
    def state(self) -> SubagentState:
        return self.record.state

    def move(self, state: SubagentState, detail: str = "", child_run_id: str | None = None) -> None:
        """Make the transition ``state`` (a :class:`LifecycleError` if the lifecycle has no such edge)."""
        check_transition(self.state, state, self.spec.context_id)
        self._enter(state, self.state, detail, child_run_id)

    def _enter(self, state: SubagentState, previous: SubagentState | None, detail: str, run_id: str | None) -> None:
        detail = _clip(detail)
        self.record = SubagentRecord(
            self.spec.context_id,
            self.spec.specialist,
            (*self.record.transitions, Transition(state, detail)),
            run_id or self.record.child_run_id,
        )
        self._publish(self.record)
        self._emit(
            SubagentStateChanged(
                **self._ids,
                child_context_id=self.spec.context_id,
                specialist=self.spec.specialist,
                state=state.value,
                previous=previous.value if previous else None,
                detail=detail,
                child_run_id=self.record.child_run_id,
            )
        )

    def checked(self, attempt: int, findings: tuple[str, ...]) -> None:
        self._emit(
            SubagentBriefChecked(
                **self._ids,
                child_context_id=self.spec.context_id,
                specialist=self.spec.specialist or "",
                attempt=attempt,
                conforming=not findings,
                findings=findings,
            )
        )

    def _emit(self, event: RunEvent) -> None:
        for sink in self._sinks:
            sink.emit(event)

    def observe(self, event: RunEvent) -> None:
        """Follow the child's external waits: the first open wait means ``waiting``, none left ``running``."""
        if event.context_id not in self.child_context_ids or self.state.terminal:
            return
        key = (event.run_id, getattr(event, "wait_id", ""))
        if isinstance(event, ExternalWaitStarted):
            self._waits.add(key)
            if self.state is SubagentState.RUNNING:
                self.move(SubagentState.WAITING, f"{event.wait_kind}: {event.detail}")
        elif isinstance(event, ExternalWaitFinished):
            self._waits.discard(key)
            if not self._waits and self.state is SubagentState.WAITING:
                self.move(SubagentState.RUNNING, f"{event.wait_kind} wait finished")

    def bind(self) -> contextvars.Token[Supervision | None]:
        """Make this the supervision of runs started from the current task (until :func:`unbind`)."""
        return _CURRENT.set(self)


def unbind(token: contextvars.Token[Supervision | None]) -> None:
    _CURRENT.reset(token)


class ChildEventRelay:
    """Hands each event of a supervised child run to its :class:`Supervision`; registered for every run."""

    def emit(self, event: RunEvent) -> None:
        supervision = _CURRENT.get()
        if supervision is not None:
            supervision.observe(event)
