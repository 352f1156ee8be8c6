"""Entry-point plugin of sciencediscovery-context: makes the context hooks known to the plugin host."""

from __future__ import annotations

from typing import Any

from sciencediscovery.runtime_core import hookimpl

from . import hookspecs


@hookimpl
def add_hookspecs(plugin_manager: Any) -> None:
    plugin_manager.add_hookspecs(hookspecs)
