"""review_checkpoint through the service: provenance's tool, orchestration's read-only reviewer, one child run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import attrs

from sciencediscovery.api.bootstrap.platform import Platform
from sciencediscovery.api.settings import ServiceSettings
from sciencediscovery.provenance.settings import store_for

CLAIM = {
    "statement": "Mutant p53 promotes chemoresistance",
    "evidence": [{"origin": "paper", "reference": "doi:10.1000/example", "relation": "supports"}],
}


def run(tmp_path: Path, review: bool) -> tuple[Platform, object]:
    main = tmp_path / "main.json"
    main.write_text(
        json.dumps(
            {
                "turns": [
                    {"tool_calls": [{"id": "claim", "name": "record_claim", "arguments": CLAIM}]},
                    {
                        "tool_calls": [
                            {"id": "review", "name": "review_checkpoint", "arguments": {"objective": "Check"}}
                        ]
                    },
                    {"content": "done"},
                ]
            }
        )
    )
    verdict = {
        "decision": "ACCEPT_AND_PROCEED",
        "findings": [{"message": "claim is cited"}],
        "confidence": "high",
        "summary": "supported",
    }
    reviewer = tmp_path / "reviewer.json"
    reviewer.write_text(json.dumps({"turns": [{"content": json.dumps(verdict)}]}))
    settings = ServiceSettings.load(
        data_dir=tmp_path / "data",
        model=f"scripted:{main}",
        environ={
            "SCIENCE_AGENT_PERMISSION_DEFAULT": "allow",
            "SCIENCEDISCOVERY_DISABLE_PLUGINS": "hello",
            **({"SCIENCEDISCOVERY_REVIEW": "1"} if review else {}),
        },
    )
    settings = attrs.evolve(settings, profiles={"reviewer": {"model": f"scripted:{reviewer}"}})
    platform = Platform(settings)
    summary = asyncio.run(platform.run_new({"objective": "Review TP53 resistance"}))
    return platform, summary


def review_result(platform: Platform, context_id: str) -> dict:
    [message] = [m for m in platform.store.load_history(context_id) if m.tool_call_id == "review"]
    return json.loads(message.content)


def test_an_enabled_checkpoint_runs_a_read_only_reviewer_and_logs_the_review(tmp_path: Path) -> None:
    platform, summary = run(tmp_path, review=True)
    assert summary.status == "completed", summary.reason
    result = review_result(platform, summary.context_id)
    assert result["decision"] == "ACCEPT_AND_PROCEED"
    assert result["findings"][0]["message"] == "claim is cited"
    reviewers = [s for s in platform.store.list_sessions() if s.config.get("scope") == "reviewer"]
    assert len(reviewers) == 1
    [review] = store_for({"data_dir": str(platform.settings.data_dir)}).reviews(summary.context_id)
    assert review.decision.value == "ACCEPT_AND_PROCEED"


def test_checkpoints_are_skipped_unless_enabled(tmp_path: Path) -> None:
    platform, summary = run(tmp_path, review=False)
    assert review_result(platform, summary.context_id)["decision"] == "SKIPPED"
    assert [s for s in platform.store.list_sessions() if s.config.get("scope") == "reviewer"] == []
