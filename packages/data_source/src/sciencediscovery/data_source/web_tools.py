"""The ``web_fetch`` tool and one deferred tool per configured web source."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from sciencediscovery.runtime_core import TRUST_KEY
from sciencediscovery.tools import ToolAction, ToolDefinition, ToolInvocation, ToolOutput, Trust
from sciencediscovery.tools.hosts import normalize_host

from .config import WebSource
from .errors import WebFetchError
from .events import WebFetched
from .fetch import FetchedPage, WebFetcher

WEB_FETCH = "web_fetch"
WEB_SOURCE_PREFIX = "web"

_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {"url": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "http(s) URL"}},
    "required": ["url"],
    "additionalProperties": False,
}


def domain_specifier(arguments: Mapping[str, Any]) -> str:
    """``domain:<host>`` of the URL (normalised as the network policy reads it), for permission rules."""
    url = str(arguments.get("url", ""))
    try:
        return f"domain:{normalize_host(urlsplit(url).hostname or '')}"
    except ValueError:
        return f"domain:{urlsplit(url).hostname or url}"


def _render(page: FetchedPage) -> str:
    via = f" (redirected from {page.url})" if len(page.hops) > 1 else ""
    if page.redirect is not None:
        return (
            f"URL: {page.final_url}{via}\nHTTP {page.status}: redirect to another host, not followed.\n"
            f"Location: {page.redirect}\n\nTo read it, call {WEB_FETCH} with that URL (it is then checked by the "
            "permission rules like any other fetch)."
        )
    return f"URL: {page.final_url}{via}\nContent-Type: {page.content_type}\n\n{page.text}"


async def _fetch(fetcher: WebFetcher, invocation: ToolInvocation, url: str) -> ToolOutput:
    page = await fetcher.fetch(url)
    context = invocation.context
    context.events.emit(
        WebFetched(
            run_id=context.run_id,
            context_id=context.context_id,
            url=url,
            hops=page.hops,
            status=page.status,
            content_type=page.content_type,
            from_cache=page.from_cache,
            bytes=page.bytes,
        )
    )
    metadata: dict[str, Any] = {TRUST_KEY: Trust.UNTRUSTED.value, "url": page.final_url, "from_cache": page.from_cache}
    if page.redirect is not None:
        metadata["redirect"] = page.redirect
    return ToolOutput(_render(page), metadata)


def web_fetch_tool(fetcher: WebFetcher) -> ToolDefinition:
    async def handler(invocation: ToolInvocation) -> ToolOutput:
        return await _fetch(fetcher, invocation, str(invocation.arguments["url"]))

    return ToolDefinition(
        name=WEB_FETCH,
        description="Fetch a web page or API response as readable text (HTML reduced to its main text, JSON "
        "pretty-printed). The network policy decides which hosts are reachable; PDFs are refused (download them "
        "as artifacts).",
        parameters=_PARAMETERS,
        handler=handler,
        action=ToolAction.NETWORK,
        read_only=True,
        trust=Trust.UNTRUSTED,
        specifier=domain_specifier,
    )


def web_source_tool(fetcher: WebFetcher, source: WebSource) -> ToolDefinition:
    """A deferred ``web__<name>`` tool: ``web_fetch`` restricted to URLs under the source's base URL."""
    base = source.url if source.url.endswith("/") else source.url + "/"

    async def handler(invocation: ToolInvocation) -> ToolOutput:
        url = str(invocation.arguments["url"])
        if not (url == source.url or url.startswith(base)):
            raise WebFetchError(f"{url} is not under {source.url}; use web_fetch for other URLs", "outside_source")
        return await _fetch(fetcher, invocation, url)

    return ToolDefinition(
        name=f"{WEB_SOURCE_PREFIX}__{source.name}",
        description=f"Fetch pages of the web source {source.name} ({source.url}): {source.description}".strip(),
        parameters=_PARAMETERS,
        handler=handler,
        action=ToolAction.NETWORK,
        read_only=True,
        deferred=True,
        trust=Trust.UNTRUSTED,
        specifier=domain_specifier,
        source=f"web:{source.name}",
    )
