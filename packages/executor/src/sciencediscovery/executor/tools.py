"""The executor's tools: ``run_code``, ``python_session``, the ``remote_job_*`` port and ``execution_environment``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput

from .artifacts import ARTIFACTS_KEY, collect
from .config import ExecutorConfig
from .environment import EnvironmentRecord
from .errors import ExecutorError, SandboxUnavailableError
from .remote import LocalSandboxJobs, RemoteExecutionPort
from .results import ENVIRONMENT_REVISION_KEY, SANDBOX_KEY
from .runner import Executor
from .session import SessionPool

_CODE = {"type": "string", "description": "Python source code."}
_TIMEOUT = {"type": "integer", "minimum": 1, "description": "Wall-clock seconds (capped by the configured limit)."}
_STARTUP_ALLOWANCE_S = 60
_JOB_ID = {
    "type": "object",
    "properties": {"job_id": {"type": "string"}},
    "required": ["job_id"],
    "additionalProperties": False,
}


def _refusal(error: ExecutorError) -> ToolOutput:
    if isinstance(error, SandboxUnavailableError):
        return ToolOutput(
            str(error), {SANDBOX_KEY: {"mode": "unavailable", "reason": error.reason}}, True, "sandbox_unavailable"
        )
    return ToolOutput(str(error), {}, True, "execution_error")


def _guarded(
    handler: Callable[[ToolInvocation], Awaitable[ToolOutput]],
) -> Callable[[ToolInvocation], Awaitable[ToolOutput]]:
    """Executor errors become error results the model can read (they name the session, job or setting)."""

    async def run(invocation: ToolInvocation) -> ToolOutput:
        try:
            return await handler(invocation)
        except ExecutorError as error:
            return _refusal(error)

    return run


def _label(invocation: ToolInvocation) -> str:
    return f"{invocation.context.run_id}-{invocation.call.id}"


class ExecutorToolkit:
    """One executor with its sessions and job backend, exposed as tool definitions."""

    def __init__(self, executor: Executor, *, jobs: RemoteExecutionPort | None = None) -> None:
        self.executor = executor
        self.sessions = SessionPool(executor)
        self.jobs: RemoteExecutionPort = jobs or LocalSandboxJobs(executor)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ExecutorToolkit:
        return cls(Executor(ExecutorConfig.from_settings(settings)))

    def _timeout(self, arguments: Mapping[str, Any]) -> int:
        limit = self.executor.config.limits.wall_seconds
        return min(int(arguments.get("timeout_s") or limit), limit)

    async def run_code(self, invocation: ToolInvocation) -> ToolOutput:
        result = await self.executor.run_script(
            str(invocation.arguments["code"]),
            produced_by=invocation.call.id,
            label=_label(invocation),
            wall_seconds=self._timeout(invocation.arguments),
        )
        return result.to_tool_output()

    async def python_session(self, invocation: ToolInvocation) -> ToolOutput:
        arguments = invocation.arguments
        name = str(arguments.get("session") or "default")
        action = arguments.get("action", "execute")
        if action == "execute":
            if not isinstance(arguments.get("code"), str):
                return ToolOutput(
                    "python_session: 'code' is required for action 'execute'", {}, True, "invalid_arguments"
                )
            session = self.sessions.get(name)
            result = await session.execute(
                arguments["code"], produced_by=invocation.call.id, timeout_s=self._timeout(arguments)
            )
            return result.to_tool_output()
        record = await self.executor.environment()
        if action == "interrupt":
            self.sessions.existing(name).interrupt()
            text = f"interrupt sent to session {name!r}; its state is kept"
        elif action == "restart":
            await self.sessions.get(name).restart()
            text = f"session {name!r} restarted with a fresh kernel; earlier state is cleared"
        else:
            await self.sessions.close(name)
            text = f"session {name!r} shut down"
        return ToolOutput(text, {ENVIRONMENT_REVISION_KEY: record.revision, "session": name})

    async def submit_job(self, invocation: ToolInvocation) -> ToolOutput:
        code, label = str(invocation.arguments["code"]), str(invocation.arguments.get("label") or invocation.call.id)
        status = await self.jobs.submit(code, label=label)
        record = await self.executor.environment()
        return ToolOutput(
            f"job {status.job_id} submitted ({status.state.value})",
            {"job_id": status.job_id, "state": status.state.value, ENVIRONMENT_REVISION_KEY: record.revision},
        )

    async def job_status(self, invocation: ToolInvocation) -> ToolOutput:
        status = await self.jobs.status(str(invocation.arguments["job_id"]))
        text = f"job {status.job_id}: {status.state.value}" + (f" ({status.detail})" if status.detail else "")
        return ToolOutput(text, {"job_id": status.job_id, "state": status.state.value})

    async def cancel_job(self, invocation: ToolInvocation) -> ToolOutput:
        status = await self.jobs.cancel(str(invocation.arguments["job_id"]))
        return ToolOutput(
            f"job {status.job_id}: {status.state.value}", {"job_id": status.job_id, "state": status.state.value}
        )

    async def job_results(self, invocation: ToolInvocation) -> ToolOutput:
        result = await self.jobs.fetch_results(str(invocation.arguments["job_id"]))
        return result.to_tool_output()

    async def environment(self, invocation: ToolInvocation) -> ToolOutput:
        record = await self.executor.environment()
        data = json.dumps({"revision": record.revision, **record.to_json()}, indent=1)
        outputs = self.executor.new_output_dir(_label(invocation))
        (outputs / "environment.json").write_text(data + "\n")
        (outputs / "requirements.txt").write_text(record.requirements())
        artifacts = collect(outputs, environment_revision=record.revision, produced_by=invocation.call.id)
        text = f"{record.summary()}\n{data}\n--- requirements.txt ---\n{record.requirements()}"
        return ToolOutput(
            text,
            {ENVIRONMENT_REVISION_KEY: record.revision, ARTIFACTS_KEY: [a.to_metadata() for a in artifacts]},
        )

    def definitions(self) -> list[ToolDefinition]:
        """The tool definitions, bound to this toolkit.

        Their dispatcher timeouts leave room beyond the wall-clock limit (the sandbox's own
        limit fires first, with a precise status) for the environment probe and kernel start.
        """
        wall = self.executor.config.limits.wall_seconds
        return [
            ToolDefinition(
                name="run_code",
                description=(
                    "Run a Python script to completion in the sandbox. Workspace mounts are at /workspace/<name>; "
                    "files written to $SCIENCEDISCOVERY_OUTPUT_DIR (and open matplotlib figures) become artifacts."
                ),
                parameters={
                    "type": "object",
                    "properties": {"code": _CODE, "timeout_s": _TIMEOUT},
                    "required": ["code"],
                    "additionalProperties": False,
                },
                handler=_guarded(self.run_code),
                action=ToolAction.CODE,
                timeout_s=wall + _STARTUP_ALLOWANCE_S,
                specifier=lambda arguments: "python",
            ),
            ToolDefinition(
                name="python_session",
                description=(
                    "A stateful Python (Jupyter) session in the sandbox: 'execute' a cell (variables persist "
                    "between calls), 'interrupt' a running cell, 'restart' or 'shutdown' the session. "
                    "Figures, HTML and tables displayed by a cell become artifacts."
                ),
                parameters={
                    "type": "object",
                    "properties": {
                        "action": {"enum": ["execute", "interrupt", "restart", "shutdown"], "default": "execute"},
                        "code": _CODE,
                        "session": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,32}$", "default": "default"},
                        "timeout_s": _TIMEOUT,
                    },
                    "additionalProperties": False,
                },
                handler=_guarded(self.python_session),
                action=ToolAction.CODE,
                timeout_s=wall + 2 * _STARTUP_ALLOWANCE_S,
                specifier=lambda arguments: str(arguments.get("session") or "default"),
            ),
            ToolDefinition(
                name="remote_job_submit",
                description="Submit a long-running Python script as a job; returns a job id to poll.",
                parameters={
                    "type": "object",
                    "properties": {"code": _CODE, "label": {"type": "string"}},
                    "required": ["code"],
                    "additionalProperties": False,
                },
                handler=_guarded(self.submit_job),
                action=ToolAction.REMOTE_JOB,
                timeout_s=_STARTUP_ALLOWANCE_S,
                specifier=lambda arguments: "local",
            ),
            ToolDefinition(
                name="remote_job_status",
                description="The state of a submitted job (running, succeeded, failed, cancelled).",
                parameters=_JOB_ID,
                handler=_guarded(self.job_status),
                action=ToolAction.REMOTE_JOB,
                read_only=True,
            ),
            ToolDefinition(
                name="remote_job_cancel",
                description="Cancel a running job; its sandbox is killed.",
                parameters=_JOB_ID,
                handler=_guarded(self.cancel_job),
                action=ToolAction.REMOTE_JOB,
            ),
            ToolDefinition(
                name="remote_job_results",
                description="The output and artifacts of a finished job.",
                parameters=_JOB_ID,
                handler=_guarded(self.job_results),
                action=ToolAction.REMOTE_JOB,
                read_only=True,
            ),
            ToolDefinition(
                name="execution_environment",
                description="The environment record (interpreter, packages, sandbox) and a requirements file.",
                parameters={"type": "object", "properties": {}, "additionalProperties": False},
                handler=_guarded(self.environment),
                action=ToolAction.READ,
                read_only=True,
            ),
        ]

    async def aclose(self) -> None:
        """Shut down every session and cancel running jobs."""
        await self.sessions.close_all()
        if isinstance(self.jobs, LocalSandboxJobs):
            await self.jobs.close()


async def environment_for_settings(settings: Mapping[str, Any]) -> EnvironmentRecord:
    """The environment record the executor tools will report under ``settings``.

    For the composition root: put ``record.revision`` into the permission epoch
    (governance's ``environment_revision`` setting) and show ``record.summary()`` in the
    governance section. Raises :class:`SandboxUnavailableError` when execution will be refused.
    """
    return await Executor(ExecutorConfig.from_settings(settings)).environment()
