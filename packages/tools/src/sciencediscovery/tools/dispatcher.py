"""GovernedToolDispatcher: the one governed path from a model's tool call to its canonical result.

admit (parse, lookup, JSON Schema, loop policy) -> gates -> execute (timeout,
cancellation) -> sanitize -> cap and store -> observers -> ``Message.tool_result``.

Run-state channels are *not* updated here: the context package updates them
from the kernel's ``ToolResultCommitted`` events, which arrive in the order the
model declared the calls even when tools finish out of order.
"""

from __future__ import annotations

import asyncio
import copy
import enum
import traceback
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from sciencediscovery.runtime_core import (
    OUTPUT_REF_KEY,
    TRUST_KEY,
    Message,
    ToolCall,
    ToolResultStatus,
    TurnContext,
)

from .definitions import ToolDefinition, ToolGate, ToolInvocation, ToolObserver, ToolOutput, Trust
from .errors import ToolFailure
from .events import ToolCallFailed, ToolObserverFailed, ToolOutputProcessed
from .loop_policy import LoopPolicy
from .registry import ToolRegistry
from .sanitize import cap_text, sanitize
from .search import SELECT_PREFIX, TOOL_SEARCH
from .settings import ToolSettings
from .store import MemoryToolOutputStore, ToolOutputStore
from .validation import argument_errors

MAX_MESSAGE_CHARS = 2_000
MAX_LISTED_TOOLS = 40


class ErrorKind(str, enum.Enum):
    """The ``error_kind`` values the dispatcher produces (handlers may add their own via ToolFailure)."""

    VALIDATION = "validation"
    UNKNOWN_TOOL = "unknown_tool"
    PERMISSION_DENIED = "permission_denied"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    TOOL_EXCEPTION = "tool_exception"
    OVERSIZE = "oversize"
    LOOP_POLICY = "loop_policy"
    TOOL_ERROR = "tool_error"


class _Failure(Exception):
    def __init__(self, kind: str, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.detail = detail


class GovernedToolDispatcher:
    """Implements runtime_core's ToolDispatcher port over one run's :class:`ToolRegistry`."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        store: ToolOutputStore | None = None,
        gates: Iterable[ToolGate] = (),
        observers: Iterable[ToolObserver] = (),
        settings: ToolSettings | None = None,
    ) -> None:
        self.registry = registry
        self.store = store if store is not None else MemoryToolOutputStore()
        self.gates = tuple(gates)
        self.observers = tuple(observers)
        self.settings = settings or ToolSettings()
        self.loop_policy = LoopPolicy(self.settings.identical_call_limit, self.settings.call_budget)
        self._running: dict[str, asyncio.Task[Message]] = {}

    # -- the port ---------------------------------------------------------------
    async def dispatch(self, call: ToolCall, context: TurnContext) -> Message:
        try:
            tool, arguments = self._admit(call, context)
        except _Failure as failure:
            return self._error(call, context, None, failure)
        invocation = ToolInvocation(call, arguments, context)
        task = asyncio.create_task(self._run(invocation, tool))
        self._running[call.id] = task
        try:
            result = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is None or current.cancelling():
                self._report(call, context, ErrorKind.CANCELLED.value, "cancelled", "the run was cancelled")
                raise
            result = self._error(
                call, context, tool, _Failure(ErrorKind.CANCELLED.value, "The tool call was cancelled.")
            )
        finally:
            self._running.pop(call.id, None)
        await self._observe(invocation, tool, result)
        return result

    def cancel(self, call_id: str) -> bool:
        """Cancel one running call; it ends with a ``cancelled`` result and the run goes on."""
        task = self._running.get(call_id)
        return task.cancel() if task is not None else False

    # -- admission (synchronous, so loop policy sees calls in declared order) ---
    def _admit(self, call: ToolCall, context: TurnContext) -> tuple[ToolDefinition, Mapping[str, Any]]:
        tool = self.registry.get(call.name)
        if tool is None or not self.registry.is_visible(call.name, context.turn):
            raise _Failure(ErrorKind.UNKNOWN_TOOL.value, self._unknown_message(call.name, context.turn))
        if call.argument_error is not None:
            raise _Failure(
                ErrorKind.VALIDATION.value,
                f"The arguments for {call.name!r} could not be parsed ({call.argument_error}). "
                "Send one JSON object matching the tool's parameters.",
            )
        # a private copy: the handler cannot change the call recorded in history
        arguments = copy.deepcopy(dict(call.arguments) if isinstance(call.arguments, Mapping) else call.arguments)
        problems = argument_errors(self.registry.validator(call.name), arguments)
        if problems:
            listing = "\n".join(f"- {problem}" for problem in problems)
            raise _Failure(ErrorKind.VALIDATION.value, f"Invalid arguments for {call.name!r}:\n{listing}")
        refusal = self.loop_policy.admit(context.run_id, call.name, arguments, tool.max_calls_per_run)
        if refusal is not None:
            raise _Failure(ErrorKind.LOOP_POLICY.value, f"Not executed: {refusal}.")
        return tool, arguments

    def _unknown_message(self, name: str, turn: int) -> str:
        tool = self.registry.get(name)
        if tool is not None and self.registry.promoted_at(name) is not None:
            return f"Tool {name!r} was loaded during this turn; it can be called from the next turn."
        if tool is not None:
            return (
                f"Tool {name!r} is not loaded. Call {TOOL_SEARCH} with query '{SELECT_PREFIX}{name}'; "
                "it can be called from the next turn."
            )
        visible = [spec.name for spec in self.registry.visible_specs(turn)]
        listed = ", ".join(visible[:MAX_LISTED_TOOLS]) + (", ..." if len(visible) > MAX_LISTED_TOOLS else "")
        return f"Unknown tool {name!r}. Callable tools: {listed or 'none'}."

    # -- gates and execution ----------------------------------------------------
    async def _run(self, invocation: ToolInvocation, tool: ToolDefinition) -> Message:
        call, context = invocation.call, invocation.context
        try:
            granted = await self._check_gates(invocation, tool)
            output = await self._execute(invocation, tool)
        except _Failure as failure:
            return self._error(call, context, tool, failure)
        return self._finish(invocation, tool, output, granted)

    async def _check_gates(self, invocation: ToolInvocation, tool: ToolDefinition) -> dict[str, Any]:
        """Every gate must allow; returns the metadata the allowing gates attach to the result."""
        granted: dict[str, Any] = {}
        for gate in self.gates:
            try:
                decision = await gate.check(invocation, tool)
            except Exception as error:  # a broken gate fails closed
                raise _Failure(
                    ErrorKind.PERMISSION_DENIED.value,
                    f"Permission denied for {tool.name!r}: the permission check failed.",
                    f"gate {type(gate).__name__} raised:\n{traceback.format_exc()}",
                ) from error
            if not decision.allowed:
                raise _Failure(
                    ErrorKind.PERMISSION_DENIED.value,
                    f"Permission denied for {tool.name!r}: {decision.reason or 'no reason given'}",
                    f"gate {type(gate).__name__} (source {decision.source or 'unspecified'}) denied: {decision.reason}",
                )
            granted.update(decision.metadata)
        return granted

    async def _execute(self, invocation: ToolInvocation, tool: ToolDefinition) -> ToolOutput:
        seconds = tool.timeout_s or self.settings.timeout_s
        try:
            async with asyncio.timeout(seconds) as scope:
                returned = await tool.handler(invocation)
        except TimeoutError as error:
            if scope.expired():
                raise _Failure(
                    ErrorKind.TIMEOUT.value, f"Tool {tool.name!r} did not finish within {seconds:g} seconds."
                ) from error
            raise self._exception(tool) from error
        except ToolFailure as failure:
            raise _Failure(failure.error_kind, str(failure), traceback.format_exc()) from failure
        except Exception as error:
            raise self._exception(tool) from error
        if isinstance(returned, str):
            return ToolOutput(returned)
        if isinstance(returned, ToolOutput) and isinstance(returned.content, str):
            return returned
        raise _Failure(
            ErrorKind.TOOL_EXCEPTION.value,
            f"Tool {tool.name!r} returned {type(returned).__name__}, not text.",
            f"handler returned {returned!r}",
        )

    @staticmethod
    def _exception(tool: ToolDefinition) -> _Failure:
        error = traceback.format_exc()
        last = error.strip().splitlines()[-1]
        return _Failure(ErrorKind.TOOL_EXCEPTION.value, f"Tool {tool.name!r} failed: {last}", error)

    # -- results ----------------------------------------------------------------
    def _finish(
        self, invocation: ToolInvocation, tool: ToolDefinition, output: ToolOutput, granted: Mapping[str, Any]
    ) -> Message:
        call, context = invocation.call, invocation.context
        declared = output.metadata.get(TRUST_KEY)
        trust = Trust.UNTRUSTED if Trust.UNTRUSTED in (tool.trust, declared) else Trust.TRUSTED
        content, changes = output.content, {}
        if trust is Trust.UNTRUSTED:
            cleaned = sanitize(content)
            content, changes = cleaned.text, dict(cleaned.changes)
        original = len(content)
        ref = self.store.put(content, trust) if original > self.settings.store_threshold_chars else None
        status = ToolResultStatus.ERROR if output.is_error else ToolResultStatus.OK
        error_kind = (output.error_kind or ErrorKind.TOOL_ERROR.value) if output.is_error else None
        if original > self.settings.max_inline_chars:
            content = cap_text(
                content,
                self.settings.max_inline_chars,
                f"output of {original} characters cut to head and tail; the full output is stored as {ref}: "
                f"read it with read_tool_output(ref={ref!r}, query=... or line_start=...)",
            )
            if not output.is_error:
                status, error_kind = ToolResultStatus.ERROR, ErrorKind.OVERSIZE.value
                self._report(
                    call,
                    context,
                    error_kind,
                    f"Output of {original} characters exceeds the inline limit; head and tail shown.",
                    f"output of {original} characters (limit {self.settings.max_inline_chars}) stored as {ref}",
                )
        if trust is Trust.UNTRUSTED or ref is not None:
            context.events.emit(
                ToolOutputProcessed(
                    run_id=context.run_id,
                    context_id=context.context_id,
                    turn=context.turn,
                    call_id=call.id,
                    tool=tool.name,
                    trust=trust.value,
                    original_chars=len(output.content),
                    inline_chars=len(content),
                    changes=tuple(changes.items()),
                    output_ref=ref,
                )
            )
        metadata = {key: value for key, value in output.metadata.items() if key not in (TRUST_KEY, OUTPUT_REF_KEY)}
        metadata.update(granted)
        metadata[TRUST_KEY] = trust.value
        if ref is not None:
            metadata[OUTPUT_REF_KEY] = ref
        return attrs.evolve(Message.tool_result(call, content, status=status, error_kind=error_kind), metadata=metadata)

    def _error(self, call: ToolCall, context: TurnContext, tool: ToolDefinition | None, failure: _Failure) -> Message:
        message = cap_text(sanitize(failure.message).text, MAX_MESSAGE_CHARS, "message shortened")
        self._report(call, context, failure.kind, message, failure.detail)
        status = ToolResultStatus.CANCELLED if failure.kind == ErrorKind.CANCELLED.value else ToolResultStatus.ERROR
        trust = tool.trust if tool is not None else Trust.TRUSTED
        result = Message.tool_result(call, message, status=status, error_kind=failure.kind)
        return attrs.evolve(result, metadata={TRUST_KEY: trust.value})

    @staticmethod
    def _report(call: ToolCall, context: TurnContext, kind: str, message: str, detail: str) -> None:
        context.events.emit(
            ToolCallFailed(
                run_id=context.run_id,
                context_id=context.context_id,
                turn=context.turn,
                call_id=call.id,
                tool=call.name,
                error_kind=kind,
                message=message,
                detail=detail,
            )
        )

    async def _observe(self, invocation: ToolInvocation, tool: ToolDefinition, result: Message) -> None:
        context = invocation.context
        for observer in self.observers:
            try:
                await observer.after(invocation, tool, result)
            except Exception:  # an observer cannot change or lose the result
                context.events.emit(
                    ToolObserverFailed(
                        run_id=context.run_id,
                        context_id=context.context_id,
                        turn=context.turn,
                        call_id=invocation.call.id,
                        tool=tool.name,
                        observer=type(observer).__name__,
                        detail=traceback.format_exc(),
                    )
                )
