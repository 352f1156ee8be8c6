from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.orchestration import PlanError, PlanStatus, parse_plan

PLAN_ARGS = {
    "explanation": "TP53 resistance evidence review",
    "items": [
        {"step": "search", "status": "completed"},
        {"step": "screen", "status": "in_progress"},
        {"step": "synthesize", "status": "pending"},
    ],
}


def test_valid_plan_renders_every_item_with_status() -> None:
    plan = parse_plan(PLAN_ARGS)
    assert [item.status for item in plan.items] == [PlanStatus.COMPLETED, PlanStatus.IN_PROGRESS, PlanStatus.PENDING]
    assert plan.render() == (
        "explanation: TP53 resistance evidence review\n"
        "1. [completed] search\n2. [in_progress] screen\n3. [pending] synthesize"
    )
    assert plan.to_json() == PLAN_ARGS
    assert plan.summary() == "Plan updated: 3 items (1 completed, 1 in progress, 1 pending)."


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"items": []}, "items"),
        ({"items": "search"}, "items"),
        ({"items": [{"step": "a", "status": "done"}]}, "items[0].status"),
        ({"items": [{"step": "a", "status": "pending"}, {"step": " ", "status": "pending"}]}, "items[1].step"),
        ({"items": [{"step": "a", "status": "pending"}, {"step": "a", "status": "pending"}]}, "items[1].step"),
        ({"items": [{"step": "a", "status": "pending", "owner": "me"}]}, "items[0].owner"),
        (
            {"items": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]},
            "items[1].status",
        ),
        ({"explanation": 3, "items": [{"step": "a", "status": "pending"}]}, "explanation"),
        ({"plan": [], "items": [{"step": "a", "status": "pending"}]}, "plan"),
    ],
)
def test_invalid_plan_names_the_field(arguments: dict, field: str) -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(arguments)
    assert caught.value.field == field


statuses = st.sampled_from(["pending", "completed"])


@settings(max_examples=60)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=20).filter(str.strip), statuses), min_size=1, max_size=8))
def test_any_valid_plan_round_trips(entries: list) -> None:
    seen: set[str] = set()
    items = []
    for step, status in entries:
        if step.strip() not in seen:
            seen.add(step.strip())
            items.append({"step": step.strip(), "status": status})
    plan = parse_plan({"explanation": "", "items": items})
    assert parse_plan(plan.to_json()) == plan
