"""Decisions a person makes on a permission request, and the grants they create."""

from __future__ import annotations

import enum

import attrs

from .rules import Effect, Rule


class GrantScope(enum.StrEnum):
    """How far a grant reaches: this one call, this conversation, this session, or this project."""

    ONCE = "once"
    CONVERSATION = "conversation"
    SESSION = "session"
    PROJECT = "project"


@attrs.frozen
class AllowOnce:
    """Allow the pending call only."""

    kind = "allow_once"


@attrs.frozen
class AllowMatching:
    """Allow the pending call and create a grant for calls matching ``rule`` (default: the same call)."""

    scope: GrantScope = attrs.field(converter=GrantScope)
    rule: str | None = None
    kind = "allow_matching"


@attrs.frozen
class Deny:
    """Refuse the pending call."""

    reason: str = "denied by decision"
    kind = "deny"


Decision = AllowOnce | AllowMatching | Deny


@attrs.frozen
class Grant:
    """A standing allowance made under one epoch; it is void in every other epoch.

    ``conversation`` grants apply within one context id; ``session`` grants
    within the service that made them; ``project`` grants are persisted in the
    audit database and reloaded while the epoch id stays the same.
    """

    grant_id: str
    rule: Rule
    scope: GrantScope
    epoch_id: str
    context_id: str
    source: str

    def applies(self, epoch_id: str, context_id: str, tool: str, exact: str | None, broad: str) -> bool:
        if self.epoch_id != epoch_id or self.rule.effect is not Effect.ALLOW:
            return False
        if self.scope is GrantScope.CONVERSATION and self.context_id != context_id:
            return False
        return self.rule.matches(tool, exact, broad)
