"""Web search through provider plugins: the ``web_search`` tool exists only when a provider is registered."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from sciencediscovery.runtime_core import TRUST_KEY
from sciencediscovery.tools import ToolAction, ToolDefinition, ToolFailure, ToolInvocation, ToolOutput, Trust

from .config import SERVER_NAME
from .errors import SourceConfigError

WEB_SEARCH = "web_search"
MAX_RESULTS = 20


@attrs.frozen
class SearchHit:
    """One search result as a provider reports it (untrusted text)."""

    title: str
    url: str
    snippet: str = ""


@runtime_checkable
class SearchProvider(Protocol):
    """A web search backend contributed through ``register_search_providers``."""

    name: str
    description: str

    async def search(self, query: str, limit: int) -> Sequence[SearchHit]: ...


def collect_providers(plugin_manager: Any, settings: Mapping[str, Any]) -> list[SearchProvider]:
    """Every provider from ``register_search_providers``; a malformed or duplicate one is a startup error."""
    providers: list[SearchProvider] = []
    register: Callable[[object], None] = providers.append  # type: ignore[assignment]
    plugin_manager.hook.register_search_providers(register=register, settings=settings)
    names: set[str] = set()
    for provider in providers:
        name = getattr(provider, "name", None)
        if not isinstance(provider, SearchProvider) or not isinstance(name, str) or not SERVER_NAME.fullmatch(name):
            raise SourceConfigError(
                "register_search_providers", repr(provider), "needs a valid name, a description and async search()"
            )
        if name in names:
            raise SourceConfigError("register_search_providers", name, "registered twice")
        names.add(name)
    return providers


def web_search_tool(providers: Sequence[SearchProvider]) -> ToolDefinition:
    """``web_search(query, provider?, max_results?)`` over the registered providers."""
    by_name = {provider.name: provider for provider in providers}
    listing = "; ".join(f"{p.name}: {p.description}" for p in providers)

    async def handler(invocation: ToolInvocation) -> ToolOutput:
        arguments = invocation.arguments
        provider = by_name[arguments.get("provider", providers[0].name)]
        limit = int(arguments.get("max_results", 5))
        try:
            hits = list(await provider.search(str(arguments["query"]), limit))[:limit]
        except ToolFailure:
            raise
        except Exception as error:
            raise ToolFailure(
                f"search provider {provider.name!r} failed: {type(error).__name__}: {error}", "search_error"
            ) from None
        lines = [f"{i}. {hit.title}\n   {hit.url}\n   {hit.snippet}".rstrip() for i, hit in enumerate(hits, 1)]
        return ToolOutput(
            "\n".join(lines) or "No results.", {TRUST_KEY: Trust.UNTRUSTED.value, "provider": provider.name}
        )

    return ToolDefinition(
        name=WEB_SEARCH,
        description=f"Search the web. Providers: {listing}.",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 500},
                "provider": {"type": "string", "enum": list(by_name)},
                "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        handler=handler,
        action=ToolAction.NETWORK,
        read_only=True,
        trust=Trust.UNTRUSTED,
        specifier=lambda arguments: f"provider:{arguments.get('provider', providers[0].name)}",
    )
