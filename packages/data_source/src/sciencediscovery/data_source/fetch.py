"""Governed HTTP GET: the network policy at every hop, DNS answers checked, size and time limits, a disk cache.

Redirects are followed here, not by httpx, so each target is checked with
``NetworkPolicy.check_url`` and every address its host resolves to with
``check_address`` before a request is sent. Only redirects within the same origin
(scheme, host and port) are followed: a redirect to another origin ends the fetch
with the target in :attr:`FetchedPage.redirect`, so fetching it is a new request
that the permission rules see. Proxies come from the environment
(``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``, as httpx reads them); when a proxy
carries the request, the proxy resolves the name, so only the URL and literal
addresses are checked locally. Responses are cached on disk by hishel following
RFC 9111 (``Cache-Control``, ``Expires``, validators).
"""

from __future__ import annotations

import asyncio
import os
import socket
import urllib.parse

import attrs
import hishel
import httpx
from hishel.httpx import AsyncCacheClient

from sciencediscovery.governance.network import NetworkPolicy

from .errors import WebFetchError
from .extract import readable_text
from .settings import WebSettings

USER_AGENT = "sciencediscovery-data-source (+governed web_fetch)"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or _DEFAULT_PORTS.get(url.scheme)


@attrs.frozen
class FetchedPage:
    """One fetch: the URLs visited in order (``hops[-1]`` answered), its status, type, text and cache use."""

    url: str
    hops: tuple[str, ...]
    status: int
    content_type: str
    text: str
    from_cache: bool
    bytes: int
    redirect: str | None = None
    """The target of a redirect to another origin, which was not followed (``text`` is then empty)."""

    @property
    def final_url(self) -> str:
        return self.hops[-1]


class WebFetcher:
    """Fetches URLs under one :class:`NetworkPolicy` with the limits of :class:`WebSettings`."""

    def __init__(self, policy: NetworkPolicy, settings: WebSettings | None = None) -> None:
        self.policy = policy
        self.settings = settings or WebSettings()

    def _proxied(self, url: str) -> bool:
        """Whether the environment sends ``url`` through a proxy (``*_proxy`` set and not bypassed by ``no_proxy``)."""
        found = {key.lower(): value for key, value in os.environ.items() if key.lower().endswith("_proxy") and value}
        parts = urllib.parse.urlsplit(url)
        if f"{parts.scheme}_proxy" not in found and "all_proxy" not in found:
            return False
        host = (parts.hostname or "").lower()
        for entry in found.get("no_proxy", "").split(","):
            suffix = entry.strip().lower().lstrip(".")
            if suffix == "*" or (suffix and (host == suffix or host.endswith("." + suffix))):
                return False
        return True

    async def check(self, url: str) -> None:
        """Refuse ``url`` unless the policy allows its scheme, host and every address the host resolves to."""
        verdict = self.policy.check_url(url)
        if not verdict.allowed:
            raise WebFetchError(f"{url} refused by the network policy: {verdict.reason}", "network_policy")
        parts = urllib.parse.urlsplit(url)
        if self._proxied(url):
            return
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            answers = await asyncio.get_running_loop().getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
        except OSError as error:
            raise WebFetchError(f"{url}: host {parts.hostname} cannot be resolved ({error})", "network_error") from None
        for *_, sockaddr in answers:
            verdict = self.policy.check_address(str(sockaddr[0]))
            if not verdict.allowed:
                raise WebFetchError(
                    f"{url} refused by the network policy: "
                    f"{parts.hostname} resolves to {sockaddr[0]}: {verdict.reason}",
                    "network_policy",
                )

    async def _check_redirect(self, target: str) -> None:
        """Refuse a redirect target the policy refuses; one that merely cannot be resolved is left to its own fetch."""
        try:
            await self.check(target)
        except WebFetchError as error:
            if error.error_kind == "network_policy":
                raise

    def _client(self) -> httpx.AsyncClient:
        timeout = httpx.Timeout(self.settings.timeout_s)
        headers = {"User-Agent": USER_AGENT}
        if self.settings.cache_dir is None:
            return httpx.AsyncClient(timeout=timeout, headers=headers, follow_redirects=False)
        self.settings.cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        storage = hishel.AsyncSqliteStorage(database_path=self.settings.cache_dir / "http-cache.sqlite")
        options = hishel.CacheOptions(shared=False)
        return AsyncCacheClient(timeout=timeout, headers=headers, follow_redirects=False, storage=storage, rfc=options)

    async def fetch(self, url: str) -> FetchedPage:
        """GET ``url`` following at most ``max_redirects`` same-origin redirects; the text is extracted by content
        type. A redirect to another origin is returned unfollowed, its target in ``redirect``."""
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                return await self._fetch(url)
        except TimeoutError:
            raise WebFetchError(f"{url}: no complete answer within {self.settings.timeout_s:g} s", "timeout") from None
        except httpx.HTTPError as error:
            raise WebFetchError(f"{url}: {type(error).__name__}: {error}", "network_error") from None

    async def _fetch(self, url: str) -> FetchedPage:
        hops: list[str] = []
        current = url
        async with self._client() as client:
            while True:
                await self.check(current)
                hops.append(current)
                async with client.stream("GET", current) as response:
                    if response.status_code in REDIRECT_STATUSES and "location" in response.headers:
                        if len(hops) > self.settings.max_redirects:
                            raise WebFetchError(
                                f"{url}: more than {self.settings.max_redirects} redirects", "too_many_redirects"
                            )
                        target = response.url.join(response.headers["location"])
                        if _origin(target) != _origin(response.url):
                            # another origin: not followed (the permission rules never saw it); the
                            # policy still refuses what it would have refused, else the caller gets the target
                            await self._check_redirect(str(target))
                            return FetchedPage(
                                url=url,
                                hops=tuple(hops),
                                status=response.status_code,
                                content_type=response.headers.get("content-type", ""),
                                text="",
                                from_cache=bool((response.extensions.get("caching") or {}).get("from_cache", False)),
                                bytes=0,
                                redirect=str(target),
                            )
                        current = str(target)
                        continue
                    body = await self._read(response, current)
                    caching = response.extensions.get("caching") or {}
                    content_type = response.headers.get("content-type", "")
                    if response.status_code >= 400:
                        raise WebFetchError(f"{current} answered HTTP {response.status_code}", "http_status")
                    text = readable_text(body, content_type, response.charset_encoding, current)
                    return FetchedPage(
                        url=url,
                        hops=tuple(hops),
                        status=response.status_code,
                        content_type=content_type,
                        text=text,
                        from_cache=bool(caching.get("from_cache", False)),
                        bytes=len(body),
                    )

    async def _read(self, response: httpx.Response, url: str) -> bytes:
        limit = self.settings.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise WebFetchError(f"{url}: response of {declared} bytes exceeds the limit of {limit} bytes", "too_large")
        chunks = bytearray()
        async for chunk in response.aiter_bytes():
            chunks += chunk
            if len(chunks) > limit:
                raise WebFetchError(f"{url}: response exceeds the limit of {limit} bytes", "too_large")
        return bytes(chunks)
