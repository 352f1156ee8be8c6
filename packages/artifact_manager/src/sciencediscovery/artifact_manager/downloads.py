"""Governed downloads: requested -> approved -> downloading -> completed | failed.

Bytes stream into a partial file under ``artifacts/partial/``; only a
download that finished within its size limit and matched its expected
SHA-256 is moved into the content-addressed store. A partial file is never
registered and is always removed.
"""

from __future__ import annotations

import enum
import hashlib
import os
import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import attrs
import httpx

from sciencediscovery.tools.hosts import normalize_host

from .classify import SNIFF_BYTES
from .errors import InvalidArtifactRequestError, InvalidTransitionError, UnknownArtifactError
from .store import NO_PROVENANCE, ArtifactStore, Provenance, now


class DownloadState(str, enum.Enum):
    REQUESTED = "requested"
    APPROVED = "approved"
    DOWNLOADING = "downloading"
    COMPLETED = "completed"
    FAILED = "failed"


TRANSITIONS: Mapping[DownloadState, frozenset[DownloadState]] = {
    DownloadState.REQUESTED: frozenset({DownloadState.APPROVED, DownloadState.FAILED}),
    DownloadState.APPROVED: frozenset({DownloadState.DOWNLOADING, DownloadState.FAILED}),
    DownloadState.DOWNLOADING: frozenset({DownloadState.COMPLETED, DownloadState.FAILED}),
    DownloadState.COMPLETED: frozenset(),
    DownloadState.FAILED: frozenset(),
}
"""Which state may follow which; completed and failed are terminal."""

MAX_REDIRECTS = 5
"""Redirects followed within the approved origin (scheme, host and port); another origin fails the download."""
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class UrlVerdict(Protocol):
    """What a network policy says about one URL (governance's ``NetworkDecision`` has this shape)."""

    @property
    def allowed(self) -> bool: ...

    @property
    def reason(self) -> str: ...


class UrlPolicy(Protocol):
    """A network policy as downloads use it: ``check_url(url)`` for the first URL and every redirect target.

    Duck-typed so this package does not depend on governance; ``settings["network_policy"]``
    (governance's ``NetworkPolicy``) fits.
    """

    def check_url(self, url: str) -> UrlVerdict: ...


def domain_specifier(url: object) -> str:
    """``domain:<host>`` of ``url`` (no scheme, userinfo, port or path; host normalised by :func:`normalize_host`),
    the permission specifier of ``download_artifact``, as data_source's ``web_fetch`` uses it."""
    text = str(url)
    try:
        host = urlsplit(text).hostname or ""
    except ValueError:
        return f"domain:{text}"
    try:
        return f"domain:{normalize_host(host)}"
    except ValueError:
        return f"domain:{host or text}"


@attrs.frozen
class Download:
    """One governed download and where it stands."""

    download_id: str
    url: str
    name: str
    state: DownloadState = attrs.field(converter=DownloadState)
    expected_sha256: str | None
    max_bytes: int
    bytes_received: int
    sha256: str | None
    artifact_id: str | None
    error: str | None
    run_id: str | None
    context_id: str | None
    call_id: str | None
    created_at: str
    updated_at: str


class DownloadFailed(Exception):
    """Ends a transfer; the download moves to ``failed`` with this reason."""


class DownloadManager:
    """Runs governed downloads into an :class:`ArtifactStore`.

    The permission action ``artifact_download`` gates the ``download_artifact``
    tool; the tool approves a request only after the dispatcher's gates let
    the invocation run. With a ``network_policy`` every URL fetched (the first
    and each redirect target) must pass its ``check_url`` or the download fails.
    """

    def __init__(
        self,
        store: ArtifactStore,
        *,
        max_bytes: int,
        timeout_s: float = 60.0,
        network_policy: UrlPolicy | None = None,
    ) -> None:
        self.store = store
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.network_policy = network_policy

    # -- state --------------------------------------------------------------
    def request(
        self,
        url: Any,
        *,
        name: Any = None,
        expected_sha256: str | None = None,
        max_bytes: int | None = None,
        provenance: Provenance = NO_PROVENANCE,
    ) -> Download:
        """Record a new download in ``requested``; arguments are validated with errors naming the field."""
        try:
            parsed = httpx.URL(url) if isinstance(url, str) else None
        except httpx.InvalidURL:
            parsed = None
        if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
            raise InvalidArtifactRequestError(f"url must be an absolute http(s) URL, got {url!r}")
        if domain_specifier(url) != domain_specifier(parsed):
            raise InvalidArtifactRequestError(f"url names its host ambiguously, got {url!r}")
        if name is not None and not isinstance(name, str):
            raise InvalidArtifactRequestError(f"name must be a string, got {name!r}")
        if expected_sha256 is not None and not _SHA256.match(str(expected_sha256).lower()):
            raise InvalidArtifactRequestError(f"sha256 must be 64 hexadecimal characters, got {expected_sha256!r}")
        if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1):
            raise InvalidArtifactRequestError(f"max_bytes must be a positive integer, got {max_bytes!r}")
        limit = min(max_bytes or self.max_bytes, self.max_bytes)
        name = name or Path(parsed.path).name or parsed.host
        if "/" in name or "\\" in name or name in {".", ".."}:
            raise InvalidArtifactRequestError(f"name must be a plain file name, got {name!r}")
        download_id = f"dl-{uuid.uuid4().hex[:12]}"
        stamp = now()
        with self.store.lock:
            self.store.db.execute(
                "INSERT INTO downloads (download_id, url, name, state, expected_sha256, max_bytes, run_id, context_id, "
                "call_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    download_id,
                    str(parsed),
                    name,
                    DownloadState.REQUESTED.value,
                    expected_sha256.lower() if expected_sha256 else None,
                    limit,
                    provenance.run_id,
                    provenance.context_id,
                    provenance.call_id,
                    stamp,
                    stamp,
                ),
            )
            self.store.db.execute(
                "INSERT INTO download_transitions (download_id, state, detail, at) VALUES (?, ?, ?, ?)",
                (download_id, DownloadState.REQUESTED.value, str(parsed), stamp),
            )
        return self.get(download_id)

    def get(self, download_id: str) -> Download:
        with self.store.lock:
            row = self.store.db.execute("SELECT * FROM downloads WHERE download_id = ?", (download_id,)).fetchone()
        if row is None:
            raise UnknownArtifactError(f"no download with download_id {download_id!r}")
        return Download(**dict(row))

    def transitions(self, download_id: str) -> list[tuple[DownloadState, str | None]]:
        """Every state the download went through, in order, with its detail."""
        with self.store.lock:
            rows = self.store.db.execute(
                "SELECT state, detail FROM download_transitions WHERE download_id = ? ORDER BY rowid", (download_id,)
            ).fetchall()
        return [(DownloadState(row["state"]), row["detail"]) for row in rows]

    def _move(self, download_id: str, target: DownloadState, detail: str | None = None, **fields: object) -> Download:
        current = self.get(download_id).state
        if target not in TRANSITIONS[current]:
            raise InvalidTransitionError(download_id, current.value, target.value)
        stamp = now()
        assignments = ", ".join(f"{column} = ?" for column in ("state", "updated_at", *fields))
        with self.store.lock:
            self.store.db.execute(
                f"UPDATE downloads SET {assignments} WHERE download_id = ?",
                (target.value, stamp, *fields.values(), download_id),
            )
            self.store.db.execute(
                "INSERT INTO download_transitions (download_id, state, detail, at) VALUES (?, ?, ?, ?)",
                (download_id, target.value, detail, stamp),
            )
        return self.get(download_id)

    def approve(self, download_id: str, reason: str = "") -> Download:
        return self._move(download_id, DownloadState.APPROVED, reason or None)

    def fail(self, download_id: str, reason: str) -> Download:
        return self._move(download_id, DownloadState.FAILED, reason, error=reason)

    # -- transfer -----------------------------------------------------------
    async def fetch(self, download_id: str, *, tool: str | None = None) -> Download:
        """Transfer an approved download; ends in ``completed`` (registered) or ``failed`` (nothing registered)."""
        download = self._move(download_id, DownloadState.DOWNLOADING)
        partial = self.store.partial_dir / f"{download_id}.part"
        try:
            sha256, size, head = await self._transfer(download, partial)
            if download.expected_sha256 and sha256 != download.expected_sha256:
                raise DownloadFailed(f"checksum mismatch: expected sha256 {download.expected_sha256}, got {sha256}")
            provenance = Provenance(download.run_id, download.context_id, download.call_id, tool)
            registration = self.store.adopt(partial, sha256, size, head, download.name, None, provenance)
        except DownloadFailed as failure:
            return self.fail(download_id, str(failure))
        except httpx.HTTPError as error:
            return self.fail(download_id, f"transfer error: {type(error).__name__}: {error}")
        finally:
            partial.unlink(missing_ok=True)
        return self._move(
            download_id,
            DownloadState.COMPLETED,
            registration.artifact.artifact_id,
            sha256=sha256,
            bytes_received=size,
            artifact_id=registration.artifact.artifact_id,
        )

    async def _transfer(self, download: Download, partial: Path) -> tuple[str, int, bytes]:
        async with httpx.AsyncClient(timeout=self.timeout_s, follow_redirects=False) as client:
            url = httpx.URL(download.url)
            for _ in range(MAX_REDIRECTS + 1):
                self._check(url)
                async with client.stream("GET", url) as response:
                    target = response.next_request.url if response.next_request is not None else None
                    if target is None:
                        return await self._receive(response, download, partial)
                if (target.scheme, target.host, target.port) != (url.scheme, url.host, url.port):
                    raise DownloadFailed(
                        f"redirect from {url} to another origin ({target}) needs its own artifact_download permission"
                    )
                url = target
        raise DownloadFailed(f"more than {MAX_REDIRECTS} redirects")

    def _check(self, url: httpx.URL) -> None:
        if self.network_policy is None:
            return
        verdict = self.network_policy.check_url(str(url))
        if not verdict.allowed:
            raise DownloadFailed(f"{url} refused by the network policy: {verdict.reason}")

    @staticmethod
    async def _receive(response: httpx.Response, download: Download, partial: Path) -> tuple[str, int, bytes]:
        if response.status_code != 200:
            raise DownloadFailed(f"HTTP {response.status_code} from {response.url}")
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > download.max_bytes:
            raise DownloadFailed(f"size limit: server declares {declared} bytes, limit is {download.max_bytes}")
        digest = hashlib.sha256()
        size = 0
        head = b""
        descriptor = os.open(partial, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            async for block in response.aiter_bytes():
                size += len(block)
                if size > download.max_bytes:
                    raise DownloadFailed(f"size limit: more than {download.max_bytes} bytes received")
                if len(head) < SNIFF_BYTES:
                    head += block[: SNIFF_BYTES - len(head)]
                digest.update(block)
                handle.write(block)
        return digest.hexdigest(), size, head
