from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.context import (
    ContextScope,
    Contribution,
    ContributionRequest,
    SectionSlot,
    discover_contributor_factories,
)
from sciencediscovery.context import plugin as context_plugin
from sciencediscovery.orchestration import ProfileSet, RunContract, prepare_settings
from sciencediscovery.orchestration import plugin as orchestration_plugin
from sciencediscovery.runtime_core import ConfigurationError, ToolSpec, make_plugin_manager
from sciencediscovery.tools import plugin as tools_plugin
from sciencediscovery.tools.definitions import ToolDefinition
from sciencediscovery.tools.registry import ToolRegistry

CONTRACT = {
    "objective": "Review current evidence about TP53 resistance mechanisms",
    "constraints": ["Use selected literature skill"],
    "outputRequirements": ["Cited summary"],
}


def manager() -> Any:
    return make_plugin_manager(load_entry_points=False, plugins=[tools_plugin, context_plugin, orchestration_plugin])


def collect(settings: dict, scope: ContextScope, tools: tuple[ToolSpec, ...] = (), turn: int = 1) -> Contribution:
    factories = discover_contributor_factories(manager(), prepare_settings(manager(), settings))
    request = ContributionRequest("ctx", "run-1", turn, scope, history=(), channels={}, tools=tools)
    sections, messages = [], []
    for factory in factories:
        contributor = factory.create(scope)
        if contributor is not None:
            contribution = asyncio.run(contributor.contribute(request))
            sections += contribution.sections
            messages += contribution.messages
    return Contribution(sections=sections, messages=messages)


def by_id(contribution: Contribution) -> dict[str, Any]:
    return {section.id: section for section in contribution.sections}


def test_identity_governance_and_contract_are_protected_sections(skills_dir: Path) -> None:
    summary = {"epoch": 3, "mode": "ask", "rules": ["allow read_file(data/**)", "deny network(*)"]}
    sections = by_id(
        collect(
            {"run_contract": CONTRACT, "governance_summary": summary, "skill_dirs": [skills_dir]}, ContextScope.MAIN
        )
    )
    assert {"identity", "governance", "run_contract"} <= set(sections)
    assert all(sections[name].is_protected for name in ("identity", "governance", "run_contract"))
    assert sections["identity"].content == ProfileSet.defaults().main.identity
    assert "- epoch: 3" in sections["governance"].content
    assert "  - deny network(*)" in sections["governance"].content
    assert sections["run_contract"].content == RunContract.from_mapping(CONTRACT).render()
    assert sections["run_contract"].slot is SectionSlot.RUN_CONTRACT


def test_each_scope_gets_its_own_identity() -> None:
    identities = {scope: by_id(collect({}, scope))["identity"].content for scope in ContextScope}
    assert len(set(identities.values())) == 3
    assert "reviewer" in identities[ContextScope.REVIEWER]


def test_governance_summary_callable_is_read_every_turn() -> None:
    epochs = iter([1, 2])
    settings = {"governance_summary": lambda: {"epoch": next(epochs)}}
    factories = discover_contributor_factories(manager(), settings)
    contributor = next(f for f in factories if f.id == "orchestration.governance").create(ContextScope.MAIN)
    assert contributor is not None and contributor.required
    request = ContributionRequest("ctx", "run-1", 1, ContextScope.MAIN, history=())
    first = asyncio.run(contributor.contribute(request)).sections[0].content
    second = asyncio.run(contributor.contribute(request)).sections[0].content
    assert "epoch: 1" in first and "epoch: 2" in second


def test_skill_catalog_lists_names_and_descriptions_but_never_bodies(skills_dir: Path, literature_body: str) -> None:
    sections = by_id(collect({"skill_dirs": [skills_dir]}, ContextScope.MAIN))
    catalog = sections["skill_catalog"].content
    assert "- literature-review: Systematic literature review" in catalog
    assert "- assay-comparison: Compare assay methods" in catalog
    assert "Search PubMed" not in catalog
    assert "skill_catalog" not in by_id(collect({"skill_dirs": [skills_dir]}, ContextScope.REVIEWER))


def test_profile_skill_selection_narrows_the_catalog(skills_dir: Path) -> None:
    settings = {"skill_dirs": [skills_dir], "profiles": {"main": {"skills": ["literature-*"]}}}
    catalog = by_id(collect(settings, ContextScope.MAIN))["skill_catalog"].content
    assert "literature-review" in catalog and "assay-comparison" not in catalog


async def _noop(invocation: Any) -> str:
    return "ok"


def test_capabilities_list_governed_tools_and_announce_deferred_ones_by_name_only() -> None:
    registry = ToolRegistry(
        [
            ToolDefinition("read_file", "Read a file", {"type": "object"}, _noop),
            ToolDefinition(
                "mcp_biomed_search", "Search biomedical literature", {"type": "object"}, _noop, deferred=True
            ),
        ]
    )
    settings = {"tool_registry": registry}
    before = by_id(collect(settings, ContextScope.MAIN, registry.visible_specs(1), turn=1))["capabilities"].content
    assert "read_file, tool_search" in before
    assert "Searchable, not loaded: mcp_biomed_search" in before
    assert "Search biomedical literature" not in before
    registry.promote(["mcp_biomed_search"], turn=1)
    after = by_id(collect(settings, ContextScope.MAIN, registry.visible_specs(2), turn=2))["capabilities"].content
    assert "mcp_biomed_search" in after.splitlines()[0]
    assert "Searchable" not in after


@pytest.mark.parametrize(
    ("settings", "variable"),
    [
        ({"run_contract": {"objective": ""}}, "run_contract.objective"),
        ({"profiles": 3}, "profiles"),
        ({"skill_dirs": "skills"}, "skill_dirs"),
        ({"tool_registry": object()}, "tool_registry"),
    ],
)
def test_bad_settings_name_the_key(settings: dict, variable: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        discover_contributor_factories(manager(), settings)
    assert caught.value.variable == variable
