"""Memory graph, observation sink, memory context contributor and operational logging.

The composition root adds :func:`event_sink` to its ``FanOutSink`` (run
outcomes and final answers become observations) and may add
:class:`StructlogEventSink` for operational logs; tools, the tool observer,
the ``memory.context`` contributor and the ``memory`` channel register
through the plugin hooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .channels import MemoryChannel
from .contributor import CONTRIBUTOR_ID, FACTORY_ID, memory_context_factory
from .errors import InvalidMemoryInputError, MemoryGraphError
from .graph import NO_SOURCE, Entity, MemoryClient, Observation, Relation, SearchHit, Source
from .oplog import StructlogEventSink, configure_logging, get_logger
from .settings import memory_client
from .sink import MEMORY_KEY, ObservationSink, conversation_entity
from .snapshot import render_snapshot
from .sqlite_graph import SQLiteMemoryGraph, fts_query, open_graph
from .tools import memory_tools


def event_sink(settings: Mapping[str, Any]) -> ObservationSink:
    """The observation sink for run events, writing to the settings' memory client."""
    return ObservationSink(memory_client(settings))


__all__ = [
    "CONTRIBUTOR_ID",
    "FACTORY_ID",
    "MEMORY_KEY",
    "NO_SOURCE",
    "Entity",
    "InvalidMemoryInputError",
    "MemoryChannel",
    "MemoryClient",
    "MemoryGraphError",
    "Observation",
    "ObservationSink",
    "Relation",
    "SQLiteMemoryGraph",
    "SearchHit",
    "Source",
    "StructlogEventSink",
    "configure_logging",
    "conversation_entity",
    "event_sink",
    "fts_query",
    "get_logger",
    "memory_client",
    "memory_context_factory",
    "memory_tools",
    "open_graph",
    "render_snapshot",
]
