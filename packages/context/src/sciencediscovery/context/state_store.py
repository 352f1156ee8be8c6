"""Run-scoped channel stores for an assembler that serves many runs."""

from __future__ import annotations

from collections.abc import Iterable

from sciencediscovery.runtime_core import RunEvent, RunFinished

from .channels import RunStateChannels, StateChannel
from .errors import DuplicateIdError


class RunStateStore:
    """One :class:`RunStateChannels` per run id; an event sink that routes events to their run.

    Add it to the kernel's ``FanOutSink``. A run's channels are dropped when
    its ``RunFinished`` event arrives.
    """

    def __init__(self, channels: Iterable[StateChannel]) -> None:
        self.channels = tuple(channels)
        names = [channel.name for channel in self.channels]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise DuplicateIdError(f"state channel names must be unique; duplicated: {', '.join(duplicates)}")
        self._runs: dict[str, RunStateChannels] = {}

    def for_run(self, run_id: str) -> RunStateChannels:
        channels = self._runs.get(run_id)
        if channels is None:
            channels = self._runs[run_id] = RunStateChannels(self.channels, run_id=run_id)
        return channels

    def emit(self, event: RunEvent) -> None:
        if isinstance(event, RunFinished):
            self._runs.pop(event.run_id, None)
            return
        self.for_run(event.run_id).observe(event)

    observe = emit
