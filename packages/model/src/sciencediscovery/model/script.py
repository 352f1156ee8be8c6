"""The scripted model's file format, loaded and validated with every problem reported by JSON path.

::

    {"turns": [{"content": "...", "tool_calls": [{"id": "call-1", "name": "read_skill",
                                                  "arguments": {"name": "literature-review"}}]},
               {"error": "context_overflow"},
               {"content": "final answer"}],
     "summaries": ["..."]}

A tool call's ``arguments`` is an object, or a string sent as the raw argument
JSON (to rehearse malformed arguments). ``id`` defaults to ``call-<turn>-<n>``.
An error turn holds ``error`` (one of :data:`ERROR_KINDS`), optionally
``message`` and ``retry_after`` (seconds, for ``rate_limit``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .errors import ScriptFileError

ERROR_KINDS = ("context_overflow", "rate_limit", "server_error", "timeout", "auth", "bad_request")
_TOP_KEYS = {"turns", "summaries"}
_TURN_KEYS = {"content", "tool_calls"}
_ERROR_KEYS = {"error", "message", "retry_after"}
_CALL_KEYS = {"id", "name", "arguments"}


@attrs.frozen
class ScriptedToolCall:
    id: str
    name: str
    arguments: Mapping[str, Any] | str


@attrs.frozen
class ScriptedTurn:
    """One answer of the scripted model: content and tool calls, or an error to raise."""

    content: str = ""
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    error: str | None = None
    message: str | None = None
    retry_after: float | None = None


@attrs.frozen
class Script:
    """A validated scripted-model file; ``summaries`` is ``None`` when the file has none."""

    path: str
    turns: tuple[ScriptedTurn, ...]
    summaries: tuple[str, ...] | None = None


def load_script(path: str | Path) -> Script:
    """Read and validate a scripted-model file; raises :class:`ScriptFileError` listing every problem."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ScriptFileError(source, [f"$: cannot read the file ({error.strerror or error})"]) from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ScriptFileError(
            source, [f"$: not valid JSON ({error.msg} at line {error.lineno} column {error.colno})"]
        ) from error
    return parse_script(data, source)


def parse_script(data: Any, source: str = "<script>") -> Script:
    """Validate already-parsed JSON ``data`` as a script; ``source`` names it in errors."""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise ScriptFileError(source, [f"$: must be an object with 'turns', got {_kind(data)}"])
    problems += [f"$.{key}: unknown key (allowed: turns, summaries)" for key in sorted(set(data) - _TOP_KEYS)]
    turns: list[ScriptedTurn] = []
    raw_turns = data.get("turns")
    if not isinstance(raw_turns, list):
        problems.append(f"$.turns: must be a list of turns, got {_kind(raw_turns)}")
    else:
        seen_ids: dict[str, str] = {}
        for index, raw in enumerate(raw_turns):
            turn = _turn(raw, f"$.turns[{index}]", index + 1, seen_ids, problems)
            if turn is not None:
                turns.append(turn)
    summaries = data.get("summaries")
    if summaries is not None and (not isinstance(summaries, list) or not all(isinstance(s, str) for s in summaries)):
        problems.append(f"$.summaries: must be a list of strings, got {_kind(summaries)}")
    if problems:
        raise ScriptFileError(source, problems)
    return Script(path=source, turns=tuple(turns), summaries=None if summaries is None else tuple(summaries))


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _turn(raw: Any, path: str, number: int, seen_ids: dict[str, str], problems: list[str]) -> ScriptedTurn | None:
    if not isinstance(raw, dict):
        problems.append(f"{path}: must be an object, got {_kind(raw)}")
        return None
    if "error" in raw:
        return _error_turn(raw, path, problems)
    start = len(problems)
    problems += [f"{path}.{key}: unknown key (allowed: content, tool_calls)" for key in sorted(set(raw) - _TURN_KEYS)]
    if not _TURN_KEYS & set(raw):
        problems.append(f"{path}: a turn needs 'content', 'tool_calls' or 'error'")
    content = raw.get("content", "")
    if not isinstance(content, str):
        problems.append(f"{path}.content: must be a string, got {_kind(content)}")
    raw_calls = raw.get("tool_calls", [])
    calls: list[ScriptedToolCall] = []
    if not isinstance(raw_calls, list):
        problems.append(f"{path}.tool_calls: must be a list, got {_kind(raw_calls)}")
        raw_calls = []
    for index, raw_call in enumerate(raw_calls):
        call = _call(raw_call, f"{path}.tool_calls[{index}]", f"call-{number}-{index + 1}", seen_ids, problems)
        if call is not None:
            calls.append(call)
    if len(problems) > start:
        return None
    return ScriptedTurn(content=content, tool_calls=tuple(calls))


def _error_turn(raw: dict[str, Any], path: str, problems: list[str]) -> ScriptedTurn | None:
    start = len(problems)
    problems += [
        f"{path}.{key}: unknown key in an error turn (allowed: error, message, retry_after)"
        for key in sorted(set(raw) - _ERROR_KEYS)
    ]
    error, message, retry_after = raw["error"], raw.get("message"), raw.get("retry_after")
    if error not in ERROR_KINDS:
        problems.append(f"{path}.error: must be one of {', '.join(ERROR_KINDS)}, got {error!r}")
    if message is not None and not isinstance(message, str):
        problems.append(f"{path}.message: must be a string, got {_kind(message)}")
    if retry_after is not None and (
        isinstance(retry_after, bool)
        or not isinstance(retry_after, int | float)
        or not math.isfinite(retry_after)
        or retry_after < 0
    ):
        problems.append(f"{path}.retry_after: must be a non-negative number of seconds, got {retry_after!r}")
    if len(problems) > start:
        return None
    return ScriptedTurn(error=error, message=message, retry_after=None if retry_after is None else float(retry_after))


def _call(
    raw: Any, path: str, default_id: str, seen_ids: dict[str, str], problems: list[str]
) -> ScriptedToolCall | None:
    if not isinstance(raw, dict):
        problems.append(f"{path}: must be an object, got {_kind(raw)}")
        return None
    start = len(problems)
    problems += [f"{path}.{key}: unknown key (allowed: id, name, arguments)" for key in sorted(set(raw) - _CALL_KEYS)]
    call_id, name, arguments = raw.get("id", default_id), raw.get("name"), raw.get("arguments", {})
    if not isinstance(call_id, str) or not call_id:
        problems.append(f"{path}.id: must be a non-empty string, got {call_id!r}")
    elif call_id in seen_ids:
        problems.append(f"{path}.id: {call_id!r} is already used at {seen_ids[call_id]}")
    else:
        seen_ids[call_id] = path
    if not isinstance(name, str) or not name:
        problems.append(f"{path}.name: must be a non-empty string, got {name!r}")
    if not isinstance(arguments, dict | str):
        problems.append(f"{path}.arguments: must be an object (or a raw JSON string), got {_kind(arguments)}")
    if len(problems) > start:
        return None
    return ScriptedToolCall(id=call_id, name=str(name), arguments=arguments)
