from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciencediscovery.orchestration import (
    DEFAULT_PROFILES,
    AgentProfile,
    ProfileError,
    ProfileSet,
    Scope,
    load_profiles,
    profiles_from_mapping,
)


def test_defaults_give_each_scope_its_own_identity_and_tool_policy() -> None:
    profiles = ProfileSet.defaults()
    identities = {profiles.for_scope(scope).identity for scope in Scope}
    assert len(identities) == 3
    assert profiles.main.select_tools(["read_file", "task", "update_plan"]) == ("read_file", "task", "update_plan")
    assert profiles.subagent.select_tools(["read_file", "task"]) == ("read_file",)
    assert profiles.reviewer.select_tools(["read_file", "task"]) == ()
    assert profiles.reviewer.read_only


def test_toml_overrides_only_the_fields_it_names(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text(
        '[subagent]\ntools = ["read_*", "list_files"]\nmax_turns = 4\nmodel = "openai:gpt-4o-mini"\n'
        '[reviewer]\ntools = ["read_file"]\n'
    )
    profiles = load_profiles(path)
    assert profiles.subagent.max_turns == 4
    assert profiles.subagent.model == "openai:gpt-4o-mini"
    assert profiles.subagent.identity == DEFAULT_PROFILES[Scope.SUBAGENT].identity
    assert profiles.subagent.select_tools(["read_file", "write_file", "list_files"]) == ("read_file", "list_files")
    assert profiles.reviewer.select_tools(["read_file"]) == ("read_file",)
    assert profiles.main == DEFAULT_PROFILES[Scope.MAIN]


def test_json_profiles_load_the_same_way(tmp_path: Path) -> None:
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps({"main": {"identity": "You are the lab's agent.", "max_turns": 9}}))
    assert load_profiles(path).main == AgentProfile(Scope.MAIN, "You are the lab's agent.", max_turns=9)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"subagent": {"max_turns": 0}}, "subagent.max_turns"),
        ({"subagent": {"max_turns": True}}, "subagent.max_turns"),
        ({"main": {"identity": "  "}}, "main.identity"),
        ({"main": {"tools": "read_file"}}, "main.tools"),
        ({"main": {"tools": ["ok", ""]}}, "main.tools[1]"),
        ({"main": {"colour": "red"}}, "main.colour"),
        ({"reviewer": {"read_only": "yes"}}, "reviewer.read_only"),
        ({"auditor": {}}, "auditor"),
    ],
)
def test_invalid_profile_names_the_field_and_the_file(tmp_path: Path, data: dict, field: str) -> None:
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ProfileError) as caught:
        load_profiles(path)
    assert caught.value.field == field
    assert str(path) in str(caught.value)


def test_unreadable_or_malformed_files_are_profile_errors(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="cannot read"):
        load_profiles(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[main\n")
    with pytest.raises(ProfileError, match="syntax"):
        load_profiles(bad)
    other = tmp_path / "profiles.yaml"
    other.write_text("main: {}\n")
    with pytest.raises(ProfileError, match=r"\.toml or \.json"):
        load_profiles(other)


def test_profiles_from_mapping_without_a_file_keeps_defaults() -> None:
    assert profiles_from_mapping({}) == ProfileSet.defaults()


def test_a_profile_set_rejects_a_profile_in_the_wrong_scope() -> None:
    defaults = ProfileSet.defaults()
    with pytest.raises(ProfileError) as caught:
        ProfileSet(defaults.main, defaults.main, defaults.reviewer)
    assert caught.value.field == "subagent"
