"""Rule 6: recent and continuity strategies, generated ids, defaults and explicit overrides (0 included)."""

from __future__ import annotations

import asyncio

import pytest

from sciencediscovery.context.grouping import USER_TURN, FixedGrouping
from sciencediscovery.context.plans import (
    CompressStep,
    PlanDefinitionError,
    Preserve,
    TrimStep,
    create_context_strategy,
)


def test_recent_is_a_local_window_of_complete_rounds_without_model_calls(kit) -> None:
    fragment = kit.history_fragment(10, max_chars=500)
    strategy = create_context_strategy("recent", fragment, "history")
    assert strategy.policy.steps == (TrimStep("recent:history.history", "history", "history", 500, 1, USER_TURN),)
    assert strategy.compressors == ()
    run, _, client = kit.make_run()
    result = asyncio.run(strategy.processor().process(run, kit.plan_of(fragment), request=kit.request()))
    kept = result.plan.fragment("history").fields["history"]
    assert kept == kit.entries(10)[-len(kept) :]
    assert kept[0]["role"] == "user"
    assert result.plan.fragment("history").chars <= 500
    assert client.inputs == []
    assert run.quota.used == 0


def test_continuity_summarizes_the_old_segment_and_keeps_recent_raw_text(kit) -> None:
    fragment = kit.history_fragment(10, max_chars=600)
    compressor = kit.SummaryCompressor(handler_id="digest")
    strategy = create_context_strategy("continuity", fragment, "history", compressor=compressor)
    (step,) = strategy.policy.steps
    assert step == CompressStep(
        "continuity:history.history", "history", "digest", 600, Preserve("history", 1, USER_TURN)
    )
    assert strategy.compressors == (compressor,)
    run, _, client = kit.make_run(kit.ScriptedClient("rounds 0-8 covered TP53 screening"))
    result = asyncio.run(strategy.processor().process(run, kit.plan_of(fragment), request=kit.request()))
    history = result.plan.fragment("history").fields["history"]
    assert history == [
        {"role": "user", "content": "Summary: rounds 0-8 covered TP53 screening"},
        *kit.entries(10)[-2:],
    ]
    assert len(client.inputs) == 1


def test_explicit_values_win_and_zero_is_not_treated_as_default(kit) -> None:
    fragment = kit.history_fragment(3, max_chars=500)
    compressor = kit.SummaryCompressor()
    strategy = create_context_strategy(
        "continuity",
        fragment,
        "history",
        compressor=compressor,
        target_chars=0,
        keep_groups=0,
        grouping=FixedGrouping(2),
    )
    (step,) = strategy.policy.steps
    assert step.target_chars == 0
    assert step.preserve == Preserve("history", 0, FixedGrouping(2))
    recent = create_context_strategy("recent", fragment, "history", target_chars=0, keep_groups=0)
    assert recent.policy.steps[0].target_chars == 0
    assert recent.policy.steps[0].keep_groups == 0


def test_strategies_reject_missing_or_misplaced_inputs(kit) -> None:
    with pytest.raises(PlanDefinitionError, match="target_chars"):
        create_context_strategy("recent", kit.history_fragment(2), "history")
    with pytest.raises(PlanDefinitionError, match="compressor"):
        create_context_strategy("continuity", kit.history_fragment(2, max_chars=10), "history")
    with pytest.raises(PlanDefinitionError, match="kind"):
        create_context_strategy("forget", kit.history_fragment(2, max_chars=10), "history")
