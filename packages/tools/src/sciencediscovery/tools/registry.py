"""The run's frozen tool registry: what exists, what the model may see at each turn, and deferred promotion."""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import attrs
from jsonschema.protocols import Validator

from sciencediscovery.runtime_core import FrozenRegistryError, ToolSpec

from .definitions import ToolDefinition, Trust
from .errors import DuplicateToolError, InvalidToolError, UnknownAllowedToolError
from .sanitize import sanitize
from .search import TOOL_SEARCH, ToolSearchIndex, tool_search_tool
from .validation import compile_schema

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _check_tool(tool: object) -> ToolDefinition:
    if not isinstance(tool, ToolDefinition):
        raise InvalidToolError(f"register_tools expects ToolDefinition objects, got {type(tool).__name__}")
    if not _NAME.fullmatch(tool.name):
        raise InvalidToolError(f"tool name {tool.name!r} ({tool.source}) must be 1-64 letters, digits, '_' or '-'")
    handler_call = getattr(tool.handler, "__call__", None)  # noqa: B004 - async callable objects are fine too
    if not (inspect.iscoroutinefunction(tool.handler) or inspect.iscoroutinefunction(handler_call)):
        raise InvalidToolError(f"tool {tool.name!r} ({tool.source}): handler must be an async function")
    for field in ("timeout_s", "max_calls_per_run"):
        value = getattr(tool, field)
        if value is not None and (isinstance(value, bool) or value <= 0):
            raise InvalidToolError(f"tool {tool.name!r} ({tool.source}): {field} must be positive, got {value!r}")
    return tool


def _sanitized_leaves(value: Any) -> Any:
    """``value`` with every string leaf sanitized; mapping keys are kept as they are."""
    if isinstance(value, str):
        return sanitize(value).text
    if isinstance(value, Mapping):
        return {key: _sanitized_leaves(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sanitized_leaves(item) for item in value]
    return value


def _public(tool: ToolDefinition) -> ToolDefinition:
    """An untrusted tool's description and parameter schema (e.g. from an MCP server) are sanitized before any
    model sees them: every string leaf of the schema (descriptions, titles, enum/default/examples values)."""
    if tool.trust is not Trust.UNTRUSTED:
        return tool
    return attrs.evolve(
        tool, description=sanitize(tool.description).text, parameters=_sanitized_leaves(tool.parameters)
    )


class RegistrationCollector:
    """A ``register`` callback that refuses registrations once the registry it feeds is frozen."""

    def __init__(self, hook: str, source: str = "direct registration") -> None:
        self.hook = hook
        self.source = source
        self.items: list[tuple[object, str]] = []
        self.frozen = False

    def __call__(self, item: object) -> None:
        if self.frozen:
            raise FrozenRegistryError(
                f"{self.hook}: {self.source} registered {item!r} after the run's registry was frozen"
            )
        self.items.append((item, self.source))


def _describe(plugin_manager: Any, implementation: Any) -> str:
    """``plugin 'name'`` plus its distribution when installed through an entry point."""
    name = implementation.plugin_name
    if name.isdigit():  # registered without a name: describe the object
        plugin = implementation.plugin
        name = getattr(plugin, "__name__", None) or f"{type(plugin).__module__}.{type(plugin).__qualname__}"
    distribution = getattr(plugin_manager, "distributions", {}).get(implementation.plugin_name)
    return f"plugin {name!r}" + (f" ({distribution[0]} {distribution[1]})" if distribution else "")


def collect(plugin_manager: Any, hook: str, settings: Mapping[str, Any]) -> list[tuple[object, str]]:
    """Call every implementation of the registration ``hook`` and return (item, source) pairs, then freeze.

    Implementations are called one by one (in pluggy's call order) so each item
    is attributed to the plugin that registered it.
    """
    collector = RegistrationCollector(hook)
    for implementation in reversed(getattr(plugin_manager.hook, hook).get_hookimpls()):
        collector.source = _describe(plugin_manager, implementation)
        if implementation.hookwrapper or implementation.wrapper:
            raise InvalidToolError(
                f"{hook}: {collector.source} implements it as a wrapper; registration hooks take none"
            )
        arguments = {"register": collector, "settings": settings}
        implementation.function(**{name: arguments[name] for name in implementation.argnames})
    collector.frozen = True
    return collector.items


@attrs.frozen
class _Entry:
    tool: ToolDefinition
    validator: Validator


class ToolRegistry:
    """A run's tools, frozen at construction.

    ``allow`` (a profile's allow-list) restricts the run to the named tools;
    every other tool is unknown to it. Deferred tools are hidden until
    ``tool_search`` promotes them; a promotion during turn N is visible from
    turn N + 1. ``tool_search`` is added when the run has deferred tools.
    """

    def __init__(self, tools: Iterable[ToolDefinition], *, allow: Collection[str] | None = None) -> None:
        registered: dict[str, ToolDefinition] = {}
        for tool in map(_public, map(_check_tool, tools)):
            if tool.name == TOOL_SEARCH:
                raise DuplicateToolError(TOOL_SEARCH, "the registry (its built-in deferred-tool search)", tool.source)
            if tool.name in registered:
                raise DuplicateToolError(tool.name, registered[tool.name].source, tool.source)
            registered[tool.name] = tool
        if allow is not None:
            unknown = sorted(set(allow) - set(registered) - {TOOL_SEARCH})
            if unknown:
                raise UnknownAllowedToolError(unknown, sorted(registered))
            registered = {name: tool for name, tool in registered.items() if name in allow}
        self._index = ToolSearchIndex(registered.values())
        if any(tool.deferred for tool in registered.values()):
            registered[TOOL_SEARCH] = tool_search_tool(self.search, self.get, self.promote)
        self._entries: Mapping[str, _Entry] = types.MappingProxyType(
            {name: _Entry(tool, compile_schema(name, tool.parameters)) for name, tool in registered.items()}
        )
        self._promoted: dict[str, int] = {}

    @classmethod
    def from_plugins(
        cls, plugin_manager: Any, settings: Mapping[str, Any], *, allow: Collection[str] | None = None
    ) -> ToolRegistry:
        """Build the registry from every ``register_tools`` implementation; sources name the plugins."""
        tools = []
        for item, source in collect(plugin_manager, "register_tools", settings):
            tool = _check_tool(item)
            tools.append(attrs.evolve(tool, source=source if tool.source == "builtin" else f"{source} ({tool.source})"))
        return cls(tools, allow=allow)

    # -- lookup ---------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        """Every tool of the run, deferred ones included, in registration order."""
        return tuple(self._entries)

    def get(self, name: str) -> ToolDefinition | None:
        entry = self._entries.get(name)
        return entry.tool if entry else None

    def validator(self, name: str) -> Validator:
        return self._entries[name].validator

    def is_visible(self, name: str, turn: int) -> bool:
        """Whether the model may call ``name`` at ``turn``."""
        entry = self._entries.get(name)
        if entry is None:
            return False
        promoted = self._promoted.get(name)
        return not entry.tool.deferred or (promoted is not None and promoted < turn)

    def promoted_at(self, name: str) -> int | None:
        """The turn during which a deferred tool was promoted, if it was."""
        return self._promoted.get(name)

    def visible_specs(self, turn: int) -> tuple[ToolSpec, ...]:
        """The governed tool set for the model at ``turn``, in registration order."""
        return tuple(entry.tool.spec() for name, entry in self._entries.items() if self.is_visible(name, turn))

    def search(self, query: str, limit: int = 5) -> list[ToolDefinition]:
        """Search every tool of the run (deferred included) by name and description."""
        return self._index.search(query, limit)

    # -- promotion --------------------------------------------------------------
    def promote(self, names: Sequence[str], turn: int) -> list[str]:
        """Promote deferred tools during ``turn``; returns those newly promoted (visible from ``turn + 1``)."""
        newly = []
        for name in names:
            entry = self._entries.get(name)
            if entry is not None and entry.tool.deferred and name not in self._promoted:
                self._promoted[name] = turn
                newly.append(name)
        return newly
