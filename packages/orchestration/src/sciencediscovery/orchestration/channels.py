"""Run-state channels owned by orchestration: ``plan``, ``active_skills`` and ``delegations``.

Each is a pure reducer over successful tool results (see the context
package's :class:`~sciencediscovery.context.StateChannel`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import attrs

from sciencediscovery.context import SectionSlot, SystemSection
from sciencediscovery.runtime_core import Message, Role, ToolCall

from .delegation import DELEGATION_KEY, TASK, Delegation, bounded
from .plans import UPDATE_PLAN, Plan, parse_plan
from .skills import SkillReference
from .state_tools import READ_SKILL, SKILL_KEY

PLAN_CHANNEL = "plan"
ACTIVE_SKILLS_CHANNEL = "active_skills"
DELEGATIONS_CHANNEL = "delegations"
DELEGATIONS_SHOWN = 10
BRIEF_EXCERPT = 600


@attrs.frozen
class PlanState:
    """The current plan and the ``update_plan`` call that declared it."""

    plan: Plan
    call_id: str


def _escape(text: str) -> str:
    return text.replace("<", "&lt;")


@attrs.frozen
class PlanChannel:
    """Holds the latest valid plan: projected as data and as the protected ``plan_state`` section."""

    name: str = PLAN_CHANNEL
    initial: PlanState | None = None

    def apply(self, state: PlanState | None, call: ToolCall, result: Message) -> PlanState | None:
        if call.name != UPDATE_PLAN:
            return state
        return PlanState(parse_plan(call.arguments), call.id)

    def render(self, state: PlanState | None) -> dict[str, Any] | None:
        return None if state is None else state.plan.to_json()

    def render_section(self, state: PlanState | None) -> SystemSection | None:
        if state is None:
            return None
        body = _escape(state.plan.render())
        return SystemSection(
            id="plan_state",
            slot=SectionSlot.TASK_STATE,
            content=f"<plan_state>\n{body}\n</plan_state>",
            protected=True,
        )


@attrs.frozen
class SkillRead:
    """One ``read_skill`` result: the frozen reference and the digest of the result text it produced."""

    reference: SkillReference
    call_id: str
    result_digest: str


def content_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def instructions_visible(read: SkillRead, history: tuple[Message, ...]) -> bool:
    """True while the read's complete result is still in ``history`` (compaction replaces or drops it)."""
    return any(
        m.role is Role.TOOL and m.tool_call_id == read.call_id and content_digest(m.content) == read.result_digest
        for m in history
    )


@attrs.frozen
class ActiveSkillsChannel:
    """Every ``read_skill`` result of the run, oldest first.

    ``render`` returns ``None``: whether a body is still visible depends on
    the model-visible history, so the ``skills.active`` contributor projects it.
    """

    name: str = ACTIVE_SKILLS_CHANNEL
    initial: tuple[SkillRead, ...] = ()

    def apply(self, state: tuple[SkillRead, ...], call: ToolCall, result: Message) -> tuple[SkillRead, ...]:
        data = result.metadata.get(SKILL_KEY) if call.name == READ_SKILL else None
        if data is None:
            return state
        return (*state, SkillRead(SkillReference.from_json(data), call.id, content_digest(result.content)))

    def render(self, state: tuple[SkillRead, ...]) -> dict[str, Any] | None:
        return None


@attrs.frozen
class DelegationsChannel:
    """Every ``task`` delegation of the run; the newest few are projected as data."""

    name: str = DELEGATIONS_CHANNEL
    initial: tuple[Delegation, ...] = ()

    def apply(self, state: tuple[Delegation, ...], call: ToolCall, result: Message) -> tuple[Delegation, ...]:
        data = result.metadata.get(DELEGATION_KEY) if call.name == TASK else None
        return state if data is None else (*state, Delegation.from_json(data))

    def render(self, state: tuple[Delegation, ...]) -> dict[str, Any] | None:
        if not state:
            return None
        shown = state[-DELEGATIONS_SHOWN:]
        return {
            "total": len(state),
            "delegations": [
                {**delegation.to_json(), "brief": bounded(delegation.brief, BRIEF_EXCERPT)} for delegation in shown
            ],
        }
