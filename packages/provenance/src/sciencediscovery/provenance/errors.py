"""Typed errors of the provenance package; each names the field or id at fault."""

from __future__ import annotations

from sciencediscovery.runtime_core import RuntimeCoreError


class ProvenanceError(RuntimeCoreError):
    """Base class of every error raised by sciencediscovery-provenance."""


class InvalidClaimError(ProvenanceError, ValueError):
    """A claim or one of its evidence references is malformed; the message names the field."""


class UnknownRecordError(ProvenanceError, LookupError):
    """A claim, tool record or run id does not exist in the provenance store."""


class ReviewRunnerError(ProvenanceError):
    """The injected review runner failed or answered with something other than a review outcome."""
