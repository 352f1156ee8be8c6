"""PermissionService: the current epoch, rules, grants, decision queue and audit log of one session.

Authorization order for one call: the epoch's hard limits (read-only mounts,
network policy), then the rules (deny, ask, allow, default). A matching deny
rule or allow rule decides; what would be asked (or denied only by the
default) is allowed by a standing grant of the current epoch if one matches,
and otherwise asked (or denied). An ``ask`` enqueues a request
and waits for it as an external wait; a timeout resolves it as deny. An
allowance is returned only if the epoch it was decided under is still the
current one at the moment of return (there is no ``await`` in between).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from collections.abc import AsyncIterator
from typing import Any

import attrs

from sciencediscovery.runtime_core import ExternalWaits
from sciencediscovery.tools.definitions import ToolAction

from . import specifiers
from .audit import AuditLog, AuditRecord
from .epoch import MountMode, PermissionEpoch
from .errors import InvalidDecisionError, RuleError, StaleEpochError, UnknownGrantError
from .grants import AllowMatching, AllowOnce, Decision, Deny, Grant, GrantScope
from .queue import DecisionQueue, PermissionRequest, Resolution
from .rules import Effect, Rule, RuleSet


@attrs.frozen
class Authorization:
    """The service's final answer for one call, and the epoch it holds for."""

    allowed: bool
    reason: str
    source: str
    epoch_id: str
    request_id: str | None = None


@attrs.frozen
class _Call:
    run_id: str
    context_id: str
    tool: str
    action: str
    specifier: str


@contextlib.asynccontextmanager
async def _no_wait(_kind: str, _detail: str) -> AsyncIterator[str]:
    yield ""


class PermissionService:
    """Governs every tool call of one session. Use it from the event loop's thread."""

    def __init__(
        self,
        rules: RuleSet,
        epoch: PermissionEpoch,
        audit: AuditLog,
        *,
        timeout_s: float = 300.0,
    ) -> None:
        self.rules = rules
        self.audit = audit
        self.timeout_s = timeout_s
        self.queue = DecisionQueue()
        while audit.is_retired(epoch.epoch_id):  # a rotation survives restarts: never resume a retired epoch
            epoch = epoch.rotated()
        self._epoch = epoch
        self._grants: dict[str, Grant] = {}  # once/conversation/session; project grants live in the audit file
        self._ids = itertools.count(1)

    @property
    def epoch(self) -> PermissionEpoch:
        return self._epoch

    # -- authorization -------------------------------------------------------------------------

    async def authorize(
        self,
        *,
        tool: str,
        action: ToolAction | str,
        specifier: str,
        run_id: str,
        context_id: str,
        waits: ExternalWaits | None = None,
    ) -> Authorization:
        """Decide one call, waiting on a person (as an external wait) when a rule says ``ask``."""
        call = _Call(run_id, context_id, tool, ToolAction(action).value, specifier)
        epoch_id = self._epoch.epoch_id
        limit = self._epoch_limit(call)
        if limit is not None:
            return self._final(call, False, limit, "epoch", epoch_id)
        verdict = self.rules.evaluate(tool, specifier)
        reason = f"matches {verdict.rule.text}" if verdict.rule else f"no rule matches; default {verdict.effect}"
        if verdict.effect is Effect.ALLOW or (verdict.effect is Effect.DENY and verdict.rule is not None):
            return self._final(call, verdict.effect is Effect.ALLOW, reason, verdict.source, epoch_id)
        grant = self._matching_grant(call)  # a grant answers what would otherwise be asked (or default-denied)
        if grant is not None:
            return self._final(call, True, f"granted by {grant.rule.text}", f"grant:{grant.grant_id}", epoch_id)
        if verdict.effect is Effect.DENY:
            return self._final(call, False, reason, verdict.source, epoch_id)
        return await self._ask(call, reason, verdict.source, waits)

    def is_denied(self, tool: str, specifier: str, *, action: ToolAction | str = ToolAction.READ) -> bool:
        """Whether a call of ``tool`` on ``specifier`` would surely be refused: a deny rule matches it, or
        the current epoch's limits (read-only mounts for ``action`` write, the network policy) refuse it.

        Side-effect free: nothing is audited, queued or granted, and grants (which never override a deny
        rule or a limit) are not consulted. What the default or an ``ask`` would decide is not "denied".
        It only reads the current rules and epoch, so an entry filter may call it from a worker thread.
        """
        call = _Call("", "", tool, ToolAction(action).value, specifier)
        if self._epoch_limit(call) is not None:
            return True
        verdict = self.rules.evaluate(tool, specifier)
        return verdict.effect is Effect.DENY and verdict.rule is not None

    def _epoch_limit(self, call: _Call) -> str | None:
        if call.action == ToolAction.WRITE.value:
            first = specifiers.lexical_view(call.specifier).split("/", 1)[0]
            mount = self._epoch.mount(first)
            if mount is not None and mount.mode is MountMode.READ_ONLY:
                return f"mount {mount.name!r} is read-only in epoch {self._epoch.epoch_id}"
        if call.specifier.lower().startswith(specifiers.DOMAIN_PREFIX):
            verdict = self._epoch.network.check_host(call.specifier[len(specifiers.DOMAIN_PREFIX) :])
            if not verdict.allowed:
                return f"network policy: {verdict.reason}"
        return None

    def _matching_grant(self, call: _Call) -> Grant | None:
        exact, broad = specifiers.exact_view(call.specifier), specifiers.broad_view(call.specifier)
        epoch_id = self._epoch.epoch_id
        for grant in self.grants():
            if grant.applies(epoch_id, call.context_id, call.tool, exact, broad):
                if grant.scope is GrantScope.ONCE:
                    del self._grants[grant.grant_id]
                return grant
        return None

    async def _ask(self, call: _Call, reason: str, source: str, waits: ExternalWaits | None) -> Authorization:
        request = PermissionRequest(
            request_id=f"perm-{next(self._ids)}-{uuid.uuid4().hex[:8]}",
            epoch_id=self._epoch.epoch_id,
            run_id=call.run_id,
            context_id=call.context_id,
            tool=call.tool,
            action=call.action,
            specifier=call.specifier,
            reason=reason,
        )
        self._audit(call, "ask", source, reason, request.epoch_id, request.request_id)
        future = self.queue.submit(request)
        wait = waits.external if waits is not None else _no_wait
        try:
            async with wait("permission", f"{call.tool}({call.specifier}) [{request.request_id}]"):
                resolution = await asyncio.wait_for(asyncio.shield(future), self.timeout_s)
        except TimeoutError:
            resolution = self._settle_if_pending(request.request_id, Deny("no decision before the timeout"), "timeout")
        except asyncio.CancelledError:
            self._settle_if_pending(request.request_id, Deny("the call was cancelled"), "cancelled")
            raise
        return self._after_decision(call, request, resolution)

    def _settle_if_pending(self, request_id: str, decision: Decision, source: str) -> Resolution:
        existing = self.queue.resolution(request_id)
        if existing is not None:
            return existing
        resolution = Resolution(decision, source)
        request = self.queue.settle(request_id, resolution)
        self._audit_request(request, resolution)
        return resolution

    def _after_decision(self, call: _Call, request: PermissionRequest, resolution: Resolution) -> Authorization:
        decision = resolution.decision
        if isinstance(decision, Deny):
            source = f"decision:deny:{resolution.source}"
            return self._final(call, False, decision.reason, source, request.epoch_id, request.request_id)
        source = f"decision:{decision.kind}:{resolution.source}"
        return self._final(call, True, "allowed by decision", source, request.epoch_id, request.request_id)

    def _final(
        self, call: _Call, allowed: bool, reason: str, source: str, epoch_id: str, request_id: str | None = None
    ) -> Authorization:
        if epoch_id != self._epoch.epoch_id:  # the epoch rotated while a person was deciding
            allowed, reason, source = False, f"epoch {epoch_id} is no longer current", "epoch_rotation"
        self._audit(call, "allow" if allowed else "deny", source, reason, epoch_id, request_id)
        return Authorization(allowed, reason, source, epoch_id, request_id)

    def _audit(
        self, call: _Call, outcome: str, source: str, reason: str, epoch_id: str, request_id: str | None
    ) -> None:
        self.audit.record(
            AuditRecord(
                epoch_id=epoch_id,
                run_id=call.run_id,
                context_id=call.context_id,
                tool=call.tool,
                specifier=call.specifier,
                outcome=outcome,
                source=source,
                reason=reason,
                request_id=request_id,
            )
        )

    def _audit_request(self, request: PermissionRequest, resolution: Resolution) -> None:
        call = _Call(request.run_id, request.context_id, request.tool, request.action, request.specifier)
        reason = resolution.decision.reason if isinstance(resolution.decision, Deny) else ""
        outcome = f"decision:{resolution.decision.kind}"
        self._audit(call, outcome, resolution.source, reason, request.epoch_id, request.request_id)

    # -- decision API --------------------------------------------------------------------------

    def pending(self) -> list[PermissionRequest]:
        """Requests waiting for a decision, oldest first."""
        return self.queue.pending()

    async def wait_pending(self) -> list[PermissionRequest]:
        """Requests waiting for a decision, waiting until there is at least one."""
        return await self.queue.wait_pending()

    def decide(self, request_id: str, decision: Decision, *, source: str = "api") -> PermissionRequest:
        """Resolve a pending request exactly once.

        Raises :class:`~.errors.UnknownRequestError`, :class:`~.errors.StaleEpochError` (the
        request belongs to an older epoch), :class:`~.errors.AlreadyResolvedError`, or
        :class:`~.errors.RuleError` (an ``allow_matching`` rule is malformed; the request
        then stays pending).
        """
        if not isinstance(decision, AllowOnce | AllowMatching | Deny):
            raise InvalidDecisionError("kind", f"expected AllowOnce, AllowMatching or Deny, got {decision!r}")
        request = self.queue.get(request_id)
        if request.epoch_id != self._epoch.epoch_id:
            raise StaleEpochError(request_id, request.epoch_id, self._epoch.epoch_id)
        self.queue.settle_check(request_id)
        if isinstance(decision, AllowMatching) and decision.scope is not GrantScope.ONCE:
            self.grant(
                decision.rule or self._exact_rule(request), decision.scope, context_id=request.context_id, source=source
            )
        resolution = Resolution(decision, source)
        self.queue.settle(request_id, resolution)
        self._audit_request(request, resolution)
        return request

    @staticmethod
    def _exact_rule(request: PermissionRequest) -> str:
        exact = specifiers.exact_view(request.specifier)
        if exact is None or (exact != "*" and any(ch in exact for ch in "*?()")):
            raise RuleError(
                f"{request.tool}({request.specifier})",
                "this specifier cannot be granted literally; pass an explicit rule with allow_matching",
            )
        return f"{request.tool}({exact})"

    # -- grants and epochs ---------------------------------------------------------------------

    def grant(self, rule: str, scope: GrantScope | str, *, context_id: str = "", source: str = "api") -> Grant:
        """Create a grant in the current epoch (``rule`` is an allow rule like ``read_file(data/**)``).

        A ``once`` grant is used up by the first call it allows.
        """
        scope = GrantScope(scope)
        parsed = Rule.parse(Effect.ALLOW, rule, source=f"grant by {source}")
        grant = Grant(f"grant-{uuid.uuid4().hex[:12]}", parsed, scope, self._epoch.epoch_id, context_id, source)
        if scope is not GrantScope.PROJECT:
            self._grants[grant.grant_id] = grant
        self.audit.grant_event("granted", grant)
        return grant

    def revoke(self, grant_id: str, *, source: str = "api") -> Grant:
        """Withdraw a standing grant."""
        grant = self._grants.pop(grant_id, None) or next((g for g in self.grants() if g.grant_id == grant_id), None)
        if grant is None:
            raise UnknownGrantError(grant_id)
        self.audit.grant_event("revoked", attrs.evolve(grant, source=source))
        return grant

    def grants(self) -> list[Grant]:
        """Standing grants of the current epoch."""
        return [*self._grants.values(), *self.audit.project_grants(self._epoch.epoch_id)]

    def rotate(self, **changes: Any) -> PermissionEpoch:
        """Move to the next epoch: every older grant is void and pending requests resolve as deny."""
        old = self._epoch
        self._epoch = old.rotated(**changes)
        while self.audit.is_retired(self._epoch.epoch_id):
            self._epoch = self._epoch.rotated()
        self.audit.retire_epoch(old.epoch_id, self._epoch.epoch_id)
        self._grants.clear()
        for request in self.queue.pending():
            self._settle_if_pending(request.request_id, Deny(f"epoch {old.epoch_id} was rotated"), "epoch_rotation")
        return self._epoch

    def describe(self) -> dict[str, Any]:
        """Plain data for the governance context section: epoch, rules and standing grants."""
        return {
            "epoch": self._epoch.describe(),
            "rules": self.rules.describe(),
            "grants": [{"rule": g.rule.text, "scope": g.scope.value, "grant_id": g.grant_id} for g in self.grants()],
            "pending_requests": len(self.queue.pending()),
        }
