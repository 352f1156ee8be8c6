"""The tools package's hooks: each is called by a test, documented, and reachable through the entry point."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.runtime_core import hookimpl, make_plugin_manager
from sciencediscovery.tools import (
    OUTPUT_STORE_SETTING,
    READ_TOOL_OUTPUT,
    DiskToolOutputStore,
    InvalidToolError,
    MemoryToolOutputStore,
    ToolDefinition,
    ToolRegistry,
    build_tools,
    hookspecs,
)
from sciencediscovery.tools import plugin as tools_plugin

DOCS = Path(__file__).resolve().parents[3] / "docs" / "packages" / "tools.md"


class Recording:
    """Implements every hook of the package and records the settings it was given."""

    def __init__(self, gate: object = None, observer: object = None) -> None:
        self.gate, self.observer = gate, observer
        self.settings: dict[str, Any] = {}

    @hookimpl
    def register_tools(self, register: Callable[[ToolDefinition], None], settings: Any) -> None:
        self.settings["tools"] = settings

    @hookimpl
    def register_tool_gates(self, register: Callable[[Any], None], settings: Any) -> None:
        if self.gate is not None:
            register(self.gate)

    @hookimpl
    def register_tool_observers(self, register: Callable[[Any], None], settings: Any) -> None:
        if self.observer is not None:
            register(self.observer)


def test_add_hookspecs_makes_the_tool_hooks_known() -> None:
    manager = make_plugin_manager(load_entry_points=False, plugins=[tools_plugin])
    for name in ("register_tools", "register_tool_gates", "register_tool_observers"):
        assert getattr(manager.hook, name).spec is not None


def test_register_tools_gets_the_run_store_and_the_plugin_adds_read_tool_output() -> None:
    recording = Recording()
    store = MemoryToolOutputStore()
    tools = build_tools(
        make_plugin_manager(load_entry_points=False, plugins=[tools_plugin, recording]), {"k": "v"}, store=store
    )
    assert recording.settings["tools"] == {"k": "v", OUTPUT_STORE_SETTING: store}
    assert tools.registry.names == (READ_TOOL_OUTPUT,) and tools.dispatcher.store is store
    bare = ToolRegistry.from_plugins(make_plugin_manager(load_entry_points=False, plugins=[tools_plugin]), {})
    assert bare.names == ()


def test_output_dir_setting_gives_a_disk_store(tmp_path: Path) -> None:
    manager = make_plugin_manager(load_entry_points=False, plugins=[tools_plugin])
    tools = build_tools(manager, {"SCIENCE_AGENT_TOOL_OUTPUT_DIR": str(tmp_path / "outputs")})
    assert isinstance(tools.store, DiskToolOutputStore) and (tmp_path / "outputs").is_dir()


@pytest.mark.parametrize(("hook", "field"), [("register_tool_gates", "gate"), ("register_tool_observers", "observer")])
def test_gate_and_observer_registrations_are_checked(hook: str, field: str) -> None:
    class Sync:
        def check(self, invocation: Any, tool: Any) -> None: ...

        def after(self, invocation: Any, tool: Any, result: Any) -> None: ...

    recording = Recording(**{field: Sync()})
    manager = make_plugin_manager(load_entry_points=False, plugins=[tools_plugin, recording])
    with pytest.raises(InvalidToolError, match=rf"{hook}: plugin '.*Recording' registered Sync"):
        build_tools(manager, {})


def test_entry_point_loads_the_plugin() -> None:
    manager = make_plugin_manager(environ={"SCIENCEDISCOVERY_LOAD_PLUGINS": "tools"})
    assert manager.get_plugin("tools") is tools_plugin
    assert build_tools(manager, {}).registry.names == (READ_TOOL_OUTPUT,)


def test_every_hook_is_documented_with_its_signature() -> None:
    headings = set(re.findall(r"^### (\w+\(.*\))$", DOCS.read_text(), re.MULTILINE))
    for name in ("register_tools", "register_tool_gates", "register_tool_observers"):
        function = getattr(hookspecs, name)
        arguments = ", ".join(function.__code__.co_varnames[: function.__code__.co_argcount])
        assert f"{name}({arguments})" in headings
