"""The run-scoped contributor registry: frozen before turn one, collects every contribution."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

import attrs

from sciencediscovery.runtime_core import Message, Role

from .contributors import (
    Attachment,
    ContextContributor,
    ContextContributorFactory,
    ContextScope,
    Contribution,
    ContributionRequest,
    Diagnostic,
    SystemSection,
)
from .errors import ContributionError, DuplicateIdError, RegistryFrozenError, RequiredContributorError


@attrs.frozen
class ContributorRecord:
    """One contributor's run for one turn: raw output, duration, status (ok/failed/rejected) and error."""

    id: str
    required: bool
    status: str
    duration_ms: float
    output: Contribution | None = None
    error: str | None = None


@attrs.frozen
class Collection:
    """Validated contributions of one turn, in contributor registration order."""

    records: tuple[ContributorRecord, ...]
    sections: tuple[SystemSection, ...]
    messages: tuple[tuple[str, Message], ...]
    attachments: tuple[Attachment, ...]
    diagnostics: tuple[Diagnostic, ...]


class ContextContributorRegistry:
    """Contributors of one run and one scope.

    Factories are registered while the run is composed; :meth:`freeze` closes
    the registry before the first model turn. Duplicate factory or contributor
    ids raise :class:`DuplicateIdError`; registering after freezing raises
    :class:`RegistryFrozenError`.
    """

    def __init__(self, scope: ContextScope) -> None:
        self.scope = ContextScope(scope)
        self._factory_ids: set[str] = set()
        self._contributors: list[ContextContributor] = []
        self._frozen = False

    @property
    def frozen(self) -> bool:
        return self._frozen

    @property
    def contributors(self) -> tuple[ContextContributor, ...]:
        return tuple(self._contributors)

    def register_factory(self, factory: ContextContributorFactory) -> None:
        """Create the factory's contributor for this scope and add it (a ``None`` contributor is skipped)."""
        self._check_open(f"factory {factory.id!r}")
        if factory.id in self._factory_ids:
            raise DuplicateIdError(f"context contributor factory id {factory.id!r} is registered twice")
        self._factory_ids.add(factory.id)
        contributor = factory.create(self.scope)
        if contributor is not None and self.scope in {ContextScope(s) for s in contributor.scopes}:
            self.add(contributor)

    def add(self, contributor: ContextContributor) -> None:
        """Add a contributor directly (used for built-in contributors)."""
        self._check_open(f"contributor {contributor.id!r}")
        if any(existing.id == contributor.id for existing in self._contributors):
            raise DuplicateIdError(f"context contributor id {contributor.id!r} is registered twice")
        self._contributors.append(contributor)

    def freeze(self) -> None:
        self._frozen = True

    def _check_open(self, what: str) -> None:
        if self._frozen:
            raise RegistryFrozenError(f"cannot register {what}: the run's contributor registry is frozen")

    async def collect_detailed(self, request: ContributionRequest) -> Collection:
        """Run every contributor concurrently and validate their output.

        A contribution that forges a non-user message or reuses a section or
        attachment id is rejected. A failing or rejected optional contributor
        becomes a diagnostic; a required one raises :class:`RequiredContributorError`.
        """
        outcomes = await asyncio.gather(*(self._run(c, request) for c in self._contributors))
        records: list[ContributorRecord] = []
        sections: list[SystemSection] = []
        messages: list[tuple[str, Message]] = []
        attachments: list[Attachment] = []
        diagnostics: list[Diagnostic] = []
        section_ids: set[str] = set()
        attachment_ids: set[str] = set()
        for contributor, record in zip(self._contributors, outcomes, strict=True):
            if record.status == "ok" and record.output is not None:
                try:
                    _validate(record.output, contributor.id, section_ids, attachment_ids)
                except ContributionError as error:
                    record = attrs.evolve(record, status="rejected", error=str(error))
            records.append(record)
            if record.status != "ok" or record.output is None:
                if contributor.required:
                    raise RequiredContributorError(contributor.id, record.error or record.status)
                diagnostics.append(
                    Diagnostic("contributor_" + record.status, record.error or "", contributor.id, "warning")
                )
                continue
            output = record.output
            section_ids.update(section.id for section in output.sections)
            attachment_ids.update(attachment.id for attachment in output.attachments)
            sections.extend(output.sections)
            messages.extend((contributor.id, message) for message in output.messages)
            attachments.extend(output.attachments)
            diagnostics.extend(d if d.source else attrs.evolve(d, source=contributor.id) for d in output.diagnostics)
        return Collection(tuple(records), tuple(sections), tuple(messages), tuple(attachments), tuple(diagnostics))

    @staticmethod
    async def _run(contributor: ContextContributor, request: ContributionRequest) -> ContributorRecord:
        started = time.perf_counter()
        try:
            output = await contributor.contribute(request)
        except Exception as error:
            return ContributorRecord(
                contributor.id, contributor.required, "failed", _ms(started), error=f"{type(error).__name__}: {error}"
            )
        if not isinstance(output, Contribution):
            return ContributorRecord(
                contributor.id,
                contributor.required,
                "rejected",
                _ms(started),
                error=f"returned {type(output).__name__}, not a Contribution",
            )
        return ContributorRecord(contributor.id, contributor.required, "ok", _ms(started), output=output)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _validate(output: Contribution, contributor_id: str, section_ids: set[str], attachment_ids: set[str]) -> None:
    for index, message in enumerate(output.messages):
        if not isinstance(message, Message) or message.role is not Role.USER or message.tool_calls:
            role = message.role.value if isinstance(message, Message) else type(message).__name__
            raise ContributionError(
                f"contributor {contributor_id!r} messages[{index}] is a {role} message; contributors may only add "
                "user-role messages (no assistant tool calls or tool results)"
            )
    _unique_ids([s.id for s in output.sections], section_ids, "section", contributor_id)
    _unique_ids([a.id for a in output.attachments], attachment_ids, "attachment", contributor_id)


def _unique_ids(ids: Iterable[str], taken: set[str], what: str, contributor_id: str) -> None:
    seen: set[str] = set()
    for value in ids:
        if value in taken or value in seen:
            raise ContributionError(f"contributor {contributor_id!r} reuses {what} id {value!r}")
        seen.add(value)
