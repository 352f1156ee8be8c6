"""The executor's configuration, read and validated from the run's ``settings`` mapping.

Keys (see docs/packages/executor.md): ``workspace_mounts``, ``network_allowed`` and the
``executor`` section (``python``, ``bwrap``, ``allow_unsandboxed``, ``output_dir``,
``env_allowlist``, ``limits``). Every error names the key at fault.
"""

from __future__ import annotations

import enum
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .errors import ExecutorConfigError

_MOUNT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_ENV_ALLOWLIST = ("LANG", "LC_ALL", "TZ")


class MountMode(str, enum.Enum):
    """How a workspace mount is visible inside the sandbox."""

    READ_ONLY = "read_only"
    READ_WRITE = "read_write"


@attrs.frozen
class WorkspaceMount:
    """A host directory shown inside the sandbox at ``/workspace/<name>``."""

    name: str
    path: Path
    mode: MountMode

    @property
    def sandbox_path(self) -> str:
        return f"/workspace/{self.name}"


@attrs.frozen
class Limits:
    """Resource limits of one execution (a script, a session kernel or a job)."""

    cpu_seconds: int = 60
    memory_mb: int = 2048
    wall_seconds: int = 120
    processes: int = 64
    output_bytes: int = 8_000_000
    file_mb: int = 512
    capture_bytes: int = 16_384
    session_cpu_seconds: int = 3600
    job_wall_seconds: int = 3600


@attrs.frozen
class ExecutorConfig:
    """Everything the executor needs to know about a run's sandbox policy."""

    mounts: tuple[WorkspaceMount, ...] = ()
    network_allowed: bool = False
    python: str = sys.executable
    bwrap: str | None = attrs.field(factory=lambda: shutil.which("bwrap"))
    allow_unsandboxed: bool = False
    output_dir: Path = attrs.field(factory=lambda: Path(tempfile.gettempdir()) / "sciencediscovery-executor")
    env_allowlist: tuple[str, ...] = DEFAULT_ENV_ALLOWLIST
    limits: Limits = Limits()

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ExecutorConfig:
        """Validate ``settings``; unknown keys in the ``executor`` section are rejected by name."""
        section = _mapping(settings.get("executor", {}), "executor")
        _reject_unknown(section, "executor", {f.name for f in attrs.fields(cls)} - {"mounts", "network_allowed"})
        values: dict[str, Any] = {
            "mounts": _mounts(settings.get("workspace_mounts", [])),
            "network_allowed": _bool(settings.get("network_allowed", False), "network_allowed"),
            "allow_unsandboxed": _bool(section.get("allow_unsandboxed", False), "executor.allow_unsandboxed"),
            "limits": _limits(_mapping(section.get("limits", {}), "executor.limits")),
        }
        if "python" in section:
            values["python"] = _text(section["python"], "executor.python")
        if "bwrap" in section:
            name = _text(section["bwrap"], "executor.bwrap")
            values["bwrap"] = shutil.which(name) or name
        if "output_dir" in section:
            values["output_dir"] = Path(_text(section["output_dir"], "executor.output_dir"))
        if "env_allowlist" in section:
            values["env_allowlist"] = _env_allowlist(section["env_allowlist"])
        return cls(**values)


def _mapping(value: Any, key: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ExecutorConfigError(key, f"must be a mapping, got {type(value).__name__}")
    return value


def _reject_unknown(section: Mapping[str, Any], key: str, known: set[str]) -> None:
    unknown = sorted(set(section) - known)
    if unknown:
        raise ExecutorConfigError(f"{key}.{unknown[0]}", f"unknown key (known: {', '.join(sorted(known))})")


def _bool(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise ExecutorConfigError(key, f"must be true or false, got {value!r}")
    return value


def _text(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ExecutorConfigError(key, f"must be a non-empty string, got {value!r}")
    return value


def _positive(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ExecutorConfigError(key, f"must be a positive integer, got {value!r}")
    return value


def _limits(section: Mapping[str, Any]) -> Limits:
    known = {f.name for f in attrs.fields(Limits)}
    _reject_unknown(section, "executor.limits", known)
    return Limits(**{name: _positive(value, f"executor.limits.{name}") for name, value in section.items()})


def _env_allowlist(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise ExecutorConfigError("executor.env_allowlist", f"must be a list of variable names, got {value!r}")
    for index, name in enumerate(value):
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise ExecutorConfigError(f"executor.env_allowlist[{index}]", f"not an environment variable name: {name!r}")
    return tuple(sorted(set(value)))


def _mounts(value: Any) -> tuple[WorkspaceMount, ...]:
    if not isinstance(value, list | tuple):
        raise ExecutorConfigError("workspace_mounts", f"must be a list of mounts, got {type(value).__name__}")
    mounts: list[WorkspaceMount] = []
    for index, raw in enumerate(value):
        key = f"workspace_mounts[{index}]"
        entry = _mapping(raw, key)
        _reject_unknown(entry, key, {"name", "path", "mode"})
        name = _text(entry.get("name"), f"{key}.name")
        if not _MOUNT_NAME.match(name):
            raise ExecutorConfigError(f"{key}.name", f"must be letters, digits, '_', '.' or '-', got {name!r}")
        if any(m.name == name for m in mounts):
            raise ExecutorConfigError(f"{key}.name", f"duplicate mount name {name!r}")
        path = Path(_text(entry.get("path"), f"{key}.path"))
        if not path.is_absolute() or not path.is_dir():
            raise ExecutorConfigError(f"{key}.path", f"must be an existing absolute directory, got {str(path)!r}")
        try:
            mode = MountMode(entry.get("mode", MountMode.READ_ONLY.value))
        except ValueError:
            raise ExecutorConfigError(
                f"{key}.mode", f"must be read_only or read_write, got {entry.get('mode')!r}"
            ) from None
        mounts.append(WorkspaceMount(name=name, path=path.resolve(), mode=mode))
    return tuple(mounts)
