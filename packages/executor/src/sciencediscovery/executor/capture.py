"""Bounded capture of a stream: the first and last bytes are kept, the middle is counted."""

from __future__ import annotations

import attrs


@attrs.frozen
class CapturedText:
    """What was kept of a stream: its text (with an elision marker) and whether bytes were dropped."""

    text: str
    total_bytes: int
    truncated: bool


class HeadTailBuffer:
    """Keeps at most ``limit`` bytes: half from the head of the stream, half from its tail."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit - limit // 2
        self._tail_limit = limit // 2
        self._head = bytearray()
        self._tail = bytearray()
        self.total_bytes = 0

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data and self._tail_limit:
            self._tail += data
            del self._tail[: max(0, len(self._tail) - self._tail_limit)]

    def result(self) -> CapturedText:
        kept = len(self._head) + len(self._tail)
        dropped = self.total_bytes - kept
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if dropped:
            return CapturedText(f"{head}\n[... {dropped} bytes omitted ...]\n{tail}", self.total_bytes, True)
        return CapturedText(head + tail, self.total_bytes, False)
