"""The result of one execution (a script, a session cell or a job) and its tool-result form."""

from __future__ import annotations

from typing import Any

import attrs

from sciencediscovery.tools.definitions import ToolOutput

from .artifacts import ARTIFACTS_KEY, Artifact
from .capture import CapturedText
from .sandbox import SandboxMode

ENVIRONMENT_REVISION_KEY = "environment_revision"
"""Result metadata key on every execution result: the environment revision id that produced it."""
SANDBOX_KEY = "sandbox"
"""Result metadata key: ``{"mode": "bubblewrap"|"unsandboxed", "network_allowed": bool}``."""
_LIMIT_STATUSES = {"cpu_limit", "timeout", "output_limit"}


@attrs.frozen
class ExecutionResult:
    """How an execution ended, its bounded output, its artifacts and the environment that ran it.

    ``status`` is ``exited``, ``signalled``, ``cpu_limit``, ``timeout`` or ``output_limit`` for
    processes, and ``ok``, ``error``, ``interrupted``, ``timeout`` or ``kernel_died`` for cells.
    """

    status: str
    ok: bool
    exit_code: int | None
    stdout: CapturedText
    stderr: CapturedText
    artifacts: tuple[Artifact, ...]
    environment_revision: str
    sandbox_mode: SandboxMode
    network_allowed: bool
    detail: str = ""

    @property
    def error_kind(self) -> str | None:
        if self.ok:
            return None
        return "resource_limit" if self.status in _LIMIT_STATUSES else "execution_error"

    def metadata(self) -> dict[str, Any]:
        return {
            ENVIRONMENT_REVISION_KEY: self.environment_revision,
            SANDBOX_KEY: {"mode": self.sandbox_mode.value, "network_allowed": self.network_allowed},
            "execution_status": self.status,
            "exit_code": self.exit_code,
            "output_truncated": self.stdout.truncated or self.stderr.truncated,
            ARTIFACTS_KEY: [artifact.to_metadata() for artifact in self.artifacts],
        }

    def content(self) -> str:
        """The text the model reads: status, bounded stdout/stderr and the artifact list."""
        lines = [f"status: {self.status}" + (f" (exit code {self.exit_code})" if self.exit_code is not None else "")]
        if self.sandbox_mode is SandboxMode.UNSANDBOXED:
            lines.append("WARNING: this code ran UNSANDBOXED (allowed by the executor configuration)")
        if self.detail:
            lines.append(self.detail)
        lines.append(f"environment revision: {self.environment_revision}")
        for label, captured in (("stdout", self.stdout), ("stderr", self.stderr)):
            if captured.text:
                lines += [f"--- {label} ---", captured.text.rstrip("\n")]
        if self.artifacts:
            lines.append("--- artifacts ---")
            lines += [f"{artifact.name} ({artifact.media_type})" for artifact in self.artifacts]
        return "\n".join(lines)

    def to_tool_output(self) -> ToolOutput:
        return ToolOutput(self.content(), self.metadata(), is_error=not self.ok, error_kind=self.error_kind)
