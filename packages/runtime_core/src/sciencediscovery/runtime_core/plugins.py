"""The plugin host: one marker pair, entry-point discovery and environment switches.

Plugins, built-in or third-party, are modules or objects registered under the
entry-point group ``sciencediscovery``. Two environment variables narrow what
is loaded:

``SCIENCEDISCOVERY_LOAD_PLUGINS``
    comma-separated entry-point names; when set, only these are loaded
    (set it to an empty string to load none).
``SCIENCEDISCOVERY_DISABLE_PLUGINS``
    comma-separated entry-point names never to load.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Iterable, Mapping

import attrs
import pluggy

from .errors import PluginError

PROJECT_NAME = "sciencediscovery"
ENTRY_POINT_GROUP = "sciencediscovery"
LOAD_VARIABLE = "SCIENCEDISCOVERY_LOAD_PLUGINS"
DISABLE_VARIABLE = "SCIENCEDISCOVERY_DISABLE_PLUGINS"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@attrs.frozen
class PluginInfo:
    """One registered plugin: its name, and the distribution that installed it (if any)."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]


class PluginHost(pluggy.PluginManager):
    """A pluggy plugin manager that remembers which distribution installed each entry-point plugin."""

    def __init__(self) -> None:
        super().__init__(PROJECT_NAME)
        self.distributions: dict[str, tuple[str, str]] = {}


def _names(value: str | None) -> set[str] | None:
    if value is None:
        return None
    return {name.strip() for name in value.split(",") if name.strip()}


def make_plugin_manager(
    *,
    load_entry_points: bool = True,
    plugins: Iterable[object] = (),
    environ: Mapping[str, str] | None = None,
) -> PluginHost:
    """Build a plugin manager with the kernel's hookspecs.

    With ``load_entry_points`` the ``sciencediscovery`` entry points are loaded
    (subject to the environment switches). ``plugins`` are registered directly,
    which lets tests use a plugin without installing it. Every registered hook
    implementation is checked against a specification before returning.
    """
    from . import hookspecs  # local: hookspecs imports the markers defined above

    env = os.environ if environ is None else environ
    manager = PluginHost()
    manager.add_hookspecs(hookspecs)
    manager.hook.add_hookspecs.call_historic(kwargs={"plugin_manager": manager})
    if load_entry_points:
        _load_entry_points(
            manager, only=_names(env.get(LOAD_VARIABLE)), disabled=_names(env.get(DISABLE_VARIABLE)) or set()
        )
    for plugin in plugins:
        try:
            manager.register(plugin)
        except ValueError as error:
            raise PluginError(f"plugin {plugin!r} could not be registered: {error}") from error
    try:
        manager.check_pending()
    except pluggy.PluginValidationError as error:
        raise PluginError(f"plugin {error.plugin!r} implements an unknown hook: {error}") from error
    return manager


def _load_entry_points(manager: PluginHost, *, only: set[str] | None, disabled: set[str]) -> None:
    for entry_point in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
        if entry_point.name in disabled or (only is not None and entry_point.name not in only):
            continue
        if manager.get_plugin(entry_point.name) is not None:
            continue
        distribution = entry_point.dist.name if entry_point.dist else "unknown distribution"
        try:
            plugin = entry_point.load()
        except Exception as error:
            raise PluginError(
                f"entry point {entry_point.name!r} ({entry_point.value}) from {distribution} failed to load: "
                f"{type(error).__name__}: {error}"
            ) from error
        try:
            manager.register(plugin, name=entry_point.name)
        except (ValueError, pluggy.PluginValidationError) as error:
            raise PluginError(f"entry point {entry_point.name!r} from {distribution} is invalid: {error}") from error
        if entry_point.dist is not None:
            manager.distributions[entry_point.name] = (entry_point.dist.name, entry_point.dist.version)


def list_plugins(manager: PluginHost) -> list[PluginInfo]:
    """Describe every plugin registered with ``manager``."""
    infos = []
    for name, plugin in manager.list_name_plugin():
        if plugin is None:
            continue
        hooks = tuple(sorted(caller.name for caller in manager.get_hookcallers(plugin) or ()))
        distribution, version = manager.distributions.get(name, (None, None))
        infos.append(PluginInfo(name=name, distribution=distribution, version=version, hooks=hooks))
    return sorted(infos, key=lambda info: info.name)
