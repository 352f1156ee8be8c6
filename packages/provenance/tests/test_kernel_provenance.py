"""Provenance completeness in real kernel runs with a scripted model."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from sciencediscovery.provenance import (
    export_prov_json,
    hash_arguments,
    hash_message,
    hash_model_input,
    store_for,
)
from sciencediscovery.runtime_core import Role, RunStatus, ToolCall, hookimpl
from sciencediscovery.runtime_core.testing import reply
from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput


class MeasurePlugin:
    """Tools of a pretend instrument: one writes a figure and announces it, one always fails."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

    @hookimpl
    def register_tools(self, register: Any, settings: Any) -> None:
        async def measure(invocation: ToolInvocation) -> ToolOutput:
            figure = self.workdir / f"{invocation.arguments['sample']}.png"
            figure.write_bytes(b"\x89PNG\r\n\x1a\n" + invocation.arguments["sample"].encode())
            return ToolOutput(
                content="absorbance 0.42",
                metadata={
                    "artifacts": [{"path": str(figure), "name": figure.name, "media_type": "image/png"}],
                    "permission_epoch": "epoch-7",
                    "environment_revision": "env-0123456789abcdef",
                },
            )

        async def broken(invocation: ToolInvocation) -> str:
            raise RuntimeError("instrument offline")

        schema = {"type": "object", "properties": {"sample": {"type": "string"}}, "required": ["sample"]}
        register(ToolDefinition("measure", "Measure a sample.", schema, measure, action=ToolAction.CODE))
        register(ToolDefinition("broken", "Always fails.", {"type": "object", "properties": {}}, broken))


def _script() -> list[Any]:
    return [
        reply(
            "",
            ToolCall("c1", "measure", {"sample": "s1"}),
            ToolCall("c2", "broken", {}),
            ToolCall("c3", "no_such_tool", {"x": 1}),
        ),
        reply(
            "",
            ToolCall("c4", "measure", {"sample": "s2"}),
            ToolCall(
                "c5",
                "record_claim",
                {
                    "statement": "Sample s1 absorbs at 0.42.",
                    "evidence": [
                        {"origin": "tool_record", "reference": "c1", "relation": "supports"},
                        {"origin": "paper", "reference": "doi:10.1000/xyz", "relation": "context", "note": "method"},
                    ],
                },
            ),
        ),
        reply("", ToolCall("c6", "review_checkpoint", {"objective": "Is the claim supported?", "level": "quick"})),
        reply("Sample s1 absorbs at 0.42."),
    ]


def test_every_tool_execution_has_exactly_one_record_whose_hashes_verify(settings, run_kernel, tmp_path) -> None:
    run = asyncio.run(run_kernel(settings, _script(), plugins=[MeasurePlugin(tmp_path)]))
    assert run.result.status is RunStatus.COMPLETED
    store = store_for(settings)
    records = store.tool_executions(run.result.run_id)
    calls = [call for m in run.result.history if m.role is Role.ASSISTANT for call in m.tool_calls]
    results = {m.tool_call_id: m for m in run.result.history if m.role is Role.TOOL}
    assert (
        sorted(r.call_id for r in records) == sorted(call.id for call in calls) == ["c1", "c2", "c3", "c4", "c5", "c6"]
    )
    by_id = {record.call_id: record for record in records}
    for call in calls:
        record = by_id[call.id]
        assert record.tool == call.name
        assert record.argument_hash == hash_arguments(call.arguments)
        assert record.result_hash == hash_message(results[call.id])
        assert record.status == results[call.id].status.value
        assert record.context_id == "ctx-1"
    assert by_id["c1"].action == "code" and by_id["c1"].permission_epoch == "epoch-7"
    assert by_id["c1"].environment_revision == "env-0123456789abcdef"
    assert by_id["c1"].duration_s is not None and by_id["c1"].started_at <= by_id["c1"].finished_at
    assert by_id["c2"].status == "error" and by_id["c2"].error_kind == "tool_exception"
    assert by_id["c3"].error_kind == "unknown_tool" and by_id["c3"].action is None  # never reached a handler
    assert by_id["c5"].action == "state"


def test_model_turn_manifests_hash_the_exact_model_input(settings, run_kernel, tmp_path) -> None:
    run = asyncio.run(run_kernel(settings, _script(), plugins=[MeasurePlugin(tmp_path)]))
    manifests = store_for(settings).model_turns(run.result.run_id)
    assert [m.turn for m in manifests] == [1, 2, 3, 4]
    assert [m.input_hash for m in manifests] == [hash_model_input(i) for i in run.model.inputs]
    assert len(set(m.input_hash for m in manifests)) == 4
    outputs = [e.message for e in run.events.of_kind("model_output")]
    assert [m.output_hash for m in manifests] == [hash_message(message) for message in outputs]
    assert [m.tool_calls for m in manifests] == [3, 2, 1, 0]
    assert all(m.finish_reason == "stop" and m.input_tokens == 0 for m in manifests)


def test_derivations_link_produced_files_to_their_execution(settings, run_kernel, tmp_path) -> None:
    run = asyncio.run(run_kernel(settings, _script(), plugins=[MeasurePlugin(tmp_path)]))
    derivations = store_for(settings).derivations(run.result.run_id)
    assert {(d.call_id, d.name) for d in derivations} == {("c1", "s1.png"), ("c4", "s2.png")}
    for derivation in derivations:
        assert derivation.sha256 == hashlib.sha256((tmp_path / derivation.name).read_bytes()).hexdigest()


def test_claim_and_skipped_review_are_recorded_and_projected(settings, run_kernel, tmp_path) -> None:
    run = asyncio.run(run_kernel(settings, _script(), plugins=[MeasurePlugin(tmp_path)]))
    store = store_for(settings)
    [claim] = store.claims(context_id="ctx-1")
    assert claim.call_id == "c5" and [e.reference for e in claim.evidence] == ["c1", "doi:10.1000/xyz"]
    [review] = store.reviews("ctx-1")
    assert review.decision.value == "SKIPPED" and review.level.value == "quick"
    review_result = next(m for m in run.result.history if m.tool_call_id == "c6")
    assert json.loads(review_result.content)["decision"] == "SKIPPED"
    rendered = run.channels.rendered()["reviews"]
    assert rendered["latest_decision"] == "SKIPPED" and rendered["reviews"][0]["review_id"] == review.review_id


def test_prov_export_of_a_kernel_run_round_trips(settings, run_kernel, tmp_path) -> None:
    from prov.model import ProvDocument

    run = asyncio.run(run_kernel(settings, _script(), plugins=[MeasurePlugin(tmp_path)]))
    text = export_prov_json(store_for(settings), run.result.run_id)
    document = ProvDocument.deserialize(content=text, format="json")
    assert document == ProvDocument.deserialize(content=document.serialize(format="json"), format="json")
    data = json.loads(text)
    executions = [key for key in data["activity"] if key.startswith("sd:execution/")]
    assert len(executions) == 6
    generated = {(g["prov:entity"], g["prov:activity"]) for g in data["wasGeneratedBy"].values()}
    derivation = store_for(settings).derivations(run.result.run_id)[0]
    assert (f"sd:artifact/{derivation.sha256}", f"sd:execution/{run.result.run_id}/{derivation.call_id}") in generated


def test_every_record_of_two_runs_stays_with_its_run(settings, run_kernel, tmp_path) -> None:
    first = asyncio.run(run_kernel(settings, _script(), plugins=[MeasurePlugin(tmp_path)]))
    second = asyncio.run(run_kernel(settings, _script(), plugins=[MeasurePlugin(tmp_path)]))
    store = store_for(settings)
    assert len(store.tool_executions(first.result.run_id)) == len(store.tool_executions(second.result.run_id)) == 6
    assert store.run(second.result.run_id).status == "completed"
    assert store.run(first.result.run_id).turns == 4
    second_hashes = {r.result_hash for r in store.tool_executions(second.result.run_id)}
    assert second_hashes == {hash_message(m) for m in second.result.history if m.role is Role.TOOL}
    assert len(store.claims(context_id="ctx-1")) == 2
