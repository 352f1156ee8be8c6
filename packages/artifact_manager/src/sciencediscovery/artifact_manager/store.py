"""The content-addressed artifact store: blobs named by SHA-256 and a SQLite registry (WAL, 0600).

The same bytes are stored once; every registration of them adds a link
(run, call, tool, name) so provenance can tell who produced or registered it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path

import attrs

from ._sqlite import connect
from .classify import SNIFF_BYTES, ArtifactKind, classify, media_type_of
from .errors import ArtifactPathError, UnknownArtifactError

SCHEMA = """
CREATE TABLE IF NOT EXISTS artifacts (
    artifact_id TEXT PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, name TEXT NOT NULL, kind TEXT NOT NULL,
    media_type TEXT NOT NULL, size INTEGER NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS artifact_links (
    artifact_id TEXT NOT NULL REFERENCES artifacts (artifact_id), name TEXT NOT NULL, run_id TEXT, context_id TEXT,
    call_id TEXT, tool TEXT, environment_revision TEXT, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS artifact_links_context ON artifact_links (context_id, created_at);
CREATE TABLE IF NOT EXISTS downloads (
    download_id TEXT PRIMARY KEY, url TEXT NOT NULL, name TEXT NOT NULL, state TEXT NOT NULL,
    expected_sha256 TEXT, max_bytes INTEGER NOT NULL, bytes_received INTEGER NOT NULL DEFAULT 0, sha256 TEXT,
    artifact_id TEXT, error TEXT, run_id TEXT, context_id TEXT, call_id TEXT, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS download_transitions (
    download_id TEXT NOT NULL REFERENCES downloads (download_id), state TEXT NOT NULL, detail TEXT, at TEXT NOT NULL);
"""

_CHUNK = 1 << 20


def now() -> str:
    return datetime.now(UTC).isoformat()


@attrs.frozen
class Provenance:
    """Who produced or registered an artifact: the run, context, tool call and tool (all optional)."""

    run_id: str | None = None
    context_id: str | None = None
    call_id: str | None = None
    tool: str | None = None
    environment_revision: str | None = None


NO_PROVENANCE = Provenance()


@attrs.frozen
class Artifact:
    """A stored artifact: its content hash, classification, size and media type."""

    artifact_id: str
    sha256: str
    name: str
    kind: ArtifactKind = attrs.field(converter=ArtifactKind)
    media_type: str
    size: int
    created_at: str


@attrs.frozen
class ArtifactLink:
    """One registration of an artifact, with its provenance link."""

    artifact_id: str
    name: str
    provenance: Provenance
    created_at: str


@attrs.frozen
class Registration:
    """The result of registering a file: the artifact and whether its bytes were new to the store."""

    artifact: Artifact
    created: bool


def artifact_id_for(sha256: str) -> str:
    """Artifact ids derive from the content hash, so equal bytes always share one id."""
    return f"art-{sha256[:16]}"


class ArtifactStore:
    """Artifacts under ``<data_dir>/artifacts/`` (blobs) and ``<data_dir>/artifacts.sqlite3`` (registry)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.blob_dir = self.data_dir / "artifacts" / "blobs"
        self.partial_dir = self.data_dir / "artifacts" / "partial"
        for directory in (self.blob_dir, self.partial_dir):
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.db = connect(self.data_dir / "artifacts.sqlite3", SCHEMA)
        self.lock = threading.Lock()

    def close(self) -> None:
        self.db.close()

    def blob_path(self, sha256: str) -> Path:
        return self.blob_dir / sha256[:2] / sha256

    # -- registration -------------------------------------------------------
    def register_file(
        self,
        path: Path,
        *,
        name: str | None = None,
        media_type: str | None = None,
        provenance: Provenance = NO_PROVENANCE,
    ) -> Registration:
        """Copy ``path`` into the store (once per distinct content) and link it to ``provenance``."""
        source = Path(path)
        if not source.is_file():
            raise ArtifactPathError(f"path {str(source)!r} is not a readable file")
        name = name or source.name
        digest = hashlib.sha256()
        size = 0
        with source.open("rb") as handle, tempfile.NamedTemporaryFile(dir=self.blob_dir, delete=False) as copy:
            head = handle.read(SNIFF_BYTES)
            block = head
            while block:
                digest.update(block)
                copy.write(block)
                size += len(block)
                block = handle.read(_CHUNK)
        sha256 = digest.hexdigest()
        return self.adopt(Path(copy.name), sha256, size, head, name, media_type, provenance)

    def adopt(
        self,
        temporary: Path,
        sha256: str,
        size: int,
        head: bytes,
        name: str,
        media_type: str | None,
        provenance: Provenance,
    ) -> Registration:
        """Move a fully written temporary file into place (unless the content is stored) and record it."""
        target = self.blob_path(sha256)
        try:
            if target.exists():
                created = False
            else:
                target.parent.mkdir(exist_ok=True, mode=0o700)
                os.chmod(temporary, 0o600)
                os.replace(temporary, target)
                created = True
        finally:
            temporary.unlink(missing_ok=True)
        artifact = Artifact(
            artifact_id=artifact_id_for(sha256),
            sha256=sha256,
            name=name,
            kind=classify(name, head),
            media_type=media_type or media_type_of(name, head),
            size=size,
            created_at=now(),
        )
        with self.lock:
            self.db.execute(
                "INSERT INTO artifacts (artifact_id, sha256, name, kind, media_type, size, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
                (
                    artifact.artifact_id,
                    sha256,
                    name,
                    artifact.kind.value,
                    artifact.media_type,
                    size,
                    artifact.created_at,
                ),
            )
            self.db.execute(
                "INSERT INTO artifact_links (artifact_id, name, run_id, context_id, call_id, tool, "
                "environment_revision, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    artifact.artifact_id,
                    name,
                    provenance.run_id,
                    provenance.context_id,
                    provenance.call_id,
                    provenance.tool,
                    provenance.environment_revision,
                    now(),
                ),
            )
        return Registration(self.get(artifact.artifact_id), created)

    # -- reads --------------------------------------------------------------
    def get(self, artifact_id: str) -> Artifact:
        with self.lock:
            row = self.db.execute("SELECT * FROM artifacts WHERE artifact_id = ?", (artifact_id,)).fetchone()
        if row is None:
            raise UnknownArtifactError(f"no artifact with artifact_id {artifact_id!r}")
        return Artifact(**dict(row))

    def artifacts(self, *, context_id: str | None = None, kind: ArtifactKind | None = None) -> list[Artifact]:
        """Artifacts (linked to ``context_id`` when given), oldest first, optionally of one kind."""
        sql = "SELECT * FROM artifacts a"
        params: list[str] = []
        clauses = []
        if context_id is not None:
            clauses.append(
                "EXISTS (SELECT 1 FROM artifact_links l WHERE l.artifact_id = a.artifact_id AND l.context_id = ?)"
            )
            params.append(context_id)
        if kind is not None:
            clauses.append("a.kind = ?")
            params.append(kind.value)
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        with self.lock:
            rows = self.db.execute(sql + " ORDER BY a.created_at, a.rowid", params).fetchall()
        return [Artifact(**dict(row)) for row in rows]

    def links(self, artifact_id: str) -> list[ArtifactLink]:
        with self.lock:
            rows = self.db.execute(
                "SELECT * FROM artifact_links WHERE artifact_id = ? ORDER BY rowid", (artifact_id,)
            ).fetchall()
        return [
            ArtifactLink(
                artifact_id=row["artifact_id"],
                name=row["name"],
                created_at=row["created_at"],
                provenance=Provenance(
                    row["run_id"], row["context_id"], row["call_id"], row["tool"], row["environment_revision"]
                ),
            )
            for row in rows
        ]

    def count_blobs(self) -> int:
        """How many distinct contents are stored."""
        return sum(1 for path in self.blob_dir.glob("*/*") if path.is_file())


_OPEN: dict[Path, ArtifactStore] = {}
_OPEN_LOCK = threading.Lock()


def open_store(data_dir: Path) -> ArtifactStore:
    """The process-wide store of ``data_dir`` (opened once, shared by the observer and the tools)."""
    key = Path(data_dir).resolve()
    with _OPEN_LOCK:
        store = _OPEN.get(key)
        if store is None:
            store = _OPEN[key] = ArtifactStore(key)
        return store
