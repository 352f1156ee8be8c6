"""Composing a run's tools from the plugin host: registry, output store, gates, observers and dispatcher."""

from __future__ import annotations

import inspect
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from .definitions import ToolGate, ToolObserver
from .dispatcher import GovernedToolDispatcher
from .errors import InvalidToolError
from .registry import ToolRegistry, collect
from .settings import OUTPUT_STORE_SETTING, ToolSettings
from .store import DiskToolOutputStore, MemoryToolOutputStore, ToolOutputStore


@attrs.frozen
class RunTools:
    """One run's governed tools: pass ``dispatcher`` to ``RuntimeBuilder.tool_dispatcher`` and
    ``registry.visible_specs`` to the context assembler."""

    registry: ToolRegistry
    dispatcher: GovernedToolDispatcher
    store: ToolOutputStore
    settings: ToolSettings


def _checked(items: list[tuple[object, str]], protocol: type, method: str, hook: str) -> list[Any]:
    checked = []
    for item, source in items:
        if not isinstance(item, protocol) or not inspect.iscoroutinefunction(getattr(item, method)):
            raise InvalidToolError(
                f"{hook}: {source} registered {type(item).__name__}, "
                f"which has no async {method}() of {protocol.__name__}"
            )
        checked.append(item)
    return checked


def build_tools(
    plugin_manager: Any,
    settings: Mapping[str, Any],
    *,
    allow: Collection[str] | None = None,
    store: ToolOutputStore | None = None,
) -> RunTools:
    """Build a run's tools from ``register_tools``, ``register_tool_gates`` and ``register_tool_observers``.

    The output store (``store``, else a directory store under
    ``SCIENCE_AGENT_TOOL_OUTPUT_DIR``, else in memory) is handed to hooks
    under :data:`OUTPUT_STORE_SETTING`, so ``read_tool_output`` reads what the
    dispatcher stores. ``allow`` is the run profile's tool allow-list.
    """
    tool_settings = ToolSettings.from_settings(settings)
    if store is None:
        directory = tool_settings.output_dir
        store = DiskToolOutputStore(directory) if directory else MemoryToolOutputStore()
    hook_settings = {**settings, OUTPUT_STORE_SETTING: store}
    registry = ToolRegistry.from_plugins(plugin_manager, hook_settings, allow=allow)
    gates = _checked(
        collect(plugin_manager, "register_tool_gates", hook_settings), ToolGate, "check", "register_tool_gates"
    )
    observers = _checked(
        collect(plugin_manager, "register_tool_observers", hook_settings),
        ToolObserver,
        "after",
        "register_tool_observers",
    )
    dispatcher = GovernedToolDispatcher(registry, store=store, gates=gates, observers=observers, settings=tool_settings)
    return RunTools(registry, dispatcher, store, tool_settings)
