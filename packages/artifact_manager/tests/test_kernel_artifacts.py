"""The artifact tools, observer, permission gate and channel in real kernel runs with a scripted model."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from sciencediscovery.artifact_manager import open_store
from sciencediscovery.runtime_core import ToolCall, hookimpl
from sciencediscovery.runtime_core.testing import reply
from sciencediscovery.tools.definitions import (
    GateDecision,
    ToolAction,
    ToolDefinition,
    ToolInvocation,
    ToolOutput,
    Trust,
)


class PlotPlugin:
    """An executor-like tool that writes a figure and announces it the way the executor does,
    and an untrusted (remote) tool that announces a local file it did not produce."""

    def __init__(self, directory) -> None:
        self.directory = directory

    @hookimpl
    def register_tools(self, register: Any, settings: Any) -> None:
        async def plot(invocation: ToolInvocation) -> ToolOutput:
            path = self.directory / "fig1.png"
            path.write_bytes(b"\x89PNG\r\n\x1a\nfigure-one")
            entry = {"path": str(path), "name": "fig1.png", "media_type": "image/png", "environment_revision": "env-42"}
            return ToolOutput("plotted", metadata={"artifacts": [entry]})

        async def remote(invocation: ToolInvocation) -> ToolOutput:
            secret = self.directory / "secret.key"
            secret.write_text("private")
            return ToolOutput("fetched", metadata={"artifacts": [{"path": str(secret), "name": "secret.key"}]})

        empty = {"type": "object", "properties": {}}
        register(ToolDefinition("plot", "Plot.", empty, plot, action=ToolAction.CODE))
        register(ToolDefinition("remote", "A remote tool.", empty, remote, trust=Trust.UNTRUSTED))


class DownloadGate:
    """A permission gate allowing artifact_download only for URLs under an allowed prefix."""

    def __init__(self, allowed_prefix: str) -> None:
        self.allowed_prefix = allowed_prefix
        self.checked: list[str] = []

    async def check(self, invocation: ToolInvocation, tool: ToolDefinition) -> GateDecision:
        if tool.action is not ToolAction.ARTIFACT_DOWNLOAD:
            return GateDecision.allow()
        specifier = tool.permission_specifier(invocation.arguments)
        self.checked.append(specifier)
        if specifier.startswith(self.allowed_prefix):
            return GateDecision.allow("rule artifact_download(allowed)")
        return GateDecision.deny(f"artifact_download({specifier}) is not allowed")

    @hookimpl
    def register_tool_gates(self, register: Any, settings: Any) -> None:
        register(self)


def test_observer_registers_produced_files_with_their_provenance(settings, run_kernel, tmp_path) -> None:
    script = [reply("", ToolCall("p1", "plot", {}), ToolCall("u1", "remote", {})), reply("done")]
    run = asyncio.run(run_kernel(settings, script, plugins=[PlotPlugin(tmp_path)]))
    store = open_store(settings["data_dir"])
    [artifact] = store.artifacts(context_id="ctx-1")
    assert (artifact.name, artifact.kind.value, artifact.media_type) == ("fig1.png", "figure", "image/png")
    assert artifact.sha256 == hashlib.sha256(b"\x89PNG\r\n\x1a\nfigure-one").hexdigest()
    [link] = store.links(artifact.artifact_id)
    assert (link.provenance.run_id, link.provenance.call_id, link.provenance.tool) == (run.result.run_id, "p1", "plot")
    assert link.provenance.environment_revision == "env-42"
    assert run.channels.rendered()["artifacts"]["artifacts"][0]["path"].endswith("fig1.png")


def test_register_list_and_read_through_the_tools(settings, run_kernel) -> None:
    workspace = settings["workspace_dir"]
    (workspace / "table.csv").write_text("a,b\n" + "".join(f"{i},{i * i}\n" for i in range(2000)))
    (workspace / "same.csv").write_bytes((workspace / "table.csv").read_bytes())
    script = [
        reply("", ToolCall("r1", "register_artifact", {"path": "table.csv"})),
        reply("", ToolCall("r2", "register_artifact", {"path": "same.csv", "name": "copy"})),
        reply(
            "",
            ToolCall("l1", "list_artifacts", {"kind": "table"}),
            ToolCall("l2", "list_artifacts", {"kind": "figure"}),
        ),
        lambda model_input: reply(
            "",
            ToolCall(
                "x1",
                "read_artifact",
                {"artifact_id": json.loads(model_input.messages[2].content)["artifact_id"], "max_chars": 50},
            ),
        ),
        lambda model_input: reply(
            "",
            ToolCall(
                "x2",
                "read_artifact",
                {
                    "artifact_id": json.loads(model_input.messages[2].content)["artifact_id"],
                    "offset": 50,
                    "max_chars": 50,
                },
            ),
            ToolCall(
                "x3",
                "read_artifact",
                {"artifact_id": json.loads(model_input.messages[2].content)["artifact_id"], "offset": 10**9},
            ),
        ),
        reply("done"),
    ]
    run = asyncio.run(run_kernel(settings, script))
    first, second = (json.loads(run.result_of(c).content) for c in ("r1", "r2"))
    assert first["artifact_id"] == second["artifact_id"]
    assert (first["deduplicated"], second["deduplicated"], first["kind"]) == (False, True, "table")
    assert json.loads(run.result_of("l1").content)["total"] == 1
    assert json.loads(run.result_of("l2").content)["total"] == 0
    text = (workspace / "table.csv").read_text()
    page_one, page_two = run.result_of("x1"), run.result_of("x2")
    assert page_one.content.startswith(text[:50]) and "offset=50" in page_one.content
    assert page_two.content.startswith(text[50:100]) and page_two.metadata["next_offset"] == 100
    past_end = run.result_of("x3")
    assert (past_end.content, past_end.metadata["next_offset"]) == ("", None)
    rendered = run.channels.rendered()["artifacts"]
    assert rendered["total"] == 1 and rendered["artifacts"][0]["artifact_id"] == first["artifact_id"]


def test_register_refuses_paths_outside_the_workspace(settings, run_kernel, tmp_path) -> None:
    (tmp_path / "secret.txt").write_text("do not copy")
    run = asyncio.run(
        run_kernel(settings, [reply("", ToolCall("r1", "register_artifact", {"path": "../secret.txt"})), reply("done")])
    )
    message = run.result_of("r1")
    assert (
        message.status.value == "error"
        and "outside the workspace" in message.content
        and "../secret.txt" in message.content
    )
    assert open_store(settings["data_dir"]).artifacts() == []


def test_read_of_binary_artifact_describes_it(settings, run_kernel) -> None:
    (settings["workspace_dir"] / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    script = [
        reply("", ToolCall("r1", "register_artifact", {"path": "img.png"})),
        lambda model_input: reply(
            "",
            ToolCall(
                "x1", "read_artifact", {"artifact_id": json.loads(model_input.messages[2].content)["artifact_id"]}
            ),
        ),
        reply("done"),
    ]
    run = asyncio.run(run_kernel(settings, script))
    assert run.result_of("x1").content.startswith("Binary artifact (image/png, 16 bytes)")


def test_downloads_are_gated_by_the_artifact_download_action(settings, run_kernel, http_base, csv_body) -> None:
    gate = DownloadGate(allowed_prefix=f"{http_base}/data")
    script = [
        reply(
            "",
            ToolCall(
                "d1",
                "download_artifact",
                {"url": f"{http_base}/data.csv", "sha256": hashlib.sha256(csv_body).hexdigest()},
            ),
            ToolCall("d2", "download_artifact", {"url": f"{http_base}/other.csv"}),
        ),
        reply("", ToolCall("d3", "download_artifact", {"url": f"{http_base}/data.csv", "sha256": "1" * 64})),
        reply("done"),
    ]
    run = asyncio.run(run_kernel(settings, script, plugins=[gate]))
    allowed, denied, mismatched = (run.result_of(c) for c in ("d1", "d2", "d3"))
    assert json.loads(allowed.content)["state"] == "completed"
    assert denied.error_kind == "permission_denied"
    assert mismatched.error_kind == "download_failed" and "checksum mismatch" in mismatched.content
    assert gate.checked == [f"{http_base}/data.csv", f"{http_base}/other.csv", f"{http_base}/data.csv"]
    store = open_store(settings["data_dir"])
    [artifact] = store.artifacts()
    assert artifact.sha256 == hashlib.sha256(csv_body).hexdigest()
    assert [link.provenance.call_id for link in store.links(artifact.artifact_id)] == ["d1"]
    downloads = store.db.execute("SELECT url, state FROM downloads ORDER BY rowid").fetchall()
    assert [tuple(row) for row in downloads] == [
        (f"{http_base}/data.csv", "completed"),
        (f"{http_base}/data.csv", "failed"),
    ]


def test_a_symlink_loop_cannot_smuggle_an_outside_file_in(settings, run_kernel, tmp_path) -> None:
    import os

    workspace = tmp_path / "workspace"
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("do not copy")
    os.symlink("loop", workspace / "loop")
    os.symlink("../outside", workspace / "link_out")
    call = ToolCall("r1", "register_artifact", {"path": "loop/../link_out/secret.txt"})
    run = asyncio.run(run_kernel(settings, [reply("", call), reply("done")]))
    message = run.result_of("r1")
    assert message.status.value == "error" and "outside the workspace" in message.content
    assert open_store(settings["data_dir"]).artifacts() == []
