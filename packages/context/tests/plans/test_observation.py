"""Rule 9: stages emit start, transition, completion/failure and duration facts with the approved report."""

from __future__ import annotations

import asyncio
import logging

import pytest

from sciencediscovery.context.plans import (
    ContextPolicy,
    ContextProcessor,
    ContextStageCompleted,
    ContextStageDuration,
    PlanOverLimitError,
    TrimStep,
)
from sciencediscovery.runtime_core.serialization import event_to_json


def test_each_stage_emits_start_transitions_completion_and_duration_with_its_report(kit, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    run, sink, _ = kit.make_run()
    processor = ContextProcessor(ContextPolicy("reduce", (TrimStep("window", "history", "history", 600),)))
    plan = kit.plan_of(kit.history_fragment(10))

    async def main():
        selected = await processor.select(run, plan, request=kit.request(max_input_chars=600))
        reduced = await processor.reduce(run, plan, "window", prepared=selected.prepared)
        processed = await processor.process(run, reduced.plan, prepared=reduced.prepared)
        return [selected.report, reduced.report, processed.report]

    reports = asyncio.run(main())
    for stage, report in zip(("select", "reduce", "process"), reports, strict=True):
        events = [e for e in sink.events if e.stage == stage]
        kinds = [e.kind for e in events]
        assert kinds[0] == "context_stage_started"
        assert set(kinds[1:-2]) == {"context_stage_transition"}
        assert kinds[-2:] == ["context_stage_completed", "context_stage_duration"]
        completed = events[-2]
        assert isinstance(completed, ContextStageCompleted)
        assert completed.report == report
        assert (completed.run_id, completed.context_id, completed.request_id) == ("run-1", "ctx-1", "req-1")
        duration = events[-1]
        assert isinstance(duration, ContextStageDuration)
        assert duration.outcome == "completed"
        assert duration.duration_s >= 0
    assert [e.name for e in sink.of_kind("context_stage_transition") if e.stage == "reduce"] == ["step_applied"]
    assert [r for r in caplog.records if r.name.startswith("sciencediscovery")] == []  # stages write no logs
    assert event_to_json(sink.events[-2])["report"]["stage"] == "process"


def test_a_failing_stage_emits_failure_and_duration(kit) -> None:
    run, sink, _ = kit.make_run()
    with pytest.raises(PlanOverLimitError):
        asyncio.run(
            ContextProcessor(ContextPolicy()).process(
                run, kit.plan_of(kit.history_fragment(10)), request=kit.request(max_input_chars=10)
            )
        )
    kinds = [e.kind for e in sink.events]
    assert kinds[0] == "context_stage_started"
    assert kinds[-2:] == ["context_stage_failed", "context_stage_duration"]
    failed = sink.events[-2]
    assert failed.error_type == "PlanOverLimitError"
    assert "max_input_chars is 10" in failed.message
    assert sink.events[-1].outcome == "failed"
