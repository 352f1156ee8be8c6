"""What a tool is: its declaration, its handler's input and output, and the gate/observer contracts."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from sciencediscovery.runtime_core import Message, ToolCall, ToolSpec, TurnContext


class ToolAction(str, enum.Enum):
    """The permission action class of a tool; governance rules and prompts use these names."""

    READ = "read"
    WRITE = "write"
    CODE = "code"
    NETWORK = "network"
    CONNECTOR = "connector"
    REMOTE_JOB = "remote_job"
    ARTIFACT_DOWNLOAD = "artifact_download"
    STATE = "state"
    DELEGATE = "delegate"
    OTHER = "other"


class Trust(str, enum.Enum):
    """How far a tool's output is trusted. Untrusted output is sanitized and only ever projected as data."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


@attrs.frozen
class ToolInvocation:
    """What a handler receives: the call, its validated arguments and the turn's context."""

    call: ToolCall
    arguments: Mapping[str, Any]
    context: TurnContext


@attrs.frozen
class ToolOutput:
    """A handler's answer. Plain ``str`` returns are wrapped into an ``ok`` output."""

    content: str
    metadata: Mapping[str, Any] = attrs.field(factory=dict)
    is_error: bool = False
    error_kind: str | None = None


Handler = Callable[[ToolInvocation], Awaitable["ToolOutput | str"]]
Specifier = Callable[[Mapping[str, Any]], str]


@attrs.frozen
class ToolDefinition:
    """A tool: declaration for the model plus the policy facts the dispatcher and gates need.

    ``specifier`` turns validated arguments into the string permission rules
    match against, e.g. ``data/raw.csv`` for ``read_file`` (rules then read
    ``read_file(data/**)``). ``deferred`` tools stay out of the model's tool
    list until ``tool_search`` promotes them.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: Handler
    action: ToolAction = ToolAction.OTHER
    read_only: bool = False
    deferred: bool = False
    trust: Trust = Trust.TRUSTED
    specifier: Specifier | None = None
    timeout_s: float | None = None
    max_calls_per_run: int | None = None
    source: str = "builtin"

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def permission_specifier(self, arguments: Mapping[str, Any]) -> str:
        """The specifier for permission matching (``*`` when the tool defines none)."""
        return self.specifier(arguments) if self.specifier else "*"


@attrs.frozen
class GateDecision:
    """A gate's verdict on one invocation. ``allowed=False`` becomes a ``permission_denied`` result.

    ``metadata`` of an allowing decision is copied onto the call's result (e.g.
    the permission epoch the call ran under, which provenance records).
    """

    allowed: bool
    reason: str = ""
    source: str = ""
    metadata: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def allow(cls, reason: str = "", source: str = "") -> GateDecision:
        return cls(True, reason, source)

    @classmethod
    def deny(cls, reason: str, source: str = "") -> GateDecision:
        return cls(False, reason, source)


@runtime_checkable
class ToolGate(Protocol):
    """Decides whether an invocation may run (governance implements this). May wait on a person."""

    async def check(self, invocation: ToolInvocation, tool: ToolDefinition) -> GateDecision: ...


@runtime_checkable
class ToolObserver(Protocol):
    """Sees every finished invocation and its canonical result (provenance, artifacts, memory)."""

    async def after(self, invocation: ToolInvocation, tool: ToolDefinition, result: Message) -> None: ...
