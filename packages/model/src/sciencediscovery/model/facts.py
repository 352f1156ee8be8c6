"""Model facts: context window, output reserve and tokenizer encoding of known model families."""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from sciencediscovery.runtime_core import ConfigurationError
from sciencediscovery.runtime_core.config import positive_int

from .spec import ModelSpec, parse_model_spec

MAX_TOKENS_VARIABLE = "MODEL_MAX_TOKENS"
OUTPUT_RESERVE_VARIABLE = "OUTPUT_RESERVE_TOKENS"


@attrs.frozen
class ModelFamily:
    """Facts shared by every model whose name starts with ``prefix``."""

    prefix: str
    context_window: int
    max_output_tokens: int
    encoding: str | None


KNOWN_FAMILIES: tuple[ModelFamily, ...] = (
    ModelFamily("gpt-5", 400_000, 128_000, "o200k_base"),
    ModelFamily("gpt-4.1", 1_047_576, 32_768, "o200k_base"),
    ModelFamily("gpt-4o", 128_000, 16_384, "o200k_base"),
    ModelFamily("o1", 200_000, 100_000, "o200k_base"),
    ModelFamily("o3", 200_000, 100_000, "o200k_base"),
    ModelFamily("o4", 200_000, 100_000, "o200k_base"),
    ModelFamily("gpt-4-turbo", 128_000, 4_096, "cl100k_base"),
    ModelFamily("gpt-4", 8_192, 4_096, "cl100k_base"),
    ModelFamily("gpt-3.5-turbo", 16_385, 4_096, "cl100k_base"),
    ModelFamily("claude-opus-4", 200_000, 32_000, None),
    ModelFamily("claude-sonnet-4", 200_000, 64_000, None),
    ModelFamily("claude-haiku-4", 200_000, 64_000, None),
    ModelFamily("claude-3-7-sonnet", 200_000, 64_000, None),
    ModelFamily("claude-3-5-sonnet", 200_000, 8_192, None),
    ModelFamily("claude-3-5-haiku", 200_000, 8_192, None),
    ModelFamily("claude-3", 200_000, 4_096, None),
)
"""Known families; the longest matching prefix wins (``gpt-4o-mini`` is ``gpt-4o``, not ``gpt-4``)."""

UNKNOWN_MODEL = ModelFamily("", 32_768, 4_096, None)
"""Conservative facts for a model outside the table (a local server's model, the scripted model)."""


@attrs.frozen
class ModelFacts:
    """What the context budget needs to know about the model behind a spec.

    ``input_limit`` is ``context_window - max_output_tokens``: system prompt, tool
    schemas and history share it. ``encoding`` is the tiktoken encoding name for
    exact counting, or ``None`` when no exact local tokenizer is known.
    """

    spec: str
    family: str | None
    context_window: int
    max_output_tokens: int
    encoding: str | None

    @property
    def input_limit(self) -> int:
        return self.context_window - self.max_output_tokens


def find_family(model: str) -> ModelFamily | None:
    """The known family of ``model`` (a provider's model name, ``vendor/`` prefixes ignored), if any."""
    name = model.rsplit("/", 1)[-1].strip().lower()
    matches = [family for family in KNOWN_FAMILIES if name.startswith(family.prefix)]
    return max(matches, key=lambda family: len(family.prefix), default=None)


def resolve_model_facts(spec: str | ModelSpec, environ: Mapping[str, str] | None = None) -> ModelFacts:
    """Facts for ``spec`` (``provider:model``), with ``MODEL_MAX_TOKENS`` and ``OUTPUT_RESERVE_TOKENS`` overrides.

    ``MODEL_MAX_TOKENS`` replaces the context window and ``OUTPUT_RESERVE_TOKENS``
    the output reserve; both must be positive integers and the reserve must be
    smaller than the window (:class:`ConfigurationError` names the variable).
    """
    env = os.environ if environ is None else environ
    parsed = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    family = find_family(parsed.target) if parsed.provider != "scripted" else None
    base = family or UNKNOWN_MODEL
    window = positive_int(env, MAX_TOKENS_VARIABLE, base.context_window)
    reserve = positive_int(env, OUTPUT_RESERVE_VARIABLE, base.max_output_tokens)
    assert window is not None and reserve is not None  # defaults are set
    if reserve >= window:
        variable = OUTPUT_RESERVE_VARIABLE if OUTPUT_RESERVE_VARIABLE in env else MAX_TOKENS_VARIABLE
        raise ConfigurationError(
            variable, f"the output reserve ({reserve}) must be smaller than the context window ({window}) of {parsed}"
        )
    return ModelFacts(
        spec=str(parsed),
        family=family.prefix if family else None,
        context_window=window,
        max_output_tokens=reserve,
        encoding=base.encoding,
    )
