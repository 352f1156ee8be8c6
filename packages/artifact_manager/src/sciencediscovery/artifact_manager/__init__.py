"""Content-addressed artifacts and governed downloads.

Tools, the artifact observer and the ``artifacts`` channel register through
the plugin hooks; :class:`ArtifactStore` and :class:`DownloadManager` are the
library API underneath them.
"""

from .channels import ArtifactsChannel
from .classify import ArtifactKind, classify, media_type_of
from .downloads import (
    TRANSITIONS,
    Download,
    DownloadManager,
    DownloadState,
    UrlPolicy,
    UrlVerdict,
    domain_specifier,
)
from .errors import (
    ArtifactError,
    ArtifactPathError,
    InvalidArtifactRequestError,
    InvalidTransitionError,
    UnknownArtifactError,
)
from .observer import ARTIFACTS_KEY, ArtifactObserver
from .store import Artifact, ArtifactLink, ArtifactStore, Provenance, Registration, artifact_id_for, open_store
from .tools import artifact_tools

__all__ = [
    "ARTIFACTS_KEY",
    "TRANSITIONS",
    "Artifact",
    "ArtifactError",
    "ArtifactKind",
    "ArtifactLink",
    "ArtifactObserver",
    "ArtifactPathError",
    "ArtifactStore",
    "ArtifactsChannel",
    "Download",
    "DownloadManager",
    "DownloadState",
    "InvalidArtifactRequestError",
    "InvalidTransitionError",
    "Provenance",
    "Registration",
    "UnknownArtifactError",
    "UrlPolicy",
    "UrlVerdict",
    "artifact_id_for",
    "artifact_tools",
    "classify",
    "domain_specifier",
    "media_type_of",
    "open_store",
]
