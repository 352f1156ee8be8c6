"""Small event sinks every composition needs."""

from __future__ import annotations

from collections.abc import Iterable

from .events import RunEvent
from .ports import RunEventSink


class FanOutSink:
    """Sends each event to several sinks in order."""

    def __init__(self, sinks: Iterable[RunEventSink]) -> None:
        self.sinks = tuple(sinks)

    def emit(self, event: RunEvent) -> None:
        for sink in self.sinks:
            sink.emit(event)


class CollectingSink:
    """Keeps every event in memory; handy for tests, demos and short runs."""

    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def emit(self, event: RunEvent) -> None:
        self.events.append(event)

    def of_kind(self, kind: str) -> list[RunEvent]:
        return [event for event in self.events if event.kind == kind]


class NullSink:
    """Discards events."""

    def emit(self, event: RunEvent) -> None:
        return None
