"""Agent-initiated review checkpoints: the runner port, locked evidence, outcomes and the review log entry.

Review is never automatic: only the ``review_checkpoint`` tool starts one, and
only when reviews are enabled and a :class:`ReviewRunner` was injected.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

import attrs

from .claims import Claim
from .hashing import sha256_json
from .records import ToolExecutionRecord


class ReviewLevel(str, enum.Enum):
    """How thorough the reviewer should be."""

    QUICK = "quick"
    STANDARD = "standard"
    DEEP = "deep"


class ReviewDecision(str, enum.Enum):
    """What the main agent should do next."""

    ACCEPT_AND_PROCEED = "ACCEPT_AND_PROCEED"
    REVISE_AND_RETRY = "REVISE_AND_RETRY"
    SKIPPED = "SKIPPED"


@attrs.frozen
class ReviewFinding:
    """One problem (or confirmation) the reviewer reports."""

    message: str
    severity: str = "info"
    claim_id: str | None = None


def _findings(findings: Iterable[ReviewFinding]) -> tuple[ReviewFinding, ...]:
    return tuple(findings)


@attrs.frozen
class ReviewOutcome:
    """A reviewer's answer."""

    decision: ReviewDecision
    findings: tuple[ReviewFinding, ...] = attrs.field(default=(), converter=_findings)
    summary: str = ""


@attrs.frozen
class ReviewEvidence:
    """The evidence a review is locked to: claims and tool records, and the digest that pins them."""

    context_id: str
    run_id: str
    claims: tuple[Claim, ...]
    records: tuple[ToolExecutionRecord, ...]

    @property
    def digest(self) -> str:
        """SHA-256 over the claims and records, so a logged review names exactly what it saw."""
        return sha256_json(attrs.asdict(self))

    def render(self) -> tuple[str, ...]:
        """The evidence as text items for a reviewer prompt: one JSON block per claim, then the tool records."""
        claims = [
            json.dumps(
                {
                    "claim_id": claim.claim_id,
                    "statement": claim.statement,
                    "evidence": [
                        {
                            "origin": e.origin.value,
                            "reference": e.reference,
                            "relation": e.relation.value,
                            "note": e.note,
                        }
                        for e in claim.evidence
                    ],
                },
                ensure_ascii=False,
            )
            for claim in self.claims
        ]
        records = [
            {"call_id": r.call_id, "tool": r.tool, "status": r.status, "result_sha256": r.result_hash}
            for r in self.records
        ]
        return (*claims, json.dumps({"tool_records": records}, ensure_ascii=False))


@runtime_checkable
class ReviewRunner(Protocol):
    """Runs a read-only, reviewer-scoped review.

    Orchestration implements it; the composition root injects it as ``settings["review_runner"]``.
    """

    async def review(self, objective: str, evidence: ReviewEvidence, level: ReviewLevel) -> ReviewOutcome: ...


@attrs.frozen
class ReviewRecord:
    """One logged review checkpoint (every checkpoint is logged, including skipped and failed ones)."""

    review_id: str
    context_id: str
    run_id: str
    call_id: str | None
    objective: str
    level: ReviewLevel
    decision: ReviewDecision
    findings: tuple[ReviewFinding, ...]
    summary: str
    evidence_digest: str
    error: str | None
    created_at: str
