"""Retry policy: exponential backoff with jitter, honouring a provider's Retry-After."""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping

import attrs


def _positive_number(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0 or not math.isfinite(value):
        raise ValueError(f"RetryPolicy.{attribute.name} must be a positive number, got {value!r}")


def _fraction(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not 0 <= value <= 1:
        raise ValueError(f"RetryPolicy.{attribute.name} must be between 0 and 1, got {value!r}")


def _at_least_one(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"RetryPolicy.{attribute.name} must be a positive integer, got {value!r}")


@attrs.frozen
class RetryPolicy:
    """How often and how long to wait before retrying a retryable provider error.

    ``max_attempts`` counts the first try. Without a Retry-After the wait before
    attempt ``n + 1`` is ``min(max_delay_s, base_delay_s * 2 ** (n - 1))``, reduced
    by up to ``jitter`` of itself at random. A Retry-After is honoured as given, up
    to ``max_retry_after_s``.
    """

    max_attempts: int = attrs.field(default=3, validator=_at_least_one)
    base_delay_s: float = attrs.field(default=0.5, validator=_positive_number)
    max_delay_s: float = attrs.field(default=30.0, validator=_positive_number)
    jitter: float = attrs.field(default=0.25, validator=_fraction)
    max_retry_after_s: float = attrs.field(default=60.0, validator=_positive_number)

    def delay(self, attempt: int, retry_after_s: float | None, random: float) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based); ``random`` is in [0, 1)."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_retry_after_s)
        backoff = min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
        return float(backoff * (1 - self.jitter * random))


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a response asks the client to wait: ``retry-after-ms``, ``retry-after`` seconds or an HTTP date."""
    lowered = {key.lower(): value for key, value in headers.items()}
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = lowered.get(header)
        if raw is None:
            continue
        try:
            seconds = float(raw) / divisor
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    raw_date = lowered.get("retry-after")
    if raw_date is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(raw_date)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)
