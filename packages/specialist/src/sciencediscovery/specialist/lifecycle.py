"""The subagent lifecycle: states, allowed transitions, and the events that announce them.

created -> running -> waiting (an external wait such as a permission decision) -> running -> ...
-> completed | failed | cancelled | turn_limit. A subagent is ``created`` while it waits for a
concurrency slot. Every transition is a :class:`SubagentStateChanged` event on the parent's sink.
"""

from __future__ import annotations

import enum
from typing import ClassVar

import attrs

from sciencediscovery.runtime_core import RunEvent, RunStatus

from .errors import LifecycleError


class SubagentState(str, enum.Enum):
    CREATED = "created"
    RUNNING = "running"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TURN_LIMIT = "turn_limit"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_STATES

    @classmethod
    def of_status(cls, status: RunStatus) -> SubagentState:
        """The terminal state of a finished child run."""
        return cls(status.value)


TERMINAL_STATES = frozenset(
    {SubagentState.COMPLETED, SubagentState.FAILED, SubagentState.CANCELLED, SubagentState.TURN_LIMIT}
)
TRANSITIONS: dict[SubagentState, frozenset[SubagentState]] = {
    SubagentState.CREATED: frozenset({SubagentState.RUNNING, SubagentState.FAILED, SubagentState.CANCELLED}),
    SubagentState.RUNNING: frozenset({SubagentState.WAITING, *TERMINAL_STATES}),
    SubagentState.WAITING: frozenset({SubagentState.RUNNING, SubagentState.FAILED, SubagentState.CANCELLED}),
    **{state: frozenset() for state in TERMINAL_STATES},
}


def check_transition(previous: SubagentState, state: SubagentState, child_context_id: str) -> None:
    """Raise :class:`LifecycleError` unless ``previous -> state`` is a lifecycle edge."""
    if state not in TRANSITIONS[previous]:
        raise LifecycleError(f"subagent {child_context_id!r}: no transition from {previous.value} to {state.value}")


@attrs.frozen(kw_only=True)
class SubagentStateChanged(RunEvent):
    """A delegated child run changed state. ``run_id``/``context_id`` are the parent's."""

    kind: ClassVar[str] = "subagent_state_changed"
    child_context_id: str
    specialist: str | None
    state: str
    previous: str | None
    detail: str = ""
    child_run_id: str | None = None


@attrs.frozen(kw_only=True)
class SubagentBriefChecked(RunEvent):
    """A child's brief was checked against its specialist's output contract (``attempt`` 1, then 2 after repair)."""

    kind: ClassVar[str] = "subagent_brief_checked"
    child_context_id: str
    specialist: str
    attempt: int
    conforming: bool
    findings: tuple[str, ...] = ()


@attrs.frozen
class Transition:
    state: SubagentState
    detail: str = ""


@attrs.frozen
class SubagentRecord:
    """One delegation as the runner sees it: its current state and every transition so far."""

    child_context_id: str
    specialist: str | None
    transitions: tuple[Transition, ...]
    child_run_id: str | None = None

    @property
    def state(self) -> SubagentState:
        return self.transitions[-1].state

    def to_json(self) -> dict[str, object]:
        return {
            "childContextId": self.child_context_id,
            "specialist": self.specialist,
            "state": self.state.value,
            "childRunId": self.child_run_id,
            "transitions": [{"state": t.state.value, "detail": t.detail} for t in self.transitions],
        }
