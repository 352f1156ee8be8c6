"""Invariants: reduction never grows a fragment, never changes an immutable fragment, never splits a group."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sciencediscovery.context.grouping import group_messages, messages_from_entries
from sciencediscovery.context.plans import (
    CompressStep,
    ContextFragment,
    ContextPlan,
    ContextPlanError,
    ContextPolicy,
    ContextProcessor,
    Preserve,
    TrimStep,
    json_chars,
)

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

texts = st.text(alphabet="abcdefgh xyz", max_size=30)


@st.composite
def histories(draw, min_rounds=0):
    rounds = draw(st.integers(min_value=min_rounds, max_value=8))
    result = []
    for _ in range(rounds):
        result.append({"role": "user", "content": draw(texts)})
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            result.append({"role": "assistant", "content": draw(texts)})
    if draw(st.booleans()) or not result:
        result.append({"role": "user", "content": draw(texts)})
    return result


def _groups(history):
    return group_messages(messages_from_entries(history))


def _history_plan(history):
    fragment = ContextFragment("history", "chat", "history", {"history": history})
    return ContextPlan((fragment,), processing_ids=("history",))


@SETTINGS
@given(histories(), st.integers(min_value=0, max_value=2000), st.integers(min_value=0, max_value=4))
def test_trim_never_grows_a_fragment_and_keeps_only_whole_recent_groups(kit, history, target, keep) -> None:
    plan = _history_plan(history)
    processor = ContextProcessor(ContextPolicy("reduce", (TrimStep("t", "history", "history", target, keep),)))
    result = asyncio.run(processor.reduce(kit.make_run()[0], plan, "t", request=kit.request()))
    after = result.plan.fragment("history")
    assert after.chars <= plan.fragment("history").chars
    kept = after.fields["history"]
    original_groups = _groups(history)
    kept_groups = _groups(kept) if kept else ()
    assert kept_groups == original_groups[len(original_groups) - len(kept_groups) :]
    assert len(kept_groups) >= min(keep, len(original_groups))
    if after.chars > target:  # missed only when the kept minimum alone is too long
        assert len(kept_groups) == min(keep, len(original_groups))
    if len(kept_groups) < len(original_groups):  # dropped no more groups than needed
        one_more = original_groups[len(original_groups) - len(kept_groups) - 1 :]
        assert (
            json_chars({"history": [{"role": m.role.value, "content": m.content} for g in one_more for m in g]})
            > target
        )


summaries = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": texts}), max_size=6
)


@SETTINGS
@given(histories(min_rounds=1), summaries, st.integers(min_value=0, max_value=4))
def test_compress_never_grows_and_stitches_the_recent_groups_back_whole(kit, history, summary, keep) -> None:
    compressor = kit.FunctionCompressor(lambda job: {"history": summary})
    step = CompressStep("c", "history", "local", 100_000, Preserve("history", keep))
    processor = ContextProcessor(ContextPolicy("reduce", (step,)), compressors=[compressor])
    plan = _history_plan(history)
    try:
        result = asyncio.run(processor.reduce(kit.make_run()[0], plan, "c", request=kit.request()))
    except ContextPlanError:
        return  # rejected: nothing was committed
    after = result.plan.fragment("history")
    assert after.chars <= plan.fragment("history").chars
    original_groups = _groups(history)
    recent = original_groups[max(len(original_groups) - keep, 0) :]
    tail_length = sum(len(group) for group in recent)
    assert (
        after.fields["history"][len(after.fields["history"]) - tail_length :] == history[len(history) - tail_length :]
    )


fragment_specs = st.lists(
    st.tuples(st.sampled_from(["system", "instructions", "history", "data"]), st.booleans(), histories()),
    min_size=1,
    max_size=4,
)


def _plan(specs):
    fragments = []
    processing = []
    for index, (role, listed, history) in enumerate(specs):
        fields = {"history": history} if role in ("history", "data") else {"text": str(history)}
        fragments.append(ContextFragment(f"f{index}", "src", role, fields))
        if listed:
            processing.append(f"f{index}")
    return ContextPlan(tuple(fragments), processing_ids=processing)


@SETTINGS
@given(fragment_specs, st.lists(st.integers(min_value=0, max_value=3), max_size=4), st.integers(0, 3000))
def test_processing_never_changes_an_immutable_fragment(kit, specs, targets, target) -> None:
    plan = _plan(specs)
    steps = tuple(TrimStep(f"t{n}", f"f{index % len(specs)}", "history", target, 0) for n, index in enumerate(targets))
    processor = ContextProcessor(ContextPolicy("reduce", steps, target_input_chars=0))
    try:
        result = asyncio.run(processor.process(kit.make_run()[0], plan, request=kit.request(100_000, 100_000)))
    except ContextPlanError:
        return
    for before, after in zip(plan.fragments, result.plan.fragments, strict=True):
        assert after.identity == before.identity
        if not plan.is_mutable(before.id):
            assert after == before
        assert after.chars <= before.chars


@SETTINGS
@given(fragment_specs, st.data())
def test_audit_accepts_changes_only_to_mutable_fragment_ids(kit, specs, data) -> None:
    plan = _plan(specs)
    mutable = [f.id for f in plan.fragments if plan.is_mutable(f.id)]
    declared = data.draw(st.lists(st.sampled_from(mutable), unique=True) if mutable else st.just([]))
    changed = data.draw(st.lists(st.sampled_from([f.id for f in plan.fragments]), unique=True))
    edited = tuple(
        f.with_fields({k: [] if isinstance(v, list) else "" for k, v in f.fields.items()}) if f.id in changed else f
        for f in plan.fragments
    )
    audited = ContextPlan(
        edited, processing_ids=plan.processing_ids, original_fragments=plan.fragments, mutable_fragment_ids=declared
    )
    run = kit.make_run()[0]
    really_changed = {a.id for a, b in zip(edited, plan.fragments, strict=True) if a != b}
    try:
        result = asyncio.run(ContextProcessor(ContextPolicy("audit")).process(run, audited, request=kit.request()))
    except ContextPlanError:
        assert not really_changed <= set(declared)
        return
    assert really_changed <= set(declared)
    assert {c.fragment_id for c in result.report.changes} == really_changed
