"""The contributor model: what a package may add to a model turn, and how it says so."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from sciencediscovery.runtime_core import Message, ToolSpec


class ContextScope(str, enum.Enum):
    """Which kind of agent a model turn belongs to."""

    MAIN = "main"
    SUBAGENT = "subagent"
    REVIEWER = "reviewer"


class SectionSlot(str, enum.Enum):
    """Where a system-prompt section goes; the enum order is the rendering order."""

    IDENTITY = "identity"
    GOVERNANCE = "governance"
    RUN_CONTRACT = "run_contract"
    TASK_STATE = "task_state"
    CAPABILITIES = "capabilities"
    WORKING_CONTEXT = "working_context"
    FOOTER = "footer"


SLOT_ORDER: tuple[SectionSlot, ...] = tuple(SectionSlot)
PROTECTED_SLOTS: frozenset[SectionSlot] = frozenset(
    {SectionSlot.IDENTITY, SectionSlot.GOVERNANCE, SectionSlot.RUN_CONTRACT}
)


class Trust(str, enum.Enum):
    """How far the content of an attachment or runtime projection is trusted (it is data either way)."""

    TRUSTED_DATA = "trusted_data"
    UNTRUSTED_DATA = "untrusted_data"
    MIXED_RUNTIME_DATA = "mixed_runtime_data"


def _non_empty(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be a non-empty string, got {value!r}")


@attrs.frozen
class SystemSection:
    """One structured system-prompt section.

    Sections in the identity, governance and run_contract slots are always
    protected; any other section may ask for protection (e.g. ``plan_state``).
    """

    id: str = attrs.field(validator=_non_empty)
    slot: SectionSlot = attrs.field(converter=SectionSlot)
    content: str = attrs.field(validator=attrs.validators.instance_of(str))
    order: int = 0
    protected: bool = False

    @property
    def is_protected(self) -> bool:
        return self.protected or self.slot in PROTECTED_SLOTS


@attrs.frozen
class Attachment:
    """Data handed to the model as a hidden, invocation-local message with source and trust."""

    id: str = attrs.field(validator=_non_empty)
    source: str = attrs.field(validator=_non_empty)
    trust: Trust = attrs.field(converter=Trust)
    content: str = attrs.field(validator=attrs.validators.instance_of(str))


@attrs.frozen
class Diagnostic:
    """Something assembly wants a person to know (truncation, drop, optional failure)."""

    code: str
    message: str
    source: str = ""
    severity: str = "info"


def _sections(value: Iterable[SystemSection]) -> tuple[SystemSection, ...]:
    return tuple(value)


def _messages(value: Iterable[Message]) -> tuple[Message, ...]:
    return tuple(value)


def _attachments(value: Iterable[Attachment]) -> tuple[Attachment, ...]:
    return tuple(value)


def _diagnostics(value: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(value)


def _scopes(value: Iterable[ContextScope | str]) -> frozenset[ContextScope]:
    return frozenset(ContextScope(scope) for scope in value)


@attrs.frozen
class Contribution:
    """What one contributor adds to one model turn."""

    sections: tuple[SystemSection, ...] = attrs.field(default=(), converter=_sections)
    messages: tuple[Message, ...] = attrs.field(default=(), converter=_messages)
    attachments: tuple[Attachment, ...] = attrs.field(default=(), converter=_attachments)
    diagnostics: tuple[Diagnostic, ...] = attrs.field(default=(), converter=_diagnostics)


@attrs.frozen
class ContributionRequest:
    """What a contributor sees: run identity, scope, model-visible history, channel states and tools."""

    context_id: str
    run_id: str
    turn: int
    scope: ContextScope
    history: tuple[Message, ...]
    channels: Mapping[str, Any] = attrs.field(factory=dict)
    tools: tuple[ToolSpec, ...] = ()


@runtime_checkable
class ContextContributor(Protocol):
    """Adds sections, user messages, attachments or diagnostics to model turns of its scopes.

    ``required`` contributors fail assembly when they fail; optional ones become a diagnostic.
    """

    @property
    def id(self) -> str: ...

    @property
    def scopes(self) -> Collection[ContextScope]: ...

    @property
    def required(self) -> bool: ...

    async def contribute(self, request: ContributionRequest) -> Contribution: ...


@runtime_checkable
class ContextContributorFactory(Protocol):
    """Creates a run's contributor for one scope, or ``None`` when it has nothing for that scope."""

    @property
    def id(self) -> str: ...

    def create(self, scope: ContextScope) -> ContextContributor | None: ...


ContributeFn = Callable[[ContributionRequest], Awaitable[Contribution]]


@attrs.frozen
class Contributor:
    """A ready-made :class:`ContextContributor` around an async function."""

    id: str = attrs.field(validator=_non_empty)
    contribute_fn: ContributeFn
    scopes: frozenset[ContextScope] = attrs.field(default=frozenset(ContextScope), converter=_scopes)
    required: bool = False

    async def contribute(self, request: ContributionRequest) -> Contribution:
        return await self.contribute_fn(request)


@attrs.frozen
class ContributorFactory:
    """A ready-made :class:`ContextContributorFactory` around a ``create(scope)`` function."""

    id: str = attrs.field(validator=_non_empty)
    create_fn: Callable[[ContextScope], ContextContributor | None]

    def create(self, scope: ContextScope) -> ContextContributor | None:
        return self.create_fn(scope)
