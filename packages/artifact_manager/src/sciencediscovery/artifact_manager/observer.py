"""Registering files other tools produced (``metadata["artifacts"]`` entries with a ``path``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.runtime_core import Message, ToolResultStatus
from sciencediscovery.tools.definitions import ToolDefinition, ToolInvocation, Trust

from .errors import ArtifactPathError
from .store import ArtifactStore, Provenance

ARTIFACTS_KEY = "artifacts"
"""Tool-result metadata key: ``[{"path", "name", "media_type", "environment_revision"}]`` of produced files."""


def unregistered_files(metadata: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Entries of ``metadata["artifacts"]`` that name a file path and carry no ``artifact_id`` yet."""
    entries = metadata.get(ARTIFACTS_KEY)
    if not isinstance(entries, list | tuple):
        return []
    return [
        entry
        for entry in entries
        if isinstance(entry, Mapping) and isinstance(entry.get("path"), str) and "artifact_id" not in entry
    ]


class ArtifactObserver:
    """A :class:`ToolObserver` that stores every file a successful tool result announces.

    Each registration links the artifact to the run, context, tool call and
    tool, and to the ``environment_revision`` the producer reported. Paths that
    no longer exist are skipped (the tool's result still names them), and so are
    announcements of untrusted tools (remote content must not choose local files to copy).
    """

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store

    async def after(self, invocation: ToolInvocation, tool: ToolDefinition, result: Message) -> None:
        if result.status is not ToolResultStatus.OK or tool.trust is not Trust.TRUSTED:
            # an untrusted (remote) tool could name any local file to copy
            return
        context = invocation.context
        for entry in unregistered_files(result.metadata):
            revision = entry.get("environment_revision")
            provenance = Provenance(
                context.run_id,
                context.context_id,
                invocation.call.id,
                tool.name,
                None if revision is None else str(revision),
            )
            media_type = entry.get("media_type")
            try:
                await asyncio.to_thread(
                    self.store.register_file,
                    Path(entry["path"]),
                    name=entry.get("name") or None,
                    media_type=media_type if isinstance(media_type, str) else None,
                    provenance=provenance,
                )
            except ArtifactPathError:
                continue
