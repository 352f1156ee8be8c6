"""The SQLite Memory Graph: writes, full-text search, relations, files, and a replacement backend."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import stat
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sciencediscovery.memory import (
    NO_SOURCE,
    InvalidMemoryInputError,
    MemoryClient,
    Observation,
    SearchHit,
    Source,
    SQLiteMemoryGraph,
    fts_query,
    memory_client,
    render_snapshot,
)
from sciencediscovery.memory.sqlite_graph import FILENAME
from sciencediscovery.runtime_core import ConfigurationError, ToolCall
from sciencediscovery.runtime_core.testing import reply


def test_search_finds_written_observations_best_first(tmp_path: Path) -> None:
    graph = SQLiteMemoryGraph(tmp_path / FILENAME)
    graph.add_observation("TP53", "R175H confers cisplatin resistance", Source(run_id="run-1"), kind="gene")
    graph.add_observation("BRCA1", "loss sensitizes cells to PARP inhibitors")
    graph.add_observation("TP53", "resistance to cisplatin is reversed by APR-246 in cisplatin-treated lines")
    hits = graph.search("cisplatin resistance")
    assert [hit.observation.entity for hit in hits] == ["TP53", "TP53"]
    assert hits[0].score >= hits[1].score
    assert graph.search("PARP")[0].observation.entity == "BRCA1"
    assert graph.search("tp53")[0].observation.entity == "TP53"  # entity names are searchable, case-insensitively


def test_queries_are_data_not_fts_syntax(tmp_path: Path) -> None:
    graph = SQLiteMemoryGraph(tmp_path / FILENAME)
    graph.add_observation("x", "alpha beta")
    assert fts_query('alpha" OR NEAR(beta') == '"alpha" OR "OR" OR "NEAR" OR "beta"'
    assert [h.observation.text for h in graph.search('alpha" OR NEAR(beta')] == ["alpha beta"]
    with pytest.raises(InvalidMemoryInputError, match="query"):
        graph.search("!!!")


def test_repeated_observation_is_kept_once_and_persists(tmp_path: Path) -> None:
    path = tmp_path / FILENAME
    graph = SQLiteMemoryGraph(path)
    first = graph.add_observation("TP53", "a fact")
    assert graph.add_observation("TP53", "a fact") == first
    graph.add_relation("TP53", "interacts_with", "MDM2", Source(call_id="c1"))
    graph.close()
    reopened = SQLiteMemoryGraph(path)
    assert reopened.recent() == [first]
    assert [(r.relation, r.target, r.provenance.call_id) for r in reopened.relations("MDM2")] == [
        ("interacts_with", "MDM2", "c1")
    ]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda g: g.add_observation(" ", "x"), "entity"),
        (lambda g: g.add_observation("e", ""), "observation"),
        (lambda g: g.add_observation("e", "x" * 5000), "observation"),
        (lambda g: g.add_relation("a", "", "b"), "relation"),
    ],
)
def test_bad_input_names_the_field(tmp_path: Path, call, field) -> None:
    with pytest.raises(InvalidMemoryInputError, match=field):
        call(SQLiteMemoryGraph(tmp_path / FILENAME))


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=10)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(words, st.lists(words, min_size=1, max_size=6)), min_size=1, max_size=10))
def test_every_written_observation_is_found_by_each_of_its_words(tmp_path: Path, notes) -> None:
    graph = SQLiteMemoryGraph(tmp_path / f"{abs(hash(repr(notes)))}.sqlite3")
    written = [graph.add_observation(entity, " ".join(text)) for entity, text in notes]
    for observation in written:
        for word in observation.text.split():
            found = {hit.observation.observation_id for hit in graph.search(word, limit=100)}
            assert observation.observation_id in found
    graph.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(words, st.text(min_size=1, max_size=300).filter(str.strip), st.sampled_from(["c1", "c2"])),
        max_size=25,
    ),
    st.integers(min_value=1, max_value=3000),
)
def test_snapshot_never_exceeds_its_bound(tmp_path: Path, notes, bound) -> None:
    graph = SQLiteMemoryGraph(tmp_path / f"{abs(hash(repr(notes)))}.sqlite3")
    for entity, text, context in notes:
        graph.add_observation(entity, text, Source(context_id=context))
    snapshot = render_snapshot(graph, "c1", bound)
    assert len(snapshot) <= bound
    if not notes:
        assert snapshot == ""
    graph.close()


def test_snapshot_puts_the_current_context_first(tmp_path: Path) -> None:
    graph = SQLiteMemoryGraph(tmp_path / FILENAME)
    graph.add_observation("mine", "from this conversation", Source(context_id="c1"))
    for index in range(5):
        graph.add_observation("other", f"later note {index}", Source(context_id="c2"))
    lines = render_snapshot(graph, "c1", 2000).splitlines()
    assert lines[1].startswith("- [mine] from this conversation")
    assert len(lines) == 7


@attrs.define
class DictMemory:
    """Another backend: keeps observations in a list (what a remote graph client would implement)."""

    observations: list[Observation] = attrs.field(factory=list)

    def upsert_entity(self, name: str, kind: str = "") -> None:
        return None

    def add_relation(self, source: str, relation: str, target: str, provenance: Source = NO_SOURCE) -> None:
        return None

    def add_observation(self, entity: str, text: str, provenance: Source = NO_SOURCE, kind: str = "") -> Observation:
        observation = Observation(f"o{len(self.observations)}", entity, text, provenance, "2026-01-01T00:00:00")
        self.observations.append(observation)
        return observation

    def search(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        return [SearchHit(o, 1.0) for o in self.observations if query.lower() in o.text.lower()][:limit]

    def recent(self, *, context_id: str | None = None, limit: int = 20) -> list[Observation]:
        return [o for o in reversed(self.observations) if context_id in (None, o.provenance.context_id)][:limit]

    def relations(self, entity: str) -> list:
        return []


def test_another_backend_replaces_sqlite_through_the_client_interface(settings, run_kernel) -> None:
    backend = DictMemory()
    assert isinstance(backend, MemoryClient)
    settings["memory_client"] = backend
    write = ToolCall("w1", "memory_write", {"entity": "MDM2", "observation": "binds TP53"})
    search = ToolCall("s1", "memory_search", {"query": "binds"})
    run = asyncio.run(run_kernel(settings, [reply("", write), reply("", search), reply("done")]))
    assert json.loads(run.result_of("s1").content)["hits"][0]["entity"] == "MDM2"
    assert backend.observations[0].entity == "MDM2"
    assert not (settings["data_dir"] / FILENAME).exists()


def test_settings_errors_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="memory_client"):
        memory_client({"memory_client": object()})
    with pytest.raises(ConfigurationError, match="data_dir"):
        memory_client({})
    from sciencediscovery.memory.settings import snapshot_chars

    with pytest.raises(ConfigurationError, match="memory_snapshot_chars"):
        snapshot_chars({"memory_snapshot_chars": 0})


def test_a_deleted_data_directory_reopens_as_an_empty_graph(tmp_path) -> None:
    import shutil

    from sciencediscovery.memory import open_graph

    folder = tmp_path / "data"
    folder.mkdir()
    open_graph(folder).add_observation("TP53", "old run's note")
    shutil.rmtree(folder)
    folder.mkdir()
    assert open_graph(folder).search("note") == []
