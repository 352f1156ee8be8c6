"""Client settings: request timeout, retries and proxy, from explicit values or the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from sciencediscovery.runtime_core import ConfigurationError
from sciencediscovery.runtime_core.config import positive_int

from .retry import RetryPolicy

TIMEOUT_VARIABLE = "MODEL_TIMEOUT_SECONDS"
ATTEMPTS_VARIABLE = "MODEL_MAX_ATTEMPTS"
PROXY_VARIABLE = "MODEL_PROXY"
_PROXY_SCHEMES = ("http://", "https://", "socks5://", "socks5h://")


@attrs.frozen
class ClientSettings:
    """How the HTTP providers talk to their server.

    ``timeout_s`` bounds every wait on the provider (connect, each read of the
    stream, write). ``proxy`` is an explicit proxy URL; when ``None`` the standard
    ``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``/``NO_PROXY`` variables apply.
    """

    timeout_s: float = 600.0
    retry: RetryPolicy = attrs.field(factory=RetryPolicy)
    proxy: str | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> ClientSettings:
        """Read ``MODEL_TIMEOUT_SECONDS``, ``MODEL_MAX_ATTEMPTS`` and ``MODEL_PROXY``; errors name the variable."""
        env = os.environ if environ is None else environ
        defaults = cls()
        timeout = positive_int(env, TIMEOUT_VARIABLE)
        attempts = positive_int(env, ATTEMPTS_VARIABLE) or defaults.retry.max_attempts
        proxy = (env.get(PROXY_VARIABLE) or "").strip() or None
        if proxy is not None and not proxy.lower().startswith(_PROXY_SCHEMES):
            raise ConfigurationError(
                PROXY_VARIABLE, f"must be a URL starting with {', '.join(_PROXY_SCHEMES)}; got {proxy!r}"
            )
        return cls(
            timeout_s=defaults.timeout_s if timeout is None else float(timeout),
            retry=attrs.evolve(defaults.retry, max_attempts=attempts),
            proxy=proxy,
        )
