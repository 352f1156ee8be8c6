"""The source catalog: configured MCP servers and web sources, their state, and the ``list_sources`` tool."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from sciencediscovery.tools import ToolAction, ToolDefinition, ToolInvocation, ToolOutput

from .broker import McpBroker
from .config import SourcesConfig, StdioServer
from .mcp_tools import tool_name

LIST_SOURCES = "list_sources"


@attrs.frozen
class SourceEntry:
    """One configured source as the catalog shows it."""

    kind: str  # "mcp_stdio" | "mcp_http" | "web"
    name: str
    description: str
    location: str
    tools: tuple[str, ...]
    status: str


def catalog(sources: SourcesConfig, broker: McpBroker | None, skipped: Mapping[str, list[str]]) -> list[SourceEntry]:
    """Every configured source with the tools it contributes and its state."""
    entries = []
    for name, server in sources.servers.items():
        approved = broker.approved_tools(name) if broker else None
        withheld = broker.withheld(name) if broker else None
        if approved is None:
            status = "not approved yet: a person must approve its tool list before runs can use it"
        elif withheld:
            status = (
                f"tool list changed; withheld until approved again: {', '.join(withheld.withheld + withheld.removed)}"
            )
        else:
            status = "approved" + (" (running)" if broker and broker.running(name) else "")
        if skipped.get(name):
            status += f"; skipped: {'; '.join(skipped[name])}"
        entries.append(
            SourceEntry(
                kind="mcp_stdio" if isinstance(server, StdioServer) else "mcp_http",
                name=name,
                description=server.description,
                location=server.location,
                tools=tuple(tool_name(name, tool.name) for tool in approved or ()),
                status=status,
            )
        )
    for name, source in sources.web_sources.items():
        entries.append(SourceEntry("web", name, source.description, source.url, (f"web__{name}",), "configured"))
    return entries


def render(entries: list[SourceEntry]) -> str:
    lines = []
    for entry in entries:
        lines.append(f"- {entry.name} [{entry.kind}] {entry.description}".rstrip())
        lines.append(f"  at: {entry.location}")
        lines.append(f"  status: {entry.status}")
        if entry.tools:
            lines.append(f"  tools (load with tool_search select:<name>): {', '.join(entry.tools)}")
    return "\n".join(lines) or "No data sources are configured."


def list_sources_tool(
    sources: SourcesConfig, broker: McpBroker | None, skipped: Mapping[str, list[str]]
) -> ToolDefinition:
    """``list_sources``: the catalog, its descriptions searchable by ``tool_search`` through this tool's description."""
    summary = "; ".join(
        f"{name}: {item.description}" if item.description else name
        for name, item in [*sources.servers.items(), *sources.web_sources.items()]
    )

    async def handler(invocation: ToolInvocation) -> ToolOutput:
        return ToolOutput(render(catalog(sources, broker, skipped)))

    return ToolDefinition(
        name=LIST_SOURCES,
        description="List the configured data sources (MCP servers and web sources) and their tools. "
        f"Sources: {summary}",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
        handler=handler,
        action=ToolAction.READ,
        read_only=True,
    )
