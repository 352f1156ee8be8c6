"""Run events of context stages (start, transition, completion, failure, duration) and the processing report."""

from __future__ import annotations

import time
from typing import ClassVar

import attrs

from sciencediscovery.runtime_core import RunEvent, TurnContext

from .request import Measurement

__all__ = [
    "ContextStageCompleted",
    "ContextStageDuration",
    "ContextStageFailed",
    "ContextStageStarted",
    "ContextStageTransition",
    "FragmentChange",
    "ProcessingReport",
    "StageObserver",
]


@attrs.frozen
class FragmentChange:
    """One fragment changed by a step (``step_id``) or by the application (``None``), with JSON sizes."""

    fragment_id: str
    step_id: str | None
    before_chars: int
    after_chars: int


@attrs.frozen
class ProcessingReport:
    """What a stage did, built by the stage itself (handlers cannot write it).

    ``within_budget`` is informative only: the final check before the provider call
    measures the real request again; a report is never a release credential.
    """

    stage: str
    request_id: str
    mode: str
    selected_step_ids: tuple[str, ...] = ()
    executed_step_ids: tuple[str, ...] = ()
    changes: tuple[FragmentChange, ...] = ()
    before: Measurement | None = None
    after: Measurement | None = None
    within_budget: bool | None = None
    soft_target_met: bool | None = None
    model_calls: int = 0
    notes: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class ContextStageEvent(RunEvent):
    """Base of context stage events; ``stage`` is select, reduce, process or invoke."""

    kind: ClassVar[str] = "context_stage"
    stage: str
    request_id: str


@attrs.frozen(kw_only=True)
class ContextStageStarted(ContextStageEvent):
    kind: ClassVar[str] = "context_stage_started"


@attrs.frozen(kw_only=True)
class ContextStageTransition(ContextStageEvent):
    """A step inside a stage: ``name`` (measured, selected, step_applied, assembled, ...) and ``detail``."""

    kind: ClassVar[str] = "context_stage_transition"
    name: str
    detail: str = ""


@attrs.frozen(kw_only=True)
class ContextStageCompleted(ContextStageEvent):
    kind: ClassVar[str] = "context_stage_completed"
    report: ProcessingReport


@attrs.frozen(kw_only=True)
class ContextStageFailed(ContextStageEvent):
    kind: ClassVar[str] = "context_stage_failed"
    error_type: str
    message: str


@attrs.frozen(kw_only=True)
class ContextStageDuration(ContextStageEvent):
    kind: ClassVar[str] = "context_stage_duration"
    outcome: str
    duration_s: float


class StageObserver:
    """Emits a stage's start, transitions, completion or failure, and duration to the run's event sink."""

    def __init__(self, turn: TurnContext, stage: str, request_id: str) -> None:
        self._turn = turn
        self._base = {"run_id": turn.run_id, "context_id": turn.context_id, "stage": stage, "request_id": request_id}
        self._started = 0.0
        self._completed = False

    def __enter__(self) -> StageObserver:
        self._started = time.perf_counter()
        self._turn.events.emit(ContextStageStarted(**self._base))
        return self

    def transition(self, name: str, detail: str = "") -> None:
        self._turn.events.emit(ContextStageTransition(**self._base, name=name, detail=detail))

    def completed(self, report: ProcessingReport) -> None:
        self._completed = True
        self._turn.events.emit(ContextStageCompleted(**self._base, report=report))

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        if error is not None:
            failed = ContextStageFailed(**self._base, error_type=type(error).__name__, message=str(error))
            self._turn.events.emit(failed)
        outcome = "completed" if error is None and self._completed else "failed"
        duration = time.perf_counter() - self._started
        self._turn.events.emit(ContextStageDuration(**self._base, outcome=outcome, duration_s=duration))
