"""Decisions a person makes on a permission request, and the grants they create."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

from .errors import InvalidDecisionError
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


def decision_from_data(data: Mapping[str, Any]) -> Decision:
    """A decision from JSON data (decision APIs): ``{"kind": "allow_once"}``,
    ``{"kind": "allow_matching", "scope": "session", "rule": "read_file(data/**)"}`` (``rule`` optional)
    or ``{"kind": "deny", "reason": "..."}`` (``reason`` optional). Unknown keys are refused."""
    if not isinstance(data, Mapping):
        raise InvalidDecisionError("body", f"must be an object, got {type(data).__name__}")
    kind = data.get("kind")
    allowed = {"allow_once": {"kind"}, "allow_matching": {"kind", "scope", "rule"}, "deny": {"kind", "reason"}}
    if kind not in allowed:
        raise InvalidDecisionError("kind", f"must be allow_once, allow_matching or deny; got {kind!r}")
    unknown = sorted(set(data) - allowed[kind])
    if unknown:
        raise InvalidDecisionError(unknown[0], f"is not a field of a {kind} decision")
    if kind == "allow_once":
        return AllowOnce()
    if kind == "deny":
        reason = data.get("reason", "denied by decision")
        if not isinstance(reason, str):
            raise InvalidDecisionError("reason", "must be a string")
        return Deny(reason)
    rule = data.get("rule")
    if rule is not None and not isinstance(rule, str):
        raise InvalidDecisionError("rule", "must be a rule string like 'read_file(data/**)'")
    scope = data.get("scope")
    if scope not in {member.value for member in GrantScope}:
        raise InvalidDecisionError("scope", f"must be once, conversation, session or project; got {scope!r}")
    return AllowMatching(scope=scope, rule=rule)


@attrs.frozen
class Grant:
    """A standing allowance made under one epoch; it is void in every other epoch.

    ``conversation`` grants apply within one context id; ``session`` grants
    within the service that made them; ``project`` grants live in the audit
    database and are read from it on every check, so every service using that
    file (every session of the project) sees them, and their revocation, at once.
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
