"""Run-settings keys of the specialist package and the composition root's one call, :func:`supervise_child_runs`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sciencediscovery.orchestration import settings as orchestration_keys
from sciencediscovery.orchestration.delegation import DEFAULT_BRIEF_CHARS
from sciencediscovery.orchestration.subagents import child_run_factory
from sciencediscovery.runtime_core import ConfigurationError, RunEventSink

from .runner import DEFAULT_MAX_CONCURRENT, SpecialistRunner

MAX_CONCURRENT = "specialist_max_concurrent"
"""How many delegated child runs of one run may be running at once (default 3); the rest wait as ``created``."""


def max_concurrent(settings: Mapping[str, Any]) -> int:
    value = settings.get(MAX_CONCURRENT, DEFAULT_MAX_CONCURRENT)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(MAX_CONCURRENT, f"must be a positive integer, got {value!r}")
    return value


def supervise_child_runs(settings: Mapping[str, Any], *, events: RunEventSink | None = None) -> dict[str, Any]:
    """``settings`` with its ``child_run_factory`` wrapped in a :class:`SpecialistRunner`.

    Call it after orchestration's ``prepare_settings`` (which fills ``specialists``)
    and before the tools are built. Without a factory, or with one already
    supervised, ``settings`` is returned unchanged (as a new dict).
    """
    factory = child_run_factory(settings)
    if factory is None or isinstance(factory, SpecialistRunner):
        return dict(settings)
    runner = SpecialistRunner(
        factory,
        orchestration_keys.specialists(settings),
        max_concurrent=max_concurrent(settings),
        brief_chars=orchestration_keys.brief_chars(settings) or DEFAULT_BRIEF_CHARS,
        events=events,
    )
    return {**settings, orchestration_keys.CHILD_RUN_FACTORY: runner}
