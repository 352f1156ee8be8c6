"""The ``reviews`` state channel: logged review checkpoints projected to the model as runtime data."""

from __future__ import annotations

from typing import Any

import attrs

from sciencediscovery.runtime_core import Message, ToolCall

from .tools import REVIEW_KEY

SHOWN_REVIEWS = 10
"""How many of the latest reviews the channel renders."""


@attrs.frozen
class ReviewsChannel:
    """Reduces ``review_checkpoint`` results (their ``metadata["review"]``) into the run's review log."""

    name: str = "reviews"
    initial: tuple[dict[str, Any], ...] = ()

    def apply(self, state: tuple[dict[str, Any], ...], call: ToolCall, result: Message) -> tuple[dict[str, Any], ...]:
        review = result.metadata.get(REVIEW_KEY)
        if not isinstance(review, dict):
            return state
        entry = {key: review.get(key) for key in ("review_id", "level", "decision", "objective", "evidence_digest")}
        entry["findings"] = len(review.get("findings") or ())
        return (*state, entry)

    def render(self, state: tuple[dict[str, Any], ...]) -> dict[str, Any] | None:
        if not state:
            return None
        return {"total": len(state), "latest_decision": state[-1]["decision"], "reviews": list(state[-SHOWN_REVIEWS:])}
