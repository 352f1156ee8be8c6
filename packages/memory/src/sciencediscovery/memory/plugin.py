"""Entry-point plugin of sciencediscovery-memory: its tools, observation sink, contributor and memory channel."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.context import ContextContributorFactory, StateChannel
from sciencediscovery.runtime_core import RunEventSink, hookimpl
from sciencediscovery.tools.definitions import ToolDefinition, ToolObserver

from .channels import MemoryChannel
from .contributor import memory_context_factory
from .settings import memory_client, snapshot_chars
from .sink import ObservationSink
from .tools import memory_tools

_OWN_TOOLS = frozenset({"memory_write", "memory_search"})


@hookimpl
def register_tools(register: Callable[[ToolDefinition], None], settings: Mapping[str, Any]) -> None:
    """``memory_write`` and ``memory_search``."""
    for tool in memory_tools(memory_client(settings)):
        register(tool)


@hookimpl
def register_tool_observers(register: Callable[[ToolObserver], None], settings: Mapping[str, Any]) -> None:
    """The observation sink, fed by tool results (``metadata["memory"]`` and ``metadata["artifacts"]``)."""
    register(ObservationSink(memory_client(settings), skip_tools=_OWN_TOOLS))


@hookimpl
def register_context_contributors(
    register: Callable[[ContextContributorFactory], None], settings: Mapping[str, Any]
) -> None:
    """``memory.context``: a bounded snapshot as a ``trusted_data`` attachment."""
    register(memory_context_factory(memory_client(settings), snapshot_chars(settings)))


@hookimpl
def register_state_channels(register: Callable[[StateChannel], None], settings: Mapping[str, Any]) -> None:
    """The ``memory`` channel."""
    register(MemoryChannel())


@hookimpl
def register_event_sinks(register: Callable[[RunEventSink], None], settings: Mapping[str, Any]) -> None:
    """The observation sink as a run-event sink: final answers and run outcomes become observations."""
    register(ObservationSink(memory_client(settings), skip_tools=_OWN_TOOLS))
