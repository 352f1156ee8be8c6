"""PermissionGate: the tools package's ToolGate, backed by a PermissionService."""

from __future__ import annotations

from sciencediscovery.tools.definitions import GateDecision, ToolDefinition, ToolInvocation

from .service import PermissionService

PERMISSION_EPOCH_KEY = "permission_epoch"
"""Result metadata key naming the permission epoch a call was allowed under (provenance records it)."""


class PermissionGate:
    """Asks the session's :class:`PermissionService` about every invocation before its handler runs."""

    def __init__(self, service: PermissionService) -> None:
        self.service = service

    async def check(self, invocation: ToolInvocation, tool: ToolDefinition) -> GateDecision:
        try:
            specifier = tool.permission_specifier(invocation.arguments)
        except Exception as error:  # a tool's specifier must never crash the gate open
            return GateDecision.deny(f"cannot derive the permission specifier: {error}", source="governance")
        context = invocation.context
        verdict = await self.service.authorize(
            tool=tool.name,
            action=tool.action,
            specifier=specifier,
            run_id=context.run_id,
            context_id=context.context_id,
            waits=context.waits,
        )
        return GateDecision(
            verdict.allowed, verdict.reason, verdict.source, metadata={PERMISSION_EPOCH_KEY: verdict.epoch_id}
        )
