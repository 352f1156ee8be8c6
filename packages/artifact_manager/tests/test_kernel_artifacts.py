"""The artifact tools, observer, permission gate and channel in real kernel runs with a scripted model."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from typing import Any
from urllib.parse import urlsplit

import pytest

from sciencediscovery.artifact_manager import DownloadManager, artifact_tools, open_store
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
    gate = DownloadGate(allowed_prefix="domain:127.0.0.1")
    other_host = http_base.replace("127.0.0.1", "localhost")
    script = [
        reply(
            "",
            ToolCall(
                "d1",
                "download_artifact",
                {"url": f"{http_base}/data.csv", "sha256": hashlib.sha256(csv_body).hexdigest()},
            ),
            ToolCall("d2", "download_artifact", {"url": f"{other_host}/other.csv"}),
        ),
        reply("", ToolCall("d3", "download_artifact", {"url": f"{http_base}/data.csv", "sha256": "1" * 64})),
        reply("done"),
    ]
    run = asyncio.run(run_kernel(settings, script, plugins=[gate]))
    allowed, denied, mismatched = (run.result_of(c) for c in ("d1", "d2", "d3"))
    assert json.loads(allowed.content)["state"] == "completed"
    assert denied.error_kind == "permission_denied"
    assert mismatched.error_kind == "download_failed" and "checksum mismatch" in mismatched.content
    assert gate.checked == ["domain:127.0.0.1", "domain:localhost", "domain:127.0.0.1"]
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


def _tool(settings: dict[str, Any], name: str) -> ToolDefinition:
    store = open_store(settings["data_dir"])
    tools = artifact_tools(store, DownloadManager(store, max_bytes=1024), settings["workspace_dir"])
    return next(tool for tool in tools if tool.name == name)


@pytest.mark.parametrize(
    ("url", "specifier"),
    [
        ("http://127.0.0.2:8080/x.txt", "domain:127.0.0.2"),
        ("http://u@127.0.0.2:8080/x.txt", "domain:127.0.0.2"),
        ("HTTP://127.0.0.2:8080/x.txt", "domain:127.0.0.2"),
        ("http://127.0.0.2:8080/../127.0.0.1:9/x.txt", "domain:127.0.0.2"),
        ("http://127.1/x", "domain:127.0.0.1"),
        ("http://0x7f.0.0.1/x", "domain:127.0.0.1"),
        ("http://[::1]:8/x", "domain:::1"),
        ("https://Data.Example.ORG./a.csv", "domain:data.example.org"),
        ("https://bücher.de/a.csv", "domain:xn--bcher-kva.de"),
    ],
)
def test_download_specifier_is_the_normalised_host(settings, url, specifier) -> None:
    assert _tool(settings, "download_artifact").permission_specifier({"url": url}) == specifier


def test_network_policy_setting_governs_download_artifact(settings, run_kernel, http_base, policy) -> None:
    loopback = policy(lambda url: urlsplit(url).hostname == "127.0.0.1")
    named_host = http_base.replace("127.0.0.1", "localhost")
    script = [
        reply(
            "",
            ToolCall("d1", "download_artifact", {"url": f"{http_base}/data.csv"}),
            ToolCall("d2", "download_artifact", {"url": f"{named_host}/data.csv"}),
        ),
        reply("done"),
    ]
    run = asyncio.run(run_kernel({**settings, "network_policy": loopback}, script))
    allowed, refused = run.result_of("d1"), run.result_of("d2")
    assert json.loads(allowed.content)["state"] == "completed"
    assert refused.error_kind == "download_failed"
    assert json.loads(refused.content)["state"] == "failed"
    assert f"{named_host}/data.csv refused by the network policy" in json.loads(refused.content)["error"]
    assert loopback.checked == [f"{http_base}/data.csv", f"{named_host}/data.csv"]
    assert len(open_store(settings["data_dir"]).artifacts()) == 1


def test_a_network_policy_setting_without_check_url_refuses_downloads(settings, run_kernel, http_base) -> None:
    call = ToolCall("d1", "download_artifact", {"url": f"{http_base}/data.csv"})
    run = asyncio.run(
        run_kernel({**settings, "network_policy": {"default": "allow"}}, [reply("", call), reply("done")])
    )
    message = run.result_of("d1")
    assert message.error_kind == "download_failed"
    assert "settings['network_policy'] is a dict" in message.content
    assert open_store(settings["data_dir"]).artifacts() == []


def _secret_workspace(settings: dict[str, Any]) -> Any:
    workspace = settings["workspace_dir"]
    (workspace / "secret").mkdir()
    (workspace / "secret" / "key.txt").write_text("TOP-SECRET-TOKEN\n")
    (workspace / "public.txt").write_text("hello\n")
    os.symlink("secret", workspace / "alias")
    return workspace


def test_register_specifier_is_the_resolved_workspace_path(settings, tmp_path) -> None:
    workspace = _secret_workspace(settings)
    tool = _tool(settings, "register_artifact")
    for path in [
        "secret/key.txt",
        "./secret/../secret/key.txt",
        str(workspace / "secret" / "key.txt"),
        "alias/key.txt",
    ]:
        assert tool.permission_specifier({"path": path}) == "secret/key.txt", path
    assert tool.permission_specifier({"path": "alias"}) == "secret"
    assert tool.permission_specifier({"path": "missing/new.txt"}) == "missing/new.txt"
    assert tool.permission_specifier({"path": "../outside.txt"}) == "../outside.txt"
    assert tool.permission_specifier({"path": str(tmp_path / "x")}) == str(tmp_path / "x")
    assert tool.permission_specifier({"path": 5}) == "5"
    assert tool.permission_specifier({}) == "*"


class DenySecretGate:
    """A permission gate denying register_artifact(secret/**)."""

    async def check(self, invocation: ToolInvocation, tool: ToolDefinition) -> GateDecision:
        specifier = tool.permission_specifier(invocation.arguments)
        if tool.name == "register_artifact" and specifier.startswith("secret/"):
            return GateDecision.deny(f"register_artifact({specifier}) is denied")
        return GateDecision.allow()

    @hookimpl
    def register_tool_gates(self, register: Any, settings: Any) -> None:
        register(self)


def test_a_deny_rule_on_a_path_holds_for_absolute_and_aliased_paths(settings, run_kernel) -> None:
    workspace = _secret_workspace(settings)
    paths = ["alias/key.txt", str(workspace / "secret" / "key.txt"), "./secret/../secret/key.txt", "public.txt"]
    calls = [ToolCall(f"r{i}", "register_artifact", {"path": path}) for i, path in enumerate(paths)]
    run = asyncio.run(run_kernel(settings, [reply("", *calls), reply("done")], plugins=[DenySecretGate()]))
    assert [run.result_of(f"r{i}").error_kind for i in range(3)] == ["permission_denied"] * 3
    assert run.result_of("r3").status.value == "ok"
    assert [artifact.name for artifact in open_store(settings["data_dir"]).artifacts()] == ["public.txt"]
