"""AtomicHistoryWindowPolicy and ContextValidator."""

from __future__ import annotations

import pytest

from sciencediscovery.context import (
    AtomicHistoryWindowPolicy,
    BudgetExceededError,
    ConservativeTokenEstimator,
    ContextValidationError,
    ContextValidator,
    SystemSection,
    TokenLedger,
)
from sciencediscovery.context.compaction import checkpoint_message
from sciencediscovery.runtime_core import Message, ModelInput, ToolCall, ToolSpec, check_pairing

LEDGER = TokenLedger(ConservativeTokenEstimator())


def step(n: int, results: int = 2, body: str = "x" * 400) -> list[Message]:
    calls = [ToolCall(f"c{n}-{i}", "search") for i in range(results)]
    return [Message.assistant("", calls), *(Message.tool_result(c, body) for c in calls)]


def test_window_keeps_anchor_checkpoint_newest_step_and_whole_units() -> None:
    anchor = Message.user("the task")
    checkpoint = checkpoint_message("## Next step\ncontinue")
    history = [anchor, checkpoint]
    for n in range(10):
        history += step(n)
    newest = history[-3:]
    budget = LEDGER.messages([anchor, checkpoint, *newest]) + LEDGER.messages(step(8)) + 5
    window = AtomicHistoryWindowPolicy().select(history, budget, LEDGER)
    assert window.messages[:2] == (anchor, checkpoint)
    assert window.messages[-3:] == tuple(newest)
    assert window.dropped_units == 8 and window.tokens <= budget
    check_pairing(window.messages)
    assert window.diagnostics[0].code == "window_dropped"


def test_open_calls_are_never_removed() -> None:
    history = [Message.user("task"), *step(1), *step(2)]
    open_step = Message.assistant("", [ToolCall("open", "search")])
    history.append(open_step)
    window = AtomicHistoryWindowPolicy().select(history, LEDGER.messages([history[0], open_step]) + 1, LEDGER)
    assert window.messages == (history[0], open_step)


def test_window_fails_clearly_when_the_minimum_does_not_fit() -> None:
    history = [Message.user("task " * 100), *step(1, body="y" * 5000)]
    with pytest.raises(BudgetExceededError, match="minimal history window"):
        AtomicHistoryWindowPolicy().select(history, 50, LEDGER)


def test_validator_accepts_a_clean_input_and_returns_its_estimate() -> None:
    section = SystemSection("gov", "governance", "Only governed tools.")
    model_input = ModelInput("Only governed tools.", (Message.user("task"), *step(1)), (ToolSpec("search"),))
    tokens = ContextValidator().validate(
        model_input, protected=[section], governed_tools={"search"}, limit=10_000, ledger=LEDGER
    )
    assert 0 < tokens <= 10_000


def test_validator_reports_every_broken_rule() -> None:
    section = SystemSection("gov", "governance", "Only governed tools.")
    orphan = Message.tool_result(ToolCall("ghost", "search"), "orphan")
    model_input = ModelInput(
        "weakened prompt", (Message.user("task " * 500), orphan), (ToolSpec("search"), ToolSpec("rm_rf"))
    )
    with pytest.raises(ContextValidationError) as raised:
        ContextValidator().validate(
            model_input, protected=[section], governed_tools={"search"}, limit=100, ledger=LEDGER
        )
    problems = " | ".join(raised.value.problems)
    assert "protected section 'gov'" in problems
    assert "rm_rf" in problems
    assert "ghost" in problems
    assert "exceeds the effective limit of 100" in problems
