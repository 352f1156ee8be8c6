"""The ``scripted`` provider: deterministic answers from a JSON file, for offline runs, demos and agent tests."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence

from sciencediscovery.runtime_core import ContextOverflowError, Message, ModelInput, Role

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

NAME = "scripted"
CHECKPOINT_SUMMARY_PURPOSE = "checkpoint_summary"
"""``metadata["purpose"]`` of a checkpoint-summary request; ``metadata["checkpoint_sections"]`` holds its titles."""
_EXCERPT = 160


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
    errors: dict[str, tuple[type[ProviderError], int | None]] = {
        "rate_limit": (ModelRateLimitError, 429),
        "server_error": (ModelServerError, 500),
        "timeout": (ModelTimeoutError, None),
        "auth": (ModelAuthError, 401),
        "bad_request": (ModelBadRequestError, 400),
    }
    cls, status = errors[turn.error or ""]
    return cls(message, provider=NAME, status=status, retry_after_s=turn.retry_after)


def structural_summary(model_input: ModelInput) -> str:
    """A deterministic checkpoint summary: one ``##`` heading per requested section.

    The first section lists one line per non-system message of the request (role,
    tool calls, tool results with status, text excerpts); later sections note that
    the scripted model adds nothing to them. Without ``checkpoint_sections`` the
    one section is ``Summary``.
    """
    sections = _sections(model_input.metadata.get("checkpoint_sections"))
    digest = [line for message in model_input.messages for line in _digest(message)] or ["- (no messages to summarize)"]
    lines: list[str] = []
    for index, title in enumerate(sections):
        if lines:
            lines.append("")
        lines.append(f"## {title}")
        lines.extend(digest if index == 0 else ["- (nothing further recorded by the scripted model)"])
    return "\n".join(lines)


def _sections(raw: object) -> Sequence[str]:
    if raw is None:
        return ["Summary"]
    if not isinstance(raw, list | tuple) or not raw or not all(isinstance(t, str) and t.strip() for t in raw):
        raise ModelBadRequestError(
            f"metadata['checkpoint_sections'] must be a non-empty list of section titles, got {raw!r}", provider=NAME
        )
    return [title.strip() for title in raw]


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 3] + "..."


def _digest(message: Message) -> list[str]:
    if message.role is Role.SYSTEM:
        return []
    if message.role is Role.TOOL:
        status = message.status.value if message.status else "unknown"
        return [f"- tool {message.name or message.tool_call_id} ({status}): {_excerpt(message.content)}"]
    lines = [f"- {message.role.value}: {_excerpt(message.content)}"] if message.content.strip() else []
    lines += [
        f"- assistant called {call.name}({_excerpt(json.dumps(dict(call.arguments), sort_keys=True))})"
        for call in message.tool_calls
    ]
    return lines


def create_scripted_provider(context: ProviderContext) -> ScriptedProvider:
    """Factory for ``scripted:<path>``; the file is validated now, so a bad file fails at startup."""
    return ScriptedProvider(load_script(context.spec.target))


SCRIPTED_PROVIDER = ProviderDefinition(
    name=NAME,
    create=create_scripted_provider,
    description="deterministic answers from a JSON script file (offline runs, demos, tests)",
)
