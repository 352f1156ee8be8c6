"""Run profiles, RunContract, Skills, Plans, subagents and the reviewer.

Everything enters a run through hooks: the ``task``, ``read_skill`` and
``update_plan`` tools (``register_tools``), the built-in contributors
(``register_context_contributors``) and the ``plan``, ``active_skills`` and
``delegations`` channels (``register_state_channels``). This package owns the
``register_skills`` and ``register_specialists`` hooks.
"""

from .channels import (
    ACTIVE_SKILLS_CHANNEL,
    DELEGATIONS_CHANNEL,
    PLAN_CHANNEL,
    ActiveSkillsChannel,
    DelegationsChannel,
    PlanChannel,
    PlanState,
    SkillRead,
)
from .contract import RunContract
from .contributors import builtin_factories
from .delegation import TASK, Delegation, TaskTool
from .errors import (
    DuplicateSkillError,
    FieldError,
    OrchestrationError,
    PlanError,
    ProfileError,
    RunContractError,
    SkillError,
    SkillFormatError,
    TaskArgumentError,
    UnknownSkillError,
)
from .plans import UPDATE_PLAN, Plan, PlanItem, PlanStatus, parse_plan
from .profiles import DEFAULT_PROFILES, AgentProfile, ProfileSet, Scope, load_profiles, profiles_from_mapping
from .reviewer import Reviewer, ReviewFinding, ReviewLevelError, ReviewOutcome
from .settings import prepare_settings
from .skills import FrozenSkill, Skill, SkillLibrary, SkillReference, load_skill, skill_folders
from .specialists import SpecialistDefinition
from .state_tools import READ_SKILL, read_skill_tool, update_plan_tool
from .subagents import ChildRunFactory, ChildRunSpec

__all__ = [
    "ACTIVE_SKILLS_CHANNEL",
    "DEFAULT_PROFILES",
    "DELEGATIONS_CHANNEL",
    "PLAN_CHANNEL",
    "READ_SKILL",
    "TASK",
    "UPDATE_PLAN",
    "ActiveSkillsChannel",
    "AgentProfile",
    "ChildRunFactory",
    "ChildRunSpec",
    "Delegation",
    "DelegationsChannel",
    "DuplicateSkillError",
    "FieldError",
    "FrozenSkill",
    "OrchestrationError",
    "Plan",
    "PlanChannel",
    "PlanError",
    "PlanItem",
    "PlanState",
    "PlanStatus",
    "ProfileError",
    "ProfileSet",
    "ReviewFinding",
    "ReviewLevelError",
    "ReviewOutcome",
    "Reviewer",
    "RunContract",
    "RunContractError",
    "Scope",
    "Skill",
    "SkillError",
    "SkillFormatError",
    "SkillLibrary",
    "SkillRead",
    "SkillReference",
    "SpecialistDefinition",
    "TaskArgumentError",
    "TaskTool",
    "UnknownSkillError",
    "builtin_factories",
    "load_profiles",
    "load_skill",
    "parse_plan",
    "prepare_settings",
    "profiles_from_mapping",
    "read_skill_tool",
    "skill_folders",
    "update_plan_tool",
]
