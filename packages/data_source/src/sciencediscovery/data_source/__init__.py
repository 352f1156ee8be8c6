"""MCP servers as deferred tools, governed web access, source catalog."""

from .broker import McpBroker
from .catalog import LIST_SOURCES, SourceEntry, catalog, list_sources_tool
from .config import (
    CONFIG_VARIABLE,
    HttpServer,
    SecretHeader,
    ServerConfig,
    SourcesConfig,
    StdioServer,
    WebSource,
    sources_from_data,
    sources_from_file,
    sources_from_settings,
)
from .errors import DataSourceError, McpCallError, PinStoreError, SourceConfigError, UnknownServerError, WebFetchError
from .events import McpServerCrashed, McpServerRestarted, McpServerStarted, McpToolListChanged, WebFetched
from .fetch import FetchedPage, WebFetcher
from .fingerprint import RemoteTool, ToolListChange, diff, list_fingerprint
from .mcp_tools import mcp_tool_definitions, result_text, tool_name
from .pins import ToolPinStore
from .plugin import SEARCH_PROVIDERS_SETTING, prepare_data_sources, shared_broker
from .search import WEB_SEARCH, SearchHit, SearchProvider, collect_providers, web_search_tool
from .settings import BROKER_SETTING, NETWORK_POLICY_SETTING, WebSettings, network_policy_from_settings, pins_path
from .web_tools import WEB_FETCH, domain_specifier, web_fetch_tool, web_source_tool

__all__ = [
    "BROKER_SETTING",
    "CONFIG_VARIABLE",
    "LIST_SOURCES",
    "NETWORK_POLICY_SETTING",
    "SEARCH_PROVIDERS_SETTING",
    "WEB_FETCH",
    "WEB_SEARCH",
    "DataSourceError",
    "FetchedPage",
    "HttpServer",
    "McpBroker",
    "McpCallError",
    "McpServerCrashed",
    "McpServerRestarted",
    "McpServerStarted",
    "McpToolListChanged",
    "PinStoreError",
    "RemoteTool",
    "SearchHit",
    "SearchProvider",
    "SecretHeader",
    "ServerConfig",
    "SourceConfigError",
    "SourceEntry",
    "SourcesConfig",
    "StdioServer",
    "ToolListChange",
    "ToolPinStore",
    "UnknownServerError",
    "WebFetchError",
    "WebFetched",
    "WebFetcher",
    "WebSettings",
    "WebSource",
    "catalog",
    "collect_providers",
    "diff",
    "domain_specifier",
    "list_fingerprint",
    "list_sources_tool",
    "mcp_tool_definitions",
    "network_policy_from_settings",
    "pins_path",
    "prepare_data_sources",
    "result_text",
    "shared_broker",
    "sources_from_data",
    "sources_from_file",
    "sources_from_settings",
    "tool_name",
    "web_fetch_tool",
    "web_search_tool",
    "web_source_tool",
]
