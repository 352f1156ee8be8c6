"""Tool search over names and descriptions, and the ``tool_search`` tool that promotes deferred tools."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sciencediscovery.runtime_core import TRUST_KEY

from .definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput, Trust

TOOL_SEARCH = "tool_search"
SELECT_PREFIX = "select:"
DEFAULT_RESULTS = 5
MAX_RESULTS = 20

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _tokens(text: str) -> list[str]:
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


class ToolSearchIndex:
    """Ranks tools by how well a query matches their name (weighted higher) and description."""

    def __init__(self, tools: Iterable[ToolDefinition]) -> None:
        self._tools = list(tools)
        self._names = [set(_tokens(tool.name)) for tool in self._tools]
        self._words = [set(_tokens(tool.description)) for tool in self._tools]

    def search(self, query: str, limit: int = DEFAULT_RESULTS) -> list[ToolDefinition]:
        """Tools with a positive score, best first, ties in registration order."""
        words = set(_tokens(query))
        needle = query.strip().lower()
        scored = []
        for position, tool in enumerate(self._tools):
            score = 3 * len(words & self._names[position]) + len(words & self._words[position])
            if needle and needle == tool.name.lower():
                score += 10
            elif needle and needle in tool.name.lower():
                score += 2
            if score:
                scored.append((-score, position, tool))
        return [tool for _, _, tool in sorted(scored, key=lambda item: item[:2])[:limit]]


PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 500,
            "description": "Keywords to search tool names and descriptions, "
            "or select:<name>[,<name>...] to load tools by name.",
        },
        "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS},
    },
    "required": ["query"],
    "additionalProperties": False,
}
DESCRIPTION = (
    "Find tools that are not loaded yet (for example a large external catalogue). Matching tools are loaded and "
    "become callable from your next turn. Use select:<name> when you know the exact name."
)

Search = Callable[[str, int], list[ToolDefinition]]
Lookup = Callable[[str], "ToolDefinition | None"]
Promote = Callable[[Sequence[str], int], list[str]]


def tool_search_tool(search: Search, lookup: Lookup, promote: Promote) -> ToolDefinition:
    """The ``tool_search`` tool of a registry; ``promote(names, turn)`` returns the names it newly promoted."""

    async def handler(invocation: ToolInvocation) -> ToolOutput:
        query = str(invocation.arguments["query"]).strip()
        limit = int(invocation.arguments.get("max_results", DEFAULT_RESULTS))
        if query.lower().startswith(SELECT_PREFIX):
            names = [name.strip() for name in query[len(SELECT_PREFIX) :].split(",") if name.strip()]
            found = [tool for tool in map(lookup, names) if tool is not None]
            missing = [name for name in names if lookup(name) is None]
        else:
            found, missing = search(query, limit), []
        promoted = set(promote([tool.name for tool in found if tool.deferred], invocation.context.turn))
        lines = []
        for tool in found:
            if tool.name in promoted:
                state = "loaded now, callable from your next turn"
            elif tool.deferred:
                state = "loaded earlier"
            else:
                state = "already available"
            lines.append(f"- {tool.name} ({state}): {tool.description}")
        lines += [f"- {name}: no such tool" for name in missing]
        if not lines:
            lines.append(f"No tool matches {query!r}.")
        untrusted = any(tool.trust is Trust.UNTRUSTED for tool in found)
        trust = Trust.UNTRUSTED if untrusted else Trust.TRUSTED
        return ToolOutput("\n".join(lines), metadata={TRUST_KEY: trust.value})

    return ToolDefinition(
        name=TOOL_SEARCH,
        description=DESCRIPTION,
        parameters=PARAMETERS,
        handler=handler,
        action=ToolAction.STATE,
        read_only=True,
        source="sciencediscovery-tools",
    )
