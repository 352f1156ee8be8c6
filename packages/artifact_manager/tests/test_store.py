"""The content-addressed store: dedup, links, permissions."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sciencediscovery.artifact_manager import (
    ArtifactKind,
    ArtifactPathError,
    ArtifactStore,
    Provenance,
    UnknownArtifactError,
    artifact_id_for,
)


def test_same_bytes_are_stored_once_and_linked_twice(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "data")
    (tmp_path / "a.csv").write_bytes(b"x,y\n1,2\n")
    (tmp_path / "copy.csv").write_bytes(b"x,y\n1,2\n")
    first = store.register_file(tmp_path / "a.csv", provenance=Provenance("run-1", "ctx", "c1", "measure", "env-3"))
    second = store.register_file(tmp_path / "copy.csv", provenance=Provenance("run-2", "ctx", "c9", "register"))
    assert first.created and not second.created
    assert first.artifact == second.artifact
    assert first.artifact.artifact_id == artifact_id_for(hashlib.sha256(b"x,y\n1,2\n").hexdigest())
    assert (first.artifact.kind, first.artifact.size, first.artifact.media_type) == (ArtifactKind.TABLE, 8, "text/csv")
    assert store.count_blobs() == 1
    links = store.links(first.artifact.artifact_id)
    assert [(link.name, link.provenance.call_id) for link in links] == [("a.csv", "c1"), ("copy.csv", "c9")]
    assert links[0].provenance.environment_revision == "env-3"


def test_blob_and_registry_are_owner_only(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "data")
    (tmp_path / "f.txt").write_text("hello")
    artifact = store.register_file(tmp_path / "f.txt").artifact
    assert stat.S_IMODE(store.blob_path(artifact.sha256).stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "data" / "artifacts.sqlite3").stat().st_mode) == 0o600
    assert store.blob_path(artifact.sha256).read_bytes() == b"hello"


def test_registering_a_missing_path_names_it(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "data")
    with pytest.raises(ArtifactPathError, match="nothing-here.csv"):
        store.register_file(tmp_path / "nothing-here.csv")
    with pytest.raises(UnknownArtifactError, match="art-0000"):
        store.get("art-0000")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.binary(max_size=64), min_size=1, max_size=8))
def test_one_blob_per_distinct_content(tmp_path: Path, contents: list[bytes]) -> None:
    root = tmp_path / hashlib.sha256(repr(contents).encode()).hexdigest()[:16]
    store = ArtifactStore(root / "data")
    ids = []
    for index, content in enumerate(contents):
        path = root / f"f{index}"
        path.write_bytes(content)
        registration = store.register_file(path)
        assert store.blob_path(registration.artifact.sha256).read_bytes() == content
        ids.append(registration.artifact.artifact_id)
    assert store.count_blobs() == len(set(contents)) == len(set(ids)) == len(store.artifacts())
    store.close()
