"""The ``read_skill`` and ``update_plan`` tools. Their results feed the active_skills and plan channels."""

from __future__ import annotations

from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput

from .errors import PlanError, SkillError
from .plans import UPDATE_PLAN, PlanStatus, parse_plan
from .skills import SkillLibrary

READ_SKILL = "read_skill"
SKILL_KEY = "skill"
"""Result metadata key of ``read_skill``: the frozen :class:`SkillReference` as JSON."""


def read_skill_tool(library: SkillLibrary) -> ToolDefinition:
    """``read_skill(name)``: the Skill's complete instructions, frozen for the run at its first read."""

    async def handle(invocation: ToolInvocation) -> ToolOutput:
        name = invocation.arguments.get("name")
        if not isinstance(name, str) or not name:
            return ToolOutput(
                "name: must be a skill name from the catalog", is_error=True, error_kind="invalid_arguments"
            )
        try:
            frozen = library.read(invocation.context.run_id, name)
        except SkillError as error:
            return ToolOutput(str(error), is_error=True, error_kind="skill_unavailable")
        return ToolOutput(frozen.render(), metadata={SKILL_KEY: frozen.reference.to_json()})

    return ToolDefinition(
        name=READ_SKILL,
        description="Load the complete instructions of a Skill from the Skill catalog. Call it again if the "
        "instructions are no longer in the conversation.",
        parameters={
            "type": "object",
            "properties": {"name": {"type": "string", "enum": [skill.name for skill in library.skills]}},
            "required": ["name"],
            "additionalProperties": False,
        },
        handler=handle,
        action=ToolAction.READ,
        read_only=True,
        source="orchestration",
    )


def update_plan_tool() -> ToolDefinition:
    """``update_plan(explanation, items)``: replace the run's plan."""

    async def handle(invocation: ToolInvocation) -> ToolOutput:
        try:
            plan = parse_plan(invocation.arguments)
        except PlanError as error:
            return ToolOutput(str(error), is_error=True, error_kind="invalid_arguments")
        return ToolOutput(f"{plan.summary()}\n{plan.render()}")

    return ToolDefinition(
        name=UPDATE_PLAN,
        description="Record or replace your plan: a short explanation and the ordered steps with their status "
        "(at most one in_progress).",
        parameters={
            "type": "object",
            "properties": {
                "explanation": {"type": "string"},
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string"},
                            "status": {"type": "string", "enum": [status.value for status in PlanStatus]},
                        },
                        "required": ["step", "status"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": ["items"],
            "additionalProperties": False,
        },
        handler=handle,
        action=ToolAction.STATE,
        read_only=True,
        source="orchestration",
    )
