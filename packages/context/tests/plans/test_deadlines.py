"""Rule 8: processing deadlines, parent cancellation, signals for internal model calls, no late success."""

from __future__ import annotations

import asyncio
import time

import pytest

from sciencediscovery.context.plans import (
    CancelSignal,
    CompressStep,
    ContextPolicy,
    ContextProcessor,
    PlanDefinitionError,
    Preserve,
    ProcessingCancelledError,
)

STEP = CompressStep("s", "history", "slow", 10_000, Preserve("history", 1))


class Hanging:
    """A compressor that waits forever; records whether it saw the cancellation."""

    id = "slow"
    max_calls = 0

    def __init__(self) -> None:
        self.cancelled = False

    async def compress(self, job, context):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise


def _reduce(kit, run, compressor, policy=None):
    processor = ContextProcessor(policy or ContextPolicy("reduce", (STEP,)), compressors=[compressor])
    return processor.reduce(run, kit.plan_of(kit.history_fragment(3)), "s", request=kit.request())


def test_the_processing_deadline_defaults_to_the_runs_limit(kit) -> None:
    run, sink, _ = kit.make_run(timeout_s=0.05)
    hanging = Hanging()
    with pytest.raises(ProcessingCancelledError, match="deadline exceeded"):
        asyncio.run(_reduce(kit, run, hanging))
    assert hanging.cancelled
    assert sink.of_kind("context_stage_failed")[0].error_type == "ProcessingCancelledError"


def test_the_deadline_can_be_overridden_per_policy(kit) -> None:
    run, _, _ = kit.make_run(timeout_s=3600)
    policy = ContextPolicy("reduce", (STEP,), timeout_s=0.05)
    with pytest.raises(ProcessingCancelledError, match="deadline exceeded"):
        asyncio.run(_reduce(kit, run, Hanging(), policy))


def test_an_override_never_extends_the_parent_deadline(kit) -> None:
    parent = CancelSignal(deadline=time.monotonic() + 0.05)
    run, _, _ = kit.make_run(cancel=parent, timeout_s=3600)
    assert run.stage_signal(3600).deadline == parent.deadline
    policy = ContextPolicy("reduce", (STEP,), timeout_s=3600)
    with pytest.raises(ProcessingCancelledError, match="deadline exceeded"):
        asyncio.run(_reduce(kit, run, Hanging(), policy))
    with pytest.raises(PlanDefinitionError, match="timeout_s"):
        ContextPolicy(timeout_s=0)


def test_parent_cancellation_stops_processing_and_internal_model_requests(kit) -> None:
    parent = CancelSignal()
    client = kit.ScriptedClient(hang=True)
    run, _, _ = kit.make_run(client, cancel=parent)
    compressor = kit.SummaryCompressor(handler_id="slow")

    async def main():
        task = asyncio.ensure_future(_reduce(kit, run, compressor))
        await client.entered.wait()
        parent.cancel("user pressed stop")
        return await task

    with pytest.raises(ProcessingCancelledError, match="user pressed stop"):
        asyncio.run(main())
    assert client.cancelled == 1
    assert run.quota.used == 1  # the started call stays deducted


def test_a_handler_that_ignores_cancellation_cannot_commit_success(kit) -> None:
    class Stubborn:
        id = "slow"
        max_calls = 0

        async def compress(self, job, context):
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                pass  # ignores the cancellation and answers anyway
            return {"history": [{"role": "user", "content": "late summary"}]}

    run, sink, _ = kit.make_run(timeout_s=0.05)
    with pytest.raises(ProcessingCancelledError):
        asyncio.run(_reduce(kit, run, Stubborn()))
    assert sink.of_kind("context_stage_completed") == []


def test_a_result_returned_after_the_signal_fired_is_discarded(kit) -> None:
    parent = CancelSignal()

    class Late:
        id = "slow"
        max_calls = 0

        async def compress(self, job, context):
            parent.cancel("run aborted")  # the result below arrives after the signal fired
            return {"history": [{"role": "user", "content": "late summary"}]}

    run, sink, _ = kit.make_run(cancel=parent)
    with pytest.raises(ProcessingCancelledError, match="run aborted"):
        asyncio.run(_reduce(kit, run, Late()))
    assert sink.of_kind("context_stage_completed") == []
