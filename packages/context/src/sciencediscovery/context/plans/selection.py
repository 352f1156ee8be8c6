"""Choosing reduction steps: protection checks, affordability and the four selection kinds."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from .errors import SelectorError
from .fragments import ContextPlan
from .handlers import Compressor, HandlerContext, SelectionJob, Selector, StepCandidate, handler_max_calls
from .policy import AutoSelection, ContextPolicy, FixedSelection, ModelSelection, Step, TrimStep
from .prepared import Preparation
from .quota import ModelCallQuota
from .reduction import check_step, trim_fragment
from .request import Measurement

__all__ = ["Chooser", "step_calls"]


def step_calls(step: Step, compressors: Mapping[str, Compressor]) -> int:
    """A step's declared maximum model calls (0 for trims)."""
    return 0 if isinstance(step, TrimStep) else handler_max_calls(compressors[step.handler_id])


@attrs.frozen
class Chooser:
    """Picks step ids for one plan state under a policy; ``select`` returns them in run order."""

    policy: ContextPolicy
    compressors: Mapping[str, Compressor]
    selectors: Mapping[str, Selector]

    def validate(self, plan: ContextPlan) -> None:
        """Check every policy step against the plan's protection boundaries and the registry."""
        for step in self.policy.steps:
            check_step(plan, step, self.compressors)
        selection = self.policy.selection
        if isinstance(selection, ModelSelection) and selection.selector_id not in self.selectors:
            raise SelectorError(selection.selector_id, "is not registered")

    def trim_loss(self, plan: ContextPlan, step: TrimStep, preparation: Preparation) -> float:
        """Accumulated JSON character loss ratio of the fragment if ``step`` ran now."""
        fragment = plan.fragment(step.fragment_id)
        return preparation.trim_loss(fragment.id, fragment.chars, trim_fragment(fragment, step).chars)

    def candidates(self, preparation: Preparation, quota: ModelCallQuota, extra_calls: int = 0) -> list[Step]:
        """Steps not yet run, of the selected kind, affordable with the selection's reserve kept free."""
        selection = self.policy.selection
        steps = [step for step in self.policy.steps if step.id not in preparation.executed_steps]
        if isinstance(selection, FixedSelection):
            steps = [step for step in steps if step.kind == selection.step_kind]
        reserve = selection.reserve_calls + extra_calls
        return [step for step in steps if quota.affordable(step_calls(step, self.compressors), reserve)]

    async def select(
        self,
        plan: ContextPlan,
        preparation: Preparation,
        quota: ModelCallQuota,
        measurement: Measurement,
        selector_context: Callable[[Selector], HandlerContext],
    ) -> list[str]:
        """Step ids to run next, in order; empty means no safe step. ``selector_context`` serves a model selector."""
        selection = self.policy.selection
        if isinstance(selection, AutoSelection):
            return self._auto(plan, preparation, selection, quota)
        if isinstance(selection, ModelSelection):
            selector = self.selectors[selection.selector_id]
            return await self._model(plan, preparation, quota, measurement, selector, selector_context(selector))
        return [step.id for step in self.candidates(preparation, quota)]

    def _auto(
        self, plan: ContextPlan, preparation: Preparation, selection: AutoSelection, quota: ModelCallQuota
    ) -> list[str]:
        candidates = self.candidates(preparation, quota)
        for step in candidates:
            if isinstance(step, TrimStep):
                fragment = plan.fragment(step.fragment_id)
                removes = trim_fragment(fragment, step).chars < fragment.chars
                if removes and self.trim_loss(plan, step, preparation) <= selection.max_trim_loss_ratio:
                    return [step.id]
        return [step.id for step in candidates if not isinstance(step, TrimStep)][:1]

    async def _model(
        self,
        plan: ContextPlan,
        preparation: Preparation,
        quota: ModelCallQuota,
        measurement: Measurement,
        selector: Selector,
        context: HandlerContext,
    ) -> list[str]:
        if not quota.affordable(context.max_calls, self.policy.selection.reserve_calls):
            return []
        steps = self.candidates(preparation, quota, extra_calls=context.max_calls)
        if not steps:
            return []
        offered = tuple(
            StepCandidate(
                step.id,
                step.kind,
                step.fragment_id,
                step_calls(step, self.compressors),
                self.trim_loss(plan, step, preparation) if isinstance(step, TrimStep) else None,
            )
            for step in steps
        )
        answer = await context.signal.run(
            selector.select(SelectionJob(offered, measurement), context), f"selector {selector.id}"
        )
        if not isinstance(answer, str):
            raise SelectorError(selector.id, f"must return one step id, got {type(answer).__name__}")
        if answer not in {candidate.step_id for candidate in offered}:
            raise SelectorError(selector.id, f"chose {answer!r}, which is not an offered step")
        return [answer]
