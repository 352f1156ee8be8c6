"""RunService: starts, resumes and cancels runs of durable sessions; the CLI and HTTP share it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import attrs

from sciencediscovery.runtime_core import (
    FanOutSink,
    Message,
    Role,
    RunEvent,
    RunEventSink,
    RunHandle,
    RunRequest,
    RunResult,
    Runtime,
)

from .errors import RunConflictError, UnknownRunError
from .store import SessionRecord, SessionStore, StoreEventSink


@attrs.frozen
class ComposedRun:
    """What the composition root hands back for one run.

    ``resume_state`` is saved with every committed step (e.g. how far a scripted
    model has got), so a resumed run continues exactly after the last step.
    """

    runtime: Runtime
    max_turns: int
    trace_dir: Path | None = None
    resume_state: Callable[[], Mapping[str, Any]] = dict


class RunComposer(Protocol):
    """Builds the runtime for one run of a session (implemented by ``bootstrap.runtime``)."""

    async def compose(
        self, session: SessionRecord, history: tuple[Message, ...], sink: RunEventSink
    ) -> ComposedRun: ...


def durable_sink(store: SessionStore, composed: Callable[[], ComposedRun | None]) -> StoreEventSink:
    """A store sink that saves the run's resume state with each step; ``composed`` is read late
    because the sink must exist before the run is composed."""

    def state() -> Mapping[str, Any]:
        run = composed()
        return run.resume_state() if run is not None else {}

    return StoreEventSink(store, resume_state=state)


@attrs.frozen
class RunSummary:
    """The printable outcome of a run (the CLI's ``--json`` object)."""

    status: str
    reason: str
    final_answer: str | None
    context_id: str
    run_id: str
    turns: int
    trace_dir: str | None

    @classmethod
    def of(cls, result: RunResult, trace_dir: Path | None) -> RunSummary:
        return cls(
            status=result.status.value,
            reason=result.reason,
            final_answer=result.final_message.content if result.final_message else None,
            context_id=result.context_id,
            run_id=result.run_id,
            turns=result.turns,
            trace_dir=str(trace_dir) if trace_dir else None,
        )


class LiveEvents:
    """Wakes SSE readers when new events are stored; carries live-only events (stream deltas)."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[RunEvent | None]]] = {}

    def subscribe(self, context_id: str) -> asyncio.Queue[RunEvent | None]:
        queue: asyncio.Queue[RunEvent | None] = asyncio.Queue()
        self._subscribers.setdefault(context_id, set()).add(queue)
        return queue

    def unsubscribe(self, context_id: str, queue: asyncio.Queue[RunEvent | None]) -> None:
        self._subscribers.get(context_id, set()).discard(queue)

    def emit(self, event: RunEvent) -> None:
        for queue in self._subscribers.get(event.context_id, ()):
            queue.put_nowait(event)


class RunService:
    """Owns the active runs of this process. Every run is durable through the store."""

    def __init__(self, store: SessionStore, composer: RunComposer) -> None:
        self.store = store
        self.composer = composer
        self.live = LiveEvents()
        self._active: dict[str, tuple[str, RunHandle, asyncio.Task[RunSummary]]] = {}
        self._starting: set[str] = set()

    def create_session(
        self, structured_input: Mapping[str, Any], config: Mapping[str, Any], context_id: str | None = None
    ) -> SessionRecord:
        context_id = context_id or f"ctx-{uuid.uuid4().hex[:12]}"
        return self.store.create_session(context_id, structured_input, config)

    def answered(self, context_id: str) -> bool:
        """Whether the session's history ends with the model's final answer (nothing left to do)."""
        history = self.store.load_history(context_id)
        return bool(history) and history[-1].role is Role.ASSISTANT and not history[-1].tool_calls

    async def start(self, context_id: str, first_message: Message | None = None) -> str:
        """Start (or continue) a run of the session in the background; returns the run id."""
        if context_id in self._starting or any(active[0] == context_id for active in self._active.values()):
            raise RunConflictError(f"session {context_id!r} already has an active run")
        if self.answered(context_id):
            raise RunConflictError(f"session {context_id!r} is already answered; its last run completed")
        self._starting.add(context_id)
        try:
            session = self.store.get_session(context_id)
            if first_message is not None and not self.store.load_history(context_id):
                self.store.append_step(context_id, [first_message])
            history = self.store.load_history(context_id)
            run_id = f"run-{uuid.uuid4().hex[:12]}"
            cell: list[ComposedRun] = []
            sink = FanOutSink([durable_sink(self.store, lambda: cell[0] if cell else None), self.live])
            composed = await self.composer.compose(session, history, sink)
            cell.append(composed)
        finally:
            self._starting.discard(context_id)
        self.store.start_run(run_id, context_id)
        first_turn = self.store.last_turn(context_id) + 1  # a continued session numbers its turns on
        handle = composed.runtime.start(
            RunRequest(context_id, history, max_turns=composed.max_turns, run_id=run_id, first_turn=first_turn)
        )
        task = asyncio.get_running_loop().create_task(self._finish(handle, composed))
        self._active[run_id] = (context_id, handle, task)
        return run_id

    async def _finish(self, handle: RunHandle, composed: ComposedRun) -> RunSummary:
        try:
            result = await handle.result()
            summary = RunSummary.of(result, composed.trace_dir)
            self.store.finish_run(result.run_id, summary.status, summary.reason, summary.turns, attrs.asdict(summary))
            return summary
        finally:
            self._active.pop(handle.run_id, None)

    async def run(self, context_id: str, first_message: Message | None = None) -> RunSummary:
        """Run the session to its terminal result."""
        run_id = await self.start(context_id, first_message)
        return await self.wait(run_id)

    async def wait(self, run_id: str) -> RunSummary:
        active = self._active.get(run_id)
        if active is None:
            record = self.store.get_run(run_id)
            if record.result is None:
                raise UnknownRunError(run_id)
            return RunSummary(**record.result)
        return await asyncio.shield(active[2])

    def cancel(self, run_id: str, reason: str = "cancelled through the API") -> None:
        active = self._active.get(run_id)
        if active is None:
            self.store.get_run(run_id)  # raises UnknownRunError for an unknown id
            return
        active[1].cancel(reason)

    def status(self, run_id: str) -> str:
        """``running`` or ``waiting`` while live; afterwards the stored terminal status (written with the result)."""
        active = self._active.get(run_id)
        if active is not None and active[1].status in ("running", "waiting"):
            return active[1].status
        return self.store.get_run(run_id).status

    async def shutdown(self) -> None:
        for _, handle, _ in list(self._active.values()):
            handle.cancel("the service is shutting down")
        await asyncio.gather(*(task for _, _, task in list(self._active.values())), return_exceptions=True)
