"""The three stages: selection, reduction and processing, each callable on its own and composable."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from sciencediscovery.runtime_core import ModelInput

from .errors import PlanDefinitionError, PlanOverLimitError, StepUnavailableError
from .events import FragmentChange, ProcessingReport, StageObserver
from .fragments import ContextPlan
from .handlers import Compressor, Selector, index_handlers
from .policy import ContextPolicy, Step, TrimStep
from .prepared import Preparation, PreparedHandle
from .reduction import audit_plan_change, check_step, compress_fragment, trim_fragment
from .request import ContextRequest, Measurement, assemble, check_limits, measure
from .run import ContextRun
from .selection import Chooser, step_calls
from .signals import CancelSignal

__all__ = ["ContextProcessor", "ProcessingResult", "SelectionResult", "StageResult"]


@attrs.frozen
class SelectionResult:
    """The plan, the handle for the next stage, the chosen step ids (empty: no safe step) and the report."""

    plan: ContextPlan
    prepared: PreparedHandle = attrs.field(eq=False)
    step_ids: tuple[str, ...]
    report: ProcessingReport


@attrs.frozen
class StageResult:
    """The processed plan after one reduction step, the handle for the next stage and the report."""

    plan: ContextPlan
    prepared: PreparedHandle = attrs.field(eq=False)
    report: ProcessingReport


@attrs.frozen
class ProcessingResult:
    """The assembled request (send it with ``ContextRun.invoke(input, prepared=prepared)``), plan and report."""

    input: ModelInput
    plan: ContextPlan
    prepared: PreparedHandle = attrs.field(eq=False)
    report: ProcessingReport


class ContextProcessor:
    """A policy with a snapshot of its compressors and selectors; runs the stages against a :class:`ContextRun`.

    Every stage takes either a ``request`` (prepared on the spot) or the ``prepared`` handle a
    previous stage returned, consumes it and returns a fresh handle on the same preparation.
    """

    def __init__(
        self, policy: ContextPolicy, *, compressors: Iterable[Compressor] = (), selectors: Iterable[Selector] = ()
    ) -> None:
        if not isinstance(policy, ContextPolicy):
            raise PlanDefinitionError("policy", f"must be a ContextPolicy, got {type(policy).__name__}")
        self.policy = policy
        self.compressors = index_handlers(compressors, "compress", "compressors")
        self.selectors = index_handlers(selectors, "select", "selectors")
        self._chooser = Chooser(policy, self.compressors, self.selectors)

    async def select(
        self,
        run: ContextRun,
        plan: ContextPlan,
        *,
        request: ContextRequest | None = None,
        prepared: PreparedHandle | None = None,
    ) -> SelectionResult:
        """Validate candidates and protection boundaries and choose affordable steps by the policy."""
        preparation = run.take(request, prepared)
        calls_before = run.quota.used
        with StageObserver(run.turn, "select", preparation.request.request_id) as observer:
            signal = run.stage_signal(self.policy.timeout_s)
            self._chooser.validate(plan)
            measured = measure(assemble(plan, preparation.request), preparation.request)
            observer.transition("measured", _describe(measured))
            ids = await self._choose(run, plan, preparation, measured, signal) if self.policy.mode == "reduce" else []
            observer.transition("selected", ",".join(ids))
            report = ProcessingReport(
                "select",
                preparation.request.request_id,
                self.policy.mode,
                selected_step_ids=tuple(ids),
                before=measured,
                model_calls=run.quota.used - calls_before,
                notes=("no safe step",) if self.policy.mode == "reduce" and not ids else (),
            )
            observer.completed(report)
        return SelectionResult(plan, preparation.handle(), tuple(ids), report)

    async def reduce(
        self,
        run: ContextRun,
        plan: ContextPlan,
        step_id: str,
        *,
        request: ContextRequest | None = None,
        prepared: PreparedHandle | None = None,
    ) -> StageResult:
        """Run exactly the step ``step_id`` (at most once per request) and audit its result."""
        preparation = run.take(request, prepared)
        calls_before = run.quota.used
        with StageObserver(run.turn, "reduce", preparation.request.request_id) as observer:
            step = self.policy.step(step_id)
            if step is None:
                raise StepUnavailableError(step_id, "is not a step of the policy")
            check_step(plan, step, self.compressors)
            if step_id in preparation.executed_steps:
                raise StepUnavailableError(step_id, "already ran for this request")
            if not run.quota.affordable(step_calls(step, self.compressors), self.policy.selection.reserve_calls):
                raise StepUnavailableError(step_id, f"needs more model calls than the {run.quota.remaining} left")
            before = measure(assemble(plan, preparation.request), preparation.request)
            signal = run.stage_signal(self.policy.timeout_s)
            plan, changes = await self._apply(run, plan, step, preparation, signal)
            observer.transition("step_applied", step_id)
            report = ProcessingReport(
                "reduce",
                preparation.request.request_id,
                self.policy.mode,
                selected_step_ids=(step_id,),
                executed_step_ids=(step_id,),
                changes=changes,
                before=before,
                after=measure(assemble(plan, preparation.request), preparation.request),
                model_calls=run.quota.used - calls_before,
            )
            observer.completed(report)
        return StageResult(plan, preparation.handle(), report)

    async def process(
        self,
        run: ContextRun,
        plan: ContextPlan,
        *,
        request: ContextRequest | None = None,
        prepared: PreparedHandle | None = None,
    ) -> ProcessingResult:
        """Run the policy and assemble; an input still over a hard limit raises :class:`PlanOverLimitError`."""
        preparation = run.take(request, prepared)
        req = preparation.request
        calls_before = run.quota.used
        with StageObserver(run.turn, "process", req.request_id) as observer:
            signal = run.stage_signal(self.policy.timeout_s)
            before = measure(assemble(plan, req), req)
            observer.transition("measured", _describe(before))
            changes: tuple[FragmentChange, ...] = ()
            executed: list[str] = []
            if self.policy.mode == "audit":
                if not plan.original_fragments:
                    raise PlanDefinitionError("original_fragments", "audit mode needs the plan's trusted originals")
                changes = audit_plan_change(plan.original_fragments, plan, plan.mutable_fragment_ids, "application")
                observer.transition("audited", ",".join(c.fragment_id for c in changes))
            elif self.policy.mode == "reduce":
                plan, changes, executed = await self._reduce_loop(run, plan, preparation, signal, observer)
            model_input = assemble(plan, req)
            after = check_limits(model_input, req, plan)
            soft_met = self._soft_met(after)
            observer.transition("assembled", _describe(after) + ("" if soft_met else " (soft target missed)"))
            report = ProcessingReport(
                "process",
                req.request_id,
                self.policy.mode,
                executed_step_ids=tuple(executed),
                changes=changes,
                before=before,
                after=after,
                within_budget=True,
                soft_target_met=soft_met,
                model_calls=run.quota.used - calls_before,
                notes=() if soft_met else ("soft target missed; hard limits met",),
            )
            observer.completed(report)
        return ProcessingResult(model_input, plan, preparation.handle(), report)

    async def _reduce_loop(
        self,
        run: ContextRun,
        plan: ContextPlan,
        preparation: Preparation,
        signal: CancelSignal,
        observer: StageObserver,
    ) -> tuple[ContextPlan, tuple[FragmentChange, ...], list[str]]:
        req = preparation.request
        self._check_token_triggers(req)
        self._chooser.validate(plan)
        changes: list[FragmentChange] = []
        executed: list[str] = []
        measured, over_hard = self._evaluate(plan, req)
        if not self._triggered(measured, over_hard):
            observer.transition("not_triggered")
            return plan, (), executed
        while over_hard or not self._soft_met(measured):
            signal.check("process")
            ids = await self._choose(run, plan, preparation, measured, signal)
            if not ids:
                observer.transition("no_safe_step")
                break
            step = self.policy.step(ids[0])
            if step is None:
                raise StepUnavailableError(ids[0], "is not a step of the policy")
            plan, step_changes = await self._apply(run, plan, step, preparation, signal)
            changes.extend(step_changes)
            executed.append(step.id)
            observer.transition("step_applied", step.id)
            measured, over_hard = self._evaluate(plan, req)
        return plan, tuple(changes), executed

    async def _choose(
        self, run: ContextRun, plan: ContextPlan, preparation: Preparation, measured: Measurement, signal: CancelSignal
    ) -> list[str]:
        return await self._chooser.select(
            plan,
            preparation,
            run.quota,
            measured,
            lambda selector: run.handler_context(selector, signal, allow_tools=False),
        )

    async def _apply(
        self, run: ContextRun, plan: ContextPlan, step: Step, preparation: Preparation, signal: CancelSignal
    ) -> tuple[ContextPlan, tuple[FragmentChange, ...]]:
        """Run one step (marked as run first, so it never runs twice) and audit the new plan."""
        preparation.executed_steps.append(step.id)
        fragment = plan.fragment(step.fragment_id)
        if isinstance(step, TrimStep):
            reduced = trim_fragment(fragment, step)
        else:
            compressor = self.compressors[step.handler_id]
            context = run.handler_context(compressor, signal, allow_tools=True)
            reduced = await compress_fragment(fragment, step, compressor, context)
        signal.check(step.id)
        new_plan = plan.replace(reduced)
        changes = audit_plan_change(plan.fragments, new_plan, frozenset({fragment.id}), step.id)
        if isinstance(step, TrimStep):
            preparation.record_trim(fragment.id, fragment.chars, reduced.chars)
        return new_plan, changes

    def _check_token_triggers(self, request: ContextRequest) -> None:
        for name in ("trigger_tokens", "target_input_tokens"):
            if getattr(self.policy, name) is not None and request.counter is None:
                raise PlanDefinitionError(name, "needs a TokenCounter on the request")

    def _evaluate(self, plan: ContextPlan, request: ContextRequest) -> tuple[Measurement, bool]:
        """The plan's measurement and whether it exceeds a hard limit."""
        model_input = assemble(plan, request)
        try:
            return check_limits(model_input, request, plan), False
        except PlanOverLimitError:
            return measure(model_input, request), True

    def _soft_met(self, measured: Measurement) -> bool:
        chars, tokens = self.policy.soft_target_chars, self.policy.soft_target_tokens
        if chars is not None and measured.body_chars > chars:
            return False
        return tokens is None or (measured.tokens is not None and measured.tokens <= tokens)

    def _triggered(self, measured: Measurement, over_hard: bool) -> bool:
        """Processing starts over a hard limit, over a trigger watermark, or (with no trigger) off a soft target."""
        policy = self.policy
        if over_hard:
            return True
        if policy.trigger_chars is None and policy.trigger_tokens is None:
            return not self._soft_met(measured)
        over_chars = policy.trigger_chars is not None and measured.body_chars > policy.trigger_chars
        over_tokens = policy.trigger_tokens is not None and (measured.tokens or 0) > policy.trigger_tokens
        return over_chars or over_tokens


def _describe(measured: Measurement) -> str:
    tokens = "" if measured.tokens is None else f" tokens={measured.tokens}"
    return f"body={measured.body_chars} schema={measured.schema_chars}{tokens}"
