"""The ``scripted`` provider: deterministic answers from a JSON file, for offline runs, demos and agent tests."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator

from sciencediscovery.runtime_core import ContextOverflowError, ModelInput

from .errors import (
    ModelAuthError,
    ModelBadRequestError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
    ProviderError,
    ScriptExhaustedError,
)
from .provider import ProviderContext, ProviderDefinition
from .script import Script, ScriptedTurn, load_script
from .stream import Finish, StreamPart, TextDelta, ToolCallDelta
from .summary import CHECKPOINT_SUMMARY_PURPOSE, structural_summary

NAME = "scripted"
_ERRORS: dict[str, tuple[type[ProviderError], int | None]] = {
    "rate_limit": (ModelRateLimitError, 429),
    "server_error": (ModelServerError, 500),
    "timeout": (ModelTimeoutError, None),
    "auth": (ModelAuthError, 401),
    "bad_request": (ModelBadRequestError, 400),
}
"""Error turns other than ``context_overflow``: the error class and the HTTP status it stands for."""


class ScriptedProvider:
    """Answers each model call with the script's next turn, in order.

    Checkpoint-summary requests do not consume turns: they get the script's
    ``summaries`` in order, then a deterministic structural summary of the request.
    A retryable error turn (``rate_limit``, ``server_error``, ``timeout``) is
    retried by the client like a real provider error, consuming the next turn.
    """

    name = NAME

    def __init__(self, script: Script) -> None:
        self.script = script
        self.model = script.path
        self.turns_used = 0
        self.summaries_used = 0

    async def stream(self, model_input: ModelInput) -> AsyncGenerator[StreamPart, None]:
        if model_input.metadata.get("purpose") == CHECKPOINT_SUMMARY_PURPOSE:
            yield TextDelta(self._summary(model_input))
            yield Finish("stop")
            return
        if self.turns_used >= len(self.script.turns):
            raise ScriptExhaustedError(self.script.path, self.turns_used + 1, len(self.script.turns))
        turn = self.script.turns[self.turns_used]
        self.turns_used += 1
        if turn.error is not None:
            raise _turn_error(turn, self.turns_used)
        if turn.content:
            yield TextDelta(turn.content)
        for index, call in enumerate(turn.tool_calls):
            arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(dict(call.arguments))
            yield ToolCallDelta(index=index, id=call.id, name=call.name, arguments=arguments)
        yield Finish("tool_calls" if turn.tool_calls else "stop")

    def _summary(self, model_input: ModelInput) -> str:
        summaries = self.script.summaries or ()
        if self.summaries_used < len(summaries):
            self.summaries_used += 1
            return summaries[self.summaries_used - 1]
        return structural_summary(model_input)


def _turn_error(turn: ScriptedTurn, number: int) -> Exception:
    message = turn.message or f"scripted {turn.error} at turn {number}"
    if turn.error == "context_overflow":
        return ContextOverflowError(message, provider=NAME)
    cls, status = _ERRORS[turn.error or ""]
    return cls(message, provider=NAME, status=status, retry_after_s=turn.retry_after)


def create_scripted_provider(context: ProviderContext) -> ScriptedProvider:
    """Factory for ``scripted:<path>``; the file is validated now, so a bad file fails at startup."""
    return ScriptedProvider(load_script(context.spec.target))


SCRIPTED_PROVIDER = ProviderDefinition(
    name=NAME,
    create=create_scripted_provider,
    description="deterministic answers from a JSON script file (offline runs, demos, tests)",
)
