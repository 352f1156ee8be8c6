"""Rich outputs as files announced to the artifact manager through result metadata."""

from __future__ import annotations

import base64
import json
import mimetypes
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

ARTIFACTS_KEY = "artifacts"
"""Result metadata key: the list of artifacts an execution produced."""

_EXTRA_TYPES = {".csv": "text/csv", ".parquet": "application/vnd.apache.parquet", ".tsv": "text/tab-separated-values"}
# Rich display types written to files, in preference order; the first present one of each group wins.
_RICH_TYPES = (
    ("image/png", ".png"),
    ("image/svg+xml", ".svg"),
    ("image/jpeg", ".jpg"),
    ("text/html", ".html"),
    ("application/vnd.dataresource+json", ".json"),
    ("text/csv", ".csv"),
)


@attrs.frozen
class Artifact:
    """A file produced by an execution, with the environment and call that produced it."""

    path: Path
    name: str
    media_type: str
    environment_revision: str
    produced_by: str

    def to_metadata(self) -> dict[str, str]:
        return {
            "path": str(self.path),
            "name": self.name,
            "media_type": self.media_type,
            "environment_revision": self.environment_revision,
            "produced_by": self.produced_by,
        }


def media_type(path: Path) -> str:
    """The media type of a file by its suffix (``application/octet-stream`` when unknown)."""
    suffix = path.suffix.lower()
    return _EXTRA_TYPES.get(suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def collect(
    directory: Path, *, environment_revision: str, produced_by: str, exclude: Iterable[Path] = ()
) -> tuple[Artifact, ...]:
    """Every regular file under ``directory`` (symlinks are never followed), minus ``exclude``."""
    skipped = set(exclude)
    found = []
    for path in sorted(directory.rglob("*")):
        if path in skipped or path.is_symlink() or not path.is_file():
            continue
        name = str(path.relative_to(directory))
        found.append(Artifact(path, name, media_type(path), environment_revision, produced_by))
    return tuple(found)


def write_rich_output(directory: Path, stem: str, bundle: Mapping[str, Any]) -> list[Path]:
    """Write the rich parts of a Jupyter mimebundle to files named ``<stem><suffix>``."""
    written = []
    for media, suffix in _RICH_TYPES:
        if media not in bundle:
            continue
        data = bundle[media]
        path = directory / f"{stem}{suffix}"
        if media in {"image/png", "image/jpeg"}:
            path.write_bytes(base64.b64decode(data))
        elif isinstance(data, str):
            path.write_text(data)
        else:
            path.write_text(json.dumps(data))
        written.append(path)
    return written
