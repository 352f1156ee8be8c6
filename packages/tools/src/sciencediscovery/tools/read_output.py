"""The ``read_tool_output`` tool: bounded slices of a stored output, as a tool the model can call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sciencediscovery.runtime_core import TRUST_KEY

from .definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput
from .slices import OutputSlice, SliceRequest, read_slice
from .store import ToolOutputStore

READ_TOOL_OUTPUT = "read_tool_output"
DEFAULT_SLICE_CHARS = 8_000

PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "ref": {"type": "string", "pattern": "^out_[0-9a-f]{32}$", "description": "The stored-output ref."},
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1000,
            "description": "Literal text to find (exact case first, then ignoring case); "
            "shows the match with nearby lines.",
        },
        "occurrence": {"type": "integer", "minimum": 1, "description": "Which match of query to show (default 1)."},
        "line_start": {"type": "integer", "minimum": 1, "description": "First line to show (lines count from 1)."},
        "line_end": {"type": "integer", "minimum": 1, "description": "Last line to show (inclusive)."},
        "char_start": {
            "type": "integer",
            "minimum": 0,
            "description": "First character offset (Unicode characters from 0), for very long single lines.",
        },
        "char_end": {"type": "integer", "minimum": 1, "description": "Character offset to stop before (exclusive)."},
    },
    "required": ["ref"],
    "additionalProperties": False,
}
DESCRIPTION = (
    "Read part of a large tool output that was stored with a ref (out_...). Give one of: query (literal search, "
    "preferred), line_start/line_end, or char_start/char_end for one very long line. With none, shows the first lines. "
    "Each answer is bounded; its header says how to read on."
)


def _header(ref: str, piece: OutputSlice, trust: str) -> str:
    about = f"stored output {ref}: {piece.total_chars} characters, {piece.total_lines} lines, trust={trust}"
    if piece.mode == "query" and piece.matches == 0:
        return f"[{about}. No match.]"
    shown = f"lines {piece.first_line}-{piece.last_line}, characters {piece.start}-{piece.end}"
    notes = []
    if piece.mode == "query":
        case = " ignoring case" if piece.ignore_case else ""
        notes.append(f"match {piece.occurrence} of {piece.matches}{case}")
        if piece.occurrence < piece.matches:
            notes.append(f"next match: occurrence={piece.occurrence + 1}")
    if piece.truncated:
        notes.append("cut to the size limit")
    if piece.end < piece.total_chars and piece.mode != "query":
        at_line_start = piece.text.endswith("\n")
        notes.append(
            f"read on: line_start={piece.last_line + 1}" if at_line_start else f"read on: char_start={piece.end}"
        )
    return f"[{about}. Showing {shown}{''.join('; ' + note for note in notes)}.]"


def read_tool_output_tool(store: ToolOutputStore, max_chars: int = DEFAULT_SLICE_CHARS) -> ToolDefinition:
    """The ``read_tool_output`` tool over ``store``; each answer shows at most ``max_chars`` stored characters."""

    async def handler(invocation: ToolInvocation) -> ToolOutput:
        arguments = dict(invocation.arguments)
        stored = store.get(arguments.pop("ref"))
        piece = read_slice(stored.content, SliceRequest(**arguments), max_chars)
        header = _header(stored.ref, piece, stored.trust.value)
        return ToolOutput(f"{header}\n{piece.text}", metadata={TRUST_KEY: stored.trust.value})

    return ToolDefinition(
        name=READ_TOOL_OUTPUT,
        description=DESCRIPTION,
        parameters=PARAMETERS,
        handler=handler,
        action=ToolAction.READ,
        read_only=True,
        source="sciencediscovery-tools",
    )
