"""Budget admission of sections and data, and deterministic system-prompt rendering."""

from __future__ import annotations

import attrs

from sciencediscovery.runtime_core import Message

from .contributors import SLOT_ORDER, Diagnostic, SystemSection
from .errors import BudgetExceededError
from .estimators import MESSAGE_OVERHEAD_TOKENS, TokenLedger
from .projection import attachment_message, invocation_local
from .registry import Collection

TRUNCATION_MARKER = "\n[... truncated to fit the context budget]"
SECTION_SEPARATOR = "\n\n"
_MIN_USEFUL_TOKENS = 16


def section_sort_key(section: SystemSection) -> tuple[int, int, str]:
    """Slot order, then the section's order, then its id: a total, deterministic order."""
    return (SLOT_ORDER.index(section.slot), section.order, section.id)


@attrs.frozen
class Admitted:
    """What fits the budgets: sections in render order, invocation-local messages, diagnostics."""

    sections: tuple[SystemSection, ...]
    messages: tuple[Message, ...]
    diagnostics: tuple[Diagnostic, ...]
    prompt_tokens: int
    data_tokens: int


def apply_context_budget(
    collection: Collection, *, prompt_budget: int, data_budget: int, ledger: TokenLedger
) -> Admitted:
    """Admit protected sections first (never truncated), then others by slot and order, then data.

    Raises :class:`BudgetExceededError` when the protected sections alone exceed ``prompt_budget``.
    """
    diagnostics: list[Diagnostic] = []
    ordered = sorted(collection.sections, key=section_sort_key)
    protected = [s for s in ordered if s.is_protected]
    used = sum(ledger.text(s.content) for s in protected)
    if used > prompt_budget:
        sizes = ", ".join(f"{s.id}={ledger.text(s.content)}" for s in protected)
        raise BudgetExceededError(
            f"protected sections need {used} tokens but the prompt budget is {prompt_budget} ({sizes}); "
            "assembly stops rather than weaken authority"
        )
    admitted = {s.id: s for s in protected}
    for section in (s for s in ordered if not s.is_protected):
        fitted, cost = _fit(section.content, prompt_budget - used, ledger)
        if fitted is None:
            diagnostics.append(
                Diagnostic(
                    "section_dropped", f"section {section.id!r} does not fit the prompt budget", section.id, "warning"
                )
            )
            continue
        if fitted != section.content:
            diagnostics.append(
                Diagnostic(
                    "section_truncated", f"section {section.id!r} was truncated to {cost} tokens", section.id, "warning"
                )
            )
            section = attrs.evolve(section, content=fitted)
        admitted[section.id] = section
        used += cost
    data: list[Message] = []
    data_used = 0
    candidates = [(source, invocation_local(m, source)) for source, m in collection.messages]
    candidates += [(a.id, attachment_message(a)) for a in collection.attachments]
    for source, message in candidates:
        fitted, cost = _fit(message.content, data_budget - data_used - MESSAGE_OVERHEAD_TOKENS, ledger)
        if fitted is None:
            diagnostics.append(
                Diagnostic("data_dropped", f"data from {source!r} does not fit the data budget", source, "warning")
            )
            continue
        if fitted != message.content:
            diagnostics.append(Diagnostic("data_truncated", f"data from {source!r} was truncated", source, "warning"))
            message = attrs.evolve(message, content=fitted)
        data.append(message)
        data_used += ledger.message(message)
    sections = tuple(sorted(admitted.values(), key=section_sort_key))
    return Admitted(sections, tuple(data), tuple(diagnostics), used, data_used)


def _fit(text: str, available: int, ledger: TokenLedger) -> tuple[str | None, int]:
    """``text`` itself, a truncated prefix with a marker, or ``None`` when too little room is left."""
    cost = ledger.text(text)
    if cost <= available:
        return text, cost
    if available < _MIN_USEFUL_TOKENS + ledger.text(TRUNCATION_MARKER):
        return None, 0
    keep = len(text) * (available - ledger.text(TRUNCATION_MARKER)) // max(cost, 1)
    while keep > 0:
        candidate = text[:keep] + TRUNCATION_MARKER
        cost = ledger.text(candidate)
        if cost <= available:
            return candidate, cost
        keep = keep * 9 // 10
    return None, 0


class DeterministicSystemPromptRenderer:
    """Renders admitted sections in slot/order/id order; the same sections give byte-identical text."""

    def render(self, sections: tuple[SystemSection, ...]) -> str:
        return SECTION_SEPARATOR.join(
            s.content.strip() for s in sorted(sections, key=section_sort_key) if s.content.strip()
        )
