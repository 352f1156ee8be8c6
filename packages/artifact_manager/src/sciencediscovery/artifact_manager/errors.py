"""Typed errors of the artifact manager; each names the field, path, id or state at fault."""

from __future__ import annotations

from sciencediscovery.runtime_core import RuntimeCoreError


class ArtifactError(RuntimeCoreError):
    """Base class of every error raised by sciencediscovery-artifact-manager."""


class InvalidArtifactRequestError(ArtifactError, ValueError):
    """An argument is malformed; the message names the field."""


class ArtifactPathError(ArtifactError, ValueError):
    """A path to register is missing, not a file, or outside the workspace."""


class UnknownArtifactError(ArtifactError, LookupError):
    """No artifact or download has this id."""


class InvalidTransitionError(ArtifactError):
    """A download was asked to move to a state its current state does not allow."""

    def __init__(self, download_id: str, current: str, target: str) -> None:
        self.download_id = download_id
        self.current = current
        self.target = target
        super().__init__(f"download {download_id} cannot move from {current} to {target}")
