from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.orchestration import RunContract, RunContractError

SPEC_INPUT = {
    "objective": "Review current evidence about TP53 resistance mechanisms",
    "constraints": ["Use selected literature skill", "Do not execute ungoverned tools"],
    "outputRequirements": ["Cited summary", "State uncertainty"],
}


def test_spec_input_is_frozen_and_rendered_in_order() -> None:
    contract = RunContract.from_mapping(SPEC_INPUT)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        contract.objective = "something else"  # type: ignore[misc]
    text = contract.render()
    assert (
        text.index(SPEC_INPUT["objective"]) < text.index("Use selected literature skill") < text.index("Cited summary")
    )
    assert contract.to_json() == SPEC_INPUT


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({}, "objective"),
        ({"objective": " "}, "objective"),
        ({"objective": "x", "constraints": "one"}, "constraints"),
        ({"objective": "x", "constraints": ["ok", 3]}, "constraints[1]"),
        ({"objective": "x", "outputRequirements": [""]}, "outputRequirements[0]"),
        ({"objective": "x", "output_requirements": []}, "output_requirements"),
    ],
)
def test_invalid_contract_names_the_field(data: dict, field: str) -> None:
    with pytest.raises(RunContractError) as caught:
        RunContract.from_mapping(data)
    assert caught.value.field == field


text = st.text(min_size=1, max_size=40).filter(lambda s: s.strip() == s and s.strip())


@settings(max_examples=60)
@given(objective=text, constraints=st.lists(text, max_size=4), requirements=st.lists(text, max_size=4))
def test_json_round_trip_and_every_item_rendered(objective: str, constraints: list, requirements: list) -> None:
    data = {"objective": objective, "constraints": constraints, "outputRequirements": requirements}
    contract = RunContract.from_mapping(data)
    assert RunContract.from_mapping(contract.to_json()) == contract
    rendered = contract.render()
    assert all(f"- {item}" in rendered for item in constraints + requirements)


def test_direct_construction_validates_and_freezes_lists() -> None:
    contract = RunContract(" Compare methods ", ["Read-only analysis"], ["Limitations"])
    assert contract.objective == "Compare methods"
    assert contract.constraints == ("Read-only analysis",)
    with pytest.raises(RunContractError) as caught:
        RunContract("Compare", "Read-only analysis")  # type: ignore[arg-type]
    assert caught.value.field == "constraints"
