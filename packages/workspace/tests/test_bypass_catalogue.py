"""A catalogue of path and specifier bypass attempts, each run through the governed path.

Every attempt goes through governance's PermissionGate (rules: allow ``ws/public/**``,
deny anything under ``ws/secret/**``, default deny) and, when the gate lets it
through, the real workspace handler over a real tree with real symlinks. Every
attempt must be refused by one of the two, no protected content may appear in
any output, and nothing outside the writable area may change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.governance import AuditLog, NetworkPolicy, PermissionEpoch, PermissionGate, PermissionService
from sciencediscovery.governance import RuleSet as GovernanceRules
from sciencediscovery.runtime_core import CollectingSink, ExternalWaits, ToolCall, TurnContext
from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput
from sciencediscovery.workspace import Workspace, workspace_tools

SECRET = "TOP-SECRET-CONTENT"
OUTSIDE = "OUTSIDE-CONTENT"
ABS = "{root}"  # replaced by the temporary tree's root

READ_ATTEMPTS = [
    "ws/secret/key.txt",
    "ws/secret//key.txt",
    "ws/./secret/key.txt",
    "ws//secret/key.txt",
    "ws/secret/./key.txt",
    "ws/secret/key.txt/",
    "ws/public/../secret/key.txt",
    "ws/public/nested/../../secret/key.txt",
    "ws/public/./.././/secret/key.txt",
    "ws/link_in/key.txt",
    "ws/key_alias",
    "ws/link_in/../secret/key.txt",
    "ws/public/../link_in/key.txt",
    "ws/public/../key_alias",
    f"{ABS}/ws/secret/key.txt",
    f"{ABS}/ws/public/../secret/key.txt",
    f"{ABS}/ws/link_in/key.txt",
    f"{ABS}//ws//secret//key.txt",
    "WS/secret/key.txt",
    "ws/SECRET/key.txt",
    "ws/Secret/key.txt",
    "ws/secret/KEY.TXT",
    "Ws/SeCrEt/key.txt",
    "ws/\uff53ecret/key.txt",
    "ws/\uff53\uff45\uff43\uff52\uff45\uff54/key.txt",
    "ws/secret\u200b/key.txt",
    "ws/se\u200dcret/key.txt",
    "ws/secret\u00ad/key.txt",
    "ws/\u0455ecret/key.txt",
    "ws/secret./key.txt",
    "ws/secret /key.txt",
    "ws/secret../key.txt",
    "ws\\secret\\key.txt",
    "ws/public\\..\\secret/key.txt",
    "ws/public/..\\secret\\key.txt",
    "ws/secret/key.txt\x00.png",
    "ws/public/%2e%2e/secret/key.txt",
    "ws/public/..%2fsecret/key.txt",
    "ws/public/\u2026/secret/key.txt",
    "ws/public/\uff0e\uff0e/secret/key.txt",
    "ws/public/\u2024\u2024/secret/key.txt",
    "ws/secret/*",
    "ws/secret/**",
    "ws/secret/?ey.txt",
    "ws/secret",
    "ws/secret/",
    "ws/link_in",
    "ws/link_in/",
    "ws/../outside/passwd",
    "ws/public/../../outside/passwd",
    "ws/link_out/passwd",
    "ws/link_out",
    "ws/file_link_out",
    "ws/public/abs_link/passwd",
    "ws/public/sibling_link/x.txt",
    "ws/dangling_out",
    f"{ABS}/outside/passwd",
    f"{ABS}/ws/../outside/passwd",
    f"{ABS}/ws-sibling/x.txt",
    f"{ABS}/ws/public/abs_link/passwd",
    "/etc/passwd",
    "//etc/passwd",
    "/",
    "../outside/passwd",
    "../../etc/passwd",
    "./../outside/passwd",
    "ws/../../../../../../etc/passwd",
    "ws/public/../../ws-sibling/x.txt",
    "ws/link_out/../outside/passwd",
    "ro/to_other_mount/../../outside/passwd",
    "ro/../outside/passwd",
    "ro/to_other_mount/a.txt",
    "outside/passwd",
    "~/passwd",
    "file:///etc/passwd",
    "ws/loop",
    "",
    ".",
]

WRITE_ONLY_ATTEMPTS = [
    "ro/data.csv",
    "ro/new.txt",
    "ro/./data.csv",
    "ro//data.csv/",
    f"{ABS}/ro/data.csv",
    "ws/public/../../ro/data.csv",
    "ws/public",
    "ws",
]

HOST_ATTEMPTS = [
    "evil.org",
    "EVIL.ORG",
    "evil.org.",
    "\uff45vil.org",
    "evil\u3002org",
    "evil\u200b.org",
    "nih.gov.evil.org",
    "ncbi.nlm.nih.gov.evil.org",
    "evil.org:80",
    "ncbi.nlm.nih.gov@evil.org",
    "evil.org/ncbi.nlm.nih.gov",
    "nih.gov",
    "127.0.0.1",
    "127.1",
    "2130706433",
    "0x7f.0.0.1",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "localhost",
    "metadata.localhost",
    "169.254.169.254",
    "10.0.0.1",
    "192.168.0.10",
    "0.0.0.0",
]

# Encoded or look-alike dots are literal names, not '..': writing there creates a harmless new
# directory under ws/public (which the rules allow), so they are read attempts only.
LITERAL_NAMES = {"ws/public/%2e%2e/secret/key.txt", "ws/public/..%2fsecret/key.txt", "ws/public/\u2026/secret/key.txt"}
WRITE_ATTEMPTS = [path for path in READ_ATTEMPTS if path not in LITERAL_NAMES] + WRITE_ONLY_ATTEMPTS

CASES = (
    [pytest.param("read_file", path, id=f"read:{path!r}") for path in READ_ATTEMPTS]
    + [pytest.param("write_file", path, id=f"write:{path!r}") for path in WRITE_ATTEMPTS]
    + [pytest.param("list_files", path, id=f"list:{path!r}") for path in READ_ATTEMPTS[:20]]
    + [pytest.param("search_files", path, id=f"search:{path!r}") for path in READ_ATTEMPTS[:20]]
    + [pytest.param("http_get", host, id=f"http:{host!r}") for host in HOST_ATTEMPTS]
)


def test_the_catalogue_has_at_least_a_hundred_attempts() -> None:
    assert len(CASES) >= 100


async def _fetch(invocation: ToolInvocation) -> str:
    return f"fetched {invocation.arguments['host']}"


def _http_get() -> ToolDefinition:
    return ToolDefinition(
        "http_get", "fetch", {"type": "object"}, _fetch, action=ToolAction.NETWORK,
        specifier=lambda arguments: f"domain:{arguments['host']}",
    )  # fmt: skip


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()
    }


def _governed_call(gate: PermissionGate, tool: ToolDefinition, arguments: Mapping[str, Any]) -> tuple[bool, str]:
    sink = CollectingSink()
    context = TurnContext("run-1", "ctx-1", 1, sink, ExternalWaits("run-1", "ctx-1", sink.emit))
    invocation = ToolInvocation(ToolCall("call-1", tool.name, dict(arguments)), arguments, context)

    async def run() -> tuple[bool, str]:
        decision = await gate.check(invocation, tool)
        if not decision.allowed:
            return False, decision.reason
        output = await tool.handler(invocation)
        assert isinstance(output, ToolOutput)
        return not output.is_error, output.content

    return asyncio.run(run())


@pytest.mark.parametrize(("tool_name", "attempt"), CASES)
def test_bypass_attempt_is_refused(workspace: Workspace, tree: Path, tool_name: str, attempt: str) -> None:
    rules = GovernanceRules.from_lists(
        allow=[f"{name}(ws/public/**)" for name in ("read_file", "write_file", "list_files", "search_files")]
        + ["http_get(domain:*.nih.gov)"],
        deny=["*(ws/secret/**)", "http_get(domain:evil.org)"],
        default="deny",
    )
    epoch = PermissionEpoch(
        mounts=[{"name": name, "path": str(m.root), "mode": m.mode.value} for name, m in workspace.mounts.items()],
        network=NetworkPolicy(allow=["*.nih.gov"], default="deny"),
    )
    service = PermissionService(rules, epoch, AuditLog(":memory:"))
    tools = {tool.name: tool for tool in workspace_tools(workspace)}
    tools["http_get"] = _http_get()
    path = attempt.replace(ABS, str(tree))
    arguments: dict[str, Any] = {
        "read_file": {"path": path},
        "write_file": {"path": path, "content": "PWNED"},
        "list_files": {"path": path, "recursive": True},
        "search_files": {"path": path, "pattern": "CONTENT"},
        "http_get": {"host": attempt},
    }[tool_name]
    before = _snapshot(tree)

    succeeded, content = _governed_call(PermissionGate(service), tools[tool_name], arguments)

    assert not succeeded, f"{tool_name}({attempt!r}) was not refused: {content}"
    assert SECRET not in content
    assert OUTSIDE not in content
    assert _snapshot(tree) == before
    assert not (tree / "outside" / "new.txt").exists()
    service.audit.close()


def test_the_same_setup_allows_legitimate_calls(workspace: Workspace, tree: Path) -> None:
    rules = GovernanceRules.from_lists(allow=["read_file(ws/public/**)"], deny=["*(ws/secret/**)"], default="deny")
    service = PermissionService(rules, PermissionEpoch(), AuditLog(":memory:"))
    read = next(tool for tool in workspace_tools(workspace) if tool.name == "read_file")
    for path in ("ws/public/a.txt", "ws//public/./nested/../a.txt", f"{tree}/ws/public/a.txt"):
        succeeded, content = _governed_call(PermissionGate(service), read, {"path": path, "end_line": 1})
        assert succeeded
        assert content == "line 1"


def test_deny_rules_hold_below_a_listed_or_searched_directory(workspace: Workspace, tree: Path) -> None:
    """The review's case: ``search_files(ws)`` is allowed, but what lies under ``ws/secret`` is denied.

    The composition root wires ``workspace_entry_filter`` to governance's side-effect-free ``is_denied``.
    """
    rules = GovernanceRules.from_lists(allow=["*(ws/**)"], deny=["*(ws/secret/**)"], default="deny")
    service = PermissionService(rules, PermissionEpoch(), AuditLog(":memory:"))
    tools = {
        tool.name: tool
        for tool in workspace_tools(workspace, entry_filter=lambda tool, path: not service.is_denied(tool, path))
    }
    gate = PermissionGate(service)
    for pattern, regex in (("SECRET", False), (".", True)):
        ok, content = _governed_call(gate, tools["search_files"], {"path": "ws", "pattern": pattern, "regex": regex})
        assert ok
        assert SECRET not in content
        assert "ws/secret" not in content
    assert (
        "ws/public/a.txt:1: line 1"
        in _governed_call(gate, tools["search_files"], {"path": "ws", "pattern": "line 1"})[1]
    )
    ok, content = _governed_call(gate, tools["list_files"], {"path": "ws", "recursive": True})
    assert ok
    assert "ws/public/nested/b.txt  22 bytes" in content.splitlines()
    assert not any(line.startswith("ws/secret") for line in content.splitlines())
    assert "ws/link_in@" in content.splitlines()  # a symlink is listed by its own name, never followed
    assert [record.specifier for record in service.audit.records()] == ["ws", "ws", "ws", "ws"]  # no filter audits
    service.audit.close()
