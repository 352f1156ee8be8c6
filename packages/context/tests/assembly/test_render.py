"""Sections and slots: protected admission, truncation/drop diagnostics, deterministic rendering."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.context import (
    SLOT_ORDER,
    Attachment,
    BudgetExceededError,
    Collection,
    ConservativeTokenEstimator,
    DeterministicSystemPromptRenderer,
    SystemSection,
    TokenLedger,
    apply_context_budget,
)
from sciencediscovery.runtime_core import Message


def collection(sections: list[SystemSection], messages: tuple = (), attachments: tuple = ()) -> Collection:
    return Collection((), tuple(sections), messages, attachments, ())


def ledger() -> TokenLedger:
    return TokenLedger(ConservativeTokenEstimator())


def test_identity_governance_and_run_contract_are_always_protected() -> None:
    assert SystemSection("i", "identity", "x").is_protected
    assert SystemSection("g", "governance", "x").is_protected
    assert SystemSection("r", "run_contract", "x").is_protected
    assert not SystemSection("c", "capabilities", "x").is_protected
    assert SystemSection("plan_state", "task_state", "x", protected=True).is_protected


def test_sections_render_in_slot_then_order() -> None:
    sections = [
        SystemSection("footer", "footer", "F"),
        SystemSection("tools-b", "capabilities", "C2", order=2),
        SystemSection("tools-a", "capabilities", "C1", order=1),
        SystemSection("id", "identity", "I"),
        SystemSection("gov", "governance", "G"),
        SystemSection("contract", "run_contract", "R"),
    ]
    admitted = apply_context_budget(collection(sections), prompt_budget=10_000, data_budget=1000, ledger=ledger())
    assert DeterministicSystemPromptRenderer().render(admitted.sections) == "I\n\nG\n\nR\n\nC1\n\nC2\n\nF"
    assert admitted.diagnostics == ()


def test_protected_sections_beyond_the_prompt_budget_fail_assembly() -> None:
    sections = [SystemSection("gov", "governance", "rule " * 400), SystemSection("other", "footer", "x")]
    with pytest.raises(BudgetExceededError, match="gov"):
        apply_context_budget(collection(sections), prompt_budget=100, data_budget=100, ledger=ledger())


def test_protected_sections_are_never_truncated_while_others_are_truncated_or_dropped() -> None:
    governance = SystemSection("gov", "governance", "Never run ungoverned tools. " * 10)
    big = SystemSection("skills", "capabilities", "skill catalog entry. " * 200)
    late = SystemSection("footer", "footer", "footer text " * 50)
    budget = ledger().text(governance.content) + 150
    admitted = apply_context_budget(
        collection([late, big, governance]), prompt_budget=budget, data_budget=100, ledger=ledger()
    )
    by_id = {s.id: s for s in admitted.sections}
    assert by_id["gov"].content == governance.content
    assert by_id["skills"].content.endswith("[... truncated to fit the context budget]")
    assert "footer" not in by_id
    assert [d.code for d in admitted.diagnostics] == ["section_truncated", "section_dropped"]
    assert admitted.prompt_tokens <= budget


def test_data_messages_and_attachments_respect_the_data_budget() -> None:
    messages = (("hints", Message.user("short hint")),)
    attachments = (
        Attachment("big", "web", "untrusted_data", "page text " * 500),
        Attachment("tiny", "memory", "trusted_data", "ok"),
    )
    admitted = apply_context_budget(
        collection([], messages, attachments), prompt_budget=100, data_budget=300, ledger=ledger()
    )
    assert admitted.data_tokens <= 300
    assert [m.metadata.get("attachment") or m.metadata.get("source") for m in admitted.messages] == ["hints", "big"]
    assert [(d.code, d.source) for d in admitted.diagnostics] == [("data_truncated", "big"), ("data_dropped", "tiny")]
    assert all(m.metadata["invocation_local"] for m in admitted.messages)


section_strategy = st.builds(
    SystemSection,
    id=st.text("abcdefgh", min_size=1, max_size=4),
    slot=st.sampled_from(SLOT_ORDER),
    content=st.text(min_size=1, max_size=40),
    order=st.integers(-3, 3),
    protected=st.booleans(),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(section_strategy, max_size=8, unique_by=lambda s: s.id), st.randoms())
def test_rendering_is_deterministic_whatever_the_arrival_order(sections: list[SystemSection], random) -> None:
    shuffled = list(sections)
    random.shuffle(shuffled)
    renderer = DeterministicSystemPromptRenderer()
    first = apply_context_budget(collection(sections), prompt_budget=10**6, data_budget=10, ledger=ledger())
    second = apply_context_budget(collection(shuffled), prompt_budget=10**6, data_budget=10, ledger=ledger())
    assert renderer.render(first.sections).encode() == renderer.render(second.sections).encode()
