"""Exact token counts for OpenAI-family models with tiktoken, offline-capable.

tiktoken downloads encodings into ``TIKTOKEN_CACHE_DIR``. Machines without a
route to the download location use a ready cache: when the variable is unset,
the first ``shared/tiktoken`` folder found beside the repository (walking up
from the current directory and from this package) is used. A user's own
setting always wins.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from .errors import TokenizerUnavailableError

CACHE_VARIABLE = "TIKTOKEN_CACHE_DIR"


def find_shared_cache(*starts: Path) -> Path | None:
    """The first ``shared/tiktoken`` folder at or above any of ``starts``."""
    for start in starts:
        for folder in (start.resolve(), *start.resolve().parents):
            candidate = folder / "shared" / "tiktoken"
            if candidate.is_dir():
                return candidate
    return None


def ensure_offline_cache(environ: MutableMapping[str, str] | None = None) -> str | None:
    """Point ``TIKTOKEN_CACHE_DIR`` at the shared cache when it is unset; return the cache in use."""
    env = os.environ if environ is None else environ
    if env.get(CACHE_VARIABLE):
        return env[CACHE_VARIABLE]
    found = find_shared_cache(Path.cwd(), Path(__file__).parent)
    if found is not None:
        env[CACHE_VARIABLE] = str(found)
        return str(found)
    return None


class TiktokenEstimator:
    """Counts tokens with a tiktoken encoding (e.g. ``o200k_base`` or ``cl100k_base``).

    ``name`` is ``tiktoken:<encoding>`` and ``cache_dir`` the encoding cache in
    use, so traces say exactly which tokenizer counted. A missing encoding is a
    :class:`TokenizerUnavailableError` naming the encoding and ``TIKTOKEN_CACHE_DIR``.
    """

    def __init__(self, encoding_name: str) -> None:
        import tiktoken

        self.cache_dir = ensure_offline_cache()
        try:
            self._encoding: Any = tiktoken.get_encoding(encoding_name)
        except Exception as error:
            raise TokenizerUnavailableError(
                f"tiktoken encoding {encoding_name!r} could not be loaded ({type(error).__name__}: {error}); "
                f"{CACHE_VARIABLE}={self.cache_dir or '(unset)'} - point {CACHE_VARIABLE} at a folder holding the "
                "cached encoding (e.g. ../shared/tiktoken) or allow the download"
            ) from error
        self.encoding_name = encoding_name
        self.name = f"tiktoken:{encoding_name}"

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=())) if text else 0

    def __repr__(self) -> str:
        return f"TiktokenEstimator({self.encoding_name!r}, cache_dir={self.cache_dir!r})"
