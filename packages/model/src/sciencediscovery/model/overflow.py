"""Recognizing a provider's "context window exceeded" answer in its many spellings."""

from __future__ import annotations

import re

OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "context_window_exceeded"})
"""Error codes/types that mean the input is larger than the model's window (OpenAI, llama.cpp, others)."""

_OVERFLOW_TEXT = re.compile(
    "|".join(
        (
            r"context[_ ]length[_ ]exceeded",
            r"maximum context length",  # OpenAI, vLLM
            r"prompt is too long",  # Anthropic
            r"prompt too long",
            r"input is too long",
            r"exceeds? (?:the )?(?:available |model'?s? |maximum )*context (?:window|length|size)",  # llama.cpp, others
            r"context ?window ?exceeded",  # LiteLLM ContextWindowExceededError
            r"reduce the length of the (?:messages|prompt|input)",
            r"too many (?:input )?tokens for (?:the |this )?(?:model|context)",
        )
    ),
    re.IGNORECASE,
)


def is_context_overflow(message: str, *codes: str | None) -> bool:
    """True when a provider error (one of its codes/types, or its message) says the input exceeded the window."""
    if any(code is not None and code.lower() in OVERFLOW_CODES for code in codes):
        return True
    return bool(_OVERFLOW_TEXT.search(message))
