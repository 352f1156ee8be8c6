"""Head/tail bounded capture: invariants over arbitrary streams."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.executor.capture import HeadTailBuffer


@settings(max_examples=200, deadline=None)
@given(chunks=st.lists(st.binary(max_size=300), max_size=20), limit=st.integers(min_value=2, max_value=400))
def test_capture_keeps_the_head_and_tail_within_the_limit(chunks: list[bytes], limit: int) -> None:
    buffer = HeadTailBuffer(limit)
    for chunk in chunks:
        buffer.feed(chunk)
    stream = b"".join(chunks)
    result = buffer.result()
    assert result.total_bytes == len(stream)
    assert result.truncated == (len(stream) > limit)
    head, tail = bytes(buffer._head), bytes(buffer._tail)
    assert len(head) + len(tail) <= limit
    if result.truncated:
        assert stream.startswith(head) and stream.endswith(tail)
        assert f"[... {len(stream) - len(head) - len(tail)} bytes omitted ...]" in result.text
    else:
        assert head + tail == stream


def test_untruncated_text_is_returned_verbatim() -> None:
    buffer = HeadTailBuffer(64)
    buffer.feed("héllo\n".encode())
    assert buffer.result().text == "héllo\n"
