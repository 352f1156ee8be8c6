"""The npm reference servers over stdio: deferred promotion in a real kernel run, crash and restart,
the permission request showing the exact command, and a realistic tool set (filesystem)."""

from __future__ import annotations

import asyncio
import shlex
import threading
from pathlib import Path

from ds_helpers import broker, call, child_pids, kernel_run, kill_children, run_kernel, run_tools, says, stdio_sources

from sciencediscovery.data_source import (
    McpServerCrashed,
    McpServerRestarted,
    McpServerStarted,
    sources_from_data,
    tool_name,
)
from sciencediscovery.governance import AllowOnce, AuditLog, Deny, PermissionEpoch, PermissionService, RuleSet
from sciencediscovery.governance import plugin as governance_plugin
from sciencediscovery.runtime_core import (
    CollectingSink,
    RunStatus,
    ToolResultStatus,
    ToolStarted,
)

ECHO = "mcp__everything__echo"
LONG = "mcp__everything__trigger-long-running-operation"


def approved_broker(npm_servers, tmp_path: Path, root: Path | None = None):
    """Approve the servers' tool lists in one broker (as a person would), then hand a fresh broker to the run."""
    sources = stdio_sources(npm_servers, root)
    with broker(sources, tmp_path / "pins.json") as first:
        for name in sources.servers:
            asyncio.run(first.approve(name))
    return broker(sources, tmp_path / "pins.json")


def test_deferred_mcp_tool_is_callable_only_from_the_turn_after_tool_search(npm_servers, tmp_path):
    with approved_broker(npm_servers, tmp_path) as mcp:
        tools = run_tools({"mcp_broker": mcp})
        assert tools.registry.get(ECHO).deferred
        script = [
            says("", call(ECHO, "c1", message="too early"), call("tool_search", "c2", query=f"select:{ECHO}")),
            says("", call(ECHO, "c3", message="hello p53")),
            says("done"),
        ]
        result, assembler, sink = run_kernel(tools, script)

    assert result.status is RunStatus.COMPLETED
    assert ECHO not in assembler.tool_names(1) and "tool_search" in assembler.tool_names(1)
    assert ECHO in assembler.tool_names(2)
    results = {m.tool_call_id: m for m in result.history if m.tool_call_id}
    assert results["c1"].error_kind == "unknown_tool"
    assert results["c3"].status is ToolResultStatus.OK
    assert results["c3"].content == "Echo: hello p53"
    assert results["c3"].metadata["trust"] == "untrusted"
    started = [e for e in sink.events if isinstance(e, McpServerStarted)]
    assert [e.server for e in started] == ["everything"]  # started lazily, by the first call


def test_search_finds_mcp_tools_by_server_description(npm_servers, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    with approved_broker(npm_servers, tmp_path, root) as mcp:
        tools = run_tools({"mcp_broker": mcp})
        found = [tool.name for tool in tools.registry.search("list files of the project folder", 20)]
    assert "mcp__filesystem__list_directory" in found
    assert not any(mcp.running(name) for name in mcp.servers)  # listing and searching start nothing


def test_filesystem_server_lists_a_real_folder(npm_servers, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "counts.csv").write_text("gene,count\nTP53,12\n")
    listing = "mcp__filesystem__list_directory"
    with approved_broker(npm_servers, tmp_path, root) as mcp:
        tools = run_tools({"mcp_broker": mcp})
        script = [
            says("", call("tool_search", "s", query=f"select:{listing}")),
            says("", call(listing, "l", path=str(root))),
            says("done"),
        ]
        result, _, _ = run_kernel(tools, script)
    listed = next(m for m in result.history if m.tool_call_id == "l")
    assert listed.status is ToolResultStatus.OK
    assert "counts.csv" in listed.content


class KillOnStart(CollectingSink):
    """Kills the server process shortly after the long-running tool starts (a crash mid-call)."""

    def emit(self, event):
        super().emit(event)
        if isinstance(event, ToolStarted) and event.call.name == LONG:
            threading.Timer(1.0, kill_children, args=("server-everything",)).start()


def test_server_crash_mid_call_becomes_a_tool_error_and_the_next_call_restarts_it(npm_servers, tmp_path):
    with approved_broker(npm_servers, tmp_path) as mcp:
        tools = run_tools({"mcp_broker": mcp})
        script = [
            says("", call("tool_search", "s", query=f"select:{LONG},{ECHO}")),
            says("", call(LONG, "crash", duration=60, steps=60)),
            says("", call(ECHO, "after", message="still here")),
            says("done"),
        ]
        sink = KillOnStart()
        result, _ = asyncio.run(kernel_run(tools, script, sink))

    assert result.status is RunStatus.COMPLETED  # the run goes on
    results = {m.tool_call_id: m for m in result.history if m.tool_call_id}
    assert results["crash"].status is ToolResultStatus.ERROR
    assert results["crash"].error_kind == "server_crashed"
    assert "restarted on the next call" in results["crash"].content
    assert results["after"].content == "Echo: still here"
    crashed = [e for e in sink.events if isinstance(e, McpServerCrashed)]
    restarted = [e for e in sink.events if isinstance(e, McpServerRestarted)]
    assert [(e.server, e.tool) for e in crashed] == [("everything", "trigger-long-running-operation")]
    assert [(e.server, e.attempt) for e in restarted] == [("everything", 1)]
    assert restarted[0].backoff_s > 0


def test_permission_request_shows_the_exact_untruncated_command_before_the_server_starts(npm_servers, tmp_path):
    sources = stdio_sources(npm_servers)
    argv = ["node", str(npm_servers["everything"]), "stdio"]
    with approved_broker(npm_servers, tmp_path) as mcp:
        service = PermissionService(
            RuleSet.from_lists(allow=["tool_search"], default="ask"),
            PermissionEpoch(),
            AuditLog(tmp_path / "audit.sqlite"),
        )
        tools = run_tools({"mcp_broker": mcp, "permission_service": service}, governance_plugin)
        seen = []

        async def person() -> None:
            for decision in (Deny("not yet"), AllowOnce()):
                request = (await service.wait_pending())[0]
                seen.append((request, mcp.running("everything")))
                service.decide(request.request_id, decision, source="user:test")

        async def scenario():
            script = [
                says("", call("tool_search", "s", query=f"select:{ECHO}")),
                says("", call(ECHO, "denied", message="one")),
                says("", call(ECHO, "allowed", message="two")),
                says("done"),
            ]
            decider = asyncio.create_task(person())
            result, _ = await kernel_run(tools, script)
            await decider
            return result

        result = asyncio.run(scenario())

    first, running_while_asked = seen[0]
    assert first.tool == ECHO and first.action == "connector"
    assert first.specifier == f"server:everything command:{shlex.join(argv)}"
    assert shlex.split(first.specifier.split("command:", 1)[1]) == argv  # the whole argv, nothing cut
    assert sources.servers["everything"].permission_specifier == first.specifier
    assert running_while_asked is False  # nothing ran before the person decided
    results = {m.tool_call_id: m for m in result.history if m.tool_call_id}
    assert results["denied"].error_kind == "permission_denied"
    assert seen[1][1] is False  # the denied call did not start the server either
    assert results["allowed"].content == "Echo: two"


def test_closing_the_broker_stops_the_server_processes(npm_servers, tmp_path):
    mcp = approved_broker(npm_servers, tmp_path)
    try:
        events = CollectingSink()
        asyncio.run(_echo(mcp, events))
        assert child_pids("server-everything")
    finally:
        mcp.close()
    assert child_pids("server-everything") == []


async def _echo(mcp, sink) -> None:
    tool = [t for t in run_tools({"mcp_broker": mcp}).registry.names if t == tool_name("everything", "echo")]
    assert tool
    notices: list = []
    await mcp.call("everything", "echo", {"message": "x"}, notices)


def test_a_call_over_the_server_timeout_is_a_timeout_error_and_the_session_goes_on(npm_servers, tmp_path):
    sources = sources_from_data(
        {
            "mcpServers": {
                "everything": {"command": "node", "args": [str(npm_servers["everything"]), "stdio"], "timeout_s": 1}
            }
        },
        "test",
    )
    with broker(sources, tmp_path / "pins.json") as first:
        asyncio.run(first.approve("everything"))
    with broker(sources, tmp_path / "pins.json") as mcp:
        tools = run_tools({"mcp_broker": mcp})
        script = [
            says("", call("tool_search", "s", query=f"select:{LONG},{ECHO}")),
            says("", call(LONG, "slow", duration=30, steps=30)),
            says("", call(ECHO, "next", message="on")),
            says("done"),
        ]
        result, _, sink = run_kernel(tools, script)
    results = {m.tool_call_id: m for m in result.history if m.tool_call_id}
    assert results["slow"].error_kind == "timeout"
    assert results["next"].content == "Echo: on"
    assert not [e for e in sink.events if isinstance(e, McpServerCrashed | McpServerRestarted)]
