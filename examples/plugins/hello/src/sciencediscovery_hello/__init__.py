"""An example third-party plugin: a read-only ``hello`` tool."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import hookimpl
from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation

PARAMETERS = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Who to greet."}},
    "required": ["name"],
    "additionalProperties": False,
}


async def greet(invocation: ToolInvocation) -> str:
    return f"Hello, {invocation.arguments['name']}!"


@hookimpl
def register_tools(register: Callable[[ToolDefinition], None], settings: Mapping[str, Any]) -> None:
    register(
        ToolDefinition(
            name="hello",
            description="Greet someone by name.",
            parameters=PARAMETERS,
            handler=greet,
            action=ToolAction.READ,
            read_only=True,
            source="sciencediscovery-hello",
        )
    )
