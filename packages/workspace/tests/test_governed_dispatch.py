"""The workspace tools behind the tools package's real GovernedToolDispatcher, gated by governance."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sciencediscovery.governance import AllowOnce, PermissionService
from sciencediscovery.governance import plugin as governance_plugin
from sciencediscovery.runtime_core import (
    CollectingSink,
    ExternalWaits,
    Message,
    ToolCall,
    ToolResultStatus,
    TurnContext,
    make_plugin_manager,
)
from sciencediscovery.tools import plugin as tools_plugin
from sciencediscovery.tools.compose import RunTools, build_tools
from sciencediscovery.workspace import plugin as workspace_plugin


def _run_tools(workspace_settings: dict[str, Any], tmp_path: Path) -> RunTools:
    settings = {
        **workspace_settings,
        "permission_rules": {
            "default": "ask",
            "allow": ["read_file(ws/public/**)", "list_files(ws/**)"],
            "deny": ["*(ws/secret/**)"],
        },
        "permission_audit_path": str(tmp_path / "audit.sqlite3"),
    }
    manager = make_plugin_manager(load_entry_points=False, plugins=[tools_plugin, workspace_plugin, governance_plugin])
    return build_tools(manager, settings)


def _context(sink: CollectingSink) -> TurnContext:
    return TurnContext("run-1", "ctx-1", 1, sink, ExternalWaits("run-1", "ctx-1", sink.emit))


def _dispatch(tools: RunTools, name: str, arguments: dict[str, Any]) -> Message:
    return asyncio.run(tools.dispatcher.dispatch(ToolCall("c1", name, arguments), _context(CollectingSink())))


def test_allowed_denied_invalid_and_refused_calls(workspace_settings: dict[str, Any], tmp_path: Path) -> None:
    tools = _run_tools(workspace_settings, tmp_path)
    ok = _dispatch(tools, "read_file", {"path": "ws/public/a.txt", "start_line": 2, "end_line": 3})
    assert (ok.status, ok.content) == (ToolResultStatus.OK, "line 2\nline 3")
    denied = _dispatch(tools, "read_file", {"path": "ws/link_in/key.txt"})
    assert (denied.status, denied.error_kind) == (ToolResultStatus.ERROR, "permission_denied")
    assert "TOP-SECRET" not in denied.content
    invalid = _dispatch(tools, "read_file", {"path": "ws/public/a.txt", "start_line": 0})
    assert invalid.error_kind == "validation"
    refused = _dispatch(tools, "list_files", {"path": "ws/link_out"})  # the rule allows it; the handler refuses
    assert refused.error_kind == "path_refused"
    assert "leaves mount 'ws'" in refused.content


def test_an_ask_waits_for_a_decision_through_the_dispatcher(workspace_settings: dict[str, Any], tmp_path: Path) -> None:
    tools = _run_tools(workspace_settings, tmp_path)
    [gate] = tools.dispatcher.gates
    service: PermissionService = gate.service  # type: ignore[attr-defined]
    sink = CollectingSink()

    async def scenario() -> Message:
        call = ToolCall("c2", "write_file", {"path": "ws/public/out.txt", "content": "result\n"})
        task = asyncio.create_task(tools.dispatcher.dispatch(call, _context(sink)))
        [request] = await service.wait_pending()
        assert (request.tool, request.specifier, request.action) == ("write_file", "ws/public/out.txt", "write")
        service.decide(request.request_id, AllowOnce(), source="user:alice")
        return await task

    result = asyncio.run(scenario())
    assert result.status is ToolResultStatus.OK
    assert (Path(workspace_settings["workspace_mounts"][0]["path"]) / "public" / "out.txt").read_text() == "result\n"
    assert [e.kind for e in sink.events if "wait" in e.kind] == ["external_wait_started", "external_wait_finished"]
