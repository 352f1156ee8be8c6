"""The agent loop state machine: assemble, call the model, run tools, repeat."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from .errors import (
    AssemblerContractError,
    ContextOverflowError,
    DispatcherContractError,
    DuplicateToolCallIdError,
    HistoryError,
    RuntimeCoreError,
)
from .events import (
    HistoryReplaced,
    ModelOutput,
    OverflowRecovery,
    RunEvent,
    RunFinished,
    RunStarted,
    StepCommitted,
    ToolFinished,
    ToolResultCommitted,
    ToolStarted,
    TurnStarted,
)
from .history import Message, Role, ToolCall, ToolResultStatus, check_pairing, open_tool_calls
from .model_io import ModelResponse
from .ports import (
    AssembledContext,
    AssemblyRequest,
    ContextAssembler,
    ModelClient,
    RunEventSink,
    ToolDispatcher,
    TurnContext,
)
from .results import RunRequest, RunResult, RunStatus, RunTimings
from .waits import ExternalWaits

CANCELLED_RESULT_TEXT = "Cancelled: the run was cancelled before this tool call finished."
INTERRUPTED_RESULT_TEXT = "Interrupted: the previous run stopped before this tool call finished; it did not complete."


class _Terminal(Exception):
    """Ends the loop with a terminal status (internal control flow)."""

    def __init__(self, status: RunStatus, reason: str, error_type: str | None = None, final: Message | None = None):
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.error_type = error_type
        self.final = final


class AgentLoop:
    """Runs one request to exactly one terminal result.

    Invariants kept here: results are committed in the order the model declared
    the calls; every call gets exactly one result before the next model turn;
    cancellation closes open calls with cancelled results; the model-turn bound
    holds; an overflow is retried once after one forced pressure pass.
    """

    def __init__(self, ports: Mapping[str, object], request: RunRequest) -> None:
        self._assembler: ContextAssembler = ports["context_assembler"]  # type: ignore[assignment]
        self._model: ModelClient = ports["model_client"]  # type: ignore[assignment]
        self._dispatcher: ToolDispatcher = ports["tool_dispatcher"]  # type: ignore[assignment]
        self._sink: RunEventSink = ports["event_sink"]  # type: ignore[assignment]
        self.request = request
        self.history: tuple[Message, ...] = request.history
        self.turns = 0
        self.cancel_reason = "the run was cancelled"
        self.waits = ExternalWaits(request.run_id, request.context_id, self._emit)
        self._call_ids = {call.id for m in request.history for call in m.tool_calls}
        self._open_step: tuple[int, Message, list[object]] | None = None
        self._model_s = 0.0
        self._tools_s = 0.0
        self._finished = False

    # -- events -------------------------------------------------------------
    def _emit(self, event: RunEvent) -> None:
        self._sink.emit(event)

    def _ids(self) -> dict[str, str]:
        return {"run_id": self.request.run_id, "context_id": self.request.context_id}

    @property
    def finished(self) -> bool:
        return self._finished

    # -- the run ------------------------------------------------------------
    async def run(self) -> RunResult:
        started = time.perf_counter()
        terminal: _Terminal
        try:
            self._emit(RunStarted(**self._ids(), max_turns=self.request.max_turns))
            self._close_interrupted_calls()
            terminal = await self._loop()
        except _Terminal as reached:
            terminal = reached
        except asyncio.CancelledError:
            self._close_open_step()
            terminal = _Terminal(RunStatus.CANCELLED, self.cancel_reason)
        except RuntimeCoreError as error:
            self._close_open_step()
            terminal = _Terminal(RunStatus.FAILED, str(error), type(error).__name__)
        except Exception as error:  # a port raised: the run fails, history stays paired
            self._close_open_step()
            terminal = _Terminal(RunStatus.FAILED, f"{type(error).__name__}: {error}", type(error).__name__)
        self._finished = True
        result = RunResult(
            run_id=self.request.run_id,
            context_id=self.request.context_id,
            status=terminal.status,
            reason=terminal.reason,
            history=self.history,
            turns=self.turns,
            final_message=terminal.final,
            error_type=terminal.error_type,
            timings=RunTimings(
                total_s=time.perf_counter() - started,
                model_s=self._model_s,
                tools_s=self._tools_s,
                external_wait_s=self.waits.total_s,
            ),
        )
        try:
            self._emit(RunFinished(**self._ids(), status=result.status.value, reason=result.reason, turns=result.turns))
        except Exception:
            pass
        try:
            await asyncio.sleep(0)  # absorb a cancellation that arrived after the terminal state was reached
        except asyncio.CancelledError:
            pass
        return result

    async def _loop(self) -> _Terminal:
        while True:
            if self.turns >= self.request.max_turns:
                return _Terminal(RunStatus.TURN_LIMIT, f"model-turn bound of {self.request.max_turns} reached")
            self.turns += 1
            turn = self.request.first_turn - 1 + self.turns
            self.waits.turn = turn
            self._emit(TurnStarted(**self._ids(), turn=turn))
            response = await self._call_model(turn)
            message = response.message
            self._check_new_calls(turn, message)
            self._emit(
                ModelOutput(
                    **self._ids(),
                    turn=turn,
                    message=message,
                    finish_reason=response.finish_reason,
                    usage=response.usage,
                )
            )
            if not message.tool_calls:
                self._commit_step(turn, message, [])
                return _Terminal(RunStatus.COMPLETED, "the model finished without tool calls", final=message)
            await self._run_tools(turn, message)

    # -- model --------------------------------------------------------------
    async def _call_model(self, turn: int) -> ModelResponse:
        assembled = await self._assemble(turn)
        try:
            return await self._invoke_model(assembled, turn)
        except ContextOverflowError as first:
            self._emit(OverflowRecovery(**self._ids(), turn=turn, attempt=1, reason=str(first)))
            assembled = await self._assemble(turn, recovery_reason=str(first))
            try:
                return await self._invoke_model(assembled, turn)
            except ContextOverflowError as second:
                raise _Terminal(
                    RunStatus.FAILED,
                    f"context overflow persisted after one forced recovery pass: {second}",
                    type(second).__name__,
                ) from second

    async def _assemble(self, turn: int, recovery_reason: str | None = None) -> AssembledContext:
        forced = recovery_reason is not None
        assembled = await self._assembler.assemble(
            AssemblyRequest(
                run_id=self.request.run_id,
                context_id=self.request.context_id,
                turn=turn,
                history=self.history,
                force_pressure=forced,
                recovery_attempt=1 if forced else 0,
                recovery_reason=recovery_reason,
            )
        )
        if assembled.history is not self.history and assembled.history != self.history:
            try:
                check_pairing(assembled.history)
            except HistoryError as error:
                raise AssemblerContractError(f"assembler returned a history that breaks pairing: {error}") from error
            self.history = tuple(assembled.history)
            self._emit(HistoryReplaced(**self._ids(), turn=turn, history=self.history))
        return assembled

    async def _invoke_model(self, assembled: AssembledContext, turn: int) -> ModelResponse:
        context = TurnContext(self.request.run_id, self.request.context_id, turn, self._sink, self.waits)
        started = time.perf_counter()
        try:
            return await self._model.complete(assembled.model_input, context)
        finally:
            self._model_s += time.perf_counter() - started

    def _check_new_calls(self, turn: int, message: Message) -> None:
        seen: set[str] = set()
        for call in message.tool_calls:
            if call.id in seen or call.id in self._call_ids:
                raise DuplicateToolCallIdError(
                    f"turn {turn}: the model used tool call id {call.id!r} more than once; "
                    "the assistant message was not committed"
                )
            seen.add(call.id)
        self._call_ids.update(seen)

    # -- tools --------------------------------------------------------------
    async def _run_tools(self, turn: int, message: Message) -> None:
        results: list[object] = [None] * len(message.tool_calls)
        self._open_step = (turn, message, results)
        context = TurnContext(self.request.run_id, self.request.context_id, turn, self._sink, self.waits)
        started = time.perf_counter()
        tasks = [
            asyncio.create_task(self._execute(context, index, call, results))
            for index, call in enumerate(message.tool_calls)
        ]
        try:
            await asyncio.gather(*tasks)
        except BaseException:  # cancellation or a failing sink: no tool may outlive the step
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            self._tools_s += time.perf_counter() - started
        violations = [
            f"call {call.id!r} got {self._describe(result)}"
            for call, result in zip(message.tool_calls, results, strict=True)
            if not self._answers(call, result)
        ]
        self._commit_step(
            turn, message, [self._valid_or_error(call, r) for call, r in zip(message.tool_calls, results, strict=True)]
        )
        if violations:
            raise DispatcherContractError("tool dispatcher broke its contract: " + "; ".join(violations))

    async def _execute(self, context: TurnContext, index: int, call: ToolCall, results: list[object]) -> None:
        self._emit(ToolStarted(**self._ids(), turn=context.turn, call=call))
        started = time.perf_counter()
        result: object
        try:
            result = await self._dispatcher.dispatch(call, context)
        except asyncio.CancelledError as error:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the run (or this call) really is being cancelled
            result = self._exception_result(call, error)  # a tool leaked a CancelledError of its own
        except Exception as error:  # a raising tool becomes an error result, never an orphan
            result = self._exception_result(call, error)
        results[index] = result
        status = result.status if isinstance(result, Message) and result.status else ToolResultStatus.ERROR
        self._emit(
            ToolFinished(
                **self._ids(), turn=context.turn, call=call, status=status, duration_s=time.perf_counter() - started
            )
        )

    @staticmethod
    def _exception_result(call: ToolCall, error: BaseException) -> Message:
        return Message.tool_result(
            call,
            f"Tool {call.name!r} failed: {type(error).__name__}: {error}",
            status=ToolResultStatus.ERROR,
            error_kind="tool_exception",
        )

    @staticmethod
    def _answers(call: ToolCall, result: object) -> bool:
        return isinstance(result, Message) and result.role is Role.TOOL and result.tool_call_id == call.id

    @staticmethod
    def _describe(result: object) -> str:
        if isinstance(result, Message):
            return f"a {result.role.value} message for call id {result.tool_call_id!r}"
        return f"a {type(result).__name__}"

    def _valid_or_error(self, call: ToolCall, result: object) -> Message:
        if self._answers(call, result):
            return result  # type: ignore[return-value]
        return Message.tool_result(
            call,
            f"Tool {call.name!r} produced no valid result ({self._describe(result)}).",
            status=ToolResultStatus.ERROR,
            error_kind="dispatcher_contract",
        )

    # -- commits ------------------------------------------------------------
    def _commit_step(self, turn: int, message: Message | None, results: list[Message]) -> None:
        step = ([message] if message is not None else []) + results
        self.history = self.history + tuple(step)
        self._open_step = None
        calls = {call.id: call for m in ([message] if message else []) for call in m.tool_calls}
        for index, result in enumerate(results):
            call = calls.get(result.tool_call_id or "") or ToolCall(
                id=result.tool_call_id or "?", name=result.name or "?"
            )
            self._emit(ToolResultCommitted(**self._ids(), turn=turn, index=index, call=call, result=result))
        self._emit(StepCommitted(**self._ids(), turn=turn, messages=tuple(step)))

    def _close_open_step(self) -> None:
        if self._open_step is None:
            return
        turn, message, results = self._open_step
        closed = [
            result
            if self._answers(call, result)
            else Message.tool_result(
                call, CANCELLED_RESULT_TEXT, status=ToolResultStatus.CANCELLED, error_kind="cancelled"
            )
            for call, result in zip(message.tool_calls, results, strict=True)
        ]
        try:
            self._commit_step(turn, message, closed)  # type: ignore[arg-type]
        except Exception:
            self.history = self.history + (message, *closed)  # type: ignore[arg-type]
            self._open_step = None

    def _close_interrupted_calls(self) -> None:
        open_calls = open_tool_calls(self.history)
        if not open_calls:
            return
        closed = [
            Message.tool_result(
                call, INTERRUPTED_RESULT_TEXT, status=ToolResultStatus.CANCELLED, error_kind="interrupted"
            )
            for call in open_calls
        ]
        # the last step was half committed: its missing results follow the ones present
        self.history = self.history + tuple(closed)
        calls = {call.id: call for call in open_calls}
        for index, result in enumerate(closed):
            self._emit(
                ToolResultCommitted(
                    **self._ids(), turn=0, index=index, call=calls[result.tool_call_id or ""], result=result
                )
            )
        self._emit(StepCommitted(**self._ids(), turn=0, messages=tuple(closed)))
