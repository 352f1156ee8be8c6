"""Assembling stream parts into one turn: split tool-call arguments, usage, finish reasons."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.model import (
    Finish,
    ModelResponseError,
    StreamAccumulator,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
    parse_arguments,
)
from sciencediscovery.runtime_core import Usage

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=4)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@settings(max_examples=60, deadline=None)
@given(
    first=arguments,
    second=arguments,
    cuts_a=st.lists(st.integers(min_value=0), max_size=6),
    cuts_b=st.lists(st.integers(min_value=0), max_size=6),
    text=st.text(max_size=30),
)
def test_arguments_split_anywhere_and_interleaved_assemble_to_the_same_calls(first, second, cuts_a, cuts_b, text):
    accumulator = StreamAccumulator("test")
    pieces_a = split(json.dumps(first), cuts_a)
    pieces_b = split(json.dumps(second), cuts_b)
    accumulator.add(ToolCallDelta(0, "call_a", "alpha", pieces_a[0]))
    accumulator.add(ToolCallDelta(1, "call_b", "beta", pieces_b[0]))
    for index in range(max(len(pieces_a), len(pieces_b))):
        if 0 < index < len(pieces_a):
            accumulator.add(ToolCallDelta(0, arguments=pieces_a[index]))
        if 0 < index < len(pieces_b):
            accumulator.add(ToolCallDelta(1, arguments=pieces_b[index]))
    accumulator.add(TextDelta(text))

    response = accumulator.response("m")

    assert [(c.id, c.name, dict(c.arguments), c.argument_error) for c in response.message.tool_calls] == [
        ("call_a", "alpha", first, None),
        ("call_b", "beta", second, None),
    ]
    assert response.message.content == text
    assert response.finish_reason == "tool_calls"


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_any_argument_text_parses_to_an_object_or_an_error_never_an_exception(text):
    parsed, error = parse_arguments(text)
    assert isinstance(parsed, dict)
    assert (error is None) or parsed == {}


@pytest.mark.parametrize(
    ("text", "problem"), [("[1, 2]", "must be a JSON object, got list"), ('{"a":', "not valid JSON")]
)
def test_non_object_or_truncated_arguments_are_reported(text, problem):
    parsed, error = parse_arguments(text)
    assert parsed == {} and error is not None and problem in error


def test_usage_updates_keep_earlier_values_and_finish_is_taken_from_the_stream():
    accumulator = StreamAccumulator("test")
    accumulator.add(UsageUpdate(input_tokens=100, output_tokens=1, cached_tokens=20))
    accumulator.add(TextDelta("truncated"))
    accumulator.add(UsageUpdate(output_tokens=50))
    accumulator.add(Finish("length"))

    response = accumulator.response(None)

    assert response.usage == Usage(input_tokens=100, output_tokens=50, cached_tokens=20)
    assert response.finish_reason == "length"


def test_a_tool_call_without_a_name_is_a_response_error_and_missing_ids_are_generated_uniquely():
    nameless = StreamAccumulator("p")
    nameless.add(ToolCallDelta(0, "call_1", None, "{}"))
    with pytest.raises(ModelResponseError, match="no name"):
        nameless.response(None)

    idless = StreamAccumulator("p")
    idless.add(ToolCallDelta(0, None, "a", "{}"))
    idless.add(ToolCallDelta(1, None, "b", "{}"))
    first, second = idless.response(None).message.tool_calls
    assert first.id != second.id and first.id.startswith("call_")
