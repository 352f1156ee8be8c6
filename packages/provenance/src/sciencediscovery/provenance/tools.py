"""The provenance tools: ``record_claim``, ``list_claims`` and ``review_checkpoint``."""

from __future__ import annotations

import json
import uuid
from typing import Any

import attrs

from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput

from .claims import Claim, EvidenceOrigin, EvidenceRelation, parse_evidence, parse_statement
from .errors import InvalidClaimError, ReviewRunnerError
from .review import ReviewDecision, ReviewEvidence, ReviewLevel, ReviewOutcome, ReviewRecord, ReviewRunner
from .store import ProvenanceStore, now

REVIEW_KEY = "review"
"""Result metadata key of ``review_checkpoint``: the logged review (read by the reviews channel)."""
CLAIM_KEY = "claim"
"""Result metadata key of ``record_claim``: the recorded claim."""

_EVIDENCE_SCHEMA = {
    "type": "object",
    "properties": {
        "origin": {"type": "string", "enum": [o.value for o in EvidenceOrigin]},
        "reference": {
            "type": "string",
            "description": "tool call id, DOI/URL, execution id, artifact id, or user quote",
        },
        "relation": {"type": "string", "enum": [r.value for r in EvidenceRelation]},
        "note": {"type": "string"},
    },
    "required": ["origin", "reference", "relation"],
}


def claim_json(claim: Claim) -> dict[str, Any]:
    """A claim as JSON data."""
    data = attrs.asdict(claim)
    data["evidence"] = [
        {**attrs.asdict(e), "origin": e.origin.value, "relation": e.relation.value} for e in claim.evidence
    ]
    return data


def _error(message: str, kind: str) -> ToolOutput:
    return ToolOutput(content=message, is_error=True, error_kind=kind)


def provenance_tools(
    store: ProvenanceStore, *, review_enabled: bool, runner: ReviewRunner | None
) -> list[ToolDefinition]:
    """The three tools, bound to ``store`` and the review configuration."""

    async def record_claim(invocation: ToolInvocation) -> ToolOutput:
        context = invocation.context
        try:
            statement = parse_statement(invocation.arguments.get("statement"))
            raw = invocation.arguments.get("evidence", [])
            if not isinstance(raw, list):
                raise InvalidClaimError(f"evidence must be a list, got {type(raw).__name__}")
            evidence = parse_evidence(raw)
            for index, ref in enumerate(evidence):
                if ref.origin is EvidenceOrigin.TOOL_RECORD and not store.has_call(context.context_id, ref.reference):
                    raise InvalidClaimError(
                        f"evidence[{index}].reference: no tool record with call id {ref.reference!r} in this context"
                    )
        except InvalidClaimError as error:
            return _error(str(error), "invalid_arguments")
        claim = store.add_claim(
            context_id=context.context_id,
            run_id=context.run_id,
            call_id=invocation.call.id,
            statement=statement,
            evidence=evidence,
        )
        data = claim_json(claim)
        return ToolOutput(content=json.dumps(data), metadata={CLAIM_KEY: data})

    async def list_claims(invocation: ToolInvocation) -> ToolOutput:
        claims = [claim_json(c) for c in store.claims(context_id=invocation.context.context_id)]
        return ToolOutput(content=json.dumps({"claims": claims}))

    async def review_checkpoint(invocation: ToolInvocation) -> ToolOutput:
        context = invocation.context
        arguments = invocation.arguments
        objective = arguments.get("objective")
        if not isinstance(objective, str) or not objective.strip():
            return _error(f"objective must be a non-empty string, got {objective!r}", "invalid_arguments")
        try:
            level = ReviewLevel(arguments.get("level", ReviewLevel.STANDARD.value))
        except ValueError:
            return _error(f"level must be quick, standard or deep; got {arguments.get('level')!r}", "invalid_arguments")
        evidence = _lock_evidence(store, context.context_id, context.run_id, arguments.get("claim_ids"))
        if isinstance(evidence, ToolOutput):
            return evidence
        error: str | None = None
        if not review_enabled or runner is None:
            reason = "reviews are disabled" if not review_enabled else "no review runner is configured"
            outcome = ReviewOutcome(ReviewDecision.SKIPPED, summary=f"Review skipped: {reason}.")
        else:
            try:
                outcome = await runner.review(objective, evidence, level)
                if not isinstance(outcome, ReviewOutcome):
                    raise ReviewRunnerError(f"review runner returned {type(outcome).__name__}, not a ReviewOutcome")
            except Exception as failure:  # a failed review is logged and reported, never lost
                error = f"{type(failure).__name__}: {failure}"
                outcome = ReviewOutcome(ReviewDecision.SKIPPED, summary=f"Review failed: {error}")
        record = ReviewRecord(
            review_id=f"review-{uuid.uuid4().hex[:12]}",
            context_id=context.context_id,
            run_id=context.run_id,
            call_id=invocation.call.id,
            objective=objective.strip(),
            level=level,
            decision=outcome.decision,
            findings=outcome.findings,
            summary=outcome.summary,
            evidence_digest=evidence.digest,
            error=error,
            created_at=now(),
        )
        store.log_review(record)
        data = review_json(record)
        return ToolOutput(
            content=json.dumps(data),
            metadata={REVIEW_KEY: data},
            is_error=error is not None,
            error_kind="review_failed" if error else None,
        )

    return [
        ToolDefinition(
            name="record_claim",
            description="Record a scientific claim with typed evidence (tool records, papers, executions, artifacts, "
            "user input), each marked supports, contradicts or context.",
            parameters={
                "type": "object",
                "properties": {
                    "statement": {"type": "string"},
                    "evidence": {"type": "array", "items": _EVIDENCE_SCHEMA},
                },
                "required": ["statement", "evidence"],
            },
            handler=record_claim,
            action=ToolAction.STATE,
        ),
        ToolDefinition(
            name="list_claims",
            description="List the claims recorded in this conversation with their evidence.",
            parameters={"type": "object", "properties": {}},
            handler=list_claims,
            action=ToolAction.READ,
            read_only=True,
        ),
        ToolDefinition(
            name="review_checkpoint",
            description="Ask a read-only reviewer to check the evidence so far. Returns ACCEPT_AND_PROCEED, "
            "REVISE_AND_RETRY or SKIPPED (reviews disabled) with findings.",
            parameters={
                "type": "object",
                "properties": {
                    "objective": {"type": "string", "description": "what the review should establish"},
                    "level": {"type": "string", "enum": [level.value for level in ReviewLevel]},
                    "claim_ids": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["objective"],
            },
            handler=review_checkpoint,
            action=ToolAction.DELEGATE,
        ),
    ]


def _lock_evidence(store: ProvenanceStore, context_id: str, run_id: str, claim_ids: Any) -> ReviewEvidence | ToolOutput:
    claims = store.claims(context_id=context_id)
    if claim_ids is not None:
        if not isinstance(claim_ids, list) or not all(isinstance(c, str) for c in claim_ids):
            return _error(f"claim_ids must be a list of claim ids, got {claim_ids!r}", "invalid_arguments")
        known = {claim.claim_id for claim in claims}
        unknown = [c for c in claim_ids if c not in known]
        if unknown:
            return _error(f"claim_ids: unknown claim ids {unknown}", "invalid_arguments")
        claims = [claim for claim in claims if claim.claim_id in set(claim_ids)]
    return ReviewEvidence(context_id, run_id, tuple(claims), tuple(store.tool_executions(run_id)))


def review_json(record: ReviewRecord) -> dict[str, Any]:
    """A logged review as JSON data."""
    data: dict[str, Any] = attrs.asdict(record)
    data["level"] = record.level.value
    data["decision"] = record.decision.value
    return data


__all__ = ["CLAIM_KEY", "REVIEW_KEY", "claim_json", "provenance_tools", "review_json"]
