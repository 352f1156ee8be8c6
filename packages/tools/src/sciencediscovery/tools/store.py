"""Stored tool outputs: large results are kept once under a stable, content-addressed ref."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Protocol, runtime_checkable

import attrs

from .definitions import Trust
from .errors import UnknownOutputRefError

REF_PATTERN = re.compile(r"out_[0-9a-f]{32}")


@attrs.frozen
class StoredOutput:
    """One stored output: its ref, full (already sanitized when untrusted) content and trust label."""

    ref: str
    content: str
    trust: Trust


def output_ref(content: str, trust: Trust) -> str:
    """The stable ref of ``content`` stored with ``trust`` (equal inputs give equal refs)."""
    digest = hashlib.sha256(f"{trust.value}\0".encode() + content.encode("utf-8", "surrogatepass"))
    return f"out_{digest.hexdigest()[:32]}"


def check_ref(ref: str) -> str:
    """Return ``ref`` if it has the shape of a stored-output ref, else raise :class:`UnknownOutputRefError`."""
    if not isinstance(ref, str) or not REF_PATTERN.fullmatch(ref):
        raise UnknownOutputRefError(str(ref), "not a stored-output ref (expected out_ followed by 32 hex digits)")
    return ref


@runtime_checkable
class ToolOutputStore(Protocol):
    """Where large outputs live; ``read_tool_output`` reads from the same store the dispatcher writes."""

    def put(self, content: str, trust: Trust) -> str: ...

    def get(self, ref: str) -> StoredOutput: ...


class MemoryToolOutputStore:
    """Outputs kept in this process for the lifetime of the store."""

    def __init__(self) -> None:
        self._outputs: dict[str, StoredOutput] = {}

    def put(self, content: str, trust: Trust) -> str:
        ref = output_ref(content, trust)
        self._outputs.setdefault(ref, StoredOutput(ref, content, trust))
        return ref

    def get(self, ref: str) -> StoredOutput:
        try:
            return self._outputs[check_ref(ref)]
        except KeyError:
            raise UnknownOutputRefError(ref, "no stored output has this ref in this run") from None


class DiskToolOutputStore:
    """Outputs kept as one JSON file per ref under ``directory`` (directory 0700, files 0600, atomic writes)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)

    def _path(self, ref: str) -> Path:
        return self.directory / f"{check_ref(ref)}.json"

    def put(self, content: str, trust: Trust) -> str:
        ref = output_ref(content, trust)
        path = self._path(ref)
        if path.exists():
            return ref
        fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="ascii") as file:
                json.dump({"ref": ref, "trust": trust.value, "content": content}, file)
            os.chmod(temporary, 0o600)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        return ref

    def get(self, ref: str) -> StoredOutput:
        path = self._path(ref)
        try:
            data = json.loads(path.read_text(encoding="ascii"))
        except FileNotFoundError:
            raise UnknownOutputRefError(ref, f"no stored output has this ref (looked in {self.directory})") from None
        if not isinstance(data, dict) or set(data) != {"ref", "trust", "content"} or data["ref"] != ref:
            raise UnknownOutputRefError(ref, f"stored file {path} is not a stored output record")
        return StoredOutput(ref, data["content"], Trust(data["trust"]))
