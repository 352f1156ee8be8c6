"""A real directory tree with real symlinks: two mounts and a directory outside them."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.runtime_core import CollectingSink, ExternalWaits, ToolCall, TurnContext
from sciencediscovery.tools.definitions import ToolDefinition, ToolInvocation, ToolOutput
from sciencediscovery.workspace import Workspace, mounts_from_settings, workspace_tools

SECRET = "TOP-SECRET-CONTENT"
OUTSIDE = "OUTSIDE-CONTENT"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "public" / "nested").mkdir(parents=True)
    (ws / "secret").mkdir()
    (ws / "public" / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    (ws / "public" / "nested" / "b.txt").write_text("alpha\nBeta\ngamma beta\n")
    (ws / "public" / ".hidden").write_text("hidden\n")
    (ws / "secret" / "key.txt").write_text(SECRET + "\n")
    (ws / "public" / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text(OUTSIDE + "\n")
    (tmp_path / "ws-sibling").mkdir()
    (tmp_path / "ws-sibling" / "x.txt").write_text(OUTSIDE + "\n")
    os.symlink("secret", ws / "link_in")
    os.symlink("../outside", ws / "link_out")
    os.symlink("../outside/passwd", ws / "file_link_out")
    os.symlink(str(outside), ws / "public" / "abs_link")
    os.symlink("../../ws-sibling", ws / "public" / "sibling_link")
    os.symlink("loop", ws / "loop")
    os.symlink("../outside/new.txt", ws / "dangling_out")
    os.symlink("secret/key.txt", ws / "key_alias")
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "data.csv").write_text("x,y\n1,2\n")
    os.symlink("../ws/public", ro / "to_other_mount")
    return tmp_path


def settings_for(tree: Path) -> dict[str, Any]:
    return {
        "workspace_mounts": [
            {"name": "ws", "path": str(tree / "ws"), "mode": "read_write"},
            {"name": "ro", "path": str(tree / "ro"), "mode": "read_only"},
        ]
    }


@pytest.fixture
def workspace_settings(tree: Path) -> dict[str, Any]:
    """Run settings as the composition root passes them to ``register_tools``."""
    return settings_for(tree)


@pytest.fixture
def workspace(tree: Path) -> Workspace:
    return Workspace(mounts_from_settings(settings_for(tree)["workspace_mounts"]))


@pytest.fixture
def tools(workspace: Workspace) -> dict[str, ToolDefinition]:
    return {tool.name: tool for tool in workspace_tools(workspace)}


def turn_context() -> TurnContext:
    sink = CollectingSink()
    return TurnContext("run-1", "ctx-1", 1, sink, ExternalWaits("run-1", "ctx-1", sink.emit))


def _invoke(tool: ToolDefinition, arguments: Mapping[str, Any]) -> ToolOutput:
    invocation = ToolInvocation(ToolCall("call-1", tool.name, dict(arguments)), arguments, turn_context())
    output = asyncio.run(tool.handler(invocation))
    assert isinstance(output, ToolOutput)
    return output


@pytest.fixture
def invoke() -> Callable[[ToolDefinition, Mapping[str, Any]], ToolOutput]:
    """Run a tool's handler once, as the dispatcher would after validation and gates."""
    return _invoke
