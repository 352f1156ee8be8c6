"""Review checkpoints: disabled by default, never automatic, logged, and decided by the injected runner."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from sciencediscovery.provenance import (
    ReviewDecision,
    ReviewEvidence,
    ReviewFinding,
    ReviewLevel,
    ReviewOutcome,
    store_for,
)
from sciencediscovery.provenance.settings import review_runner
from sciencediscovery.runtime_core import ConfigurationError, ToolCall, hookimpl
from sciencediscovery.runtime_core.testing import reply
from sciencediscovery.tools.definitions import ToolDefinition, ToolInvocation, ToolOutput


class StrictReviewer:
    """A reviewer that accepts only when every claim has supporting evidence; remembers what it was shown."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ReviewEvidence, ReviewLevel]] = []

    async def review(self, objective: str, evidence: ReviewEvidence, level: ReviewLevel) -> ReviewOutcome:
        self.seen.append((objective, evidence, level))
        unsupported = [c for c in evidence.claims if not any(e.relation.value == "supports" for e in c.evidence)]
        if unsupported:
            findings = [ReviewFinding("claim has no supporting evidence", "major", c.claim_id) for c in unsupported]
            return ReviewOutcome(ReviewDecision.REVISE_AND_RETRY, findings, "Unsupported claims.")
        return ReviewOutcome(ReviewDecision.ACCEPT_AND_PROCEED, (), "All claims supported.")


class BrokenReviewer:
    async def review(self, objective: str, evidence: ReviewEvidence, level: ReviewLevel) -> ReviewOutcome:
        raise RuntimeError("reviewer run crashed")


class FilePlugin:
    """A tool that announces an artifact, so tests can show no review starts by itself."""

    @hookimpl
    def register_tools(self, register: Any, settings: Any) -> None:
        async def write(invocation: ToolInvocation) -> ToolOutput:
            return ToolOutput("written", metadata={"artifacts": [{"sha256": "a" * 64, "name": "report.md"}]})

        register(ToolDefinition("write_report", "Write.", {"type": "object", "properties": {}}, write))


def _claim(call_id: str, relation: str) -> ToolCall:
    evidence = [{"origin": "paper", "reference": "doi:10.1/abc", "relation": relation}]
    return ToolCall(call_id, "record_claim", {"statement": f"claim {call_id}", "evidence": evidence})


def _review(call_id: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id, "review_checkpoint", {"objective": "check the claims", **arguments})


def _result(run: Any, call_id: str) -> dict[str, Any]:
    message = next(m for m in run.result.history if m.tool_call_id == call_id)
    return {"status": message.status.value, **json.loads(message.content)}


def test_enabled_review_returns_the_runner_decision_and_logs_it(settings, run_kernel) -> None:
    reviewer = StrictReviewer()
    settings.update(review_enabled=True, review_runner=reviewer)
    script = [
        reply("", _claim("c1", "supports")),
        reply("", _review("r1", level="deep")),
        reply("", _claim("c2", "contradicts")),
        reply("", _review("r2")),
        reply("done"),
    ]
    run = asyncio.run(run_kernel(settings, script))
    assert _result(run, "r1")["decision"] == "ACCEPT_AND_PROCEED"
    second = _result(run, "r2")
    assert second["decision"] == "REVISE_AND_RETRY" and second["findings"][0]["severity"] == "major"
    assert [level for _, _, level in reviewer.seen] == [ReviewLevel.DEEP, ReviewLevel.STANDARD]
    first_evidence = reviewer.seen[0][1]
    assert [r.call_id for r in first_evidence.records] == ["c1"]  # locked to what existed at the checkpoint
    logged = store_for(settings).reviews("ctx-1")
    assert [r.decision for r in logged] == [ReviewDecision.ACCEPT_AND_PROCEED, ReviewDecision.REVISE_AND_RETRY]
    assert logged[0].evidence_digest == first_evidence.digest != logged[1].evidence_digest
    rendered = [json.loads(item) for item in first_evidence.render()]
    assert rendered[0]["statement"] == "claim c1" and rendered[0]["evidence"][0]["relation"] == "supports"
    assert rendered[-1] == {
        "tool_records": [
            {
                "call_id": "c1",
                "tool": "record_claim",
                "status": "ok",
                "result_sha256": first_evidence.records[0].result_hash,
            }
        ]
    }
    assert run.channels.rendered()["reviews"]["latest_decision"] == "REVISE_AND_RETRY"


def test_review_is_skipped_when_disabled_even_with_a_runner(settings, run_kernel) -> None:
    reviewer = StrictReviewer()
    settings["review_runner"] = reviewer
    run = asyncio.run(run_kernel(settings, [reply("", _review("r1")), reply("done")]))
    assert _result(run, "r1")["decision"] == "SKIPPED"
    assert "disabled" in _result(run, "r1")["summary"]
    assert reviewer.seen == []


def test_review_is_skipped_when_enabled_without_a_runner(settings, run_kernel) -> None:
    settings["review_enabled"] = True
    run = asyncio.run(run_kernel(settings, [reply("", _review("r1")), reply("done")]))
    assert _result(run, "r1")["decision"] == "SKIPPED"
    assert "no review runner" in _result(run, "r1")["summary"]


def test_a_failing_runner_is_logged_and_reported_as_an_error_result(settings, run_kernel) -> None:
    settings.update(review_enabled=True, review_runner=BrokenReviewer())
    run = asyncio.run(run_kernel(settings, [reply("", _review("r1")), reply("done")]))
    result = _result(run, "r1")
    assert result["status"] == "error" and "reviewer run crashed" in result["error"]
    [logged] = store_for(settings).reviews("ctx-1")
    assert logged.decision is ReviewDecision.SKIPPED and "reviewer run crashed" in (logged.error or "")


def test_registering_an_artifact_never_starts_a_review(settings, run_kernel) -> None:
    reviewer = StrictReviewer()
    settings.update(review_enabled=True, review_runner=reviewer)
    run = asyncio.run(
        run_kernel(settings, [reply("", ToolCall("w1", "write_report", {})), reply("done")], plugins=[FilePlugin()])
    )
    assert run.result.status.value == "completed"
    assert reviewer.seen == [] and store_for(settings).reviews("ctx-1") == []
    assert run.channels.rendered()["reviews"] is None


def test_review_arguments_are_validated_with_the_field_named(settings, run_kernel) -> None:
    settings.update(review_enabled=True, review_runner=StrictReviewer())
    script = [
        reply("", ToolCall("r1", "review_checkpoint", {"objective": "x", "claim_ids": ["claim-nope"]})),
        reply("done"),
    ]
    run = asyncio.run(run_kernel(settings, script))
    message = next(m for m in run.result.history if m.tool_call_id == "r1")
    assert message.status.value == "error" and "claim_ids" in message.content and "claim-nope" in message.content


def test_review_settings_are_checked_with_the_key_named() -> None:
    with pytest.raises(ConfigurationError, match="review_runner"):
        review_runner({"review_runner": object()})
