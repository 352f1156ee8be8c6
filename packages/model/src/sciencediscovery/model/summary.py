"""The scripted model's deterministic structural checkpoint summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sciencediscovery.runtime_core import Message, ModelInput, Role

from .errors import ModelBadRequestError

CHECKPOINT_SUMMARY_PURPOSE = "checkpoint_summary"
"""``metadata["purpose"]`` of a checkpoint-summary request; ``metadata["checkpoint_sections"]`` holds its titles."""
_EXCERPT = 160


def structural_summary(model_input: ModelInput, provider: str = "scripted") -> str:
    """A deterministic checkpoint summary: one ``## <title>`` per requested section, in order.

    The first section lists one line per transcript entry (user and assistant
    text, tool calls, tool results with status and ``[ref:...]`` of stored
    outputs); the others say the scripted model recorded nothing for them. The
    transcript is the request's non-system messages, or, when a message holds a
    JSON-lines transcript (one ``{"role": ...}`` object per line), its entries.
    Without ``checkpoint_sections`` the one section is ``Summary``.
    """
    sections = _sections(model_input.metadata.get("checkpoint_sections"), provider)
    entries = [entry for message in model_input.messages for entry in _entries(message)]
    digest = [line for entry in entries for line in _digest(entry)] or ["- (no messages to summarize)"]
    parts = [f"## {sections[0]}", *digest]
    for title in sections[1:]:
        parts += ["", f"## {title}", "- (nothing recorded by the scripted model)"]
    return "\n".join(parts)


def _sections(raw: object, provider: str) -> Sequence[str]:
    if raw is None:
        return ["Summary"]
    if not isinstance(raw, list | tuple) or not raw or not all(isinstance(t, str) and t.strip() for t in raw):
        raise ModelBadRequestError(
            f"metadata['checkpoint_sections'] must be a non-empty list of section titles, got {raw!r}",
            provider=provider,
        )
    return [title.strip() for title in raw]


def _entries(message: Message) -> list[dict[str, Any]]:
    if message.role is Role.SYSTEM:
        return []
    transcript = _transcript(message.content) if message.role is Role.USER else None
    if transcript is not None:
        return transcript
    entry: dict[str, Any] = {"role": message.role.value, "content": message.content, "name": message.name}
    entry["tool_calls"] = [{"name": c.name, "arguments": dict(c.arguments)} for c in message.tool_calls]
    entry["status"] = message.status.value if message.status else None
    entry["output_ref"] = message.metadata.get("output_ref")
    return [entry]


def _transcript(text: str) -> list[dict[str, Any]] | None:
    """The entries of a JSON-lines transcript, or ``None`` when ``text`` is not one."""
    lines = [line for line in text.splitlines() if line.strip()]
    entries = []
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(entry, dict) or not ({"role", "previous_checkpoint"} & set(entry)):
            return None
        entries.append(entry)
    return entries or None


def _excerpt(value: object) -> str:
    flat = " ".join(str(value or "").split())
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 3] + "..."


def _digest(entry: dict[str, Any]) -> list[str]:
    if "previous_checkpoint" in entry:
        return [f"- previous checkpoint: {_excerpt(entry['previous_checkpoint'])}"]
    role = entry.get("role")
    if role == "system":
        return []
    if role == "tool":
        ref = f" [ref:{entry['output_ref']}]" if entry.get("output_ref") else ""
        label = entry.get("name") or entry.get("tool_call_id") or "tool"
        return [f"- tool {label} ({entry.get('status') or 'unknown'}): {_excerpt(entry.get('content'))}{ref}"]
    lines = [f"- {role}: {_excerpt(entry.get('content'))}"] if str(entry.get("content") or "").strip() else []
    for call in entry.get("tool_calls") or ():
        arguments = json.dumps(call.get("arguments", {}), sort_keys=True, ensure_ascii=False)
        lines.append(f"- {role} called {call.get('name')}({_excerpt(arguments)})")
    return lines
