"""The provenance store's files, settings errors, the sink without a wrapped model, and PROV-JSON shape."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import stat

import pytest
from prov.model import ProvDocument

from sciencediscovery.provenance import UnknownRecordError, export_prov, export_prov_json, store_for
from sciencediscovery.provenance.plugin import register_tools
from sciencediscovery.provenance.store import FILENAME
from sciencediscovery.runtime_core import ConfigurationError, Message, RunRequest, RuntimeBuilder, ToolCall
from sciencediscovery.runtime_core.testing import FunctionDispatcher, ListModelClient, PassThroughAssembler, reply

# PROV-JSON (W3C member submission): the record types and each relation's required keys.
PROV_JSON_RELATIONS = {
    "wasGeneratedBy": {"prov:entity"},
    "used": {"prov:activity"},
    "wasInformedBy": {"prov:informed", "prov:informant"},
    "wasAssociatedWith": {"prov:activity"},
    "wasInfluencedBy": {"prov:influencee", "prov:influencer"},
}
PROV_JSON_KEYS = {"prefix", "entity", "activity", "agent", *PROV_JSON_RELATIONS}


def test_store_file_is_owner_only_and_in_wal_mode(settings) -> None:
    store = store_for(settings)
    path = settings["data_dir"] / FILENAME
    assert store.path == path.resolve()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize("value", [None, "", 3])
def test_missing_data_dir_is_a_configuration_error_naming_it(value) -> None:
    with pytest.raises(ConfigurationError, match="data_dir"):
        register_tools(lambda tool: None, {"data_dir": value})


def test_review_enabled_must_be_a_boolean(tmp_path) -> None:
    with pytest.raises(ConfigurationError, match="review_enabled"):
        register_tools(lambda tool: None, {"data_dir": tmp_path, "review_enabled": "yes"})


def test_sink_alone_records_turns_and_calls_without_input_hash(settings) -> None:
    from sciencediscovery.provenance import event_sink

    async def echo(arguments, context) -> str:
        return "echo"

    runtime = (
        RuntimeBuilder()
        .context_assembler(PassThroughAssembler())
        .model_client(ListModelClient([reply("", ToolCall("e1", "echo", {"a": 1})), reply("bye")]))
        .tool_dispatcher(FunctionDispatcher({"echo": echo}))
        .event_sink(event_sink(settings))
        .build()
    )
    result = asyncio.run(runtime.run(RunRequest("ctx-9", [Message.user("hi")])))
    store = store_for(settings)
    assert [(m.turn, m.input_hash, m.model) for m in store.model_turns(result.run_id)] == [
        (1, None, None),
        (2, None, None),
    ]
    [record] = store.tool_executions(result.run_id)
    assert (record.call_id, record.status, record.action) == ("e1", "ok", None)
    document = export_prov(store, result.run_id)
    assert document == ProvDocument.deserialize(content=export_prov_json(store, result.run_id), format="json")


def test_prov_json_uses_only_prov_record_types_with_their_required_keys(settings, run_kernel) -> None:
    claim = ToolCall(
        "c1",
        "record_claim",
        {
            "statement": "s",
            "evidence": [{"origin": "artifact", "reference": "art-1", "relation": "contradicts", "note": "figure 2"}],
        },
    )
    run = asyncio.run(run_kernel(settings, [reply("", claim), reply("done")]))
    data = json.loads(export_prov_json(store_for(settings), run.result.run_id))
    assert set(data) <= PROV_JSON_KEYS
    assert data["prefix"] == {"sd": "urn:sciencediscovery:"}
    for relation, required in PROV_JSON_RELATIONS.items():
        for record in data.get(relation, {}).values():
            assert required <= set(record), (relation, record)
    [influence] = data["wasInfluencedBy"].values()
    assert influence["sd:relation"] == "contradicts" and influence["sd:note"] == "figure 2"
    assert data["activity"][f"sd:run/{run.result.run_id}"]["sd:status"] == "completed"


def test_export_of_an_unknown_run_names_it(settings) -> None:
    with pytest.raises(UnknownRecordError, match="run-missing"):
        export_prov(store_for(settings), "run-missing")


def test_observer_alone_records_verifiable_results(settings) -> None:
    from sciencediscovery.context import plugin as context_plugin
    from sciencediscovery.provenance import hash_message
    from sciencediscovery.provenance import plugin as provenance_plugin
    from sciencediscovery.runtime_core import NullSink, make_plugin_manager
    from sciencediscovery.tools import plugin as tools_plugin
    from sciencediscovery.tools.compose import build_tools

    manager = make_plugin_manager(load_entry_points=False, plugins=[tools_plugin, context_plugin, provenance_plugin])
    tools = build_tools(manager, settings)
    claim = ToolCall("c1", "record_claim", {"statement": "s", "evidence": []})
    runtime = (
        RuntimeBuilder()
        .context_assembler(PassThroughAssembler("", tools.registry.visible_specs(1)))
        .model_client(ListModelClient([reply("", claim), reply("done")]))
        .tool_dispatcher(tools.dispatcher)
        .event_sink(NullSink())
        .build()
    )
    result = asyncio.run(runtime.run(RunRequest("ctx-1", [Message.user("hi")])))
    [record] = store_for(settings).tool_executions(result.run_id)
    committed = next(m for m in result.history if m.tool_call_id == "c1")
    assert (record.result_hash, record.status, record.action) == (hash_message(committed), "ok", "state")
