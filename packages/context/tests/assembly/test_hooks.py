"""The hooks owned by the context package, called through a real plugin host."""

from __future__ import annotations

from typing import Any

import pytest

from sciencediscovery.context import (
    ContextScope,
    Contribution,
    Contributor,
    ContributorFactory,
    DuplicateIdError,
    discover_contributor_factories,
    discover_state_channels,
)
from sciencediscovery.context import plugin as context_plugin
from sciencediscovery.runtime_core import PluginError, hookimpl, make_plugin_manager


async def _nothing(request: Any) -> Contribution:
    return Contribution()


class MemoryPlugin:
    @hookimpl
    def register_context_contributors(self, register: Any, settings: Any) -> None:
        register(
            ContributorFactory("memory.context", lambda scope: Contributor("memory.snapshot", _nothing, scopes=[scope]))
        )

    @hookimpl
    def register_state_channels(self, register: Any, settings: Any) -> None:
        if settings.get("memory_channel", True):
            register(_Channel("memory"))


class _Channel:
    initial = None

    def __init__(self, name: str) -> None:
        self.name = name

    def apply(self, state: Any, call: Any, result: Any) -> Any:
        return state

    def render(self, state: Any) -> None:
        return None


def test_register_context_contributors_collects_factories_from_plugins() -> None:
    manager = make_plugin_manager(load_entry_points=False, plugins=[context_plugin, MemoryPlugin()])
    factories = discover_contributor_factories(manager, {})
    assert [f.id for f in factories] == ["memory.context"]
    contributor = factories[0].create(ContextScope.REVIEWER)
    assert contributor is not None and contributor.id == "memory.snapshot"


def test_register_state_channels_passes_settings() -> None:
    manager = make_plugin_manager(load_entry_points=False, plugins=[context_plugin, MemoryPlugin()])
    assert [c.name for c in discover_state_channels(manager, {})] == ["memory"]
    assert discover_state_channels(manager, {"memory_channel": False}) == ()


def test_duplicate_factory_ids_across_plugins_are_an_error() -> None:
    class Twin(MemoryPlugin):
        pass

    manager = make_plugin_manager(load_entry_points=False, plugins=[context_plugin, MemoryPlugin(), Twin()])
    with pytest.raises(DuplicateIdError, match="memory.context"):
        discover_contributor_factories(manager, {})
    with pytest.raises(DuplicateIdError, match="memory"):
        discover_state_channels(manager, {})


def test_a_hook_is_unknown_without_the_context_plugin() -> None:
    with pytest.raises(PluginError):
        make_plugin_manager(load_entry_points=False, plugins=[MemoryPlugin()])


def test_the_installed_entry_point_adds_the_hookspecs() -> None:
    manager = make_plugin_manager(environ={"SCIENCEDISCOVERY_LOAD_PLUGINS": "context"})
    assert hasattr(manager.hook, "register_context_contributors")
    assert hasattr(manager.hook, "register_state_channels")
