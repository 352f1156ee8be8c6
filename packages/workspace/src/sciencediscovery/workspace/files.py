"""The file operations behind the workspace tools, on already resolved paths. All output is bounded.

Reads open the resolved path with ``O_NOFOLLOW`` and ``O_NONBLOCK`` and accept
only regular files, so a symlink swapped in after resolution or a FIFO cannot
be read. Listing and search never follow symlinks. Writes go to a temporary
file in the target directory and are renamed into place.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

import attrs
import regex

from .errors import FileAccessError
from .paths import ResolvedPath

BINARY_PROBE = 8192
MAX_LINE_CHARS = 2000

Visible = Callable[[str], bool]
"""Whether an entry found below the target (given by its display path) may be shown; ``None`` shows all."""


@attrs.frozen
class Listing:
    entries: tuple[str, ...]
    truncated: bool


@attrs.frozen
class LineRange:
    text: str
    start_line: int
    end_line: int
    truncated: bool


@attrs.frozen
class SearchResult:
    matches: tuple[str, ...]
    truncated: bool
    files_scanned: int
    timed_out: bool = False


SEARCH_SECONDS = 2.0
"""Budget for evaluating one search's pattern. The `regex` engine enforces it and releases the GIL while
matching, so a catastrophic pattern can neither outlive the tool nor stall the event loop."""


def _entry(path: Path, relative: str) -> str:
    try:
        info = path.lstat()
    except OSError:
        return f"{relative}  (vanished or unreadable)"
    if stat.S_ISLNK(info.st_mode):
        return f"{relative}@"
    if stat.S_ISDIR(info.st_mode):
        return f"{relative}/"
    return f"{relative}  {info.st_size} bytes"


def list_entries(target: ResolvedPath, *, recursive: bool, max_entries: int, visible: Visible | None = None) -> Listing:
    """Entries under a directory (``name/`` for directories, ``name@`` for symlinks, which are not followed).

    Entries ``visible`` refuses are left out (and not counted against ``max_entries``).
    """
    if not target.host.is_dir():
        raise FileAccessError(target.display, "is not a directory")
    entries: list[str] = []
    for path in _walk(target, target.host, recursive=recursive):
        display = target.child(path).display
        if visible is not None and not visible(display):
            continue
        if len(entries) == max_entries:
            return Listing(tuple(entries), True)
        entries.append(_entry(path, display))
    return Listing(tuple(entries), False)


def _walk(target: ResolvedPath, top: Path, *, recursive: bool) -> Iterator[Path]:
    """Children of ``top`` in name order, depth first; unreadable subdirectories are skipped."""
    try:
        children = sorted(top.iterdir(), key=lambda p: p.name)
    except OSError as error:
        if top == target.host:
            raise FileAccessError(target.display, f"cannot be listed: {error.strerror}") from None
        return
    for child in children:
        yield child
        if recursive and child.is_dir() and not child.is_symlink():
            yield from _walk(target, child, recursive=True)


def _lines(stream: BinaryIO, limit: int) -> Iterator[bytes]:
    """Each line's first ``limit`` bytes; the rest of an over-long line is read and dropped."""
    while chunk := stream.readline(limit):
        if len(chunk) == limit and not chunk.endswith(b"\n"):
            while (rest := stream.readline(limit)) and not rest.endswith(b"\n"):
                pass
        yield chunk


@contextlib.contextmanager
def _open_regular(target: ResolvedPath) -> Iterator[int]:
    try:
        fd = os.open(target.host, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise FileAccessError(target.display, "does not exist") from None
    except OSError as error:
        raise FileAccessError(target.display, f"cannot be opened: {error.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileAccessError(target.display, "is not a regular file")
        os.set_blocking(fd, True)
        yield fd
    finally:
        os.close(fd)


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head[:BINARY_PROBE]


def read_lines(
    target: ResolvedPath, *, start_line: int, end_line: int | None, max_lines: int, max_bytes: int
) -> LineRange:
    """Lines ``start_line..end_line`` (1-based, inclusive), at most ``max_lines`` lines and ``max_bytes`` bytes.

    ``truncated`` says the bounds cut the answer short of ``end_line`` (or of the end of the file).
    """
    stop = start_line + max_lines - 1 if end_line is None else min(end_line, start_line + max_lines - 1)
    lines: list[str] = []
    size = 0
    seen = 0
    truncated = False
    with _open_regular(target) as fd, os.fdopen(os.dup(fd), "rb") as stream:
        if _is_binary(stream.peek(BINARY_PROBE)):
            raise FileAccessError(target.display, "is a binary file")
        for raw in _lines(stream, max_bytes + 1):
            seen += 1
            if seen < start_line:
                continue
            if seen > stop:
                truncated = end_line is None or end_line > stop
                break
            if size + len(raw) > max_bytes:
                if not lines:  # one over-long line: return its head
                    lines.append(raw[:max_bytes].decode("utf-8", errors="replace"))
                truncated = True
                break
            size += len(raw)
            lines.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
    if not lines and start_line > max(seen, 1):
        raise FileAccessError(target.display, f"has {seen} lines; start_line {start_line} is past the end")
    return LineRange("\n".join(lines), start_line, start_line + len(lines) - 1, truncated)


def search(
    target: ResolvedPath,
    *,
    pattern: regex.Pattern[str],
    max_results: int,
    max_files: int,
    max_file_bytes: int,
    visible: Visible | None = None,
) -> SearchResult:
    """Matching lines as ``path:line: text`` under a file or directory; symlinks are skipped.

    Files ``visible`` refuses are not opened, so none of their lines can match (nor count as scanned).
    """
    if target.host.is_dir():
        walk = _walk(target, target.host, recursive=True)
        files: Iterator[Path] = (p for p in walk if p.is_file() and not p.is_symlink())
    else:
        files = iter([target.host])
    matches: list[str] = []
    scanned = 0
    deadline = time.monotonic() + SEARCH_SECONDS
    for path in files:
        found = target.child(path)
        if visible is not None and not visible(found.display):
            continue
        if scanned == max_files:
            return SearchResult(tuple(matches), True, scanned)
        scanned += 1
        for line_number, line in _text_lines(found, max_file_bytes):
            try:
                hit = pattern.search(line, timeout=max(deadline - time.monotonic(), 0.001), concurrent=True)
            except TimeoutError:
                return SearchResult(tuple(matches), True, scanned, timed_out=True)
            if hit:
                if len(matches) == max_results:
                    return SearchResult(tuple(matches), True, scanned)
                matches.append(f"{found.display}:{line_number}: {line[:MAX_LINE_CHARS]}")
    return SearchResult(tuple(matches), False, scanned)


def _text_lines(target: ResolvedPath, max_file_bytes: int) -> Iterator[tuple[int, str]]:
    try:
        with _open_regular(target) as fd:
            data = os.read(fd, max_file_bytes + 1)
    except FileAccessError:
        return
    if len(data) > max_file_bytes or _is_binary(data):
        return
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        yield number, line[: MAX_LINE_CHARS * 5]


def write_text(target: ResolvedPath, content: str, *, append: bool) -> int:
    """Write (or append) ``content`` as UTF-8; missing parent directories inside the mount are created."""
    if target.relative == "" or target.host.is_dir():
        raise FileAccessError(target.display, "is a directory")
    data = content.encode("utf-8")
    try:
        target.host.parent.mkdir(parents=True, exist_ok=True)
        if append:
            fd = os.open(target.host, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as stream:
                stream.write(data)
            return len(data)
        handle, temporary = tempfile.mkstemp(dir=target.host.parent, prefix=".sd-write-")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.chmod(temporary, 0o644)
            os.replace(temporary, target.host)
        except OSError:
            os.unlink(temporary)
            raise
    except OSError as error:
        raise FileAccessError(target.display, f"cannot be written: {error.strerror}") from None
    return len(data)
