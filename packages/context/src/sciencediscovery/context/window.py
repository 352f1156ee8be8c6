"""AtomicHistoryWindowPolicy: the model-visible history window of one turn."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from sciencediscovery.runtime_core import Message

from .contributors import Diagnostic
from .errors import BudgetExceededError
from .estimators import TokenLedger
from .steps import checkpoint_index, split_units, task_anchor_index


@attrs.frozen
class HistoryWindow:
    """The selected messages, what was left out, and the window's statistics."""

    messages: tuple[Message, ...]
    tokens: int
    dropped_units: int
    dropped_messages: int
    diagnostics: tuple[Diagnostic, ...] = ()

    def stats(self) -> dict[str, int]:
        return {
            "messages": len(self.messages),
            "tokens": self.tokens,
            "droppedUnits": self.dropped_units,
            "droppedMessages": self.dropped_messages,
        }


class AtomicHistoryWindowPolicy:
    """Keeps whole units only, newest first, within a token budget.

    The task anchor, the checkpoint, the newest unit and any open calls are
    always kept; if they alone exceed the budget, :class:`BudgetExceededError`
    is raised before any provider call.
    """

    def select(self, history: Sequence[Message], budget: int, ledger: TokenLedger) -> HistoryWindow:
        units = split_units(history)
        if not units:
            return HistoryWindow((), 0, 0, 0)
        costs = [ledger.messages(history[u.start : u.end]) for u in units]
        required = {len(units) - 1} | {i for i, u in enumerate(units) if u.open}
        unit_of = {u.start: i for i, u in enumerate(units)}
        for index in (task_anchor_index(history), checkpoint_index(history)):
            if index is not None and index in unit_of:
                required.add(unit_of[index])
        used = sum(costs[i] for i in required)
        if used > budget:
            raise BudgetExceededError(
                f"the minimal history window (task anchor, checkpoint, newest step, open calls) needs {used} tokens "
                f"but only {budget} remain for history"
            )
        chosen = set(required)
        for i in range(len(units) - 1, -1, -1):
            if i in chosen:
                continue
            if used + costs[i] > budget:
                break  # keep a contiguous recent suffix: never skip a unit to squeeze an older one in
            chosen.add(i)
            used += costs[i]
        ordered = sorted(chosen)
        messages = tuple(m for i in ordered for m in history[units[i].start : units[i].end])
        dropped = len(units) - len(chosen)
        diagnostics = (
            (Diagnostic("window_dropped", f"{dropped} older history units do not fit the window", "window", "info"),)
            if dropped
            else ()
        )
        return HistoryWindow(messages, used, dropped, len(history) - len(messages), diagnostics)
