"""The plugin host: direct registration, entry-point discovery, environment switches, validation."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from sciencediscovery.runtime_core import PluginError, hookimpl, hookspec, list_plugins, make_plugin_manager


class GreetingSpecs:
    @hookspec
    def register_greetings(self, register):
        """Register greetings."""


class GreetingOwner:
    """A package that owns a hook adds its specs through add_hookspecs."""

    @hookimpl
    def add_hookspecs(self, plugin_manager):
        plugin_manager.add_hookspecs(GreetingSpecs)


class Hello:
    @hookimpl
    def register_greetings(self, register):
        register("hello")


def collect(manager) -> list[str]:
    found: list[str] = []
    manager.hook.register_greetings(register=found.append)
    return found


def test_plugin_object_registers_without_installation():
    manager = make_plugin_manager(load_entry_points=False, plugins=[GreetingOwner(), Hello()])
    assert collect(manager) == ["hello"]


def test_hookspecs_added_after_an_implementation_still_validate():
    manager = make_plugin_manager(load_entry_points=False, plugins=[Hello(), GreetingOwner()])
    assert collect(manager) == ["hello"]


def test_unknown_hook_is_a_plugin_error_naming_it():
    class Typo:
        @hookimpl
        def register_greetingz(self, register):
            register("oops")

    with pytest.raises(PluginError, match="register_greetingz"):
        make_plugin_manager(load_entry_points=False, plugins=[GreetingOwner(), Typo()])


@pytest.fixture
def installed_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two real distributions on sys.path (a dist-info folder with entry_points.txt each)."""
    for name, body in {
        "owner": "from sciencediscovery.runtime_core import hookimpl, hookspec\n"
        "class Specs:\n"
        "    @hookspec\n"
        "    def register_greetings(self, register): ...\n"
        "@hookimpl\n"
        "def add_hookspecs(plugin_manager):\n"
        "    plugin_manager.add_hookspecs(Specs)\n",
        "bonjour": "from sciencediscovery.runtime_core import hookimpl\n"
        "@hookimpl\n"
        "def register_greetings(register):\n"
        "    register('bonjour')\n",
    }.items():
        (tmp_path / f"sd_test_{name}.py").write_text(body)
        dist_info = tmp_path / f"sd_test_{name}-1.2.3.dist-info"
        dist_info.mkdir()
        (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sd-test-{name}\nVersion: 1.2.3\n")
        (dist_info / "entry_points.txt").write_text(f"[sciencediscovery]\n{name} = sd_test_{name}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("owner", "bonjour"):
        sys.modules.pop(f"sd_test_{name}", None)


def test_entry_point_plugins_are_discovered(installed_plugins):
    manager = make_plugin_manager(environ={})
    assert "bonjour" in collect(manager)
    info = {i.name: i for i in list_plugins(manager)}
    assert info["bonjour"].distribution == "sd-test-bonjour"
    assert info["bonjour"].version == "1.2.3"
    assert info["bonjour"].hooks == ("register_greetings",)


def test_disable_switch_skips_named_plugins(installed_plugins):
    manager = make_plugin_manager(environ={"SCIENCEDISCOVERY_DISABLE_PLUGINS": "bonjour"})
    assert "bonjour" not in collect(manager)
    assert manager.get_plugin("bonjour") is None


def test_load_switch_loads_only_named_plugins(installed_plugins):
    manager = make_plugin_manager(environ={"SCIENCEDISCOVERY_LOAD_PLUGINS": "owner, bonjour"})
    assert collect(manager) == ["bonjour"]
    assert {i.name for i in list_plugins(manager)} == {"owner", "bonjour"}
    nothing = make_plugin_manager(environ={"SCIENCEDISCOVERY_LOAD_PLUGINS": ""})
    assert list_plugins(nothing) == []


def test_broken_entry_point_is_a_plugin_error_naming_it(installed_plugins):
    (installed_plugins / "sd_test_bonjour.py").write_text(textwrap.dedent("raise ImportError('missing numpy')\n"))
    sys.modules.pop("sd_test_bonjour", None)
    with pytest.raises(
        PluginError, match=r"entry point 'bonjour' .* from sd-test-bonjour failed to load.*missing numpy"
    ):
        make_plugin_manager(environ={})


def test_register_event_sinks_collects_plugin_sinks():
    from sciencediscovery.runtime_core import CollectingSink

    class Metrics:
        def __init__(self):
            self.sink = CollectingSink()

        @hookimpl
        def register_event_sinks(self, register, settings):
            if settings.get("metrics"):
                register(self.sink)

    plugin = Metrics()
    manager = make_plugin_manager(load_entry_points=False, plugins=[plugin])
    found = []
    manager.hook.register_event_sinks(register=found.append, settings={"metrics": True})
    assert found == [plugin.sink]
    none = []
    manager.hook.register_event_sinks(register=none.append, settings={})
    assert none == []
