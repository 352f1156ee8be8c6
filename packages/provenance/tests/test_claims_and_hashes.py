"""Claims validation and the hashing invariants records rely on."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from sciencediscovery.provenance import InvalidClaimError, hash_arguments, sha256_json
from sciencediscovery.provenance.claims import parse_evidence
from sciencediscovery.runtime_core import ToolCall
from sciencediscovery.runtime_core.testing import reply

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=10,
)


@hypothesis_settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=6), st.randoms())
def test_argument_hash_ignores_key_order(arguments, random) -> None:
    items = list(arguments.items())
    random.shuffle(items)
    assert hash_arguments(dict(items)) == hash_arguments(arguments)


@hypothesis_settings(max_examples=60, deadline=None)
@given(json_values, json_values)
def test_different_values_hash_differently(first, second) -> None:
    if json.dumps(first, sort_keys=True) != json.dumps(second, sort_keys=True):
        assert sha256_json(first) != sha256_json(second)


@pytest.mark.parametrize(
    ("items", "field"),
    [
        ([{"origin": "blog", "reference": "x", "relation": "supports"}], "evidence[0].origin"),
        ([{"origin": "paper", "reference": "  ", "relation": "supports"}], "evidence[0].reference"),
        (
            [
                {"origin": "paper", "reference": "x", "relation": "supports"},
                {"origin": "paper", "reference": "y", "relation": "proves"},
            ],
            "evidence[1].relation",
        ),
        (["doi:1"], "evidence[0]"),
    ],
)
def test_bad_evidence_names_the_field(items, field) -> None:
    with pytest.raises(InvalidClaimError, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_evidence(items)


def test_tool_record_evidence_must_name_a_recorded_call(settings, run_kernel) -> None:
    bad = ToolCall(
        "c1",
        "record_claim",
        {
            "statement": "s",
            "evidence": [{"origin": "tool_record", "reference": "call-that-never-ran", "relation": "supports"}],
        },
    )
    run = asyncio.run(run_kernel(settings, [reply("", bad), reply("done")]))
    message = next(m for m in run.result.history if m.tool_call_id == "c1")
    assert message.status.value == "error"
    assert "evidence[0].reference" in message.content and "call-that-never-ran" in message.content


def test_list_claims_returns_the_context_claims(settings, run_kernel) -> None:
    claim = ToolCall(
        "c1",
        "record_claim",
        {
            "statement": "TP53 is mutated.",
            "evidence": [{"origin": "user_input", "reference": "the user said so", "relation": "context"}],
        },
    )
    run = asyncio.run(
        run_kernel(settings, [reply("", claim), reply("", ToolCall("c2", "list_claims", {})), reply("done")])
    )
    listed = json.loads(next(m for m in run.result.history if m.tool_call_id == "c2").content)["claims"]
    assert [c["statement"] for c in listed] == ["TP53 is mutated."]
    assert listed[0]["evidence"][0] == {
        "origin": "user_input",
        "reference": "the user said so",
        "relation": "context",
        "note": "",
    }
