"""Loop policy: refuse a call that repeats the previous one too often, or exceeds its tool's budget for the run."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

import attrs


def canonical_arguments(arguments: Mapping[str, Any]) -> str:
    """Arguments as canonical JSON (sorted keys, no whitespace): equal arguments give equal text."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)


@attrs.define
class _RunCalls:
    last: tuple[str, str] | None = None
    streak: int = 0
    executed: Counter[str] = attrs.field(factory=Counter)


class LoopPolicy:
    """Per-run call accounting.

    At most ``identical_limit`` identical calls (same tool, same canonical
    arguments) run in a row; the next identical one is refused, and so is every
    further repeat until a different call breaks the streak. A tool runs at
    most its budget (``max_calls_per_run``, else ``default_budget``) times per
    run. Refused calls do not use budget.
    """

    def __init__(self, identical_limit: int, default_budget: int | None = None) -> None:
        self.identical_limit = identical_limit
        self.default_budget = default_budget
        self._runs: dict[str, _RunCalls] = {}

    def admit(self, run_id: str, tool: str, arguments: Mapping[str, Any], budget: int | None = None) -> str | None:
        """Record the call; return why it is refused, or ``None`` when it may run."""
        calls = self._runs.setdefault(run_id, _RunCalls())
        signature = (tool, canonical_arguments(arguments))
        calls.streak = calls.streak + 1 if signature == calls.last else 1
        calls.last = signature
        if calls.streak > self.identical_limit:
            return (
                f"the identical call to {tool!r} was made {calls.streak} times in a row "
                f"(limit {self.identical_limit}); "
                "its result will not change: use the earlier result or change the arguments"
            )
        limit = budget if budget is not None else self.default_budget
        if limit is not None and calls.executed[tool] >= limit:
            return f"{tool!r} has used its budget of {limit} calls in this run"
        calls.executed[tool] += 1
        return None
