"""Cancellation and deadlines for processing: a child signal never outlives its parent."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from .errors import ProcessingCancelledError
from .validators import check_timeout

__all__ = ["CancelSignal"]

T = TypeVar("T")


class CancelSignal:
    """A cancellation signal with an optional deadline (``time.monotonic`` seconds) and a parent.

    A child is cancelled when its parent is, and its deadline is the earlier of its own
    and the parent's, so a child can shorten but never extend the parent's time.
    """

    def __init__(self, *, deadline: float | None = None, parent: CancelSignal | None = None) -> None:
        if parent is not None and parent.deadline is not None:
            deadline = parent.deadline if deadline is None else min(deadline, parent.deadline)
        self.deadline: float | None = deadline
        self.parent = parent
        self._event = asyncio.Event()
        self._reason: str | None = None

    def child(self, timeout_s: float | None) -> CancelSignal:
        """A child signal that expires ``timeout_s`` from now (or with this signal)."""
        check_timeout(timeout_s, "timeout_s")
        return CancelSignal(deadline=None if timeout_s is None else time.monotonic() + timeout_s, parent=self)

    def cancel(self, reason: str = "cancelled") -> None:
        """Cancel this signal and every child."""
        if self._reason is None:
            self._reason = reason
        self._event.set()

    @property
    def reason(self) -> str | None:
        """Why the signal fired (cancellation reason or ``deadline exceeded``), else None."""
        chain: CancelSignal | None = self
        while chain is not None:
            if chain._reason is not None:
                return chain._reason
            chain = chain.parent
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "deadline exceeded"
        return None

    @property
    def cancelled(self) -> bool:
        return self.reason is not None

    def check(self, stage: str) -> None:
        """Raise :class:`ProcessingCancelledError` if the signal fired."""
        reason = self.reason
        if reason is not None:
            raise ProcessingCancelledError(stage, reason)

    async def run(self, awaitable: Awaitable[T], stage: str) -> T:
        """Await ``awaitable`` under this signal.

        When the signal fires first the work is cancelled and not awaited further; a result
        that arrives after the signal fired is discarded. Either way
        :class:`ProcessingCancelledError` is raised, so late work cannot commit success.
        """
        self.check(stage)
        work = asyncio.ensure_future(awaitable)
        work.add_done_callback(_discard)
        waiters = []
        chain: CancelSignal | None = self
        while chain is not None:
            waiters.append(asyncio.ensure_future(chain._event.wait()))
            chain = chain.parent
        timeout = None if self.deadline is None else max(self.deadline - time.monotonic(), 0)
        try:
            await asyncio.wait([work, *waiters], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
            if not work.done():
                work.cancel()
        if not work.done():
            raise ProcessingCancelledError(stage, self.reason or "deadline exceeded")
        self.check(stage)
        return work.result()


def _discard(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
