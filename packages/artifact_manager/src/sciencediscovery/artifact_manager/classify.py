"""Artifact classification from content first, then name: dataset, table, figure, report, code, notebook, log, other."""

from __future__ import annotations

import enum
import json
import mimetypes
import re
from pathlib import PurePath


class ArtifactKind(str, enum.Enum):
    DATASET = "dataset"
    TABLE = "table"
    FIGURE = "figure"
    REPORT = "report"
    CODE = "code"
    NOTEBOOK = "notebook"
    LOG = "log"
    OTHER = "other"


SNIFF_BYTES = 8192
"""How much of the head of a file classification looks at."""

_MAGIC: tuple[tuple[bytes, ArtifactKind, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", ArtifactKind.FIGURE, "image/png"),
    (b"\xff\xd8\xff", ArtifactKind.FIGURE, "image/jpeg"),
    (b"GIF87a", ArtifactKind.FIGURE, "image/gif"),
    (b"GIF89a", ArtifactKind.FIGURE, "image/gif"),
    (b"%PDF-", ArtifactKind.REPORT, "application/pdf"),
    (b"\x89HDF\r\n\x1a\n", ArtifactKind.DATASET, "application/x-hdf5"),
    (b"\x93NUMPY", ArtifactKind.DATASET, "application/x-npy"),
    (b"PAR1", ArtifactKind.DATASET, "application/vnd.apache.parquet"),
    (b"CDF\x01", ArtifactKind.DATASET, "application/x-netcdf"),
    (b"CDF\x02", ArtifactKind.DATASET, "application/x-netcdf"),
)

_EXTENSIONS: dict[ArtifactKind, frozenset[str]] = {
    ArtifactKind.FIGURE: frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".tif", ".tiff", ".webp", ".eps", ".bmp"}),
    ArtifactKind.TABLE: frozenset({".csv", ".tsv", ".xlsx", ".xls", ".ods"}),
    ArtifactKind.DATASET: frozenset(
        {
            ".parquet",
            ".h5",
            ".hdf5",
            ".nc",
            ".npy",
            ".npz",
            ".feather",
            ".arrow",
            ".fasta",
            ".fa",
            ".fastq",
            ".vcf",
            ".bam",
            ".sam",
            ".jsonl",
            ".ndjson",
            ".json",
            ".zarr",
            ".mat",
            ".pkl",
            ".sqlite",
            ".db",
        }
    ),
    ArtifactKind.REPORT: frozenset({".pdf", ".md", ".html", ".htm", ".docx", ".tex", ".rst", ".txt", ".odt"}),
    ArtifactKind.CODE: frozenset(
        {".py", ".r", ".jl", ".sh", ".js", ".ts", ".sql", ".c", ".cpp", ".h", ".rs", ".go", ".java", ".m", ".f90"}
    ),
    ArtifactKind.NOTEBOOK: frozenset({".ipynb", ".rmd", ".qmd"}),
    ArtifactKind.LOG: frozenset({".log", ".out", ".err"}),
}

_LOG_LINE = re.compile(r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}|\[?(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\]?[\s:])")
_CODE_LINE = re.compile(r"^(#!|import \w|from \w[\w.]* import |def \w+\(|class \w+[:(]|library\(|function )")


def _text(head: bytes) -> str | None:
    if b"\x00" in head:
        return None
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as error:  # a multi-byte character cut at the sniff boundary is still text
        return head[: error.start].decode("utf-8") if error.start >= len(head) - 3 else None


def _by_content(head: bytes) -> tuple[ArtifactKind, str] | None:
    for magic, kind, media_type in _MAGIC:
        if head.startswith(magic):
            return kind, media_type
    text = _text(head)
    if text is None:
        return None
    stripped = text.lstrip()
    if stripped.startswith("<svg") or (stripped.startswith("<?xml") and "<svg" in stripped[:500]):
        return ArtifactKind.FIGURE, "image/svg+xml"
    if stripped.startswith("{") and '"cells"' in stripped and '"nbformat"' in text:
        try:
            notebook = json.loads(text)
        except ValueError:
            notebook = None  # truncated head: the markers above are enough
        if notebook is None or isinstance(notebook, dict):
            return ArtifactKind.NOTEBOOK, "application/x-ipynb+json"
    return None


def _by_text_shape(head: bytes) -> ArtifactKind | None:
    text = _text(head)
    if not text:
        return None
    lines = [line for line in text.splitlines()[:20] if line.strip()]
    if len(lines) >= 2:
        sample = lines[:-1] if len(lines) > 2 else lines  # the last line may be cut at the sniff boundary
        for delimiter in (",", "\t"):
            counts = {line.count(delimiter) for line in sample}
            if len(counts) == 1 and counts.pop() >= 1:
                return ArtifactKind.TABLE
        if sum(bool(_LOG_LINE.match(line)) for line in lines) * 2 > len(lines):
            return ArtifactKind.LOG
    if lines and _CODE_LINE.match(lines[0]):
        return ArtifactKind.CODE
    if lines and lines[0].startswith("# "):
        return ArtifactKind.REPORT
    return None


def media_type_of(name: str, head: bytes) -> str:
    """The media type from the content's magic bytes, else the name, else text/plain or octet-stream."""
    sniffed = _by_content(head)
    if sniffed:
        return sniffed[1]
    guessed, _ = mimetypes.guess_type(name)
    if guessed:
        return guessed
    return "text/plain" if _text(head) is not None else "application/octet-stream"


def classify(name: str, head: bytes) -> ArtifactKind:
    """Classify an artifact by ``name`` and the first bytes of its content.

    Unambiguous content (image, PDF, HDF5, NumPy, Parquet, netCDF magic; SVG;
    Jupyter JSON) wins over the name; then the extension decides; then the
    shape of text (delimited rows, log lines, code, a Markdown heading).
    """
    sniffed = _by_content(head)
    if sniffed:
        return sniffed[0]
    suffix = PurePath(name).suffix.lower()
    for kind, extensions in _EXTENSIONS.items():
        if suffix in extensions:
            return kind
    return _by_text_shape(head) or ArtifactKind.OTHER
