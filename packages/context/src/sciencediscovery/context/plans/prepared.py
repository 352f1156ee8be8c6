"""Prepared handles: one preparation per request, handed from stage to stage, each handle consumed once."""

from __future__ import annotations

import itertools

from .errors import PreparedHandleError
from .request import ContextRequest

__all__ = ["Preparation", "PreparedHandle"]

_ids = itertools.count(1)


class Preparation:
    """Shared state of one prepared request: its request, owner run, executed steps and trim-loss ledger."""

    def __init__(self, request: ContextRequest, owner: object) -> None:
        self.id = next(_ids)
        self.request = request
        self.owner = owner
        self.executed_steps: list[str] = []
        self.trim_baseline: dict[str, int] = {}
        self.trim_removed: dict[str, int] = {}

    def handle(self) -> PreparedHandle:
        """A fresh handle on this preparation for the next stage."""
        return PreparedHandle(self)

    def record_trim(self, fragment_id: str, before_chars: int, after_chars: int) -> None:
        """Accumulate a trim's JSON character loss against the fragment's first-seen size."""
        self.trim_baseline.setdefault(fragment_id, before_chars)
        self.trim_removed[fragment_id] = self.trim_removed.get(fragment_id, 0) + before_chars - after_chars

    def trim_loss(self, fragment_id: str, before_chars: int, after_chars: int) -> float:
        """The accumulated loss ratio if a trim took the fragment from ``before_chars`` to ``after_chars``."""
        baseline = self.trim_baseline.get(fragment_id, before_chars)
        removed = self.trim_removed.get(fragment_id, 0) + before_chars - after_chars
        return removed / baseline if baseline else 0.0


class PreparedHandle:
    """Opaque handle on a :class:`Preparation`; belongs to one request and can be consumed only once."""

    def __init__(self, preparation: Preparation) -> None:
        self._preparation = preparation
        self._consumed = False

    @property
    def request_id(self) -> str:
        return self._preparation.request.request_id

    @property
    def preparation_id(self) -> int:
        """Same for every handle of one preparation: shows later stages reused it."""
        return self._preparation.id

    @property
    def consumed(self) -> bool:
        return self._consumed

    def consume(self, owner: object, request: ContextRequest | None) -> Preparation:
        """Take the preparation; a second use, another run or another request raises :class:`PreparedHandleError`."""
        if self._consumed:
            raise PreparedHandleError(self.request_id, "was already consumed; use the handle the last stage returned")
        if self._preparation.owner is not owner:
            raise PreparedHandleError(self.request_id, "belongs to another run")
        if request is not None and request != self._preparation.request:
            raise PreparedHandleError(self.request_id, f"cannot be used for request {request.request_id!r}")
        self._consumed = True
        return self._preparation
