"""History compaction: message-count bound, tool-body previews, the checkpoint and its validator."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sciencediscovery.context import (
    CHECKPOINT_SECTIONS,
    SUMMARY_PURPOSE,
    ConservativeTokenEstimator,
    DeterministicSummarizer,
    HistoryCompactor,
    ModelSummarizer,
    SummaryRequest,
    TokenLedger,
    compact_message_count,
    normalize_checkpoint,
)
from sciencediscovery.context.compaction import checkpoint_text
from sciencediscovery.runtime_core import (
    OUTPUT_REF_KEY,
    Message,
    ModelInput,
    ModelResponse,
    ToolCall,
    TurnContext,
    check_pairing,
)

BODY = "measurement row 42: 3.14 µM, 肿瘤细胞 viability 87%.\n" * 200


def step(n: int, *, ref: bool = True, body: str = BODY) -> list[Message]:
    call = ToolCall(f"c{n}", "search", {"q": f"query {n}"})
    metadata = {OUTPUT_REF_KEY: f"out-{n}"} if ref else {}
    return [Message.assistant(f"step {n}", [call]), Message.tool_result(call, body, **metadata)]


def history(steps: int, **kwargs: Any) -> tuple[Message, ...]:
    messages = [Message.user("Review TP53 resistance mechanisms")]
    for n in range(steps):
        messages += step(n, **kwargs)
    return tuple(messages)


def compactor(summarizer: Any = None, attempts: int = 2) -> HistoryCompactor:
    return HistoryCompactor(
        summarizer or DeterministicSummarizer(), TokenLedger(ConservativeTokenEstimator()), attempts=attempts
    )


def compact(
    history: tuple[Message, ...],
    *,
    pressure: int,
    limit: int,
    summarizer: Any = None,
    force: bool = False,
    attempts: int = 2,
) -> Any:
    return asyncio.run(
        compactor(summarizer, attempts).compact(history, fixed_tokens=0, pressure=pressure, limit=limit, force=force)
    )


def test_message_count_compaction_keeps_anchor_and_whole_steps() -> None:
    long = history(30)
    compacted, dropped = compact_message_count(long, 20)
    assert dropped > 0 and len(compacted) <= 12
    assert compacted[0] == long[0]
    assert "earlier messages were removed" in compacted[1].content
    check_pairing(compacted)
    again, more = compact_message_count(compacted + tuple(step(99)), 20)
    assert (again, more) == (compacted + tuple(step(99)), 0)
    assert compact_message_count(long, 1000) == (long, 0)


def test_no_compaction_below_the_pressure_threshold() -> None:
    small = history(2)
    result = compact(small, pressure=10**6, limit=10**6)
    assert result.history is small and result.report.reason is None


def test_old_stored_tool_bodies_become_previews_with_their_ref() -> None:
    long = history(6)
    ledger_total = TokenLedger(ConservativeTokenEstimator()).messages(long)
    result = compact(long, pressure=ledger_total * 2 // 3, limit=ledger_total * 10)
    report = result.report
    assert report.reason == "pressure" and report.summary is None
    assert report.compacted_refs[0] == "out-0" and "out-5" not in report.compacted_refs
    previewed = next(m for m in result.history if m.tool_call_id == "c0")
    assert 'read_tool_output(ref="out-0")' in previewed.content
    assert previewed.content.startswith(BODY[:100]) and previewed.content.endswith(BODY[-100:])
    assert previewed.metadata[OUTPUT_REF_KEY] == "out-0" and previewed.metadata["compacted"] is True
    assert report.tokens_after < report.tokens_before
    check_pairing(result.history)


def test_results_without_a_ref_are_left_for_the_summarizer() -> None:
    long = history(6, ref=False)
    result = compact(long, pressure=1000, limit=20_000)
    assert result.report.compacted_refs == ()
    summary = result.report.summary
    assert summary is not None and summary.status == "accepted"
    assert result.history[0] == long[0]
    assert result.history[1].metadata["context_checkpoint"] is True
    text = checkpoint_text(result.history[1])
    assert [line[3:] for line in text.splitlines() if line.startswith("## ")] == list(CHECKPOINT_SECTIONS)
    assert result.history[-2:] == long[-2:]
    assert result.report.summarized_messages == sum(s.source_messages for s in result.report.summaries) > 0
    check_pairing(result.history)


def test_the_checkpoint_is_standing_and_open_calls_are_never_summarized() -> None:
    long = history(6, ref=False)
    open_call = ToolCall("open-1", "search", {"q": "pending"})
    with_open = (*long, Message.assistant("", [open_call]))
    first = compact(with_open, pressure=1000, limit=20_000)
    assert first.history[-1] == with_open[-1]
    second_input = (*first.history[:-1], *step(50, ref=False), *step(51, ref=False), *step(52, ref=False))
    second = compact(tuple(second_input), pressure=1000, limit=20_000)
    checkpoints = [m for m in second.history if m.metadata.get("context_checkpoint")]
    assert len(checkpoints) == 1
    text = checkpoint_text(checkpoints[0])
    assert "search(c0)" in text and "search(c50)" in text  # earlier work carried forward, new work added
    assert text.startswith("## Primary request and intent\nReview TP53 resistance mechanisms")


class Scripted:
    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.requests: list[SummaryRequest] = []

    async def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_a_checkpoint_not_smaller_than_its_source_is_rejected_and_retried() -> None:
    long = history(6, ref=False)
    bloated = "## Next step\n" + "word " * 100_000
    good = "## Primary request and intent\nReview TP53.\n## Next step\nSearch again."
    summarizer = Scripted([bloated, good, good, good])
    result = compact(long, pressure=1000, limit=20_000, summarizer=summarizer, attempts=2)
    summary = result.report.summaries[0]
    assert summary is not None and (summary.status, summary.attempts, summary.rejections) == ("accepted", 2, 1)
    assert [r.attempt for r in summarizer.requests][:2] == [1, 2]
    assert summarizer.requests[0].messages and summarizer.requests[0].messages[0].role.value == "assistant"


def test_failure_keeps_deterministic_pruning_and_never_writes_an_error_or_bigger_summary() -> None:
    long = history(6)
    summarizer = Scripted(["## Next step\n" + "word " * 100_000, RuntimeError("model down")])
    result = compact(long, pressure=100, limit=2_000, summarizer=summarizer, attempts=2)
    summary = result.report.summary
    assert summary is not None and summary.status == "failed" and summary.rejections == 1
    assert any("model down" in e for e in summary.errors)
    assert not any(m.metadata.get("context_checkpoint") for m in result.history)
    assert all("model down" not in m.content for m in result.history)
    assert result.report.compacted_refs  # the preview stage still happened
    assert len(result.history) == len(long)


def test_normalize_checkpoint_fixes_shape_and_reports_unknown_refs() -> None:
    raw = (
        "Sure! Here is the checkpoint.\n"
        "## Completed work and verified findings\nFound 3 papers [ref:out-1].\n"
        "## Completed work and verified findings\nVerified one [ref:out-404].\n"
        "## Random heading\nextra\n"
        "## Next step\nRead paper 2.\nThen read paper 3."
    )
    text, report = normalize_checkpoint(raw, {"out-1"})
    titles = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert titles == list(CHECKPOINT_SECTIONS)
    assert report.preamble and report.duplicates == ("Completed work and verified findings",)
    assert report.unknown_headings == ("Random heading",) and report.unknown_refs == ("out-404",)
    assert "Primary request and intent" in report.missing and report.next_step_trimmed
    assert text.endswith("## Next step\nRead paper 2.")
    assert "Found 3 papers" in text and "Verified one" in text
    assert report.invalid_shape


class RecordingClient:
    def __init__(self) -> None:
        self.inputs: list[ModelInput] = []

    async def complete(self, model_input: ModelInput, context: TurnContext) -> ModelResponse:
        self.inputs.append(model_input)
        return ModelResponse(Message.assistant("## Next step\nContinue."))


def test_model_summarizer_marks_its_request_for_providers() -> None:
    client = RecordingClient()
    request = SummaryRequest("run-1", "ctx-1", 3, None, tuple(step(1)), 500)
    text = asyncio.run(ModelSummarizer(client).summarize(request))
    assert text == "## Next step\nContinue."
    sent = client.inputs[0]
    assert sent.metadata["purpose"] == SUMMARY_PURPOSE
    assert sent.metadata["checkpoint_sections"] == list(CHECKPOINT_SECTIONS)
    assert sent.tools == () and '"output_ref": "out-1"' in sent.messages[0].content
    assert BODY[:40] in sent.messages[0].content  # the full bounded source, not a second clipping layer


@pytest.mark.parametrize("force", [True])
def test_a_forced_pass_compacts_even_below_the_threshold(force: bool) -> None:
    long = history(4)
    result = compact(long, pressure=10**7, limit=10**7, force=force)
    assert result.report.reason == "forced"
    assert result.report.compacted_refs


def test_the_deterministic_summarizer_shrinks_toward_its_target() -> None:
    source = tuple(m for n in range(30) for m in step(n))
    roomy = asyncio.run(DeterministicSummarizer().summarize(SummaryRequest("r", "c", 1, None, source, 10_000)))
    tight = asyncio.run(DeterministicSummarizer().summarize(SummaryRequest("r", "c", 1, None, source, 300)))
    assert len(tight) < len(roomy)
    for text in (roomy, tight):
        assert [line[3:] for line in text.splitlines() if line.startswith("## ")] == list(CHECKPOINT_SECTIONS)
    assert "search(c29)" in tight  # the newest work survives the shrinking
