"""``sciencediscovery trace show``: a readable summary of one context trace file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from sciencediscovery.context import PROTECTED_SLOTS
from sciencediscovery.context.estimators import ConservativeTokenEstimator

from .errors import ServiceError


class TraceFileError(ServiceError):
    """The trace file is missing, unreadable or not a context trace."""


def load_trace(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise TraceFileError(f"no trace file at {path}") from error
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TraceFileError(f"{path} is not a readable JSON trace: {error}") from error
    if not isinstance(document, dict) or "schemaVersion" not in document or "mode" not in document:
        raise TraceFileError(f"{path} is not a context trace (no schemaVersion/mode)")
    return document


def render_trace(path: Path, console: Console) -> None:
    """Print the header, budget use per admitted section, compaction and window of a trace."""
    trace = load_trace(path)
    estimator = ConservativeTokenEstimator()
    console.print(
        f"[bold]{path.name}[/bold]  schema v{trace['schemaVersion']}  mode={trace['mode']}  "
        f"scope={trace.get('scope')}  path={trace.get('selectedPath')}  turn={trace.get('turn')}"
    )
    budgets = trace.get("budgets") or {}
    console.print("budgets: " + ", ".join(f"{k}={v}" for k, v in budgets.items()))
    if trace.get("error"):
        console.print(f"[red]assembly failed[/red]: {trace['error'].get('type')}: {trace['error'].get('message')}")

    protected_slots = {getattr(slot, "value", slot) for slot in PROTECTED_SLOTS}
    sections = Table("section", "slot", "protected", "chars", "est. tokens", title="admitted sections")
    total = 0
    for section in (trace.get("admitted") or {}).get("sections", []):
        content = section.get("content", "")
        tokens = estimator.count(content)
        total += tokens
        sections.add_row(
            section.get("id", "?"),
            str(section.get("slot", "")),
            "yes" if section.get("protected") or section.get("slot") in protected_slots else "",
            str(len(content)),
            str(tokens),
        )
    prompt_budget = budgets.get("prompt")
    sections.caption = f"{total} est. tokens" + (f" of a {prompt_budget}-token prompt budget" if prompt_budget else "")
    console.print(sections)

    compaction = trace.get("compaction") or {}
    table = Table("compaction", "value")
    for key in ("reason", "estimatedTokensBefore", "estimatedTokensAfter", "messageCountDropped", "summarizedMessages"):
        table.add_row(key, str(compaction.get(key)))
    table.add_row("compactedToolOutputRefs", str(len(compaction.get("compactedToolOutputRefs") or [])))
    summary = compaction.get("summary")
    if summary:
        table.add_row("summary", f"{summary.get('status')} ({summary.get('attempts')} attempts)")
    console.print(table)

    rendered = trace.get("renderedContext") or {}
    window = rendered.get("window") or {}
    table = Table("window", "value")
    for key, value in window.items():
        table.add_row(key, str(value))
    table.add_row("tools", ", ".join(t.get("name", "?") for t in rendered.get("tools", [])))
    table.add_row("estimatedInputTokens", str(rendered.get("estimatedInputTokens")))
    console.print(table)
    progress = trace.get("planProgress")
    if progress:
        console.print(f"plan: anchorFound={progress.get('anchorFound')} call={progress.get('toolCallId')}")
