"""Typed errors of the tools package.

Two families: :class:`ToolRegistryError` for composition mistakes (raised while a
run's tool set is built, before turn one) and :class:`ToolFailure`, which a
handler raises to answer the model with a readable tool error of its own kind.
"""

from __future__ import annotations


class ToolsError(Exception):
    """Base class of every error raised by sciencediscovery.tools."""


class ToolRegistryError(ToolsError):
    """The run's tool set could not be composed."""


class DuplicateToolError(ToolRegistryError):
    """Two registrations used the same tool name; the message names both sources."""

    def __init__(self, name: str, first_source: str, second_source: str) -> None:
        self.name = name
        self.first_source = first_source
        self.second_source = second_source
        super().__init__(f"tool {name!r} is registered twice: by {first_source} and by {second_source}")


class InvalidToolError(ToolRegistryError):
    """A registered object is not a usable tool (bad name, schema, handler, gate or observer)."""


class UnknownAllowedToolError(ToolRegistryError):
    """A profile's allow-list names tools that no plugin registered."""

    def __init__(self, names: list[str], available: list[str]) -> None:
        self.names = names
        super().__init__(
            f"tool allow-list names unregistered tools: {', '.join(names)}; registered tools: {', '.join(available)}"
        )


class ToolFailure(ToolsError):
    """Raised by a handler to answer with a tool error the model can read (``error_kind`` names its class)."""

    def __init__(self, message: str, error_kind: str = "tool_error") -> None:
        self.error_kind = error_kind
        super().__init__(message)


class UnknownOutputRefError(ToolFailure):
    """A stored-output reference is malformed or names nothing in the store."""

    def __init__(self, ref: str, reason: str) -> None:
        self.ref = ref
        super().__init__(f"ref {ref!r}: {reason}", "unknown_output_ref")


class OutputRangeError(ToolFailure):
    """A slice request for a stored output is out of range or contradictory; the message names the field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}", "out_of_range")
