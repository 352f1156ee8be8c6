"""DefaultContextMessageComposer: the message list of one model input."""

from __future__ import annotations

from collections.abc import Sequence

from sciencediscovery.runtime_core import Message, Role


class DefaultContextMessageComposer:
    """Canonical window first, then the invocation-local data messages.

    Data goes after the newest closed step, so it never separates an assistant
    tool call from its results (a trailing step with open calls stays last),
    and it is rebuilt on every turn (never stored).
    """

    def compose(self, window: Sequence[Message], data: Sequence[Message]) -> tuple[Message, ...]:
        start = len(window) - 1
        while start >= 0 and window[start].role is Role.TOOL:
            start -= 1
        if start >= 0 and window[start].tool_calls:
            answered = {m.tool_call_id for m in window[start + 1 :]}
            if any(call.id not in answered for call in window[start].tool_calls):
                return (*window[:start], *data, *window[start:])
        return (*window, *data)
