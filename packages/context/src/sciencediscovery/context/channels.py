"""Run-scoped structured state channels, updated at the tool-result boundary.

A :class:`StateChannel` is a pure reducer over successful tool results. The
channels of one run live in a :class:`RunStateChannels`, which is an event sink
(add it to the kernel's ``FanOutSink``): it applies ``ToolResultCommitted``
events, which the kernel emits in the model's declared order, and can hydrate
itself from canonical history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from sciencediscovery.runtime_core import Message, Role, RunEvent, ToolCall, ToolResultCommitted, ToolResultStatus

from .contributors import SystemSection, Trust
from .errors import DuplicateIdError

BUILTIN_CHANNELS = ("plan", "skills", "delegations", "artifacts", "reviews", "memory")
"""Channel names the spec defines; plugins may add their own names."""


@runtime_checkable
class StateChannel(Protocol):
    """One structured runtime-state channel.

    ``apply`` must be pure (return a new state, never mutate) and is only
    called with successful results. ``render`` gives the JSON value projected
    to the model, or ``None`` when there is nothing to show. A channel may
    also define ``trust`` (a :class:`Trust`, default ``mixed_runtime_data``)
    and ``render_section(state) -> SystemSection | None`` for a protected
    system section such as ``plan_state``.
    """

    @property
    def name(self) -> str: ...

    @property
    def initial(self) -> Any: ...

    def apply(self, state: Any, call: ToolCall, result: Message) -> Any: ...

    def render(self, state: Any) -> dict[str, Any] | None: ...


def channel_trust(channel: StateChannel) -> Trust:
    """The trust label of a channel's projection (``mixed_runtime_data`` unless it says otherwise)."""
    return Trust(getattr(channel, "trust", Trust.MIXED_RUNTIME_DATA))


def channel_section(channel: StateChannel, state: Any) -> SystemSection | None:
    """The channel's optional system section for ``state``."""
    render_section = getattr(channel, "render_section", None)
    return render_section(state) if callable(render_section) else None


@attrs.frozen
class ChannelAnchor:
    """The last successful call that changed a channel, and where it happened."""

    call_id: str
    tool: str
    turn: int


@attrs.frozen
class ChannelError:
    """A reducer raised; the channel kept its previous state."""

    channel: str
    call_id: str
    error: str


class RunStateChannels:
    """The registered channels of one run, their states and their anchors.

    Each result is applied at most once (by tool call id), so hydrating from
    history and observing live events never double-counts. With ``run_id``
    set, events of other runs are ignored.
    """

    def __init__(self, channels: Iterable[StateChannel], *, run_id: str | None = None) -> None:
        self.channels: tuple[StateChannel, ...] = tuple(channels)
        names = [channel.name for channel in self.channels]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise DuplicateIdError(f"state channel names must be unique; duplicated: {', '.join(duplicates)}")
        self.run_id = run_id
        self._states: dict[str, Any] = {channel.name: channel.initial for channel in self.channels}
        self._anchors: dict[str, ChannelAnchor] = {}
        self._applied: set[str] = set()
        self._channel_calls: dict[str, set[str]] = {channel.name: set() for channel in self.channels}
        self.errors: list[ChannelError] = []
        self.version = 0

    # -- sink ---------------------------------------------------------------
    def observe(self, event: RunEvent) -> None:
        """Apply a committed tool result; every other event is ignored."""
        if not isinstance(event, ToolResultCommitted):
            return
        if self.run_id is not None and event.run_id != self.run_id:
            return
        self.apply(event.call, event.result, turn=event.turn)

    emit = observe

    # -- updates ------------------------------------------------------------
    def apply(self, call: ToolCall, result: Message, *, turn: int = 0) -> None:
        """Apply one result to every channel (only successful results, each call id once)."""
        if result.status is not ToolResultStatus.OK or call.id in self._applied:
            return
        self._applied.add(call.id)
        for channel in self.channels:
            before = self._states[channel.name]
            try:
                after = channel.apply(before, call, result)
            except Exception as error:
                self.errors.append(ChannelError(channel.name, call.id, f"{type(error).__name__}: {error}"))
                continue
            if after is not before and after != before:
                self._states[channel.name] = after
                self._anchors[channel.name] = ChannelAnchor(call.id, call.name, turn)
                self._channel_calls[channel.name].add(call.id)
                self.version += 1

    def hydrate(self, history: Sequence[Message]) -> None:
        """Apply, in declared order, every assistant tool call whose matching result is in ``history``."""
        results = {m.tool_call_id: m for m in history if m.role is Role.TOOL}
        turn = 0
        for message in history:
            if message.role is not Role.ASSISTANT:
                continue
            turn += 1
            for call in message.tool_calls:
                result = results.get(call.id)
                if result is not None:
                    self.apply(call, result, turn=turn)

    # -- reads --------------------------------------------------------------
    def snapshot(self) -> Mapping[str, Any]:
        """Current state of every channel, by name."""
        return dict(self._states)

    def rendered(self) -> dict[str, dict[str, Any] | None]:
        """Each channel's rendered JSON value (``None`` when it shows nothing), in registration order."""
        return {channel.name: channel.render(self._states[channel.name]) for channel in self.channels}

    def anchor(self, name: str) -> ChannelAnchor | None:
        """The last call that changed channel ``name``."""
        return self._anchors.get(name)

    def calls_of(self, name: str) -> frozenset[str]:
        """Ids of every call that changed channel ``name``."""
        return frozenset(self._channel_calls.get(name, ()))
