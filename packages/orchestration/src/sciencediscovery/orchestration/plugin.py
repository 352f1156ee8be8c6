"""Entry-point plugin of sciencediscovery-orchestration: its hooks, tools, contributors and channels."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.context import ContextContributorFactory, StateChannel
from sciencediscovery.runtime_core import hookimpl
from sciencediscovery.tools.definitions import ToolDefinition

from . import hookspecs
from . import settings as keys
from .channels import ActiveSkillsChannel, DelegationsChannel, PlanChannel
from .contributors import builtin_factories
from .delegation import DEFAULT_BRIEF_CHARS, TaskTool
from .state_tools import read_skill_tool, update_plan_tool
from .subagents import child_run_factory


@hookimpl
def add_hookspecs(plugin_manager: Any) -> None:
    plugin_manager.add_hookspecs(hookspecs)


@hookimpl
def register_tools(register: Callable[[ToolDefinition], None], settings: Mapping[str, Any]) -> None:
    """``update_plan`` always; ``read_skill`` when Skills are configured; ``task`` when a child-run factory is."""
    register(update_plan_tool())
    library = keys.skill_library(settings)
    if library is not None and library.skills:
        register(read_skill_tool(library))
    factory = child_run_factory(settings)
    if factory is not None:
        brief = keys.brief_chars(settings) or DEFAULT_BRIEF_CHARS
        register(TaskTool(factory, keys.profiles(settings), keys.specialists(settings), brief).definition())


@hookimpl
def register_context_contributors(
    register: Callable[[ContextContributorFactory], None], settings: Mapping[str, Any]
) -> None:
    for factory in builtin_factories(settings):
        register(factory)


@hookimpl
def register_state_channels(register: Callable[[StateChannel], None], settings: Mapping[str, Any]) -> None:
    register(PlanChannel())
    register(ActiveSkillsChannel())
    register(DelegationsChannel())
