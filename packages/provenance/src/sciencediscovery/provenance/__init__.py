"""Provenance records, claims and evidence, review checkpoints, PROV export.

The composition root adds :func:`event_sink` to its ``FanOutSink`` and wraps
its model client with :func:`manifest_model_client`; tools, the tool observer
and the ``reviews`` channel register through the plugin hooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sciencediscovery.runtime_core import ModelClient

from .channels import ReviewsChannel
from .claims import Claim, EvidenceOrigin, EvidenceRef, EvidenceRelation
from .errors import InvalidClaimError, ProvenanceError, ReviewRunnerError, UnknownRecordError
from .export import export_prov, export_prov_json
from .hashing import canonical_json, hash_arguments, hash_message, hash_model_input, sha256_json
from .recorder import ARTIFACTS_KEY, PERMISSION_EPOCH_KEY, ManifestModelClient, ProvenanceRecorder
from .records import Derivation, ModelTurnManifest, RunRecord, ToolExecutionRecord
from .review import (
    ReviewDecision,
    ReviewEvidence,
    ReviewFinding,
    ReviewLevel,
    ReviewOutcome,
    ReviewRecord,
    ReviewRunner,
)
from .settings import store_for
from .store import ProvenanceStore, open_store


def event_sink(settings: Mapping[str, Any]) -> ProvenanceRecorder:
    """The run-event sink recording runs, model turns and tool executions under ``settings["data_dir"]``."""
    return ProvenanceRecorder(store_for(settings))


def manifest_model_client(inner: ModelClient, settings: Mapping[str, Any]) -> ManifestModelClient:
    """``inner`` wrapped so each model turn's manifest carries the hash of its exact input and the model id."""
    return ManifestModelClient(inner, store_for(settings))


__all__ = [
    "ARTIFACTS_KEY",
    "PERMISSION_EPOCH_KEY",
    "Claim",
    "Derivation",
    "EvidenceOrigin",
    "EvidenceRef",
    "EvidenceRelation",
    "InvalidClaimError",
    "ManifestModelClient",
    "ModelTurnManifest",
    "ProvenanceError",
    "ProvenanceRecorder",
    "ProvenanceStore",
    "ReviewDecision",
    "ReviewEvidence",
    "ReviewFinding",
    "ReviewLevel",
    "ReviewOutcome",
    "ReviewRecord",
    "ReviewRunner",
    "ReviewRunnerError",
    "ReviewsChannel",
    "RunRecord",
    "ToolExecutionRecord",
    "UnknownRecordError",
    "canonical_json",
    "event_sink",
    "export_prov",
    "export_prov_json",
    "hash_arguments",
    "hash_message",
    "hash_model_input",
    "manifest_model_client",
    "open_store",
    "sha256_json",
    "store_for",
]
