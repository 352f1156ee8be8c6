"""The memory tools: ``memory_write`` and ``memory_search``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput

from .errors import InvalidMemoryInputError
from .graph import MemoryClient, Source

WRITE_KEY = "memory_write"
"""Result metadata key of ``memory_write``: what was written (read by the memory channel)."""
SEARCH_MAX = 50


def _error(message: str) -> ToolOutput:
    return ToolOutput(content=message, is_error=True, error_kind="invalid_arguments")


def _text(arguments: Mapping[str, Any], field: str) -> str:
    value = arguments.get(field)
    if not isinstance(value, str):
        raise InvalidMemoryInputError(f"{field} must be a string, got {value!r}")
    return value


def memory_tools(client: MemoryClient) -> list[ToolDefinition]:
    """The two tools, bound to ``client``."""

    async def memory_write(invocation: ToolInvocation) -> ToolOutput:
        arguments, context = invocation.arguments, invocation.context
        source = Source(context.run_id, context.context_id, invocation.call.id, invocation.call.name)
        relations = arguments.get("relations", [])
        try:
            if not isinstance(relations, list) or not all(isinstance(r, dict) for r in relations):
                raise InvalidMemoryInputError(f"relations must be a list of objects, got {relations!r}")
            kind = arguments.get("kind", "")
            observation = client.add_observation(
                _text(arguments, "entity"),
                _text(arguments, "observation"),
                source,
                kind=kind if isinstance(kind, str) else "",
            )
            for index, relation in enumerate(relations):
                for field in ("relation", "target"):
                    if not isinstance(relation.get(field), str) or not relation[field].strip():
                        raise InvalidMemoryInputError(f"relations[{index}].{field} must be a non-empty string")
                client.add_relation(observation.entity, relation["relation"], relation["target"], source)
        except InvalidMemoryInputError as error:
            return _error(str(error))
        written = {
            "entity": observation.entity,
            "observation_id": observation.observation_id,
            "relations": len(relations),
        }
        return ToolOutput(content=json.dumps(written), metadata={WRITE_KEY: written})

    async def memory_search(invocation: ToolInvocation) -> ToolOutput:
        arguments = invocation.arguments
        limit = arguments.get("limit", 10)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= SEARCH_MAX:
            return _error(f"limit must be an integer from 1 to {SEARCH_MAX}, got {limit!r}")
        try:
            hits = client.search(str(arguments.get("query", "")), limit=limit)
        except InvalidMemoryInputError as error:
            return _error(str(error))
        found: list[dict[str, Any]] = [
            {
                "entity": hit.observation.entity,
                "observation": hit.observation.text,
                "observation_id": hit.observation.observation_id,
                "run_id": hit.observation.provenance.run_id,
                "created_at": hit.observation.created_at,
            }
            for hit in hits
        ]
        return ToolOutput(content=json.dumps({"hits": found}))

    return [
        ToolDefinition(
            name="memory_write",
            description="Remember an observation about an entity (a gene, dataset, method, decision) for later runs, "
            "optionally relating the entity to others.",
            parameters={
                "type": "object",
                "properties": {
                    "entity": {"type": "string"},
                    "observation": {"type": "string"},
                    "kind": {"type": "string", "description": "entity kind, e.g. gene, dataset, method"},
                    "relations": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"relation": {"type": "string"}, "target": {"type": "string"}},
                            "required": ["relation", "target"],
                        },
                    },
                },
                "required": ["entity", "observation"],
            },
            handler=memory_write,
            action=ToolAction.STATE,
        ),
        ToolDefinition(
            name="memory_search",
            description="Search remembered observations (full-text; any word may match, best matches first).",
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX},
                },
                "required": ["query"],
            },
            handler=memory_search,
            action=ToolAction.READ,
            read_only=True,
        ),
    ]
