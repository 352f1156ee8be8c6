"""Stored outputs and bounded slices: refs, files on disk, query/line/character reads, errors."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.runtime_core import TRUST_KEY, CollectingSink, ExternalWaits, ToolCall, TurnContext
from sciencediscovery.tools import (
    DiskToolOutputStore,
    MemoryToolOutputStore,
    OutputRangeError,
    SliceRequest,
    ToolInvocation,
    Trust,
    UnknownOutputRefError,
    output_ref,
    read_slice,
    read_tool_output_tool,
)

LINES = "".join(f"line {n}: value {n * n}\n" for n in range(1, 201))


def test_refs_are_stable_and_depend_on_content_and_trust() -> None:
    store = MemoryToolOutputStore()
    ref = store.put("data", Trust.UNTRUSTED)
    assert ref == store.put("data", Trust.UNTRUSTED) == output_ref("data", Trust.UNTRUSTED)
    assert ref != output_ref("data", Trust.TRUSTED) != output_ref("other", Trust.UNTRUSTED)
    stored = store.get(ref)
    assert (stored.content, stored.trust) == ("data", Trust.UNTRUSTED)


def test_disk_store_writes_private_files_readable_by_a_second_store(tmp_path: Path) -> None:
    directory = tmp_path / "outputs"
    ref = DiskToolOutputStore(directory).put("résumé 蛋白质\n" * 3, Trust.TRUSTED)
    path = directory / f"{ref}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert DiskToolOutputStore(directory).get(ref).content == "résumé 蛋白质\n" * 3
    assert [p.name for p in directory.iterdir()] == [path.name]


def test_disk_store_refuses_tampered_records(tmp_path: Path) -> None:
    store = DiskToolOutputStore(tmp_path)
    ref = store.put("x", Trust.TRUSTED)
    (tmp_path / f"{ref}.json").write_text(json.dumps({"ref": ref, "trust": "trusted", "content": "x", "extra": 1}))
    with pytest.raises(UnknownOutputRefError, match="not a stored output record"):
        store.get(ref)


@pytest.mark.parametrize("store_kind", ["memory", "disk"])
@pytest.mark.parametrize("ref", ["out_" + "0" * 32, "../../etc/passwd", "out_XYZ", ""])
def test_bad_refs_are_clear_errors(tmp_path: Path, store_kind: str, ref: str) -> None:
    store = MemoryToolOutputStore() if store_kind == "memory" else DiskToolOutputStore(tmp_path)
    with pytest.raises(UnknownOutputRefError) as raised:
        store.get(ref)
    assert raised.value.error_kind == "unknown_output_ref"
    assert repr(ref) in str(raised.value)


def test_line_ranges_are_inclusive_and_bounded() -> None:
    piece = read_slice(LINES, SliceRequest(line_start=10, line_end=12), 10_000)
    assert piece.text == "line 10: value 100\nline 11: value 121\nline 12: value 144\n"
    assert (piece.first_line, piece.last_line, piece.total_lines) == (10, 12, 200)
    bounded = read_slice(LINES, SliceRequest(line_start=1), 100)
    assert len(bounded.text) <= 100 and bounded.text.endswith("\n") and bounded.truncated


def test_an_over_wide_line_is_cut_and_read_on_by_characters() -> None:
    minified = '{"a":' + "1," * 5_000 + "2}"
    first = read_slice(minified, SliceRequest(line_start=1), 1_000)
    assert first.text == minified[:1_000] and first.truncated
    after = read_slice(minified, SliceRequest(char_start=first.end, char_end=first.end + 500), 1_000)
    assert after.text == minified[1_000:1_500]


def test_character_ranges_count_unicode_characters() -> None:
    text = "蛋白质" * 10 + "😀end"
    piece = read_slice(text, SliceRequest(char_start=30, char_end=100), 50)
    assert piece.text == "😀end" and piece.end == len(text)


def test_query_finds_exact_case_first_then_ignoring_case_with_context() -> None:
    text = LINES.replace("line 150: value 22500", "line 150: Needle here")
    exact = read_slice(text, SliceRequest(query="Needle"), 10_000)
    assert "line 150: Needle here" in exact.text and not exact.ignore_case
    assert (exact.first_line, exact.last_line, exact.matches) == (147, 153, 1)
    folded = read_slice(text, SliceRequest(query="NEEDLE"), 10_000)
    assert folded.ignore_case and "Needle" in folded.text
    second = read_slice(LINES, SliceRequest(query="value 1", occurrence=2), 10_000)
    assert second.occurrence == 2 and second.matches > 2
    missing = read_slice(LINES, SliceRequest(query="absent"), 10_000)
    assert missing.matches == 0 and missing.text == ""


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (SliceRequest(line_start=201), "line_start"),
        (SliceRequest(line_start=0), "line_start"),
        (SliceRequest(line_start=5, line_end=4), "line_end"),
        (SliceRequest(char_start=len(LINES)), "char_start"),
        (SliceRequest(char_start=10, char_end=10), "char_end"),
        (SliceRequest(query="line", occurrence=999), "occurrence"),
        (SliceRequest(query="line", line_start=1), "request"),
    ],
)
def test_out_of_range_requests_name_the_field(request_: SliceRequest, field: str) -> None:
    with pytest.raises(OutputRangeError) as raised:
        read_slice(LINES, request_, 1_000)
    assert raised.value.field == field and str(raised.value).startswith(field)


_requests = st.one_of(
    st.builds(SliceRequest),
    st.builds(SliceRequest, query=st.text(min_size=1, max_size=5), occurrence=st.integers(1, 4)),
    st.builds(SliceRequest, line_start=st.integers(1, 40), line_end=st.none() | st.integers(1, 60)),
    st.builds(SliceRequest, char_start=st.integers(0, 400), char_end=st.none() | st.integers(1, 500)),
)


@settings(max_examples=300, deadline=None)
@given(
    content=st.text(st.characters(codec="utf-8") | st.just("\n"), max_size=400),
    request=_requests,
    max_chars=st.integers(1, 120),
)
def test_any_slice_is_a_bounded_substring_of_the_stored_output(
    content: str, request: SliceRequest, max_chars: int
) -> None:
    try:
        piece = read_slice(content, request, max_chars)
    except OutputRangeError:
        return
    assert len(piece.text) <= max_chars
    assert content[piece.start : piece.end] == piece.text
    assert piece.text in content


def _invocation(arguments: dict[str, object]) -> ToolInvocation:
    sink = CollectingSink()
    context = TurnContext("run-1", "ctx-1", 1, sink, ExternalWaits("run-1", "ctx-1", sink.emit))
    return ToolInvocation(ToolCall(id="c1", name="read_tool_output", arguments=arguments), arguments, context)


def test_read_tool_output_answers_with_header_and_stored_trust() -> None:
    store = MemoryToolOutputStore()
    ref = store.put(LINES, Trust.UNTRUSTED)
    tool = read_tool_output_tool(store, max_chars=100)
    output = asyncio.run(tool.handler(_invocation({"ref": ref, "line_start": 3})))
    header, _, body = output.content.partition("\n")
    assert body and body in LINES and len(body) <= 100
    assert f"stored output {ref}" in header and "trust=untrusted" in header and "read on: line_start=" in header
    assert output.metadata[TRUST_KEY] == "untrusted"


@settings(max_examples=80, deadline=None)
@given(content=st.text(min_size=1, max_size=300), request=_requests, max_chars=st.integers(1, 80))
def test_read_tool_output_answers_are_bounded_substrings(content: str, request: SliceRequest, max_chars: int) -> None:
    store = MemoryToolOutputStore()
    ref = store.put(content, Trust.TRUSTED)
    arguments = {key: value for key, value in attrs.asdict(request).items() if value is not None}
    if arguments.get("occurrence") == 1:
        del arguments["occurrence"]
    try:
        output = asyncio.run(read_tool_output_tool(store, max_chars).handler(_invocation({"ref": ref, **arguments})))
    except OutputRangeError:
        return
    _, _, body = output.content.partition("\n")
    assert len(body) <= max_chars and body in content
