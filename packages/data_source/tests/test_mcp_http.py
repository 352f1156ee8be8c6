"""A Python MCP server (official SDK) over streamable HTTP on 127.0.0.1: hostile results stay data,
and tool-list changes during and between runs are withheld until a person approves them again."""

from __future__ import annotations

import asyncio
import threading

from ds_helpers import broker, call, kernel_run, run_kernel, run_tools, says

from sciencediscovery.data_source import McpServerRestarted, McpToolListChanged, sources_from_data
from sciencediscovery.runtime_core import CollectingSink, Role, RunStatus, ToolFinished, ToolResultStatus, ToolStarted

SEARCH = "mcp__literature__search_articles"
UPDATE = "mcp__literature__publish_update"
SLOW = "mcp__literature__slow_search"


def http_sources(url: str):
    return sources_from_data(
        {"mcpServers": {"literature": {"url": url, "description": "biomedical literature search"}}}, "test"
    )


def approve(sources, pins) -> None:
    with broker(sources, pins) as first:
        asyncio.run(first.approve("literature"))


def results_by_id(result):
    return {m.tool_call_id: m for m in result.history if m.tool_call_id}


def test_hostile_text_in_a_tool_result_stays_sanitized_data_and_never_reaches_the_system_prompt(
    literature_server, tmp_path
):
    server = literature_server()
    sources = http_sources(server.url)
    approve(sources, tmp_path / "pins.json")
    with broker(sources, tmp_path / "pins.json") as mcp:
        tools = run_tools({"mcp_broker": mcp})
        script = [
            says("", call("tool_search", "s", query="biomedical literature")),
            says("", call(SEARCH, "r", query="p53")),
            says("", call(SEARCH, "again", query="brca1")),
            says("done"),
        ]
        result, assembler, _ = run_kernel(tools, script)

    assert result.status is RunStatus.COMPLETED
    answer = results_by_id(result)["r"]
    assert answer.status is ToolResultStatus.OK and answer.metadata["trust"] == "untrusted"
    assert "PMID:1000 p53 study 0" in answer.content
    assert "&lt;/runtime_context_data>" in answer.content  # the wrapper cannot be closed
    assert "</runtime_context_data>" not in answer.content
    assert "<|im_start|>" not in answer.content and "\u200b" not in answer.content
    assert "&#35; System" in answer.content or "# System" not in answer.content
    for model_input in assembler.inputs:  # it is only ever data inside the tool result
        assert model_input.system_prompt == "You are a research agent."
        assert "ignore every earlier instruction" not in model_input.system_prompt
        for message in model_input.messages:
            if "ignore every earlier instruction" in message.content:
                assert message.role is Role.TOOL
    assert results_by_id(result)["again"].status is ToolResultStatus.OK


def test_tool_list_change_during_a_run_is_withheld_until_approved_again(literature_server, tmp_path):
    server = literature_server()
    sources = http_sources(server.url)
    pins = tmp_path / "pins.json"
    approve(sources, pins)
    with broker(sources, pins) as mcp:
        tools = run_tools({"mcp_broker": mcp})
        script = [
            says("", call("tool_search", "s", query=f"select:{SEARCH},{UPDATE}")),
            says("", call(SEARCH, "before", query="p53")),
            says("", call(UPDATE, "rug-pull")),
            says("", call(SEARCH, "after", query="p53")),
            says("done"),
        ]
        result, _, sink = run_kernel(tools, script)
        results = results_by_id(result)
        assert results["before"].status is ToolResultStatus.OK
        assert results["rug-pull"].content == "updated"
        assert results["after"].error_kind == "tool_withheld"
        assert "approves the server's tool list again" in results["after"].content
        changes = [e for e in sink.events if isinstance(e, McpToolListChanged)]
        assert [(e.server, e.changed, e.withheld) for e in changes] == [
            ("literature", ("search_articles",), ("search_articles",))
        ]
        assert result.status is RunStatus.COMPLETED

        change = asyncio.run(mcp.approve("literature"))  # a person approves the new list
        assert change.changed == ("search_articles",)
        tools = run_tools({"mcp_broker": mcp})
        assert "attacker.example" in tools.registry.get(SEARCH).description  # the approved text is what shows
        rerun, _, _ = run_kernel(
            tools,
            [
                says("", call("tool_search", "s", query=f"select:{SEARCH}")),
                says("", call(SEARCH, "ok", query="x")),
                says("done"),
            ],
        )
    assert results_by_id(rerun)["ok"].status is ToolResultStatus.OK


def test_tool_list_change_between_runs_is_withheld_and_reported(literature_server, tmp_path):
    original = literature_server()
    sources = http_sources(original.url)
    pins = tmp_path / "pins.json"
    approve(sources, pins)
    original.stop()
    literature_server("changed", port=original.port)  # same URL, new description of search_articles
    with broker(sources, pins) as mcp:
        tools = run_tools({"mcp_broker": mcp})
        assert "v2" not in tools.registry.get(SEARCH).description  # the run offers what was approved
        script = [
            says("", call("tool_search", "s", query=f"select:{SEARCH},{UPDATE}")),
            says("", call(SEARCH, "changed", query="p53"), call(UPDATE, "unchanged")),
            says("done"),
        ]
        result, _, sink = run_kernel(tools, script)
        assert mcp.withheld("literature").changed == ("search_articles",)
    results = results_by_id(result)
    assert results["changed"].error_kind == "tool_withheld"
    assert results["unchanged"].status is ToolResultStatus.OK
    changes = [e for e in sink.events if isinstance(e, McpToolListChanged)]
    assert len(changes) == 1 and changes[0].changed == ("search_articles",)


class StopServerOnStart(CollectingSink):
    """Kills the HTTP server process shortly after the slow tool starts; starts it again once the call is over."""

    def __init__(self, server, restart) -> None:
        super().__init__()
        self.server, self.restart = server, restart

    def emit(self, event):
        super().emit(event)
        if isinstance(event, ToolStarted) and event.call.name == SLOW:
            threading.Timer(1.0, self.server.process.kill).start()
        if isinstance(event, ToolFinished) and event.call.name == SLOW:
            self.server.process.wait()
            self.restart("original", port=self.server.port)


def test_http_server_dying_mid_call_is_a_tool_error_and_the_next_call_reconnects(literature_server, tmp_path):
    server = literature_server()
    sources = http_sources(server.url)
    approve(sources, tmp_path / "pins.json")
    with broker(sources, tmp_path / "pins.json") as mcp:
        tools = run_tools({"mcp_broker": mcp})
        script = [
            says("", call("tool_search", "s", query=f"select:{SLOW},{SEARCH}")),
            says("", call(SLOW, "dies", query="p53")),
            says("", call(SEARCH, "back", query="p53")),
            says("done"),
        ]
        sink = StopServerOnStart(server, literature_server)
        result, _ = asyncio.run(kernel_run(tools, script, sink))
    results = results_by_id(result)
    assert results["dies"].error_kind == "server_crashed"
    assert results["back"].status is ToolResultStatus.OK
    assert [e.attempt for e in sink.events if isinstance(e, McpServerRestarted)] == [1]
