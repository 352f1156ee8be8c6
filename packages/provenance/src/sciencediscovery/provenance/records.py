"""Provenance values: model-turn manifests, tool execution records, derivations and runs."""

from __future__ import annotations

import attrs


@attrs.frozen
class RunRecord:
    """One kernel run as seen through its events."""

    run_id: str
    context_id: str
    started_at: str
    finished_at: str | None = None
    status: str | None = None
    turns: int | None = None


@attrs.frozen
class ModelTurnManifest:
    """One model turn: the hash of its exact input, the model, usage and the hash of its output.

    ``input_hash`` and ``model`` come from :class:`ManifestModelClient`; they are
    ``None`` when the composition root did not wrap its model client.
    """

    run_id: str
    context_id: str
    turn: int
    input_hash: str | None
    model: str | None
    output_hash: str | None
    finish_reason: str | None
    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None
    tool_calls: int | None
    recorded_at: str


@attrs.frozen
class ToolExecutionRecord:
    """One tool execution: hashes of its arguments and committed result, outcome, timing and policy facts.

    ``action``, ``source``, ``permission_epoch`` and ``environment_revision`` (the
    executor's reproducible-environment id, for code executions) are known when the tool
    observer saw the invocation; calls the dispatcher never executed (unknown
    tools, interrupted calls) are recorded from the committed result alone.
    """

    run_id: str
    context_id: str
    call_id: str
    turn: int
    tool: str
    argument_hash: str
    result_hash: str | None
    status: str | None
    error_kind: str | None
    action: str | None
    source: str | None
    permission_epoch: str | None
    environment_revision: str | None
    started_at: str | None
    finished_at: str | None
    duration_s: float | None


@attrs.frozen
class Derivation:
    """A file produced by a tool execution, linked by its content hash."""

    run_id: str
    call_id: str
    sha256: str
    name: str
    media_type: str | None
    recorded_at: str
