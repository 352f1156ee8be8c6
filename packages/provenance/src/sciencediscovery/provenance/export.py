"""Export of a run's provenance as a W3C PROV document (PROV-JSON through the ``prov`` library).

Mapping: the run, each model turn and each tool execution are activities;
the model is an agent; tool arguments, results and produced files (by
SHA-256) are entities; claims are entities influenced by their evidence,
with the relation (supports, contradicts, context) as an attribute.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

from prov.model import ProvDocument

from .claims import EvidenceOrigin
from .store import ProvenanceStore

NAMESPACE = "urn:sciencediscovery:"


def _id(*parts: str | int) -> str:
    return "sd:" + "/".join(quote(str(part), safe="-_.") for part in parts)


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _attrs(prov_type: str | None = None, **values: Any) -> dict[str, Any]:
    """PROV attributes: ``prov:type`` and ``sd:``-prefixed values (``None`` values are left out)."""
    attributes = {f"sd:{key}": value for key, value in values.items() if value is not None}
    return {"prov:type": prov_type, **attributes} if prov_type else attributes


def export_prov(store: ProvenanceStore, run_id: str) -> ProvDocument:
    """The PROV document of ``run_id`` (raises :class:`UnknownRecordError` for an unknown run)."""
    run = store.run(run_id)
    doc = ProvDocument()
    doc.add_namespace("sd", NAMESPACE)
    run_activity = doc.activity(
        _id("run", run_id),
        _time(run.started_at),
        _time(run.finished_at),
        _attrs("sd:Run", context_id=run.context_id, status=run.status, turns=run.turns),
    )
    turn_ids: dict[int, str] = {}
    for manifest in store.model_turns(run_id):
        turn_ids[manifest.turn] = _id("turn", run_id, manifest.turn)
        turn = doc.activity(
            turn_ids[manifest.turn],
            None,
            None,
            _attrs(
                "sd:ModelTurn",
                turn=manifest.turn,
                input_hash=manifest.input_hash,
                output_hash=manifest.output_hash,
                finish_reason=manifest.finish_reason,
                input_tokens=manifest.input_tokens,
                output_tokens=manifest.output_tokens,
                cached_tokens=manifest.cached_tokens,
                tool_calls=manifest.tool_calls,
            ),
        )
        doc.wasInformedBy(turn, run_activity)
        if manifest.model:
            doc.wasAssociatedWith(turn, doc.agent(_id("model", manifest.model), {"prov:type": "prov:SoftwareAgent"}))
    execution_ids: dict[str, str] = {}
    for record in store.tool_executions(run_id):
        execution_ids[record.call_id] = _id("execution", run_id, record.call_id)
        execution = doc.activity(
            execution_ids[record.call_id],
            _time(record.started_at),
            _time(record.finished_at),
            _attrs(
                "sd:ToolExecution",
                tool=record.tool,
                call_id=record.call_id,
                turn=record.turn,
                status=record.status,
                error_kind=record.error_kind,
                action=record.action,
                source=record.source,
                permission_epoch=record.permission_epoch,
                environment_revision=record.environment_revision,
                duration_s=record.duration_s,
            ),
        )
        doc.used(execution, doc.entity(_id("arguments", record.argument_hash), _attrs(sha256=record.argument_hash)))
        if record.result_hash:
            result = doc.entity(_id("result", run_id, record.call_id), _attrs(sha256=record.result_hash))
            doc.wasGeneratedBy(result, execution)
        doc.wasInformedBy(execution, turn_ids.get(record.turn, run_activity))
    for derivation in store.derivations(run_id):
        artifact = doc.entity(
            _id("artifact", derivation.sha256),
            _attrs("sd:Artifact", name=derivation.name, sha256=derivation.sha256, media_type=derivation.media_type),
        )
        producer = execution_ids.get(derivation.call_id, _id("execution", run_id, derivation.call_id))
        doc.wasGeneratedBy(artifact, producer)
    for claim in store.claims(run_id=run_id):
        entity = doc.entity(_id("claim", claim.claim_id), _attrs("sd:Claim", statement=claim.statement))
        if claim.call_id in execution_ids:
            doc.wasGeneratedBy(entity, execution_ids[claim.call_id])
        for index, ref in enumerate(claim.evidence):
            if ref.origin is EvidenceOrigin.TOOL_RECORD and ref.reference in execution_ids:
                source = _id("result", run_id, ref.reference)
            else:
                source = _id("evidence", claim.claim_id, index)
                doc.entity(source, _attrs("sd:Evidence", origin=ref.origin.value, reference=ref.reference))
            relation = _attrs(relation=ref.relation.value, note=ref.note or None)
            doc.wasInfluencedBy(entity, source, other_attributes=relation)
    return doc


def export_prov_json(store: ProvenanceStore, run_id: str) -> str:
    """The PROV-JSON text of ``run_id``."""
    return str(export_prov(store, run_id).serialize(format="json"))
