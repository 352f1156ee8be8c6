"""Hook specifications owned by the kernel.

Other owner packages declare their hooks in their own ``hookspecs`` module
and add them through :func:`add_hookspecs`, the way pytest plugins use
``pytest_addhooks``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .plugins import hookspec
from .ports import RunEventSink


@hookspec(historic=True)
def add_hookspecs(plugin_manager: Any) -> None:
    """Add hook specifications to ``plugin_manager`` with ``plugin_manager.add_hookspecs(module)``.

    Called once for every plugin as it is registered, so a package that owns
    hooks makes them known before anything implements them is validated.
    """


@hookspec
def register_event_sinks(register: Callable[[RunEventSink], None], settings: Mapping[str, Any]) -> None:
    """Register sinks that receive every event of a run (provenance manifests, memory observations, metrics).

    ``settings`` is the run's configuration from the composition root. Sinks
    must not block; a sink that raises fails the run.
    """
