"""Built-in context contributors: identity, governance, RunContract, capabilities, Skill catalog
and the active Skill projection.

Identity, governance and RunContract sit in protected slots. Each factory
reads the run's settings once, when it is registered, so a run's RunContract
and profiles are frozen for its lifetime.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from typing import Any

from sciencediscovery.context import (
    ContextScope,
    Contribution,
    ContributionRequest,
    Contributor,
    ContributorFactory,
    SectionSlot,
    SystemSection,
    Trust,
    runtime_data_message,
)
from sciencediscovery.runtime_core import ConfigurationError, Message
from sciencediscovery.tools.registry import ToolRegistry

from . import settings as keys
from .channels import ACTIVE_SKILLS_CHANNEL, SkillRead, instructions_visible
from .contract import RunContract
from .profiles import ProfileSet
from .skills import SkillLibrary
from .state_tools import READ_SKILL

TOOL_SEARCH = "tool_search"
SKILL_INSTRUCTION = (
    "A skill reference is durable. If its full read_skill result is no longer present in recent history, "
    "call read_skill again before relying on its detailed instructions."
)


def _section(section_id: str, slot: SectionSlot, content: str, order: int = 0) -> Contribution:
    return Contribution(sections=(SystemSection(id=section_id, slot=slot, content=content, order=order),))


def _static(factory_id: str, make: Callable[[ContextScope], Contribution | None]) -> ContributorFactory:
    """A factory whose contributor returns the same contribution every turn (``None``: nothing for the scope)."""

    def create(scope: ContextScope) -> Contributor | None:
        contribution = make(scope)
        if contribution is None:
            return None

        async def contribute(request: ContributionRequest) -> Contribution:
            return contribution

        return Contributor(factory_id, contribute, scopes=(scope,), required=True)

    return ContributorFactory(factory_id, create)


def _dynamic(
    factory_id: str, contribute: Callable[[ContributionRequest], Awaitable[Contribution]], *, required: bool = False
) -> ContributorFactory:
    return ContributorFactory(
        factory_id, lambda scope: Contributor(factory_id, contribute, scopes=(scope,), required=required)
    )


def identity_factory(profiles: ProfileSet) -> ContributorFactory:
    return _static(
        "orchestration.identity",
        lambda scope: _section("identity", SectionSlot.IDENTITY, profiles.for_scope(scope).identity),
    )


def render_governance(summary: Any) -> str:
    """Plain governance data as section text: strings as given, mappings as sorted ``key: value`` lines."""
    if summary is None:
        return "Governance: no policy summary was supplied. Every tool call is still checked before it runs."
    if isinstance(summary, str):
        return summary
    if not isinstance(summary, Mapping):
        raise ConfigurationError(
            keys.GOVERNANCE_SUMMARY, f"must be a string or a mapping, got {type(summary).__name__}"
        )
    lines = ["Governance (current permission epoch and policy; tool calls outside it are refused):"]
    for key in sorted(summary):
        value = summary[key]
        if isinstance(value, list | tuple):
            lines.append(f"- {key}:")
            lines.extend(f"  - {item}" for item in value)
        else:
            lines.append(f"- {key}: {value}")
    return "\n".join(lines)


def governance_factory(summary: Any) -> ContributorFactory:
    """Re-reads ``summary`` each turn when it is a callable, so a new permission epoch shows immediately."""

    async def contribute(request: ContributionRequest) -> Contribution:
        current = summary() if callable(summary) else summary
        return _section("governance", SectionSlot.GOVERNANCE, render_governance(current))

    return _dynamic("orchestration.governance", contribute, required=True)


def run_contract_factory(contract: RunContract) -> ContributorFactory:
    return _static(
        "orchestration.run_contract",
        lambda scope: _section("run_contract", SectionSlot.RUN_CONTRACT, contract.render()),
    )


def render_capabilities(tools: Iterable[str], searchable: Iterable[str]) -> str:
    """The capabilities section: the governed tools of this turn, and deferred ones by name only."""
    names = list(tools)
    lines = [
        "Governed tools for this turn: " + (", ".join(names) if names else "none") + ".",
        "No other tool exists for this run; every call is checked by governance before it runs.",
    ]
    hidden = [name for name in searchable if name not in names]
    if hidden and TOOL_SEARCH in names:
        lines.append(
            f"Searchable, not loaded: {', '.join(hidden)}. Call {TOOL_SEARCH} (a query or select:<name>) to load "
            "one; it becomes callable from your next turn."
        )
    return "\n".join(lines)


def capabilities_factory(registry: ToolRegistry | None) -> ContributorFactory:
    async def contribute(request: ContributionRequest) -> Contribution:
        searchable = []
        if registry is not None:
            searchable = [
                name
                for name in registry.names
                if (tool := registry.get(name)) is not None
                and tool.deferred
                and not registry.is_visible(name, request.turn)
            ]
        text = render_capabilities([spec.name for spec in request.tools], searchable)
        return _section("capabilities", SectionSlot.CAPABILITIES, text)

    return _dynamic("orchestration.capabilities", contribute)


def skill_catalog_factory(library: SkillLibrary, profiles: ProfileSet) -> ContributorFactory:
    """The selected Skills' names and descriptions only; bodies come from ``read_skill``."""

    def make(scope: ContextScope) -> Contribution | None:
        profile = profiles.for_scope(scope)
        selected = [skill for skill in library.skills if profile.allows_skill(skill.name)]
        if not selected:
            return None
        lines = [f"Skills (load one with {READ_SKILL} before following it):"]
        lines.extend(f"- {skill.name}: {skill.description}" for skill in selected)
        return _section("skill_catalog", SectionSlot.CAPABILITIES, "\n".join(lines), order=10)

    return _static("orchestration.skill_catalog", make)


def active_skills_value(reads: Collection[SkillRead], history: tuple[Message, ...]) -> dict[str, Any] | None:
    """The ``active_skills`` projection: each Skill's frozen reference and whether its body is still visible."""
    if not reads:
        return None
    latest: dict[str, SkillRead] = {}
    visible: dict[str, bool] = {}
    for read in reads:
        latest[read.reference.id] = read
        visible[read.reference.id] = visible.get(read.reference.id, False) or instructions_visible(read, history)
    return {
        "instruction": SKILL_INSTRUCTION,
        "skills": [
            {**read.reference.to_json(), "instructionsVisibleInHistory": visible[skill_id]}
            for skill_id, read in sorted(latest.items())
        ],
    }


def active_skills_factory() -> ContributorFactory:
    """Projects the ``active_skills`` channel as hidden data, with visibility judged on model-visible history."""

    async def contribute(request: ContributionRequest) -> Contribution:
        value = active_skills_value(request.channels.get(ACTIVE_SKILLS_CHANNEL, ()), request.history)
        if value is None:
            return Contribution()
        return Contribution(messages=(runtime_data_message(ACTIVE_SKILLS_CHANNEL, Trust.MIXED_RUNTIME_DATA, value),))

    return _dynamic("orchestration.active_skills", contribute)


def builtin_factories(settings: Mapping[str, Any]) -> list[ContributorFactory]:
    """Every built-in factory that ``settings`` supports."""
    profile_set = keys.profiles(settings)
    factories = [
        identity_factory(profile_set),
        governance_factory(settings.get(keys.GOVERNANCE_SUMMARY)),
        capabilities_factory(keys.tool_registry(settings)),
        active_skills_factory(),
    ]
    contract = keys.run_contract(settings)
    if contract is not None:
        factories.append(run_contract_factory(contract))
    library = keys.skill_library(settings)
    if library is not None and library.skills:
        factories.append(skill_catalog_factory(library, profile_set))
    return factories
