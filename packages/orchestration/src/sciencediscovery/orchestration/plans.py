"""Plans: the ``update_plan`` arguments, their validation and rendering.

Plan progress for the trace (declaring call, whether it is still visible,
model steps and completed non-plan results since) is computed by the context
assembler from the ``plan`` channel's anchor; it never labels a plan stale.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

from .errors import PlanError

UPDATE_PLAN = "update_plan"
MAX_ITEMS = 50
MAX_TEXT = 500


class PlanStatus(str, enum.Enum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


@attrs.frozen
class PlanItem:
    step: str
    status: PlanStatus


@attrs.frozen
class Plan:
    """The run's current plan. At most one item is ``in_progress``."""

    explanation: str
    items: tuple[PlanItem, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "explanation": self.explanation,
            "items": [{"step": item.step, "status": item.status.value} for item in self.items],
        }

    def render(self) -> str:
        """The protected ``plan_state`` section body (deterministic)."""
        lines = [f"explanation: {self.explanation}"] if self.explanation else []
        lines += [f"{index}. [{item.status.value}] {item.step}" for index, item in enumerate(self.items, 1)]
        return "\n".join(lines)

    def summary(self) -> str:
        counts = {status: sum(item.status is status for item in self.items) for status in PlanStatus}
        noun = "item" if len(self.items) == 1 else "items"
        return (
            f"Plan updated: {len(self.items)} {noun} ({counts[PlanStatus.COMPLETED]} completed, "
            f"{counts[PlanStatus.IN_PROGRESS]} in progress, {counts[PlanStatus.PENDING]} pending)."
        )


def _text(value: Any, field: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise PlanError(field, f"must be a non-empty string, got {value!r}")
    if len(value) > MAX_TEXT:
        raise PlanError(field, f"must be at most {MAX_TEXT} characters")
    return value.strip()


def parse_plan(arguments: Mapping[str, Any]) -> Plan:
    """Validate ``update_plan`` arguments; :class:`PlanError` names the bad field (e.g. ``items[1].status``)."""
    unknown = sorted(set(arguments) - {"explanation", "items"})
    if unknown:
        raise PlanError(unknown[0], "is not an update_plan argument (expected explanation and items)")
    explanation = _text(arguments.get("explanation"), "explanation", required=False)
    raw_items = arguments.get("items")
    if not isinstance(raw_items, list | tuple) or not raw_items:
        raise PlanError("items", "must be a non-empty list of {step, status} objects")
    if len(raw_items) > MAX_ITEMS:
        raise PlanError("items", f"must have at most {MAX_ITEMS} entries, got {len(raw_items)}")
    items: list[PlanItem] = []
    allowed = ", ".join(status.value for status in PlanStatus)
    for index, raw in enumerate(raw_items):
        field = f"items[{index}]"
        if not isinstance(raw, Mapping):
            raise PlanError(field, "must be an object with step and status")
        extra = sorted(set(raw) - {"step", "status"})
        if extra:
            raise PlanError(f"{field}.{extra[0]}", "is not a plan item field (expected step and status)")
        step = _text(raw.get("step"), f"{field}.step")
        if any(item.step == step for item in items):
            raise PlanError(f"{field}.step", f"repeats the step {step!r}")
        try:
            status = PlanStatus(raw.get("status"))
        except ValueError:
            raise PlanError(f"{field}.status", f"must be one of {allowed}, got {raw.get('status')!r}") from None
        items.append(PlanItem(step, status))
    in_progress = [index for index, item in enumerate(items) if item.status is PlanStatus.IN_PROGRESS]
    if len(in_progress) > 1:
        raise PlanError(f"items[{in_progress[1]}].status", "only one item may be in_progress at a time")
    return Plan(explanation, tuple(items))
