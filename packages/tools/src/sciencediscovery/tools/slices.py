"""Bounded slices of a stored output: literal query first, then line ranges, then Unicode character ranges.

Every slice is one contiguous substring ``content[start:end]`` of at most
``max_chars`` characters. Lines are numbered from 1 and ranges are inclusive;
character offsets count Unicode code points from 0 and ``char_end`` is
exclusive. An end beyond the output is clamped; a start beyond it is an error.
"""

from __future__ import annotations

import bisect
import re

import attrs

from .errors import OutputRangeError

QUERY_CONTEXT_LINES = 3


@attrs.frozen
class SliceRequest:
    """Which part of a stored output to read. Give at most one of: query, line range, character range."""

    query: str | None = None
    occurrence: int = 1
    line_start: int | None = None
    line_end: int | None = None
    char_start: int | None = None
    char_end: int | None = None


@attrs.frozen
class OutputSlice:
    """``text == content[start:end]``; line numbers are those of the first and last character shown."""

    text: str
    start: int
    end: int
    first_line: int
    last_line: int
    total_chars: int
    total_lines: int
    mode: str
    truncated: bool = False
    matches: int = 0
    occurrence: int = 0
    ignore_case: bool = False


class _Lines:
    """Line start offsets of a text."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.starts = [0, *(m.end() for m in re.finditer("\n", content))]
        trailing = len(content) > 0 and content.endswith("\n")
        self.total = 0 if not content else len(self.starts) - (1 if trailing else 0)

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def end_of(self, line: int) -> int:
        """Offset just past ``line`` (including its newline)."""
        return self.starts[line] if line < len(self.starts) else len(self.content)


def _mode(request: SliceRequest) -> str:
    given = {
        "query": request.query is not None,
        "lines": request.line_start is not None or request.line_end is not None,
        "chars": request.char_start is not None or request.char_end is not None,
    }
    chosen = [name for name, present in given.items() if present]
    if len(chosen) > 1:
        raise OutputRangeError(
            "request", f"give only one of query, line range or character range, got {' and '.join(chosen)}"
        )
    return chosen[0] if chosen else "head"


def read_slice(content: str, request: SliceRequest, max_chars: int) -> OutputSlice:
    """Select the requested part of ``content``, never more than ``max_chars`` characters."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    lines = _Lines(content)
    mode = _mode(request)
    if mode == "query":
        return _query(lines, request, max_chars)
    if mode == "chars":
        return _chars(lines, request, max_chars)
    first = 1 if request.line_start is None else request.line_start
    return _line_range(lines, first, request.line_end, max_chars, mode)


def _slice(lines: _Lines, start: int, end: int, mode: str, truncated: bool, **extra: object) -> OutputSlice:
    last = lines.line_of(max(start, end - 1)) if lines.total else 0
    return OutputSlice(
        text=lines.content[start:end],
        start=start,
        end=end,
        first_line=lines.line_of(start) if lines.total else 0,
        last_line=last,
        total_chars=len(lines.content),
        total_lines=lines.total,
        mode=mode,
        truncated=truncated,
        **extra,  # type: ignore[arg-type]
    )


def _line_range(lines: _Lines, first: int, last: int | None, max_chars: int, mode: str) -> OutputSlice:
    if first < 1:
        raise OutputRangeError("line_start", f"lines are numbered from 1, got {first}")
    if first > lines.total:
        raise OutputRangeError("line_start", f"line {first} is past the end: the output has {lines.total} lines")
    if last is not None and last < first:
        raise OutputRangeError("line_end", f"must not be before line_start ({first}), got {last}")
    last = lines.total if last is None else min(last, lines.total)
    start = lines.starts[first - 1]
    end = lines.end_of(last)
    if end - start <= max_chars:
        return _slice(lines, start, end, mode, truncated=False)
    fitting = bisect.bisect_right(lines.starts, start + max_chars) - 1
    cut = lines.starts[fitting] if fitting > first - 1 else start + max_chars
    return _slice(lines, start, cut, mode, truncated=True)


def _chars(lines: _Lines, request: SliceRequest, max_chars: int) -> OutputSlice:
    total = len(lines.content)
    start = request.char_start or 0
    if start < 0:
        raise OutputRangeError("char_start", f"offsets start at 0, got {start}")
    if start >= total:
        raise OutputRangeError("char_start", f"offset {start} is past the end: the output has {total} characters")
    end = total if request.char_end is None else request.char_end
    if end <= start:
        raise OutputRangeError("char_end", f"must be greater than char_start ({start}), got {end}")
    end = min(end, total)
    return _slice(lines, start, min(end, start + max_chars), "chars", truncated=end > start + max_chars)


def _query(lines: _Lines, request: SliceRequest, max_chars: int) -> OutputSlice:
    query = request.query or ""
    if not query:
        raise OutputRangeError("query", "must not be empty")
    if request.occurrence < 1:
        raise OutputRangeError("occurrence", f"occurrences are numbered from 1, got {request.occurrence}")
    pattern = re.compile(re.escape(query))
    ignore_case = not pattern.search(lines.content)
    if ignore_case:
        pattern = re.compile(re.escape(query), re.IGNORECASE)
    found = [match.span() for match in pattern.finditer(lines.content)]
    extra = {"matches": len(found), "ignore_case": ignore_case}
    if not found:
        return _slice(lines, 0, 0, "query", truncated=False, occurrence=0, **extra)
    if request.occurrence > len(found):
        raise OutputRangeError(
            "occurrence", f"there are only {len(found)} matches of {query!r}, got {request.occurrence}"
        )
    match_start, match_end = found[request.occurrence - 1]
    match_first, match_last = lines.line_of(match_start), lines.line_of(max(match_start, match_end - 1))
    for context in (QUERY_CONTEXT_LINES, 0):
        first, last = max(1, match_first - context), min(lines.total, match_last + context)
        start, end = lines.starts[first - 1], lines.end_of(last)
        if end - start <= max_chars:
            return _slice(lines, start, end, "query", False, occurrence=request.occurrence, **extra)
    # the matching line is wider than max_chars: a character window around the match
    start = max(0, min(match_start - (max_chars - (match_end - match_start)) // 2, len(lines.content) - max_chars))
    start = min(start, match_start)
    end = min(len(lines.content), start + max_chars)
    return _slice(lines, start, end, "query", True, occurrence=request.occurrence, **extra)
