"""The ``task`` tool: delegate a bounded side task to a child run with the subagent profile."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from sciencediscovery.runtime_core import Message, Role, RunResult, RunStatus
from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput, Trust

from .contract import RunContract
from .errors import RunContractError, TaskArgumentError
from .profiles import ProfileSet, Scope
from .specialists import SpecialistDefinition
from .subagents import ChildRunFactory, ChildRunSpec

TASK = "task"
DEFAULT_BRIEF_CHARS = 4000
DELEGATION_KEY = "delegation"
"""Result metadata key of ``task``: the :class:`Delegation` record as JSON."""


@attrs.frozen
class Delegation:
    """What the delegations channel records about one ``task`` call."""

    call_id: str
    context_id: str
    run_id: str
    objective: str
    status: str
    turns: int
    brief: str
    specialist: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "callId": self.call_id,
            "contextId": self.context_id,
            "runId": self.run_id,
            "objective": self.objective,
            "specialist": self.specialist,
            "status": self.status,
            "turns": self.turns,
            "brief": self.brief,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Delegation:
        return cls(
            call_id=str(data["callId"]),
            context_id=str(data["contextId"]),
            run_id=str(data["runId"]),
            objective=str(data["objective"]),
            status=str(data["status"]),
            turns=int(data["turns"]),
            brief=str(data["brief"]),
            specialist=data.get("specialist"),
        )


def bounded(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    marker = f"\n[brief truncated: {limit} of {len(text)} characters kept]"
    return text[: max(0, limit - len(marker))] + marker


def final_text(result: RunResult) -> str:
    """A finished run's answer: its final message, else its last non-empty assistant text."""
    if result.final_message is not None:
        return result.final_message.content
    texts = [m.content for m in result.history if m.role is Role.ASSISTANT and m.content.strip()]
    return texts[-1] if texts else ""


TASK_TIMEOUT_S = 3600
"""Upper bound on one delegation's wall time (the child's own turn bound usually ends it first)."""


class TaskTool:
    """Starts one child run per call through the injected :class:`ChildRunFactory`.

    The brief is model-written text, so the tool is ``untrusted``: the dispatcher sanitizes it.
    """

    def __init__(
        self,
        factory: ChildRunFactory,
        profiles: ProfileSet,
        specialists: Mapping[str, SpecialistDefinition] | None = None,
        brief_chars: int = DEFAULT_BRIEF_CHARS,
    ) -> None:
        self.factory = factory
        self.profiles = profiles
        self.specialists = dict(specialists or {})
        self.brief_chars = brief_chars

    def definition(self) -> ToolDefinition:
        properties: dict[str, Any] = {
            "objective": {"type": "string", "description": "What the subagent must find out or produce."},
            "constraints": {"type": "array", "items": {"type": "string"}},
            "outputRequirements": {"type": "array", "items": {"type": "string"}},
            "tools": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Optional: narrow the subagent's governed tools to these names.",
            },
            "max_turns": {"type": "integer", "minimum": 1},
        }
        if self.specialists:
            properties["specialist"] = {"type": "string", "enum": sorted(self.specialists)}
        return ToolDefinition(
            name=TASK,
            description=(
                "Delegate a bounded side task to a subagent with its own context and turn budget. "
                "Returns the subagent's brief."
                + "".join(f"\nSpecialist {s.name}: {s.description}" for s in self.specialists.values())
            ),
            parameters={
                "type": "object",
                "properties": properties,
                "required": ["objective"],
                "additionalProperties": False,
            },
            handler=self.handle,
            action=ToolAction.DELEGATE,
            trust=Trust.UNTRUSTED,
            source="orchestration",
            timeout_s=TASK_TIMEOUT_S,  # a child runs many model turns: the dispatcher's per-call default is too short
        )

    def spec_for(self, invocation: ToolInvocation) -> ChildRunSpec:
        """Validate the call and build the child's spec; :class:`TaskArgumentError` names the bad argument."""
        arguments = dict(invocation.arguments)
        known = {"objective", "constraints", "outputRequirements", "tools", "max_turns", "specialist"}
        unknown = sorted(set(arguments) - known)
        if unknown:
            raise TaskArgumentError(unknown[0], f"is not a task argument (known: {', '.join(sorted(known))})")
        profile = self.profiles.subagent
        name = arguments.pop("specialist", None)
        specialist = None
        if name is not None:
            if name not in self.specialists:
                raise TaskArgumentError(
                    "specialist", f"unknown specialist {name!r} (known: {sorted(self.specialists)})"
                )
            specialist = self.specialists[name]
            profile = specialist.profile(profile)
        requested = arguments.pop("tools", None)
        if requested is not None and (
            not isinstance(requested, list) or not all(isinstance(t, str) and t for t in requested)
        ):
            raise TaskArgumentError("tools", "must be a list of tool names")
        max_turns = arguments.pop("max_turns", profile.max_turns)
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise TaskArgumentError("max_turns", f"must be a positive integer, got {max_turns!r}")
        try:
            contract = RunContract.from_mapping(arguments)
        except RunContractError as error:
            raise TaskArgumentError(error.field, error.detail) from None
        if specialist is not None:
            contract = attrs.evolve(
                contract, output_requirements=(*contract.output_requirements, specialist.output_contract)
            )
        parent = invocation.context
        return ChildRunSpec(
            scope=Scope.SUBAGENT,
            profile=profile,
            contract=contract,
            context_id=f"{parent.context_id}/task-{invocation.call.id}",
            max_turns=min(max_turns, profile.max_turns),
            history=(Message.user(contract.objective),),
            requested_tools=None if requested is None else tuple(requested),
            specialist=name,
            parent=parent,
        )

    async def handle(self, invocation: ToolInvocation) -> ToolOutput:
        try:
            spec = self.spec_for(invocation)
        except TaskArgumentError as error:
            return ToolOutput(str(error), is_error=True, error_kind="invalid_arguments")
        result = await self.factory.run_child(spec)
        text = final_text(result).strip() or f"(the subagent produced no brief: {result.reason})"
        finished = result.status is RunStatus.COMPLETED
        header = "" if finished else f"Subagent run ended with status {result.status.value}: {result.reason}\n"
        brief = bounded(header + text, self.brief_chars)
        delegation = Delegation(
            call_id=invocation.call.id,
            context_id=spec.context_id,
            run_id=result.run_id,
            objective=spec.contract.objective,
            status=result.status.value,
            turns=result.turns,
            brief=brief,
            specialist=spec.specialist,
        )
        # the delegation itself succeeded whatever the child's outcome: the brief's header and the
        # delegation record carry the outcome, so the delegations channel shows failed and cancelled children too
        return ToolOutput(brief, metadata={DELEGATION_KEY: delegation.to_json()})
