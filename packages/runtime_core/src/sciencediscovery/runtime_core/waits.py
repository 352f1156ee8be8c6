"""Explicit external waits: time a run spends waiting on the outside world."""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Callable

from .events import ExternalWaitFinished, ExternalWaitStarted, RunEvent


class ExternalWaits:
    """Tracks waits that are not model or tool work (a permission decision, a remote job).

    Use ``async with waits.external("permission", "read_file(data/x.csv)"):``
    around the await. Wait time is accounted separately from model time and
    each wait is announced as a pair of events.
    """

    def __init__(self, run_id: str, context_id: str, emit: Callable[[RunEvent], None]) -> None:
        self._run_id = run_id
        self._context_id = context_id
        self._emit = emit
        self._ids = itertools.count(1)
        self._pending: dict[str, str] = {}
        self.total_s = 0.0
        self.turn = 0

    @property
    def pending(self) -> dict[str, str]:
        """Waits in progress, wait id to kind."""
        return dict(self._pending)

    @contextlib.asynccontextmanager
    async def external(self, kind: str, detail: str = "") -> AsyncIterator[str]:
        wait_id = f"wait-{next(self._ids)}"
        turn = self.turn
        self._pending[wait_id] = kind
        self._emit(
            ExternalWaitStarted(
                run_id=self._run_id,
                context_id=self._context_id,
                turn=turn,
                wait_id=wait_id,
                wait_kind=kind,
                detail=detail,
            )
        )
        started = time.perf_counter()
        try:
            yield wait_id
        finally:
            duration = time.perf_counter() - started
            self.total_s += duration
            del self._pending[wait_id]
            self._emit(
                ExternalWaitFinished(
                    run_id=self._run_id,
                    context_id=self._context_id,
                    turn=turn,
                    wait_id=wait_id,
                    wait_kind=kind,
                    duration_s=duration,
                )
            )
