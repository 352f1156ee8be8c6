"""Typed errors of the kernel. Each names what is at fault."""

from __future__ import annotations


class RuntimeCoreError(Exception):
    """Base class of every error raised by runtime_core."""


class HistoryError(RuntimeCoreError, ValueError):
    """A message or history breaks the canonical vocabulary's rules."""


class CompositionError(RuntimeCoreError):
    """The runtime was composed wrongly (missing, duplicate or mistyped ports)."""


class MissingPortsError(CompositionError):
    """``RuntimeBuilder.build()`` was called before every port was registered."""

    def __init__(self, missing: list[str]) -> None:
        self.missing = missing
        super().__init__(f"runtime is missing ports: {', '.join(missing)}")


class PortTypeError(CompositionError, TypeError):
    """An object registered for a port does not implement that port."""


class DuplicatePortError(CompositionError):
    """A port was registered twice."""


class FrozenRegistryError(CompositionError):
    """A registration was attempted after the registry was frozen."""


class ContextOverflowError(RuntimeCoreError):
    """The model provider rejected the input as larger than its context window.

    Model clients raise this normalized error; the kernel answers it with one
    forced pressure pass and a single retry of the same turn.
    """

    def __init__(self, message: str = "context window exceeded", *, provider: str | None = None) -> None:
        self.provider = provider
        super().__init__(message)


class ProtocolViolationError(RuntimeCoreError):
    """A port broke the loop's contract (the model, dispatcher or assembler)."""


class DuplicateToolCallIdError(ProtocolViolationError):
    """The model used one tool call id twice."""


class DispatcherContractError(ProtocolViolationError):
    """The tool dispatcher returned something other than the result of the call it was given."""


class AssemblerContractError(ProtocolViolationError):
    """The context assembler returned a history that breaks call/result pairing."""


class PluginError(RuntimeCoreError):
    """A plugin could not be loaded or does not match the hook specifications."""


class ConfigurationError(RuntimeCoreError, ValueError):
    """A configuration value is invalid; the message names the variable."""

    def __init__(self, variable: str, message: str) -> None:
        self.variable = variable
        super().__init__(f"{variable}: {message}")


class InvalidRunRequestError(RuntimeCoreError, ValueError):
    """A run was started with invalid parameters; the message names the field."""


class DecodeError(RuntimeCoreError, ValueError):
    """JSON data did not match the expected shape; ``problems`` lists each with its path."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))
