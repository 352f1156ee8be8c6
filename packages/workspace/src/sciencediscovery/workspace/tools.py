"""The workspace tools: ``list_files``, ``read_file``, ``search_files`` and ``write_file``.

Each tool's specifier is the resolved mount-relative path (``data/raw.csv``),
so governance rules such as ``read_file(data/**)`` match what is really
touched. Path refusals, read-only mounts and unusable files come back as tool
errors the model can read (``error_kind`` ``path_refused``, ``read_only_mount``,
``file_error``); file work runs in a worker thread.

An optional entry filter (``settings["workspace_entry_filter"]``, a callable
``(tool_name, display_path) -> bool``) hides what a call's own specifier does
not name: ``list_files`` leaves out, and ``search_files`` neither opens nor
reports, every entry below the target whose display path the filter refuses
(returns False for). The composition root passes one that asks governance
whether a deny rule would refuse that path, so a deny rule on ``data/secret/**``
also holds for ``search_files(data)``; this package does not import governance.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import regex

from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput

from . import files
from .errors import WorkspaceError
from .paths import Workspace

MAX_LIST_ENTRIES = 1000
MAX_READ_LINES = 2000
MAX_READ_BYTES = 256 * 1024
MAX_SEARCH_RESULTS = 500
MAX_SEARCH_FILES = 5000
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
MAX_PATTERN_CHARS = 500
MAX_WRITE_BYTES = 10 * 1024 * 1024

_PATH = {"type": "string", "minLength": 1, "description": "Workspace path: <mount>/<path inside the mount>."}

EntryFilter = Callable[[str, str], bool]
"""``(tool_name, display_path) -> bool``: False hides that entry from ``list_files`` and ``search_files``."""

Operation = Callable[[Workspace, Mapping[str, Any], files.Visible | None], ToolOutput]


def _visible(entry_filter: EntryFilter | None, tool_name: str) -> files.Visible | None:
    if entry_filter is None:
        return None
    return lambda display: bool(entry_filter(tool_name, display))


def _handler(
    workspace: Workspace, operation: Operation, visible: files.Visible | None = None
) -> Callable[[ToolInvocation], Awaitable[ToolOutput]]:
    async def handle(invocation: ToolInvocation) -> ToolOutput:
        try:
            return await asyncio.to_thread(operation, workspace, invocation.arguments, visible)
        except WorkspaceError as error:
            return ToolOutput(content=str(error), is_error=True, error_kind=error.kind)

    return handle


def _list(workspace: Workspace, arguments: Mapping[str, Any], visible: files.Visible | None) -> ToolOutput:
    target = workspace.resolve(arguments["path"])
    listing = files.list_entries(
        target,
        recursive=arguments.get("recursive", False),
        max_entries=arguments.get("max_entries", 200),
        visible=visible,
    )
    lines = list(listing.entries) or ["(empty directory)"]
    if listing.truncated:
        lines.append(f"... truncated after {len(listing.entries)} entries")
    return ToolOutput("\n".join(lines), {"path": target.display, "truncated": listing.truncated})


def _read(workspace: Workspace, arguments: Mapping[str, Any], _visible: files.Visible | None) -> ToolOutput:
    target = workspace.resolve(arguments["path"])
    start, end = arguments.get("start_line", 1), arguments.get("end_line")
    if end is not None and end < start:
        return ToolOutput(f"end_line {end} is before start_line {start}", is_error=True, error_kind="invalid_arguments")
    result = files.read_lines(
        target,
        start_line=start,
        end_line=end,
        max_lines=arguments.get("max_lines", MAX_READ_LINES),
        max_bytes=MAX_READ_BYTES,
    )
    metadata = {
        "path": target.display,
        "start_line": result.start_line,
        "end_line": result.end_line,
        "truncated": result.truncated,
    }
    return ToolOutput(result.text, metadata)


def _compile(arguments: Mapping[str, Any]) -> regex.Pattern[str]:
    text = arguments["pattern"]
    flags = 0 if arguments.get("case_sensitive", True) else regex.IGNORECASE
    return regex.compile(text if arguments.get("regex", False) else regex.escape(text), flags)


def _search(workspace: Workspace, arguments: Mapping[str, Any], visible: files.Visible | None) -> ToolOutput:
    target = workspace.resolve(arguments["path"])
    try:
        pattern = _compile(arguments)
    except regex.error as error:
        return ToolOutput(
            f"pattern is not a valid regular expression: {error}", is_error=True, error_kind="invalid_arguments"
        )
    result = files.search(
        target,
        pattern=pattern,
        max_results=arguments.get("max_results", 100),
        max_files=MAX_SEARCH_FILES,
        max_file_bytes=MAX_SEARCH_FILE_BYTES,
        visible=visible,
    )
    lines = list(result.matches) or ["(no matches)"]
    if result.timed_out:
        lines.append(
            f"... stopped: the pattern took longer than {files.SEARCH_SECONDS:g} s to evaluate "
            f"(after {result.files_scanned} files); simplify it"
        )
    elif result.truncated:
        lines.append(f"... truncated after {len(result.matches)} matches in {result.files_scanned} files")
    metadata = {"path": target.display, "truncated": result.truncated, "files_scanned": result.files_scanned}
    return ToolOutput("\n".join(lines), metadata)


def _write(workspace: Workspace, arguments: Mapping[str, Any], _visible: files.Visible | None) -> ToolOutput:
    target = workspace.resolve_for_write(arguments["path"])
    if len(arguments["content"].encode("utf-8")) > MAX_WRITE_BYTES:
        return ToolOutput(f"content exceeds {MAX_WRITE_BYTES} bytes", is_error=True, error_kind="invalid_arguments")
    written = files.write_text(target, arguments["content"], append=arguments.get("append", False))
    verb = "appended" if arguments.get("append", False) else "wrote"
    return ToolOutput(f"{verb} {written} bytes to {target.display}", {"path": target.display, "bytes": written})


def _schema(properties: Mapping[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": required, "additionalProperties": False}


def workspace_tools(workspace: Workspace, *, entry_filter: EntryFilter | None = None) -> list[ToolDefinition]:
    """The four tools over ``workspace``; descriptions name the mounts.

    ``entry_filter`` (see the module docstring) hides refused entries from ``list_files`` and ``search_files``.
    """
    mounts = ", ".join(f"{m.name} ({m.mode.value})" for m in workspace.mounts.values())

    def specifier(arguments: Mapping[str, Any]) -> str:
        return workspace.specifier(arguments["path"])

    return [
        ToolDefinition(
            name="list_files",
            description=f"List a workspace directory (optionally recursive). Mounts: {mounts}.",
            parameters=_schema(
                {
                    "path": _PATH,
                    "recursive": {"type": "boolean", "default": False},
                    "max_entries": {"type": "integer", "minimum": 1, "maximum": MAX_LIST_ENTRIES, "default": 200},
                },
                ["path"],
            ),
            handler=_handler(workspace, _list, _visible(entry_filter, "list_files")),
            action=ToolAction.READ,
            read_only=True,
            specifier=specifier,
        ),
        ToolDefinition(
            name="read_file",
            description=f"Read lines of a text file (1-based, inclusive range). Mounts: {mounts}.",
            parameters=_schema(
                {
                    "path": _PATH,
                    "start_line": {"type": "integer", "minimum": 1, "default": 1},
                    "end_line": {"type": "integer", "minimum": 1},
                    "max_lines": {"type": "integer", "minimum": 1, "maximum": MAX_READ_LINES},
                },
                ["path"],
            ),
            handler=_handler(workspace, _read),
            action=ToolAction.READ,
            read_only=True,
            specifier=specifier,
        ),
        ToolDefinition(
            name="search_files",
            description=f"Search text files under a path for a literal string or regex. Mounts: {mounts}.",
            parameters=_schema(
                {
                    "path": _PATH,
                    "pattern": {"type": "string", "minLength": 1, "maxLength": MAX_PATTERN_CHARS},
                    "regex": {"type": "boolean", "default": False},
                    "case_sensitive": {"type": "boolean", "default": True},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "default": 100},
                },
                ["path", "pattern"],
            ),
            handler=_handler(workspace, _search, _visible(entry_filter, "search_files")),
            action=ToolAction.READ,
            read_only=True,
            specifier=specifier,
        ),
        ToolDefinition(
            name="write_file",
            description=f"Write (or append) UTF-8 text to a file in a read-write mount. Mounts: {mounts}.",
            parameters=_schema(
                {"path": _PATH, "content": {"type": "string"}, "append": {"type": "boolean", "default": False}},
                ["path", "content"],
            ),
            handler=_handler(workspace, _write),
            action=ToolAction.WRITE,
            specifier=specifier,
        ),
    ]
