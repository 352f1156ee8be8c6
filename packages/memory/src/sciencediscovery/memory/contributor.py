"""The ``memory.context`` contributor factory: a bounded snapshot as a ``trusted_data`` attachment."""

from __future__ import annotations

from sciencediscovery.context import (
    Attachment,
    ContextScope,
    Contribution,
    ContributionRequest,
    Contributor,
    ContributorFactory,
    Trust,
)

from .graph import MemoryClient
from .snapshot import render_snapshot

FACTORY_ID = "memory.context"
CONTRIBUTOR_ID = "memory.snapshot"


def memory_context_factory(client: MemoryClient, max_chars: int) -> ContributorFactory:
    """The factory; each scope's contributor attaches the snapshot for the request's context id."""

    async def contribute(request: ContributionRequest) -> Contribution:
        content = render_snapshot(client, request.context_id, max_chars)
        if not content:
            return Contribution()
        attachment = Attachment(id=CONTRIBUTOR_ID, source="memory", trust=Trust.TRUSTED_DATA, content=content)
        return Contribution(attachments=(attachment,))

    def create(scope: ContextScope) -> Contributor:
        return Contributor(id=CONTRIBUTOR_ID, contribute_fn=contribute, scopes={scope})

    return ContributorFactory(id=FACTORY_ID, create_fn=create)
