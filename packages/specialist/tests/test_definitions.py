"""Specialist definitions are data, validated at load with errors naming the field (and the file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciencediscovery.specialist import (
    JsonSchemaContract,
    RequiredSections,
    Specialist,
    SpecialistDefinitionError,
    builtin_specialists,
    load_specialists,
    specialist_from_mapping,
)

VALID = {
    "name": "assay-analyst",
    "description": "Compares assay protocols",
    "identity": "You are the assay analyst.",
    "tools": ["read_file", "list_*"],
    "max_turns": 5,
    "contract": {"sections": ["Table", "Limitations"]},
}


def test_the_four_built_ins_load_with_their_contracts() -> None:
    specialists = {s.name: s for s in builtin_specialists()}
    assert sorted(specialists) == ["data-analyst", "evidence-reviewer", "literature-scout", "methods-comparer"]
    assert all(s.model is None for s in specialists.values())  # the parent's model
    assert isinstance(specialists["evidence-reviewer"].contract, JsonSchemaContract)
    scout = specialists["literature-scout"]
    assert isinstance(scout.contract, RequiredSections) and scout.output_contract == scout.contract.describe()
    assert {"run_code", "python_session"} <= set(specialists["data-analyst"].tools)


def test_a_valid_table_becomes_a_specialist_whose_contract_text_matches_its_contract() -> None:
    specialist = specialist_from_mapping({**VALID, "model": "openai:gpt-4o-mini"})
    assert isinstance(specialist, Specialist)
    assert (specialist.tools, specialist.max_turns, specialist.model) == (
        ("read_file", "list_*"),
        5,
        "openai:gpt-4o-mini",
    )
    assert (
        specialist.output_contract
        == "A Markdown brief with these sections, each under its own heading: ## Table, ## Limitations"
    )


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"colour": "blue"}, "specialist.colour", "is not a specialist field"),
        ({"contract": None}, "specialist.contract", "must be a table"),
        ({"name": " "}, "specialist.name", "must be a non-empty string"),
        ({"identity": 3}, "specialist.identity", "must be a non-empty string"),
        ({"tools": "read_file"}, "specialist.tools", "must be a list"),
        ({"tools": ["read_file", ""]}, "specialist.tools[1]", "must be a non-empty string"),
        ({"max_turns": 0}, "specialist.max_turns", "must be a positive integer"),
        ({"max_turns": True}, "specialist.max_turns", "must be a positive integer"),
        ({"model": ""}, "specialist.model", "must be a non-empty string"),
        ({"contract": {}}, "specialist.contract", "exactly one of"),
        ({"contract": {"sections": [], "schema": {}}}, "specialist.contract", "exactly one of"),
        ({"contract": {"sections": "Table"}}, "specialist.contract.sections", "must be a list"),
        ({"contract": {"sections": []}}, "specialist.contract.sections", "at least one"),
        ({"contract": {"sections": ["ok", "two\nlines"]}}, "specialist.contract.sections[1]", "one-line"),
        ({"contract": {"format": "json"}}, "specialist.contract.format", "is not a contract field"),
        ({"contract": {"schema": []}}, "specialist.contract.schema", "must be a JSON Schema object"),
        (
            {"contract": {"schema": {"minLength": -1}}},
            "specialist.contract.schema['minLength']",
            "not a valid JSON Schema",
        ),
    ],
)
def test_an_invalid_field_is_an_error_naming_it(change, field, message) -> None:
    with pytest.raises(SpecialistDefinitionError) as caught:
        specialist_from_mapping({**VALID, **change})
    assert caught.value.field == field
    assert message in caught.value.detail


def test_a_missing_field_is_named() -> None:
    data = {key: value for key, value in VALID.items() if key != "max_turns"}
    with pytest.raises(SpecialistDefinitionError, match=r"^specialist.max_turns: is required$"):
        specialist_from_mapping(data)


def test_a_toml_file_loads_and_its_errors_name_the_file_and_the_entry(tmp_path: Path) -> None:
    good = tmp_path / "lab.toml"
    good.write_text(
        '[[specialist]]\nname = "a"\ndescription = "A"\nidentity = "You are A."\ntools = []\nmax_turns = 2\n'
        '[specialist.contract]\nsections = ["Answer"]\n'
    )
    [loaded] = load_specialists(good)
    assert (loaded.name, loaded.contract) == ("a", RequiredSections(["Answer"]))

    duplicate = tmp_path / "twice.json"
    duplicate.write_text(json.dumps({"specialist": [VALID, VALID]}))
    with pytest.raises(SpecialistDefinitionError) as caught:
        load_specialists(duplicate)
    assert (caught.value.field, caught.value.source) == ("specialist[1].name", str(duplicate))

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"specialist": [VALID, {**VALID, "name": "b", "max_turns": "many"}]}))
    with pytest.raises(SpecialistDefinitionError, match=r"bad.json: specialist\[1\].max_turns: must be a positive"):
        load_specialists(bad)


@pytest.mark.parametrize(
    ("name", "text", "field"),
    [
        ("x.yaml", "specialist: []", "path"),
        ("x.toml", "[[specialist]\n", "syntax"),
        ("x.json", json.dumps({"specialists": []}), "specialist"),
        ("x.json", json.dumps({"specialist": []}), "specialist"),
    ],
)
def test_a_bad_file_is_an_error_naming_the_file(tmp_path: Path, name, text, field) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SpecialistDefinitionError) as caught:
        load_specialists(path)
    assert (caught.value.field, caught.value.source) == (field, str(path))


def test_an_unreadable_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(SpecialistDefinitionError, match="missing.toml: path: cannot read"):
        load_specialists(tmp_path / "missing.toml")
