"""HistoryCompactor: message-count bound, old tool bodies to previews, then the checkpoint summary.

Compaction rewrites canonical history (the kernel stores what it returns), so
every step keeps assistant calls with their results, never touches open calls,
and never replaces history with a larger summary or an error text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import attrs

from sciencediscovery.runtime_core import OUTPUT_REF_KEY, Message, Role

from .checkpoint import REF_PATTERN, CheckpointReport, Summarizer, SummaryRequest, normalize_checkpoint
from .estimators import TokenLedger
from .projection import neutral_text
from .steps import CHECKPOINT_KEY, COMPACTION_NOTE_KEY, Unit, checkpoint_index, split_units, task_anchor_index

PREVIEW_HEAD_CHARS = 600
PREVIEW_TAIL_CHARS = 300
COMPACTED_KEY = "compacted"
"""Tool-result metadata key set when the body was replaced by a head/tail preview."""
_CHECKPOINT_OPEN = '<context_checkpoint authority="data_only">'
_CHECKPOINT_CLOSE = "</context_checkpoint>"


@attrs.frozen
class SummaryOutcome:
    """One checkpoint pass: status, attempts, rejections, costs and the validator's report."""

    status: str
    attempts: int
    rejections: int
    source_tokens: int
    source_messages: int
    checkpoint_tokens: int | None = None
    errors: tuple[str, ...] = ()
    report: CheckpointReport | None = None


@attrs.frozen
class CompactionReport:
    """What compaction did to canonical history on one turn."""

    reason: str | None
    tokens_before: int
    tokens_after: int
    message_count_dropped: int = 0
    compacted_refs: tuple[str, ...] = ()
    summaries: tuple[SummaryOutcome, ...] = ()

    @property
    def summary(self) -> SummaryOutcome | None:
        """The last checkpoint pass of this turn, if any."""
        return self.summaries[-1] if self.summaries else None

    @property
    def summarized_messages(self) -> int:
        return sum(s.source_messages for s in self.summaries if s.status == "accepted")


@attrs.frozen
class CompactionResult:
    history: tuple[Message, ...]
    report: CompactionReport


def preview(message: Message, ref: str) -> Message:
    """A tool result whose body is a head/tail preview plus its ``read_tool_output`` reference."""
    body = message.content
    omitted = len(body) - PREVIEW_HEAD_CHARS - PREVIEW_TAIL_CHARS
    content = (
        f"{body[:PREVIEW_HEAD_CHARS]}\n"
        f"[... {omitted} characters omitted; the full output is stored as {ref!r}: "
        f'call read_tool_output(ref="{ref}") with a query, a line range or a character range ...]\n'
        f"{body[-PREVIEW_TAIL_CHARS:]}"
    )
    return attrs.evolve(message, content=content, metadata={**message.metadata, COMPACTED_KEY: True})


def checkpoint_message(text: str) -> Message:
    """The standing checkpoint as a user-role data message (never an instruction)."""
    return Message.user(f"{_CHECKPOINT_OPEN}\n{neutral_text(text)}\n{_CHECKPOINT_CLOSE}", **{CHECKPOINT_KEY: True})


def checkpoint_text(message: Message) -> str:
    """The plain checkpoint text of a checkpoint message."""
    body = message.content.removeprefix(_CHECKPOINT_OPEN + "\n").removesuffix("\n" + _CHECKPOINT_CLOSE)
    return html.unescape(body)


def compact_message_count(history: tuple[Message, ...], max_messages: int) -> tuple[tuple[Message, ...], int]:
    """Compatibility message-count compaction.

    Above ``max_messages``, the oldest closed units are removed until at most
    half the bound remains (so it does not run every turn); the task anchor and
    checkpoint stay and a note records how many messages went. Returns the new
    history and the number of messages removed.
    """
    if len(history) <= max_messages:
        return history, 0
    pinned, body = _partition(history)
    keep_from = len(body)
    kept = 0
    while keep_from > 0:
        size = body[keep_from - 1].end - body[keep_from - 1].start
        if keep_from < len(body) and kept + size > max_messages // 2:
            break
        keep_from -= 1
        kept += size
    dropped_units = body[:keep_from]
    dropped = sum(u.end - u.start for u in dropped_units)
    if not dropped:
        return history, 0
    earlier = sum(int(m.metadata.get(COMPACTION_NOTE_KEY, 0)) for m in pinned if m.metadata.get(COMPACTION_NOTE_KEY))
    note = Message.user(
        f"[Context note: {earlier + dropped} earlier messages were removed from this conversation by the message-count "
        "bound. Structured runtime state (plan, skills, artifacts, ...) is still provided as runtime data.]",
        **{COMPACTION_NOTE_KEY: earlier + dropped},
    )
    head = tuple(m for m in pinned if not m.metadata.get(COMPACTION_NOTE_KEY))
    return head + (note,) + tuple(m for u in body[keep_from:] for m in history[u.start : u.end]), dropped


def _partition(history: Sequence[Message]) -> tuple[list[Message], list[Unit]]:
    """Pinned single messages (anchor, checkpoint, compaction note) and the other units, in order."""
    pinned_at = {i for i in (task_anchor_index(history), checkpoint_index(history)) if i is not None}
    pinned_at.update(i for i, m in enumerate(history[:4]) if m.metadata.get(COMPACTION_NOTE_KEY))
    units = split_units(history)
    pinned = [history[u.start] for u in units if u.start in pinned_at]
    return pinned, [u for u in units if u.start not in pinned_at]


class HistoryCompactor:
    """Compacts canonical history under token pressure, in the spec's order.

    1. old stored tool-result bodies (with an ``output_ref``) become a head/tail
       preview plus their ``read_tool_output`` reference, oldest first, until
       the pressure is gone (the newest step only when nothing else is left);
    2. while pressure remains, the oldest closed steps (at most
       ``source_percent`` of the limit per pass, up to ``max_passes`` passes)
       are summarized into the standing checkpoint while a recent suffix of
       about ``recent_percent`` of the limit stays verbatim. A checkpoint not
       smaller than its source is rejected and retried up to ``attempts``
       times; failure keeps step 1's result.
    """

    def __init__(
        self,
        summarizer: Summarizer,
        ledger: TokenLedger,
        *,
        attempts: int = 2,
        recent_percent: int = 30,
        source_percent: int = 50,
        max_passes: int = 8,
    ) -> None:
        self.summarizer = summarizer
        self.ledger = ledger
        self.attempts = attempts
        self.recent_percent = recent_percent
        self.source_percent = source_percent
        self.max_passes = max_passes
        self._previews: dict[int, tuple[Message, Message]] = {}

    async def compact(
        self,
        history: tuple[Message, ...],
        *,
        fixed_tokens: int,
        pressure: int,
        limit: int,
        force: bool = False,
        identity: tuple[str, str, int] = ("run", "context", 0),
    ) -> CompactionResult:
        """Compact ``history``; ``fixed_tokens`` is what the prompt, tools and data already use."""
        before = fixed_tokens + self.ledger.messages(history)
        if before < pressure and not force:
            return CompactionResult(history, CompactionReport(None, before, before))
        reason = "forced" if force else "pressure"
        history, refs = self._preview_tool_bodies(history, fixed_tokens, pressure, force)
        summaries: list[SummaryOutcome] = []
        total = fixed_tokens + self.ledger.messages(history)
        while (total >= pressure or (force and not summaries)) and len(summaries) < self.max_passes:
            history, outcome = await self._summarize(history, limit, identity)
            if outcome.status == "nothing_to_summarize" and summaries:
                break
            summaries.append(outcome)
            total = fixed_tokens + self.ledger.messages(history)
            if outcome.status != "accepted":
                break
        return CompactionResult(history, CompactionReport(reason, before, total, 0, refs, tuple(summaries)))

    def _preview_tool_bodies(
        self, history: tuple[Message, ...], fixed: int, pressure: int, force: bool
    ) -> tuple[tuple[Message, ...], tuple[str, ...]]:
        units = split_units(history)
        latest = units[-1].start if units else len(history)
        candidates = [
            i
            for i, m in enumerate(history)
            if m.role is Role.TOOL
            and m.metadata.get(OUTPUT_REF_KEY)
            and not m.metadata.get(COMPACTED_KEY)
            and len(m.content) > PREVIEW_HEAD_CHARS + PREVIEW_TAIL_CHARS + 200
        ]
        ordered = [i for i in candidates if i < latest] + [i for i in candidates if i >= latest]
        messages = list(history)
        total = fixed + self.ledger.messages(history)
        refs: list[str] = []
        for index in ordered:
            if total < pressure and not (force and index < latest):
                break
            ref = str(messages[index].metadata[OUTPUT_REF_KEY])
            replaced = self._preview(messages[index], ref)
            total += self.ledger.message(replaced) - self.ledger.message(messages[index])
            messages[index] = replaced
            refs.append(ref)
        return (tuple(messages), tuple(refs)) if refs else (history, ())

    def _preview(self, message: Message, ref: str) -> Message:
        """The preview of ``message``, memoised so an unchanged history costs no new counting."""
        cached = self._previews.get(id(message))
        if cached is not None and cached[0] is message:
            return cached[1]
        if len(self._previews) >= 50_000:
            self._previews.clear()
        replaced = preview(message, ref)
        self._previews[id(message)] = (message, replaced)
        return replaced

    async def _summarize(
        self, history: tuple[Message, ...], limit: int, identity: tuple[str, str, int]
    ) -> tuple[tuple[Message, ...], SummaryOutcome]:
        pinned, body = _partition(history)
        costs = [self.ledger.messages(history[u.start : u.end]) for u in body]
        # the recent suffix: at least the newest unit and every open unit, then by token cost
        recent_budget = limit * self.recent_percent // 100
        keep_from = len(body)
        kept = 0
        while keep_from > 0:
            unit, cost = body[keep_from - 1], costs[keep_from - 1]
            if keep_from < len(body) and not unit.open and kept + cost > recent_budget:
                break
            keep_from -= 1
            kept += cost
        while keep_from > 0 and any(u.open for u in body[:keep_from]):  # open calls are never summarized
            keep_from -= 1
        source_limit = limit * self.source_percent // 100
        source_end = 0
        source_tokens = 0
        while source_end < keep_from and (source_end == 0 or source_tokens + costs[source_end] <= source_limit):
            source_tokens += costs[source_end]
            source_end += 1
        source = tuple(m for u in body[:source_end] for m in history[u.start : u.end])
        previous = next((m for m in pinned if m.metadata.get(CHECKPOINT_KEY)), None)
        previous_text = checkpoint_text(previous) if previous else None
        if previous is not None:
            source_tokens += self.ledger.message(previous)
        if not source:
            return history, SummaryOutcome("nothing_to_summarize", 0, 0, source_tokens, 0)
        known = {str(m.metadata[OUTPUT_REF_KEY]) for m in history if m.metadata.get(OUTPUT_REF_KEY)}
        if previous_text:
            known.update(REF_PATTERN.findall(previous_text))
        errors: list[str] = []
        rejections = 0
        run_id, context_id, turn = identity
        # aim at half the source, and at most a tenth of the limit so the checkpoint leaves room for history
        target_tokens = max(1, min(source_tokens // 2, limit // 10))
        anchor_at = task_anchor_index(history)
        task = history[anchor_at].content if anchor_at is not None else None
        for attempt in range(1, self.attempts + 1):
            request = SummaryRequest(
                run_id, context_id, turn, previous_text, source, target_tokens, attempt, task_anchor=task
            )
            try:
                text = await self.summarizer.summarize(request)
            except Exception as error:
                errors.append(f"attempt {attempt}: {type(error).__name__}: {error}")
                continue
            normalized, report = normalize_checkpoint(text, known)
            message = checkpoint_message(normalized)
            cost = self.ledger.message(message)
            if cost >= source_tokens:
                rejections += 1
                errors.append(
                    f"attempt {attempt}: checkpoint of {cost} tokens is not smaller than "
                    f"its {source_tokens}-token source"
                )
                continue
            head = tuple(m for m in pinned if not m.metadata.get(CHECKPOINT_KEY))
            anchor = head[:1] if head and not head[0].metadata.get(COMPACTION_NOTE_KEY) else ()
            rest = head[len(anchor) :]
            remaining = tuple(m for u in body[source_end:] for m in history[u.start : u.end])
            outcome = SummaryOutcome(
                "accepted", attempt, rejections, source_tokens, len(source), cost, tuple(errors), report
            )
            return anchor + (message,) + rest + remaining, outcome
        return history, SummaryOutcome(
            "failed", self.attempts, rejections, source_tokens, len(source), None, tuple(errors)
        )
