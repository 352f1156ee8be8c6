"""MCP tools as deferred, untrusted tools named ``mcp__<server>__<tool>``, built from approved tool lists."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator

import mcp_types

from sciencediscovery.runtime_core import TRUST_KEY
from sciencediscovery.tools import (
    InvalidToolError,
    ToolAction,
    ToolDefinition,
    ToolInvocation,
    ToolOutput,
    Trust,
)
from sciencediscovery.tools.validation import compile_schema

from .broker import McpBroker, Notice
from .config import ServerConfig
from .fingerprint import RemoteTool

PREFIX = "mcp"
SERVER_KEY = "mcp_server"
TOOL_KEY = "mcp_tool"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, remote: str) -> str:
    """``mcp__<server>__<tool>``: unsafe characters become ``_``; names over 64 characters keep a hash suffix."""
    name = f"{PREFIX}__{server}__{_UNSAFE.sub('_', remote)}"
    if len(name) <= 64:
        return name
    digest = hashlib.sha256(remote.encode()).hexdigest()[:8]
    return f"{name[:55]}_{digest}"


def result_text(result: mcp_types.CallToolResult) -> str:
    """The text of a tool result; binary parts are named with their size, never inlined."""
    parts = list(_parts(result))
    if result.structured_content is not None and not parts:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1, sort_keys=True))
    return "\n".join(parts)


def _parts(result: mcp_types.CallToolResult) -> Iterator[str]:
    for item in result.content:
        if isinstance(item, mcp_types.TextContent):
            yield item.text
        elif isinstance(item, mcp_types.ImageContent | mcp_types.AudioContent):
            yield f"[{item.type} {item.mime_type}, {len(item.data) * 3 // 4} bytes, not shown]"
        elif isinstance(item, mcp_types.ResourceLink):
            yield f"[resource link {item.name}: {item.uri}]"
        elif isinstance(item, mcp_types.EmbeddedResource):
            resource = item.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                yield resource.text
            else:
                yield f"[embedded resource {resource.uri}, {resource.mime_type or 'binary'}, not shown]"


def _definition(broker: McpBroker, config: ServerConfig, remote: RemoteTool) -> ToolDefinition:
    server = config.name

    async def handler(invocation: ToolInvocation) -> ToolOutput:
        notices: list[Notice] = []
        context = invocation.context
        try:
            result = await broker.call(server, remote.name, invocation.arguments, notices)
        finally:
            for notice in notices:
                context.events.emit(notice(context.run_id, context.context_id))
        metadata = {TRUST_KEY: Trust.UNTRUSTED.value, SERVER_KEY: server, TOOL_KEY: remote.name}
        text = result_text(result)
        if result.is_error:
            return ToolOutput(
                text or "the tool reported an error", metadata, is_error=True, error_kind="mcp_tool_error"
            )
        return ToolOutput(text, metadata)

    origin = f"MCP server {server}" + (f": {config.description}" if config.description else "")
    return ToolDefinition(
        name=tool_name(server, remote.name),
        description=f"{remote.description}\n({origin})".strip(),
        parameters=remote.input_schema,
        handler=handler,
        action=ToolAction.CONNECTOR,
        read_only=False,  # server annotations (readOnlyHint...) are untrusted claims
        deferred=True,
        trust=Trust.UNTRUSTED,
        specifier=lambda arguments: config.permission_specifier,
        timeout_s=config.timeout_s,
        source=f"mcp:{server}",
    )


def mcp_tool_definitions(broker: McpBroker) -> tuple[list[ToolDefinition], dict[str, list[str]]]:
    """Deferred tools for every approved tool of every server, and per server the tools skipped with why."""
    tools: list[ToolDefinition] = []
    skipped: dict[str, list[str]] = {}
    seen: set[str] = set()
    for name, config in broker.servers.items():
        for remote in broker.approved_tools(name) or ():
            definition = _definition(broker, config, remote)
            problem = _problem(definition, seen)
            if problem:
                skipped.setdefault(name, []).append(f"{remote.name}: {problem}")
                continue
            seen.add(definition.name)
            tools.append(definition)
    return tools, skipped


def _problem(definition: ToolDefinition, seen: set[str]) -> str | None:
    if definition.name in seen:
        return f"its name collides with another tool as {definition.name}"
    try:
        compile_schema(definition.name, definition.parameters)
    except InvalidToolError as error:
        return str(error)
    return None
