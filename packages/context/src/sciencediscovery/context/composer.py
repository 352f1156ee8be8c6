"""DefaultContextMessageComposer: the message list of one model input."""

from __future__ import annotations

from collections.abc import Sequence

from sciencediscovery.runtime_core import Message


class DefaultContextMessageComposer:
    """Canonical window first, then the invocation-local data messages.

    Data goes after the newest step, so it never separates an assistant tool
    call from its results, and it is rebuilt on every turn (never stored).
    """

    def compose(self, window: Sequence[Message], data: Sequence[Message]) -> tuple[Message, ...]:
        return (*window, *data)
