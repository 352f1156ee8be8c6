"""Scenario strategies that generate a policy and its handler registrations from one input.

``recent``: a local window of complete rounds (a trim step, no model call).
``continuity``: the old segment summarized by a compressor, the recent groups kept raw.
``target_chars`` defaults to the fragment's ``max_chars``, ``grouping`` to user-turn and
``keep_groups`` to 1; explicit values win, and 0 is a value, not "default".
"""

from __future__ import annotations

from typing import Literal

import attrs

from ..grouping import USER_TURN, Grouping
from .errors import PlanDefinitionError
from .fragments import ContextFragment
from .handlers import Compressor
from .policy import CompressStep, ContextPolicy, Preserve, Step, TrimStep
from .stages import ContextProcessor

__all__ = ["ContextStrategy", "create_context_strategy"]


@attrs.frozen
class ContextStrategy:
    """A generated policy with the compressors it registers; :meth:`processor` builds the stages."""

    kind: str
    policy: ContextPolicy
    compressors: tuple[Compressor, ...] = ()

    def processor(self) -> ContextProcessor:
        return ContextProcessor(self.policy, compressors=self.compressors)


def create_context_strategy(
    kind: Literal["recent", "continuity"],
    fragment: ContextFragment,
    field: str,
    *,
    compressor: Compressor | None = None,
    target_chars: int | None = None,
    keep_groups: int | None = None,
    grouping: Grouping | None = None,
) -> ContextStrategy:
    """Generate a ``reduce`` policy for ``fragment.field``; step and handler ids derive from the same input."""
    target = target_chars if target_chars is not None else fragment.max_chars
    if target is None:
        raise PlanDefinitionError("target_chars", f"unset and fragment {fragment.id!r} has no max_chars")
    keep = keep_groups if keep_groups is not None else 1
    groups = grouping if grouping is not None else USER_TURN
    step: Step
    if kind == "recent":
        if compressor is not None:
            raise PlanDefinitionError("compressor", "the recent strategy makes no model call and takes no compressor")
        step = TrimStep(f"recent:{fragment.id}.{field}", fragment.id, field, target, keep, groups)
        return ContextStrategy(kind, ContextPolicy("reduce", (step,)))
    if kind == "continuity":
        if compressor is None:
            raise PlanDefinitionError("compressor", "the continuity strategy needs a compressor")
        step = CompressStep(
            f"continuity:{fragment.id}.{field}", fragment.id, compressor.id, target, Preserve(field, keep, groups)
        )
        return ContextStrategy(kind, ContextPolicy("reduce", (step,)), (compressor,))
    raise PlanDefinitionError("kind", f"must be 'recent' or 'continuity', got {kind!r}")
