"""Entry-point plugin of sciencediscovery-provenance: its tools, tool observer and reviews channel."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.context import StateChannel
from sciencediscovery.runtime_core import RunEventSink, hookimpl
from sciencediscovery.tools.definitions import ToolDefinition, ToolObserver

from .channels import ReviewsChannel
from .recorder import ProvenanceRecorder
from .settings import review_enabled, review_runner, store_for
from .tools import provenance_tools


@hookimpl
def register_tools(register: Callable[[ToolDefinition], None], settings: Mapping[str, Any]) -> None:
    """``record_claim``, ``list_claims`` and ``review_checkpoint``."""
    tools = provenance_tools(
        store_for(settings), review_enabled=review_enabled(settings), runner=review_runner(settings)
    )
    for tool in tools:
        register(tool)


@hookimpl
def register_tool_observers(register: Callable[[ToolObserver], None], settings: Mapping[str, Any]) -> None:
    """The provenance recorder, which records every invocation and the files it produced."""
    register(ProvenanceRecorder(store_for(settings)))


@hookimpl
def register_state_channels(register: Callable[[StateChannel], None], settings: Mapping[str, Any]) -> None:
    """The ``reviews`` channel."""
    register(ReviewsChannel())


@hookimpl
def register_event_sinks(register: Callable[[RunEventSink], None], settings: Mapping[str, Any]) -> None:
    """The provenance recorder as a run-event sink: runs, model-turn manifests and committed tool results."""
    register(ProvenanceRecorder(store_for(settings)))
