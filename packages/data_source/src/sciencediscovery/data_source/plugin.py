"""Entry-point plugin of sciencediscovery-data-source: web tools, deferred MCP tools, the source catalog."""

from __future__ import annotations

import atexit
from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import hookimpl
from sciencediscovery.tools import ToolDefinition

from . import hookspecs
from .broker import McpBroker
from .catalog import list_sources_tool
from .config import SourcesConfig, sources_from_settings
from .fetch import WebFetcher
from .mcp_tools import mcp_tool_definitions
from .pins import ToolPinStore
from .search import SearchProvider, collect_providers, web_search_tool
from .settings import BROKER_SETTING, WebSettings, network_policy_from_settings, pins_path
from .web_tools import web_fetch_tool, web_source_tool

SEARCH_PROVIDERS_SETTING = "search_providers"
_BROKERS: dict[str, McpBroker] = {}


@hookimpl
def add_hookspecs(plugin_manager: Any) -> None:
    plugin_manager.add_hookspecs(hookspecs)


def prepare_data_sources(plugin_manager: Any, settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` plus the search providers of ``register_search_providers``; call once per run."""
    return {**settings, SEARCH_PROVIDERS_SETTING: collect_providers(plugin_manager, settings)}


def shared_broker(settings: Mapping[str, Any], sources: SourcesConfig) -> McpBroker | None:
    """One broker per configuration and pin file for this process (closed at exit); ``None`` without servers.

    A composition root that owns the service's lifetime passes its own broker as
    ``settings["mcp_broker"]`` instead and closes it with the service.
    """
    if not sources.servers:
        return None
    path = pins_path(settings)
    key = f"{sources!r}|{path}"
    if key not in _BROKERS:
        _BROKERS[key] = McpBroker(sources, ToolPinStore(path))
    return _BROKERS[key]


@atexit.register
def _close_brokers() -> None:
    while _BROKERS:
        _BROKERS.popitem()[1].close()


@hookimpl
def register_tools(register: Callable[[ToolDefinition], None], settings: Mapping[str, Any]) -> None:
    """``web_fetch``, ``web_search`` (with a provider), one deferred tool per web source and per approved
    MCP tool, and ``list_sources`` when sources are configured."""
    broker = settings.get(BROKER_SETTING)
    if isinstance(broker, McpBroker):
        sources = broker.sources
    else:
        sources = sources_from_settings(settings)
        broker = shared_broker(settings, sources)
    fetcher = WebFetcher(network_policy_from_settings(settings), WebSettings.from_settings(settings))
    register(web_fetch_tool(fetcher))
    providers: list[SearchProvider] = list(settings.get(SEARCH_PROVIDERS_SETTING, ()))
    if providers:
        register(web_search_tool(providers))
    for source in sources.web_sources.values():
        register(web_source_tool(fetcher, source))
    tools, skipped = mcp_tool_definitions(broker) if broker is not None else ([], {})
    for tool in tools:
        register(tool)
    if sources.servers or sources.web_sources:
        register(list_sources_tool(sources, broker, skipped))
