"""The run's shared model-call quota: declared maxima judge affordability, actual calls are deducted atomically."""

from __future__ import annotations

import threading

from .errors import PlanDefinitionError, QuotaExhaustedError

__all__ = ["ModelCallQuota"]


class ModelCallQuota:
    """Total model calls of one run, shared by selectors, compressors and the final answer. No refunds."""

    def __init__(self, total: int) -> None:
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            raise PlanDefinitionError("max_model_calls", f"must be a non-negative integer, got {total!r}")
        self.total = total
        self._used = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        return self._used

    @property
    def remaining(self) -> int:
        return self.total - self._used

    def affordable(self, calls: int, reserve: int = 0) -> bool:
        """Whether ``calls`` more calls fit while ``reserve`` calls stay free (judged on declared maxima)."""
        return self.remaining - reserve >= calls

    def charge(self, calls: int = 1) -> None:
        """Deduct ``calls`` actual calls at once, or raise :class:`QuotaExhaustedError` and deduct nothing."""
        with self._lock:
            if self.total - self._used < calls:
                raise QuotaExhaustedError(self.total, self._used, calls)
            self._used += calls
