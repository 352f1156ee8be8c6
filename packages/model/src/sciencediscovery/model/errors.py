"""Typed errors of the model package. Each names the provider, spec, file or variable at fault.

A provider's overflow answer is not here: it becomes runtime_core's
:class:`~sciencediscovery.runtime_core.ContextOverflowError`, which the kernel
recovers from once.
"""

from __future__ import annotations

from collections.abc import Iterable


class ModelError(Exception):
    """Base class of every error raised by sciencediscovery.model."""


class ModelSpecError(ModelError, ValueError):
    """A model spec string is malformed; the message lists the registered providers when known."""

    def __init__(self, spec: str, problem: str, available: Iterable[str]) -> None:
        self.spec = spec
        self.available = tuple(sorted(available))
        listing = f"; registered providers: {', '.join(self.available)}" if self.available else ""
        super().__init__(f"model spec {spec!r}: {problem}{listing}")


class UnknownProviderError(ModelSpecError):
    """A model spec names a provider no plugin registered."""


class ProviderRegistrationError(ModelError):
    """A provider was registered twice or with an invalid definition."""


class MissingExtraError(ModelError, ImportError):
    """A provider's optional SDK is not installed; the message names the pip command."""

    def __init__(self, provider: str, module: str, extra: str) -> None:
        self.provider = provider
        self.module = module
        self.extra = extra
        self.pip_command = f"pip install 'sciencediscovery-model[{extra}]'"
        super().__init__(
            f"the {provider} provider needs the {module!r} package, which is not installed: {self.pip_command}"
        )


class ProviderError(ModelError):
    """A provider answered with an error, or could not be reached; carries the provider's message.

    ``retryable`` tells the client's retry policy whether another attempt may succeed;
    ``retry_after_s`` is the delay the provider asked for, when it asked for one.
    """

    retryable_by_default = False
    reason = "provider_error"

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        code: str | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        self.provider = provider
        self.status = status
        self.code = code
        self.retry_after_s = retry_after_s
        self.provider_message = message
        where = f"{provider} (HTTP {status})" if status is not None else provider
        super().__init__(f"{where}: {message}")

    @property
    def retryable(self) -> bool:
        return self.retryable_by_default


class ModelAuthError(ProviderError):
    """The provider rejected the credentials (401/403)."""

    reason = "auth"


class ModelRateLimitError(ProviderError):
    """The provider is rate limiting this client (429); retried."""

    retryable_by_default = True
    reason = "rate_limited"


class ModelBadRequestError(ProviderError):
    """The provider rejected the request (4xx). Only 408 and 409 are retried."""

    reason = "bad_request"

    @property
    def retryable(self) -> bool:
        return self.status in {408, 409}


class ModelServerError(ProviderError):
    """The provider failed (5xx or an overloaded answer); retried."""

    retryable_by_default = True
    reason = "server_error"


class ModelConnectionError(ProviderError):
    """The provider could not be reached or dropped the connection; retried."""

    retryable_by_default = True
    reason = "connection_error"


class ModelTimeoutError(ModelConnectionError):
    """The provider sent nothing for longer than the request timeout; retried."""

    reason = "timeout"


class ModelResponseError(ProviderError):
    """The provider's stream broke the protocol (for example a tool call without a name)."""

    reason = "invalid_response"


class ScriptFileError(ModelError, ValueError):
    """A scripted-provider file is missing or invalid; lists every problem with its JSON path."""

    def __init__(self, path: str, problems: Iterable[str]) -> None:
        self.path = path
        self.problems = tuple(problems)
        listing = "\n".join(f"  - {problem}" for problem in self.problems)
        super().__init__(f"scripted model file {path} is invalid:\n{listing}")


class ScriptExhaustedError(ModelError):
    """The scripted model was asked for more turns than its file holds."""

    def __init__(self, path: str, turn: int, available: int) -> None:
        self.path = path
        self.turn = turn
        self.available = available
        super().__init__(
            f"scripted model file {path} has {available} turn(s); turn {turn} was requested "
            "(add a turn to $.turns or lower the run's turn bound)"
        )
