"""The artifact tools: ``register_artifact``, ``list_artifacts``, ``read_artifact`` and ``download_artifact``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput, Trust
from sciencediscovery.tools.paths import SymlinkLoopError, stable_realpath

from .classify import SNIFF_BYTES, ArtifactKind
from .downloads import DownloadManager, DownloadState, domain_specifier
from .errors import ArtifactError, ArtifactPathError, InvalidArtifactRequestError
from .observer import ARTIFACTS_KEY
from .store import Artifact, ArtifactStore, Provenance

READ_DEFAULT_CHARS = 4000
READ_MAX_CHARS = 20000
LIST_MAX = 200
_SKIP_CHARS = 1 << 20


def artifact_json(artifact: Artifact) -> dict[str, Any]:
    """An artifact as JSON data (the shape of ``metadata["artifacts"]`` entries of these tools)."""
    data = attrs.asdict(artifact)
    data["kind"] = artifact.kind.value
    return data


def _error(message: str, kind: str = "invalid_arguments") -> ToolOutput:
    return ToolOutput(content=message, is_error=True, error_kind=kind)


def _inside(workspace: Path, raw: Any) -> Path:
    if not isinstance(raw, str) or not raw.strip():
        raise ArtifactPathError(f"path must be a non-empty string, got {raw!r}")
    try:
        path = Path(stable_realpath(workspace / raw))  # one realpath pass can be fooled by a symlink loop
    except SymlinkLoopError:
        raise ArtifactPathError(f"path {raw!r} runs into a symlink loop") from None
    if not path.is_relative_to(workspace):
        raise ArtifactPathError(f"path {raw!r} is outside the workspace {str(workspace)!r}")
    return path


def _path_specifier(workspace: Path, arguments: Mapping[str, Any]) -> str:
    """The permission specifier of ``register_artifact``: the resolved path relative to the workspace
    (so ``/abs/ws/secret/x``, ``./a/../secret/x`` and a symlink alias all read ``secret/x``); the raw
    path when it cannot be resolved inside the workspace (the handler refuses it anyway)."""
    raw = arguments.get("path", "*")
    try:
        return _inside(workspace, raw).relative_to(workspace).as_posix()
    except ArtifactPathError:
        return str(raw)


def _int(arguments: Mapping[str, Any], field: str, default: int, low: int, high: int) -> int:
    value = arguments.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidArtifactRequestError(f"{field} must be an integer from {low} to {high}, got {value!r}")
    return value


def _read_text(path: Path, offset: int, limit: int) -> tuple[str, bool] | None:
    with path.open("rb") as handle:
        if b"\x00" in handle.read(SNIFF_BYTES):
            return None
    with path.open(encoding="utf-8", errors="replace") as handle:
        remaining = offset
        while remaining > 0 and (skipped := len(handle.read(min(remaining, _SKIP_CHARS)))):
            remaining -= skipped  # skip in bounded steps: the offset may be far into a large file
        text = handle.read(limit)
        more = bool(handle.read(1))
    return text, more


def artifact_tools(store: ArtifactStore, downloads: DownloadManager, workspace: Path) -> list[ToolDefinition]:
    """The tools, bound to ``store``, the download manager and the workspace root for ``register_artifact``."""

    async def register_artifact(invocation: ToolInvocation) -> ToolOutput:
        arguments, context = invocation.arguments, invocation.context
        try:
            path = _inside(workspace, arguments.get("path"))
            name = arguments.get("name")
            if name is not None and (not isinstance(name, str) or not name.strip()):
                raise InvalidArtifactRequestError(f"name must be a non-empty string, got {name!r}")
            registration = await asyncio.to_thread(
                store.register_file,
                path,
                name=name,
                provenance=Provenance(context.run_id, context.context_id, invocation.call.id, invocation.call.name),
            )
        except ArtifactError as error:
            return _error(str(error))
        data = {**artifact_json(registration.artifact), "deduplicated": not registration.created}
        return ToolOutput(content=json.dumps(data), metadata={ARTIFACTS_KEY: [artifact_json(registration.artifact)]})

    async def list_artifacts(invocation: ToolInvocation) -> ToolOutput:
        kind = invocation.arguments.get("kind")
        try:
            selected = ArtifactKind(kind) if kind is not None else None
        except ValueError:
            return _error(f"kind must be one of {', '.join(k.value for k in ArtifactKind)}; got {kind!r}")
        artifacts = store.artifacts(context_id=invocation.context.context_id, kind=selected)
        shown = [artifact_json(a) for a in artifacts[-LIST_MAX:]]
        return ToolOutput(content=json.dumps({"total": len(artifacts), "artifacts": shown}))

    async def read_artifact(invocation: ToolInvocation) -> ToolOutput:
        arguments = invocation.arguments
        try:
            artifact = store.get(str(arguments.get("artifact_id")))
            offset = _int(arguments, "offset", 0, 0, 1 << 40)
            limit = _int(arguments, "max_chars", READ_DEFAULT_CHARS, 1, READ_MAX_CHARS)
        except ArtifactError as error:
            return _error(str(error))
        read = await asyncio.to_thread(_read_text, store.blob_path(artifact.sha256), offset, limit)
        if read is None:
            summary = artifact_json(artifact)
            return ToolOutput(
                content=f"Binary artifact ({artifact.media_type}, {artifact.size} bytes); "
                f"not shown as text. {json.dumps(summary)}"
            )
        text, more = read
        note = f"\n[truncated: continue with offset={offset + len(text)}]" if more else ""
        return ToolOutput(
            content=text + note,
            metadata={
                "artifact_id": artifact.artifact_id,
                "offset": offset,
                "next_offset": offset + len(text) if more else None,
            },
        )

    async def download_artifact(invocation: ToolInvocation) -> ToolOutput:
        arguments, context = invocation.arguments, invocation.context
        try:
            download = downloads.request(
                arguments.get("url"),
                name=arguments.get("name"),
                expected_sha256=arguments.get("sha256"),
                max_bytes=arguments.get("max_bytes"),
                provenance=Provenance(context.run_id, context.context_id, invocation.call.id),
            )
        except ArtifactError as error:
            return _error(str(error))
        downloads.approve(download.download_id, "the artifact_download permission gate allowed this invocation")
        download = await downloads.fetch(download.download_id, tool=invocation.call.name)
        data = {"download_id": download.download_id, "state": download.state.value, "url": download.url}
        if download.state is not DownloadState.COMPLETED:
            return ToolOutput(
                content=json.dumps({**data, "error": download.error}),
                is_error=True,
                error_kind="download_failed",
                metadata={"download": data},
            )
        artifact = store.get(str(download.artifact_id))
        return ToolOutput(
            content=json.dumps({**data, "artifact": artifact_json(artifact)}),
            metadata={"download": data, ARTIFACTS_KEY: [artifact_json(artifact)]},
        )

    return [
        ToolDefinition(
            name="register_artifact",
            description="Store a workspace file as an artifact (content-addressed; identical bytes are stored once) "
            "and classify it as dataset, table, figure, report, code, notebook, log or other.",
            parameters={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "path relative to the workspace"},
                    "name": {"type": "string"},
                },
                "required": ["path"],
            },
            handler=register_artifact,
            action=ToolAction.STATE,
            specifier=lambda arguments: _path_specifier(workspace, arguments),
        ),
        ToolDefinition(
            name="list_artifacts",
            description="List the artifacts of this conversation, optionally of one kind.",
            parameters={
                "type": "object",
                "properties": {"kind": {"type": "string", "enum": [k.value for k in ArtifactKind]}},
            },
            handler=list_artifacts,
            action=ToolAction.READ,
            read_only=True,
        ),
        ToolDefinition(
            name="read_artifact",
            description=f"Read an artifact's text, at most {READ_MAX_CHARS} characters from a character offset.",
            parameters={
                "type": "object",
                "properties": {
                    "artifact_id": {"type": "string"},
                    "offset": {"type": "integer", "minimum": 0},
                    "max_chars": {"type": "integer", "minimum": 1, "maximum": READ_MAX_CHARS},
                },
                "required": ["artifact_id"],
            },
            handler=read_artifact,
            action=ToolAction.READ,
            read_only=True,
            trust=Trust.UNTRUSTED,
        ),
        ToolDefinition(
            name="download_artifact",
            description="Download a file over HTTP(S) into the artifact store (needs artifact_download permission; "
            "size-limited; verified against sha256 when given).",
            parameters={
                "type": "object",
                "properties": {
                    "url": {"type": "string"},
                    "name": {"type": "string"},
                    "sha256": {"type": "string", "description": "expected SHA-256 (hex) of the content"},
                    "max_bytes": {"type": "integer", "minimum": 1},
                },
                "required": ["url"],
            },
            handler=download_artifact,
            action=ToolAction.ARTIFACT_DOWNLOAD,
            specifier=lambda arguments: domain_specifier(arguments.get("url", "")),
        ),
    ]
