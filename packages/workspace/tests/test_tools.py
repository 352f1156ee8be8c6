"""The four file tools against a real tree: results, bounds, refusals and their error kinds."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolOutput
from sciencediscovery.workspace import Workspace, workspace_tools

Tools = dict[str, ToolDefinition]
Invoke = Callable[[ToolDefinition, Mapping[str, Any]], ToolOutput]
SECRET = "TOP-SECRET-CONTENT"
OUTSIDE = "OUTSIDE-CONTENT"


def test_tool_flags_and_specifiers(tools: Tools) -> None:
    assert {name: tool.action for name, tool in tools.items()} == {
        "list_files": ToolAction.READ,
        "read_file": ToolAction.READ,
        "search_files": ToolAction.READ,
        "write_file": ToolAction.WRITE,
    }
    assert not tools["write_file"].read_only
    assert all(tools[name].read_only for name in ("list_files", "read_file", "search_files"))
    assert tools["read_file"].permission_specifier({"path": "ws//link_in/./key.txt"}) == "ws/secret/key.txt"
    assert "ws (read_write)" in tools["read_file"].description
    assert all(tool.parameters["additionalProperties"] is False for tool in tools.values())


def test_list_files(invoke: Invoke, tools: Tools) -> None:
    output = invoke(tools["list_files"], {"path": "ws/public"})
    assert output.content.splitlines() == [
        "ws/public/.hidden  7 bytes",
        "ws/public/a.txt  71 bytes",
        "ws/public/abs_link@",
        "ws/public/blob.bin  9 bytes",
        "ws/public/nested/",
        "ws/public/sibling_link@",
    ]
    recursive = invoke(tools["list_files"], {"path": "ws/public", "recursive": True}).content.splitlines()
    assert "ws/public/nested/b.txt  22 bytes" in recursive
    assert not any("passwd" in line for line in recursive)  # symlinks are listed, never followed


def test_list_files_is_bounded(invoke: Invoke, tools: Tools) -> None:
    output = invoke(tools["list_files"], {"path": "ws", "recursive": True, "max_entries": 3})
    assert len(output.content.splitlines()) == 4
    assert output.content.endswith("... truncated after 3 entries")
    assert output.metadata["truncated"] is True


def test_read_file_line_ranges(invoke: Invoke, tools: Tools) -> None:
    output = invoke(tools["read_file"], {"path": "ws/public/a.txt", "start_line": 3, "end_line": 5})
    assert output.content == "line 3\nline 4\nline 5"
    assert output.metadata == {"path": "ws/public/a.txt", "start_line": 3, "end_line": 5, "truncated": False}
    whole = invoke(tools["read_file"], {"path": "ws/link_in/key.txt"})
    assert whole.content == SECRET
    assert whole.metadata["path"] == "ws/secret/key.txt"


def test_read_file_is_bounded_by_lines_and_bytes(invoke: Invoke, tools: Tools, tree: Path) -> None:
    capped = invoke(tools["read_file"], {"path": "ws/public/a.txt", "max_lines": 2})
    assert capped.content == "line 1\nline 2"
    assert capped.metadata["truncated"] is True
    (tree / "ws" / "big.txt").write_text("x" * 300_000 + "\nnext\n")
    big = invoke(tools["read_file"], {"path": "ws/big.txt"})
    assert len(big.content) == 256 * 1024
    assert big.metadata["truncated"] is True


def test_read_file_counts_over_long_lines_as_one_line(invoke: Invoke, tools: Tools, tree: Path) -> None:
    (tree / "ws" / "long.txt").write_text("y" * 600_000 + "\nsecond\nthird\n")
    output = invoke(tools["read_file"], {"path": "ws/long.txt", "start_line": 2})
    assert output.content == "second\nthird"
    assert output.metadata["truncated"] is False


@pytest.mark.parametrize(
    ("arguments", "kind", "message"),
    [
        ({"path": "ws/public/a.txt", "start_line": 11}, "file_error", "past the end"),
        ({"path": "ws/public/a.txt", "start_line": 5, "end_line": 4}, "invalid_arguments", "before start_line"),
        ({"path": "ws/public/missing.txt"}, "file_error", "does not exist"),
        ({"path": "ws/public"}, "file_error", "not a regular file"),
        ({"path": "ws/public/blob.bin"}, "file_error", "binary"),
        ({"path": "ws/loop"}, "file_error", "cannot be opened"),
        ({"path": "ws/link_out/passwd"}, "path_refused", "leaves mount 'ws'"),
        ({"path": "/etc/passwd"}, "path_refused", "outside every mount"),
    ],
)
def test_read_file_errors_are_tool_errors(
    invoke: Invoke, tools: Tools, arguments: dict[str, Any], kind: str, message: str
) -> None:
    output = invoke(tools["read_file"], arguments)
    assert output.is_error
    assert output.error_kind == kind
    assert message in output.content
    assert OUTSIDE not in output.content


def test_read_file_refuses_a_fifo_without_blocking(invoke: Invoke, tools: Tools, tree: Path) -> None:
    os.mkfifo(tree / "ws" / "pipe")
    output = invoke(tools["read_file"], {"path": "ws/pipe"})
    assert output.error_kind == "file_error"
    assert "not a regular file" in output.content


def test_search_literal_and_regex(invoke: Invoke, tools: Tools) -> None:
    literal = invoke(tools["search_files"], {"path": "ws/public", "pattern": "beta"})
    assert literal.content == "ws/public/nested/b.txt:3: gamma beta"
    folded = invoke(tools["search_files"], {"path": "ws/public", "pattern": "beta", "case_sensitive": False})
    assert folded.content.splitlines() == ["ws/public/nested/b.txt:2: Beta", "ws/public/nested/b.txt:3: gamma beta"]
    regex = invoke(tools["search_files"], {"path": "ws/public/a.txt", "pattern": r"line 1\d?$", "regex": True})
    assert regex.content.splitlines() == ["ws/public/a.txt:1: line 1", "ws/public/a.txt:10: line 10"]
    dots = invoke(tools["search_files"], {"path": "ws/public", "pattern": "line ."})
    assert dots.content == "(no matches)"  # literal: the dot is not a wildcard


def test_search_never_follows_symlinks_out_of_the_mount(invoke: Invoke, tools: Tools) -> None:
    output = invoke(tools["search_files"], {"path": "ws", "pattern": "CONTENT"})
    assert OUTSIDE not in output.content
    assert output.content.splitlines() == [f"ws/secret/key.txt:1: {SECRET}"]


def test_search_is_bounded(invoke: Invoke, tools: Tools) -> None:
    output = invoke(tools["search_files"], {"path": "ws/public/a.txt", "pattern": "line", "max_results": 4})
    assert output.content.splitlines()[:4] == [f"ws/public/a.txt:{n}: line {n}" for n in range(1, 5)]
    assert output.content.splitlines()[4] == "... truncated after 4 matches in 1 files"
    assert output.metadata["truncated"] is True


def test_search_with_an_invalid_regex_is_a_tool_error(invoke: Invoke, tools: Tools) -> None:
    output = invoke(tools["search_files"], {"path": "ws", "pattern": "(", "regex": True})
    assert output.error_kind == "invalid_arguments"


def test_write_and_append(invoke: Invoke, tools: Tools, tree: Path) -> None:
    output = invoke(tools["write_file"], {"path": "ws/out/new/result.txt", "content": "hello\n"})
    assert output.content == "wrote 6 bytes to ws/out/new/result.txt"
    target = tree / "ws" / "out" / "new" / "result.txt"
    assert target.read_text() == "hello\n"
    invoke(tools["write_file"], {"path": "ws/out/new/result.txt", "content": "more\n", "append": True})
    assert target.read_text() == "hello\nmore\n"
    invoke(tools["write_file"], {"path": "ws/out/new/result.txt", "content": "replaced"})
    assert target.read_text() == "replaced"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert [p.name for p in target.parent.iterdir()] == ["result.txt"]  # no temporary file left behind


def test_write_through_an_inside_symlink_writes_the_target(invoke: Invoke, tools: Tools, tree: Path) -> None:
    output = invoke(tools["write_file"], {"path": "ws/link_in/note.txt", "content": "x"})
    assert output.metadata["path"] == "ws/secret/note.txt"
    assert (tree / "ws" / "secret" / "note.txt").read_text() == "x"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("ro/data.csv", "read_only_mount"),
        ("ro/new.csv", "read_only_mount"),
        ("ws/file_link_out", "path_refused"),
        ("ws/dangling_out", "path_refused"),
        ("ws/link_out/passwd", "path_refused"),
        ("ws/../outside/passwd", "path_refused"),
        ("ws", "file_error"),
        ("ws/public", "file_error"),
    ],
)
def test_write_refusals(invoke: Invoke, tools: Tools, tree: Path, path: str, kind: str) -> None:
    output = invoke(tools["write_file"], {"path": path, "content": "pwned"})
    assert output.is_error
    assert output.error_kind == kind
    assert (tree / "outside" / "passwd").read_text() == OUTSIDE + "\n"
    assert not (tree / "outside" / "new.txt").exists()
    assert (tree / "ro" / "data.csv").read_text() == "x,y\n1,2\n"


def _hide_secret(calls: list[tuple[str, str]]) -> Callable[[str, str], bool]:
    def entry_filter(tool_name: str, display_path: str) -> bool:
        calls.append((tool_name, display_path))
        return not (display_path == "ws/secret" or display_path.startswith("ws/secret/"))

    return entry_filter


def test_an_entry_filter_hides_refused_entries_from_list_and_search(
    invoke: Invoke, workspace: Workspace, tree: Path
) -> None:
    calls: list[tuple[str, str]] = []
    tools = {tool.name: tool for tool in workspace_tools(workspace, entry_filter=_hide_secret(calls))}
    listing = invoke(tools["list_files"], {"path": "ws", "recursive": True}).content.splitlines()
    assert "ws/public/nested/b.txt  22 bytes" in listing
    assert not any(line.startswith("ws/secret") for line in listing)
    assert ("list_files", "ws/secret/key.txt") in calls
    for search in ({"path": "ws", "pattern": "CONTENT"}, {"path": "ws", "pattern": ".", "regex": True}):
        output = invoke(tools["search_files"], search)
        assert SECRET not in output.content
        assert "ws/secret" not in output.content
    assert ("search_files", "ws/secret/key.txt") in calls
    assert {tool for tool, _path in calls} == {"list_files", "search_files"}  # read/write are not filtered
    assert invoke(tools["read_file"], {"path": "ws/secret/key.txt"}).content == SECRET  # the gate decides those


def test_refused_entries_do_not_count_against_the_bounds(invoke: Invoke, workspace: Workspace, tree: Path) -> None:
    for name in ("a", "b", "c"):
        (tree / "ws" / "secret" / f"{name}.txt").write_text(SECRET + "\n")
    tools = {tool.name: tool for tool in workspace_tools(workspace, entry_filter=_hide_secret([]))}
    listing = invoke(tools["list_files"], {"path": "ws/secret", "max_entries": 1})
    assert listing.content == "(empty directory)"
    assert listing.metadata["truncated"] is False
    search = invoke(tools["search_files"], {"path": "ws/secret", "pattern": "CONTENT", "max_results": 1})
    assert search.content == "(no matches)"
    assert search.metadata["files_scanned"] == 0


def test_a_catastrophic_regex_is_stopped_and_never_stalls_the_event_loop(tree, tools: Tools) -> None:
    """Found in review: `(a|aa)+$` on 'a'*40+'!' held the GIL for a minute, blocking every other run."""
    import asyncio

    from sciencediscovery.runtime_core import CollectingSink, ExternalWaits, ToolCall, TurnContext
    from sciencediscovery.tools.definitions import ToolInvocation

    sink = CollectingSink()
    context = TurnContext("run-1", "ctx-1", 1, sink, ExternalWaits("run-1", "ctx-1", sink.emit))
    (tree / "ws" / "public" / "bomb.txt").write_text("a" * 60 + "!\n")
    arguments = {"path": "ws/public/bomb.txt", "pattern": "(a|aa)+$", "regex": True}
    invocation = ToolInvocation(ToolCall("call-1", "search_files", arguments), arguments, context)

    async def scenario() -> tuple[ToolOutput, int]:
        ticks = 0

        async def heartbeat() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        beat = asyncio.create_task(heartbeat())
        output = await tools["search_files"].handler(invocation)
        beat.cancel()
        return output, ticks

    output, ticks = asyncio.run(scenario())
    assert "the pattern took longer than" in output.content  # stopped by the search budget
    assert ticks >= 10  # the loop kept running while the pattern was evaluated (it stood still before the fix)
