"""The permission-decision queue, independent of the agent loop.

An ``ask`` submits a :class:`PermissionRequest` and awaits its future; a
decision API (HTTP handler, CLI, test) lists :meth:`DecisionQueue.pending`
and calls :meth:`DecisionQueue.settle`. Each request settles exactly once:
a second settlement raises :class:`~.errors.AlreadyResolvedError`. Use the
queue from the event loop's thread.
"""

from __future__ import annotations

import asyncio
import datetime

import attrs

from .errors import AlreadyResolvedError, UnknownRequestError
from .grants import Decision


@attrs.frozen
class PermissionRequest:
    """A call waiting for a person's decision, as the decision API lists it."""

    request_id: str
    epoch_id: str
    run_id: str
    context_id: str
    tool: str
    action: str
    specifier: str
    reason: str
    created_at: str = attrs.field(factory=lambda: datetime.datetime.now(datetime.UTC).isoformat())


@attrs.frozen
class Resolution:
    """How a request was settled and by whom (``source``: e.g. ``user:alice``, ``timeout``, ``epoch_rotation``)."""

    decision: Decision
    source: str


class DecisionQueue:
    """Pending permission requests and their futures."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[PermissionRequest, asyncio.Future[Resolution]]] = {}
        self._settled: dict[str, tuple[PermissionRequest, Resolution]] = {}
        self._watchers: list[asyncio.Future[None]] = []

    def submit(self, request: PermissionRequest) -> asyncio.Future[Resolution]:
        """Enqueue ``request``; the returned future completes when it is settled."""
        future: asyncio.Future[Resolution] = asyncio.get_running_loop().create_future()
        self._pending[request.request_id] = (request, future)
        for watcher in self._watchers:
            if not watcher.done():
                watcher.set_result(None)
        self._watchers.clear()
        return future

    async def wait_pending(self) -> list[PermissionRequest]:
        """The pending requests, waiting until there is at least one (for decision UIs and tests)."""
        while not self._pending:
            watcher: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._watchers.append(watcher)
            await watcher
        return self.pending()

    def pending(self) -> list[PermissionRequest]:
        """Requests awaiting a decision, oldest first."""
        return [request for request, _ in self._pending.values()]

    def get(self, request_id: str) -> PermissionRequest:
        """A pending or settled request; :class:`~.errors.UnknownRequestError` if there never was one."""
        if request_id in self._pending:
            return self._pending[request_id][0]
        if request_id in self._settled:
            return self._settled[request_id][0]
        raise UnknownRequestError(request_id)

    def settle_check(self, request_id: str) -> None:
        """Raise :class:`~.errors.AlreadyResolvedError` if the request is already settled."""
        if request_id in self._settled:
            raise AlreadyResolvedError(request_id, self._settled[request_id][1].decision.kind)

    def settle(self, request_id: str, resolution: Resolution) -> PermissionRequest:
        """Settle a pending request exactly once (:class:`~.errors.AlreadyResolvedError` the second time)."""
        self.settle_check(request_id)
        request, future = self._pending.pop(request_id, (None, None))
        if request is None or future is None:
            raise UnknownRequestError(request_id)
        self._settled[request_id] = (request, resolution)
        future.set_result(resolution)
        return request

    def resolution(self, request_id: str) -> Resolution | None:
        """How a settled request was settled (``None`` while pending or unknown)."""
        settled = self._settled.get(request_id)
        return settled[1] if settled else None
