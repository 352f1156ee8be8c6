"""End to end: the same over-limit input is rejected without processing and accepted with ``continuity``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from sciencediscovery.context.plans import PlanOverLimitError, create_context_strategy
from sciencediscovery.runtime_core.testing import ListModelClient, reply

DEMO = Path(__file__).resolve().parents[4] / "examples" / "context_plans_demo.py"


def test_same_input_rejected_without_processing_and_accepted_with_continuity(kit) -> None:
    fragment = kit.history_fragment(12, max_chars=5000)
    plan = kit.plan_of(kit.instructions_fragment(), fragment)
    request = kit.request(max_input_chars=800)

    plain = ListModelClient([])
    run, _, _ = kit.make_run(plain)
    with pytest.raises(PlanOverLimitError) as caught:
        asyncio.run(run.invoke(plan, request=request))
    assert caught.value.limit_name == "max_input_chars"
    assert plain.inputs == []

    client = ListModelClient([reply("rounds 0-10 reviewed TP53 studies"), reply("screen study 11")])
    run, sink, _ = kit.make_run(client)
    compressor = kit.SummaryCompressor()
    strategy = create_context_strategy("continuity", fragment, "history", compressor=compressor, target_chars=700)

    async def main():
        processed = await strategy.processor().process(run, plan, request=request)
        return processed, await run.invoke(processed.input, prepared=processed.prepared)

    processed, answer = asyncio.run(main())
    assert answer.message.content == "screen study 11"
    assert client.inputs[1] is processed.input
    assert processed.input.messages[0].content == "Summary: rounds 0-10 reviewed TP53 studies"
    assert [m.content for m in processed.input.messages[1:]] == [e["content"] for e in kit.entries(12)[-2:]]
    assert len(compressor.jobs[0].fragment.fields["history"]) == 22
    assert run.quota.used == 2
    assert [e.stage for e in sink.of_kind("context_stage_completed")] == ["process", "invoke"]


def test_the_documented_demo_runs() -> None:
    completed = subprocess.run([sys.executable, str(DEMO)], capture_output=True, text=True, timeout=120, check=True)
    lines = completed.stdout.splitlines()
    assert lines[0] == "rejected: max_input_chars is 1500 but the request measures 2516 (fragments: history)"
    assert lines[1] == "model calls without processing: 0"
    assert lines[2].startswith("steps: ('continuity:history.history',)")
    assert lines[-1] == "answer: Screen studies 10 and 11 first.  (model calls used: 2)"
