"""SpecialistRunner: the ChildRunFactory the composition root installs around its own.

It adds what a delegation needs beyond one kernel run: the lifecycle (every
transition an event on the parent's sink and a live :class:`SubagentRecord`),
a cap on concurrent children, the cancellation cascade (a cancelled parent's
``task`` call cancels the child it awaits), and the output-contract check with
exactly one repair round, after which a non-conforming brief is delivered with
a diagnostic rather than dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import attrs

from sciencediscovery.orchestration import ChildRunFactory, ChildRunSpec, SpecialistDefinition
from sciencediscovery.orchestration.delegation import DEFAULT_BRIEF_CHARS, bounded, final_text
from sciencediscovery.runtime_core import ConfigurationError, Message, RunEventSink, RunResult, RunStatus

from .contracts import OutputContract
from .definitions import output_contract
from .lifecycle import SubagentRecord, SubagentState
from .supervision import Supervision, unbind

DEFAULT_MAX_CONCURRENT = 3
REPAIR_SUFFIX = "/repair"


def repair_request(findings: tuple[str, ...]) -> str:
    """The one message that returns a non-conforming brief to the child."""
    listed = "\n".join(f"- {finding}" for finding in findings)
    return (
        "Your brief does not meet its output contract. The contract validator found:\n"
        f"{listed}\n"
        "Reply with the complete corrected brief only."
    )


def contract_findings(contract: OutputContract, brief: str, limit: int) -> tuple[str, ...]:
    """The contract's findings, plus one when the brief is longer than the parent accepts."""
    findings = contract.check(brief)
    if len(brief) > limit:
        findings += (f"the brief has {len(brief)} characters; the limit is {limit}: shorten it",)
    return findings


def with_diagnostic(brief: str, findings: tuple[str, ...], limit: int) -> str:
    """``brief`` headed by the findings it failed, bounded so the diagnostic survives the ``task`` bound."""
    diagnostic = bounded(
        "[Output contract not met after one repair round; the brief is delivered as it is. Findings:\n"
        + "\n".join(f"- {finding}" for finding in findings)
        + "]",
        max(1, limit // 2),
    )
    return diagnostic + "\n\n" + bounded(brief, max(1, limit - len(diagnostic) - 2))


class SpecialistRunner:
    """A :class:`ChildRunFactory` wrapping ``inner`` (the composition root's) with the subagent lifecycle.

    ``specialists`` is the run's table (``settings["specialists"]``); those built
    as :class:`~sciencediscovery.specialist.Specialist` get their brief checked.
    ``events`` is an extra sink for lifecycle events besides each parent's own.
    """

    def __init__(
        self,
        inner: ChildRunFactory,
        specialists: Mapping[str, SpecialistDefinition] | None = None,
        *,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
        brief_chars: int = DEFAULT_BRIEF_CHARS,
        events: RunEventSink | None = None,
    ) -> None:
        if not isinstance(inner, ChildRunFactory):
            raise ConfigurationError("child_run_factory", f"must implement ChildRunFactory, got {type(inner).__name__}")
        for name, value in (("max_concurrent", max_concurrent), ("brief_chars", brief_chars)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(name, f"must be a positive integer, got {value!r}")
        self.inner = inner
        self.specialists = dict(specialists or {})
        self.max_concurrent = max_concurrent
        self.brief_chars = brief_chars
        self.events = events
        self.records: dict[str, SubagentRecord] = {}
        self._slots = asyncio.Semaphore(max_concurrent)

    def active(self) -> tuple[SubagentRecord, ...]:
        """Delegations not yet in a terminal state (``created`` ones are queued for a slot)."""
        return tuple(record for record in self.records.values() if not record.state.terminal)

    def _publish(self, record: SubagentRecord) -> None:
        self.records[record.child_context_id] = record

    async def run_child(self, spec: ChildRunSpec) -> RunResult:
        sinks = [sink for sink in (spec.parent.events if spec.parent else None, self.events) if sink is not None]
        supervision = Supervision(spec, sinks, self._publish)
        try:
            async with self._slots:
                supervision.move(SubagentState.RUNNING, f"started (at most {self.max_concurrent} at once)")
                result = await self._run(supervision, spec)
                result, note = await self._check_brief(supervision, spec, result)
        except asyncio.CancelledError:
            supervision.move(SubagentState.CANCELLED, "the task call awaiting it was cancelled")
            raise
        except Exception as error:
            reason = f"the child run could not be run: {type(error).__name__}: {error}"
            supervision.move(SubagentState.FAILED, reason)
            return RunResult(
                run_id="",
                context_id=spec.context_id,
                status=RunStatus.FAILED,
                reason=reason,
                history=spec.history,
                turns=0,
                error_type=type(error).__name__,
            )
        supervision.move(SubagentState.of_status(result.status), note or result.reason, result.run_id)
        return result

    async def _run(self, supervision: Supervision, spec: ChildRunSpec) -> RunResult:
        supervision.child_context_ids.add(spec.context_id)
        token = supervision.bind()
        try:
            return await self.inner.run_child(spec)
        finally:
            unbind(token)

    async def _check_brief(
        self, supervision: Supervision, spec: ChildRunSpec, result: RunResult
    ) -> tuple[RunResult, str]:
        """Check a completed specialist's brief; on findings, one repair round, then deliver with a diagnostic."""
        definition = self.specialists.get(spec.specialist) if spec.specialist else None
        contract = output_contract(definition) if definition is not None else None
        if contract is None or result.status is not RunStatus.COMPLETED:
            return result, ""
        brief = final_text(result).strip()
        findings = contract_findings(contract, brief, self.brief_chars)
        supervision.checked(1, findings)
        if not findings:
            return result, "brief conforms to its output contract"
        repair = attrs.evolve(
            spec,
            context_id=spec.context_id + REPAIR_SUFFIX,
            history=(*result.history, Message.user(repair_request(findings))),
            max_turns=max(1, spec.max_turns - result.turns),
        )
        try:
            repaired = await self._run(supervision, repair)
        except Exception as error:
            repaired = attrs.evolve(
                result, status=RunStatus.FAILED, reason=f"{type(error).__name__}: {error}", turns=result.turns
            )
        else:
            repaired = attrs.evolve(repaired, turns=result.turns + repaired.turns)
        if repaired.status is RunStatus.COMPLETED:
            brief = final_text(repaired).strip()
            findings = contract_findings(contract, brief, self.brief_chars)
            supervision.checked(2, findings)
            if not findings:
                return repaired, "brief conforms to its output contract after one repair round"
            delivered = repaired
        else:
            findings += (f"the repair round ended with status {repaired.status.value}: {repaired.reason}",)
            delivered = attrs.evolve(result, turns=repaired.turns)
        text = with_diagnostic(brief, findings, self.brief_chars)
        return attrs.evolve(delivered, final_message=Message.assistant(text)), "brief delivered with a diagnostic"
