"""The Memory Graph vocabulary and the client interface every backend implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs


@attrs.frozen
class Source:
    """Where an observation came from: the run, context, tool call and tool, or the event kind."""

    run_id: str | None = None
    context_id: str | None = None
    call_id: str | None = None
    tool: str | None = None
    event: str | None = None


NO_SOURCE = Source()


@attrs.frozen
class Entity:
    """A named thing memory knows about (a gene, a dataset, a method, a conversation)."""

    name: str
    kind: str
    created_at: str
    updated_at: str


@attrs.frozen
class Relation:
    """A typed edge between two entities."""

    source: str
    relation: str
    target: str
    provenance: Source
    created_at: str


@attrs.frozen
class Observation:
    """A fact recorded about an entity, with a provenance reference."""

    observation_id: str
    entity: str
    text: str
    provenance: Source
    created_at: str


@attrs.frozen
class SearchHit:
    """An observation found by :meth:`MemoryClient.search`, best first."""

    observation: Observation
    score: float


@runtime_checkable
class MemoryClient(Protocol):
    """A Memory Graph backend. The embedded default is :class:`~sciencediscovery.memory.SQLiteMemoryGraph`.

    Methods are synchronous and quick (they run inside event sinks, which must
    not block); a remote backend should buffer writes.
    """

    def upsert_entity(self, name: str, kind: str = "") -> Entity: ...

    def add_relation(self, source: str, relation: str, target: str, provenance: Source = NO_SOURCE) -> Relation: ...

    def add_observation(
        self, entity: str, text: str, provenance: Source = NO_SOURCE, kind: str = ""
    ) -> Observation: ...

    def search(self, query: str, *, limit: int = 10) -> list[SearchHit]: ...

    def recent(self, *, context_id: str | None = None, limit: int = 20) -> list[Observation]: ...

    def relations(self, entity: str) -> list[Relation]: ...
