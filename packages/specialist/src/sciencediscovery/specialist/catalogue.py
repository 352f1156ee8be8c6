"""The specialist catalogue in the capabilities section: which specialists ``task`` can start, and what each returns."""

from __future__ import annotations

from collections.abc import Mapping

from sciencediscovery.context import (
    ContextScope,
    Contribution,
    ContributionRequest,
    Contributor,
    ContributorFactory,
    SectionSlot,
    SystemSection,
)
from sciencediscovery.orchestration import TASK, SpecialistDefinition

from .definitions import output_contract

FACTORY_ID = "specialist.catalogue"
SECTION_ID = "specialist_catalogue"
CONTRACT_CHARS = 160


def render_catalogue(specialists: Mapping[str, SpecialistDefinition]) -> str:
    """One line per specialist, sorted by name: description, turn budget and the shape of its brief."""
    lines = [f"Specialists (delegate with {TASK} and specialist=<name>; each returns a bounded brief):"]
    for name in sorted(specialists):
        definition = specialists[name]
        contract = output_contract(definition)
        brief = contract.summary() if contract is not None else definition.output_contract
        if len(brief) > CONTRACT_CHARS:
            brief = brief[: CONTRACT_CHARS - 1] + "…"
        lines.append(f"- {name}: {definition.description} (up to {definition.max_turns} turns; brief: {brief})")
    return "\n".join(lines)


def catalogue_factory(specialists: Mapping[str, SpecialistDefinition]) -> ContributorFactory:
    """Adds the catalogue on turns whose tools include ``task``; nothing when no specialist is registered."""
    text = render_catalogue(specialists)
    section = SystemSection(id=SECTION_ID, slot=SectionSlot.CAPABILITIES, content=text, order=20)

    async def contribute(request: ContributionRequest) -> Contribution:
        if not any(tool.name == TASK for tool in request.tools):
            return Contribution()
        return Contribution(sections=(section,))

    def create(scope: ContextScope) -> Contributor | None:
        return Contributor(FACTORY_ID, contribute, scopes=(scope,)) if specialists else None

    return ContributorFactory(FACTORY_ID, create)
