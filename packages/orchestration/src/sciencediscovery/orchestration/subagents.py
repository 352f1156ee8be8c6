"""Child runs: what the ``task`` tool and the reviewer ask the composition root to start.

Orchestration never builds model clients or dispatchers itself. The composition
root injects a :class:`ChildRunFactory` (settings key ``child_run_factory``)
that turns a :class:`ChildRunSpec` into a kernel run and returns its result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from sciencediscovery.runtime_core import ConfigurationError, Message, RunResult, TurnContext
from sciencediscovery.tools.definitions import ToolDefinition

from . import settings as keys
from .contract import RunContract
from .profiles import AgentProfile, Scope


@attrs.frozen
class ChildRunSpec:
    """Everything a child run needs: scope and profile, frozen contract, own context id and turn bound.

    ``requested_tools`` narrows the profile's allow-list further (``None``: no
    narrowing). ``parent`` is the turn that started the child, if any.
    """

    scope: Scope
    profile: AgentProfile
    contract: RunContract
    context_id: str
    max_turns: int
    history: tuple[Message, ...]
    requested_tools: tuple[str, ...] | None = None
    specialist: str | None = None
    parent: TurnContext | None = None

    def select_tools(self, tools: Iterable[ToolDefinition]) -> tuple[ToolDefinition, ...]:
        """The child's governed tool subset out of the tools the composition root has."""
        return tuple(
            tool
            for tool in tools
            if self.profile.allows_tool(tool.name)
            and (tool.read_only or not self.profile.read_only)
            and (self.requested_tools is None or tool.name in self.requested_tools)
        )

    def settings(self, base: Mapping[str, Any]) -> dict[str, Any]:
        """``base`` run settings adapted for the child: its RunContract and its scope's profile.

        The parent's tool registry is left out: the composition root sets the child's own.
        """
        child = {key: value for key, value in base.items() if key != keys.TOOL_REGISTRY}
        child[keys.RUN_CONTRACT] = self.contract
        child[keys.PROFILES] = attrs.evolve(keys.profiles(base), **{self.scope.value: self.profile})
        return child


@runtime_checkable
class ChildRunFactory(Protocol):
    """Builds and runs a child AgentRun; supplied by the composition root."""

    async def run_child(self, spec: ChildRunSpec) -> RunResult: ...


def child_run_factory(settings: Mapping[str, Any]) -> ChildRunFactory | None:
    """``settings["child_run_factory"]``, checked against the protocol."""
    factory = settings.get(keys.CHILD_RUN_FACTORY)
    if factory is not None and not isinstance(factory, ChildRunFactory):
        raise ConfigurationError(
            keys.CHILD_RUN_FACTORY, f"must implement ChildRunFactory, got {type(factory).__name__}"
        )
    return factory
