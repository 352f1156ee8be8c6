"""Error normalization shared by the official provider SDKs.

The ``openai`` and ``anthropic`` SDKs share one exception hierarchy
(``APIStatusError``, ``APIConnectionError``, ``APITimeoutError``), so one
translator serves both.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from sciencediscovery.runtime_core import ContextOverflowError

from .errors import (
    ModelAuthError,
    ModelBadRequestError,
    ModelConnectionError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
)
from .overflow import is_context_overflow
from .retry import parse_retry_after

_SERVER_ERROR_TYPES = frozenset({"overloaded_error", "api_error", "server_error"})


def _error_details(body: object) -> tuple[str | None, str | None, str | None]:
    """``(message, code, type)`` from an error body (``{"error": {...}}`` or the inner object)."""
    if not isinstance(body, dict):
        return None, None, None
    nested = body.get("error")
    inner: dict[str, Any] = nested if isinstance(nested, dict) else body
    message = inner.get("message")
    code = inner.get("code")
    kind = inner.get("type")
    return (
        message if isinstance(message, str) else None,
        str(code) if code is not None else None,
        kind if isinstance(kind, str) else None,
    )


def translate_sdk_error(sdk: ModuleType, provider: str, error: Exception) -> Exception:
    """The normalized error for an SDK exception: overflow, auth, rate limit, bad request, server or connection.

    ``error`` is an ``APIError`` of ``sdk`` (status errors, connection errors, errors inside a stream).
    """
    if isinstance(error, sdk.APITimeoutError):
        return ModelTimeoutError(f"no answer within the request timeout ({error})", provider=provider)
    if isinstance(error, sdk.APIConnectionError):
        cause = error.__cause__ or error
        return ModelConnectionError(f"{error} ({type(cause).__name__}: {cause})", provider=provider)
    body_message, code, kind = _error_details(getattr(error, "body", None))
    message = body_message or str(getattr(error, "message", "") or error)
    if not isinstance(error, sdk.APIStatusError):
        # an error event inside a stream that had started: the server broke off mid-answer
        if is_context_overflow(message, code, kind):
            return ContextOverflowError(f"{provider}: {message}", provider=provider)
        return ModelServerError(f"error inside the stream: {message}", provider=provider, code=code or kind)
    status: int = error.status_code
    if status != 429 and is_context_overflow(message, code, kind):
        return ContextOverflowError(f"{provider}: {message}", provider=provider)
    retry_after = parse_retry_after(dict(error.response.headers))
    details: dict[str, Any] = {
        "provider": provider,
        "status": status,
        "code": code or kind,
        "retry_after_s": retry_after,
    }
    if status in {401, 403}:
        return ModelAuthError(message, **details)
    if status == 429:
        return ModelRateLimitError(message, **details)
    if status >= 500 or kind in _SERVER_ERROR_TYPES:
        return ModelServerError(message, **details)
    return ModelBadRequestError(message, **details)
