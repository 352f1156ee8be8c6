"""Processing policies: modes, reduction steps, step selection, triggers and soft targets."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import attrs

from ..grouping import USER_TURN, Grouping
from .errors import PlanDefinitionError
from .validators import count, non_empty, optional_count, timeout

__all__ = [
    "AutoSelection",
    "CompressStep",
    "ContextPolicy",
    "FixedSelection",
    "ModelSelection",
    "Preserve",
    "Selection",
    "SequenceSelection",
    "Step",
    "TrimStep",
]


@attrs.frozen
class TrimStep:
    """Drop the oldest complete groups of a history field until the fragment's JSON length fits.

    ``target_chars`` defaults to the fragment's ``max_chars``; at least ``keep_groups``
    groups are always kept, and no single message is ever cut. Local: no model call.
    """

    id: str = attrs.field(validator=non_empty)
    fragment_id: str = attrs.field(validator=non_empty)
    field: str = attrs.field(validator=non_empty)
    target_chars: int | None = attrs.field(default=None, validator=optional_count)
    keep_groups: int = attrs.field(default=1, validator=count)
    grouping: Grouping = USER_TURN
    kind: Literal["trim"] = "trim"
    max_calls: int = attrs.field(default=0, init=False)


@attrs.frozen
class Preserve:
    """Keep the last ``keep_groups`` groups of ``field`` raw; only the older segment is compressed."""

    field: str = attrs.field(validator=non_empty)
    keep_groups: int = attrs.field(default=1, validator=count)
    grouping: Grouping = USER_TURN


@attrs.frozen
class CompressStep:
    """Replace a fragment's fields by a registered compressor's shorter version."""

    id: str = attrs.field(validator=non_empty)
    fragment_id: str = attrs.field(validator=non_empty)
    handler_id: str = attrs.field(validator=non_empty)
    target_chars: int | None = attrs.field(default=None, validator=optional_count)
    preserve: Preserve | None = None
    kind: Literal["compress"] = "compress"


Step = TrimStep | CompressStep


@attrs.frozen
class SequenceSelection:
    """Run candidate steps in declared order (the default)."""

    kind: Literal["sequence"] = "sequence"
    reserve_calls: int = attrs.field(default=0, validator=count)


@attrs.frozen
class FixedSelection:
    """Run only steps of one kind (``trim`` or ``compress``), in declared order."""

    step_kind: Literal["trim", "compress"] = attrs.field()
    kind: Literal["fixed"] = "fixed"
    reserve_calls: int = attrs.field(default=0, validator=count)

    @step_kind.validator
    def _check_kind(self, attribute: attrs.Attribute[str], value: str) -> None:
        if value not in ("trim", "compress"):
            raise PlanDefinitionError("step_kind", f"must be 'trim' or 'compress', got {value!r}")


def _at_least_one(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    count(instance, attribute, value)
    if value < 1:
        raise PlanDefinitionError(attribute.name, "must keep at least one call for the final answer")


@attrs.frozen
class AutoSelection:
    """Prefer a trim whose accumulated JSON character loss stays under ``max_trim_loss_ratio``, else a compression.

    The ratio is a JSON character-reduction heuristic, not a measure of semantic loss.
    """

    max_trim_loss_ratio: float = attrs.field(default=0.25)
    kind: Literal["auto"] = "auto"
    reserve_calls: int = attrs.field(default=1, validator=_at_least_one)

    @max_trim_loss_ratio.validator
    def _check_ratio(self, attribute: attrs.Attribute[float], value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise PlanDefinitionError("max_trim_loss_ratio", f"must be a number in [0, 1], got {value!r}")


@attrs.frozen
class ModelSelection:
    """Ask the registered selector ``selector_id`` for one step id among the affordable candidates."""

    selector_id: str = attrs.field(validator=non_empty)
    kind: Literal["model"] = "model"
    reserve_calls: int = attrs.field(default=1, validator=_at_least_one)


Selection = SequenceSelection | FixedSelection | AutoSelection | ModelSelection


def _steps(value: Iterable[Step]) -> tuple[Step, ...]:
    return tuple(value)


@attrs.frozen
class ContextPolicy:
    """How processing treats a plan.

    ``validate`` only checks and assembles; ``reduce`` runs ``steps`` chosen by ``selection``
    when a hard limit or a trigger watermark is exceeded, until the soft targets are met
    (a soft target defaults to its trigger); ``audit`` checks an application's own changes
    against the plan's originals. ``timeout_s`` overrides the run's processing deadline.
    """

    mode: Literal["validate", "reduce", "audit"] = "validate"
    steps: tuple[Step, ...] = attrs.field(default=(), converter=_steps)
    selection: Selection = attrs.field(factory=SequenceSelection)
    trigger_chars: int | None = attrs.field(default=None, validator=optional_count)
    trigger_tokens: int | None = attrs.field(default=None, validator=optional_count)
    target_input_chars: int | None = attrs.field(default=None, validator=optional_count)
    target_input_tokens: int | None = attrs.field(default=None, validator=optional_count)
    timeout_s: float | None = attrs.field(default=None, validator=timeout)

    def __attrs_post_init__(self) -> None:
        if self.mode not in ("validate", "reduce", "audit"):
            raise PlanDefinitionError("mode", f"must be validate, reduce or audit, got {self.mode!r}")
        if self.mode != "reduce" and self.steps:
            raise PlanDefinitionError("steps", f"mode {self.mode!r} runs no steps; use mode 'reduce'")
        seen: set[str] = set()
        for step in self.steps:
            if not isinstance(step, TrimStep | CompressStep):
                raise PlanDefinitionError("steps", f"must hold TrimStep or CompressStep, got {type(step).__name__}")
            if step.id in seen:
                raise PlanDefinitionError("steps", f"step id {step.id!r} is used twice")
            seen.add(step.id)

    def step(self, step_id: str) -> Step | None:
        return next((step for step in self.steps if step.id == step_id), None)

    @property
    def soft_target_chars(self) -> int | None:
        return self.target_input_chars if self.target_input_chars is not None else self.trigger_chars

    @property
    def soft_target_tokens(self) -> int | None:
        return self.target_input_tokens if self.target_input_tokens is not None else self.trigger_tokens
