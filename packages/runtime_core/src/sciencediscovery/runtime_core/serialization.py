"""JSON conversion of kernel values through one cattrs converter.

Structuring rejects unknown keys, so data read at a trust boundary (a store,
an HTTP body, a trace) cannot smuggle fields in.
"""

from __future__ import annotations

from typing import Any, TypeVar

import cattrs
from cattrs.gen import make_dict_structure_fn

from .errors import DecodeError
from .events import RunEvent
from .history import Message, ToolCall, ToolSpec
from .model_io import ModelInput, ModelResponse, Usage

T = TypeVar("T")


def make_converter() -> cattrs.Converter:
    """A converter for kernel values that forbids extra keys when structuring."""
    converter = cattrs.Converter(forbid_extra_keys=True)
    for cls in (ToolCall, ToolSpec, Message, ModelInput, Usage, ModelResponse):
        converter.register_structure_hook(cls, make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=True))
    return converter


converter = make_converter()


def to_json(value: Any) -> Any:
    """Unstructure a kernel value (or a list of them) into JSON-ready data."""
    return converter.unstructure(value)


def from_json(data: Any, cls: type[T]) -> T:
    """Structure JSON data into ``cls``.

    Raises :class:`DecodeError` listing every problem with its path (unknown
    keys, missing fields, wrong types).
    """
    try:
        return converter.structure(data, cls)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as error:
        if isinstance(error, cattrs.BaseValidationError):
            problems = cattrs.transform_error(error, path=cls.__name__)
        else:
            problems = [f"{cls.__name__}: {error}"]
        raise DecodeError(problems) from error


def event_to_json(event: RunEvent) -> dict[str, Any]:
    """An event as JSON data, tagged with its ``kind``."""
    data: dict[str, Any] = converter.unstructure(event)
    data["kind"] = event.kind
    return data
