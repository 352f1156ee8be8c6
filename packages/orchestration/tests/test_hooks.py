"""The hooks orchestration owns (register_skills, register_specialists) and the ones it implements."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.context import ContextScope, discover_state_channels
from sciencediscovery.orchestration import (
    AgentProfile,
    DuplicateSkillError,
    ProfileError,
    Scope,
    SpecialistDefinition,
    prepare_settings,
)
from sciencediscovery.runtime_core import ConfigurationError, Message, RunRequest, ToolCall, hookimpl
from sciencediscovery.runtime_core.testing import reply
from sciencediscovery.tools.registry import ToolRegistry


class PluginSkills:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @hookimpl
    def register_skills(self, register, settings):
        register(self.folder)


def test_register_skills_adds_folders_to_the_catalog_and_read_skill(kernel, tmp_path: Path, write_skill) -> None:
    folder = write_skill(tmp_path / "plugin", "crispr-screen", "Design a CRISPR screen", "Pick guides.\n")
    manager = kernel.manager(PluginSkills(folder))
    prepared = prepare_settings(manager, {})
    assert [skill.name for skill in prepared["skill_library"].skills] == ["crispr-screen"]
    script = [reply("", ToolCall("c1", "read_skill", {"name": "crispr-screen"})), reply("done")]
    runtime, run = kernel.compose(manager, {}, ContextScope.MAIN, script)
    result = asyncio.run(runtime.run(RunRequest("ctx", [Message.user("go")], run_id="run-main")))
    assert "- crispr-screen: Design a CRISPR screen" in run.inputs[0].system_prompt
    assert "Pick guides." in result.history[2].content


def test_a_hook_skill_clashing_with_a_configured_one_names_both_folders(
    kernel, tmp_path: Path, write_skill, skills_dir: Path
) -> None:
    folder = write_skill(tmp_path / "plugin", "literature-review", "Another", "Body.\n")
    with pytest.raises(DuplicateSkillError, match="literature-review") as caught:
        prepare_settings(kernel.manager(PluginSkills(folder)), {"skill_dirs": [skills_dir]})
    assert str(folder) in str(caught.value) and str(skills_dir / "literature-review") in str(caught.value)


class TwoSpecialists:
    @hookimpl
    def register_specialists(self, register, settings):
        for _ in range(2):
            register(SpecialistDefinition("dup", "d", "You are dup.", ("read_file",), 2, "a table"))


def test_register_specialists_rejects_duplicate_names(kernel) -> None:
    with pytest.raises(ConfigurationError, match="'dup' is registered twice"):
        prepare_settings(kernel.manager(TwoSpecialists()), {})


def test_specialist_definition_validates_its_fields() -> None:
    with pytest.raises(ProfileError) as caught:
        SpecialistDefinition("x", "d", "You are x.", ("read_file",), 0, "a table")
    assert caught.value.field == "specialist 'x'.max_turns"
    with pytest.raises(ProfileError):
        SpecialistDefinition("x", "", "You are x.", (), 1, "a table")


def test_register_tools_and_register_state_channels_contributions(kernel, skills_dir: Path) -> None:
    manager = kernel.manager()
    bare = ToolRegistry.from_plugins(manager, prepare_settings(manager, {}))
    assert "update_plan" in bare.names and "read_skill" not in bare.names and "task" not in bare.names
    with_skills = ToolRegistry.from_plugins(manager, prepare_settings(manager, {"skill_dirs": [skills_dir]}))
    assert "read_skill" in with_skills.names
    names = [channel.name for channel in discover_state_channels(manager, {})]
    assert {"plan", "active_skills", "delegations"} <= set(names)


def test_a_skill_changed_during_a_run_keeps_its_frozen_revision(kernel, skills_dir: Path, literature_body) -> None:
    skill_md = skills_dir / "literature-review" / "SKILL.md"

    def edit_then_read_again(model_input):
        skill_md.write_text(skill_md.read_text().replace("Search PubMed", "Search Embase"))
        return reply("", ToolCall("c2", "read_skill", {"name": "literature-review"}))

    script = [reply("", ToolCall("c1", "read_skill", {"name": "literature-review"})), edit_then_read_again, reply("ok")]
    runtime, run = kernel.compose(kernel.manager(), {"skill_dirs": [skills_dir]}, ContextScope.MAIN, script)
    result = asyncio.run(runtime.run(RunRequest("ctx", [Message.user("go")], run_id="run-main")))
    first, second = (m for m in result.history if m.name == "read_skill")
    assert first.content == second.content and "Search PubMed" in second.content
    assert first.metadata["skill"] == second.metadata["skill"]
    assert first.metadata["skill"]["revision"] == 1


def test_governance_summary_of_the_wrong_type_names_the_key(kernel) -> None:
    script = [reply("hi")]
    runtime, _ = kernel.compose(kernel.manager(), {"governance_summary": 42}, ContextScope.MAIN, script)
    result = asyncio.run(runtime.run(RunRequest("ctx", [Message.user("go")], run_id="run-main")))
    assert result.status.value == "failed" and "governance_summary" in result.reason


names = st.lists(
    st.sampled_from(["read_file", "write_file", "task", "list_files", "tool_search", "mcp_x"]), unique=True
)


@settings(max_examples=80)
@given(available=names, allowed=st.lists(st.sampled_from(["*", "read_*", "task", "mcp_*"])), denied=names)
def test_profile_tool_selection_is_an_ordered_subset_without_denied_tools(available, allowed, denied) -> None:
    profile = AgentProfile(Scope.SUBAGENT, "You are a subagent.", 1, tools=allowed, denied_tools=denied)
    selected = profile.select_tools(available)
    assert list(selected) == [name for name in available if name in selected]
    assert not set(selected) & set(denied)
    if "*" in allowed:
        assert set(selected) == set(available) - set(denied)
