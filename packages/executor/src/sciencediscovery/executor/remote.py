"""The remote execution port (submit / status / cancel / fetch results) and its local sandbox backend.

A cluster backend implements :class:`RemoteExecutionPort`; the tools only speak the port.
"""

from __future__ import annotations

import asyncio
import enum
import secrets
from typing import Protocol, runtime_checkable

import attrs

from .errors import ExecutorError, JobNotFoundError
from .results import ExecutionResult
from .runner import Executor


class JobState(str, enum.Enum):
    """Where a job is in its life."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self is not JobState.RUNNING


@attrs.frozen
class JobStatus:
    """A job's state; ``detail`` says why it failed or was cancelled."""

    job_id: str
    state: JobState
    label: str
    detail: str = ""


class JobNotFinishedError(ExecutorError):
    """Results were requested for a job that is still running."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        super().__init__(f"job {job_id!r} is still running; ask for its status or cancel it")


@runtime_checkable
class RemoteExecutionPort(Protocol):
    """Long-running jobs behind an interface, so a cluster backend can replace the local one."""

    async def submit(self, code: str, *, label: str) -> JobStatus: ...

    async def status(self, job_id: str) -> JobStatus: ...

    async def cancel(self, job_id: str) -> JobStatus: ...

    async def fetch_results(self, job_id: str) -> ExecutionResult: ...


class LocalSandboxJobs:
    """Runs each job as a background script in the local sandbox, with the job wall-clock limit."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._tasks: dict[str, asyncio.Task[ExecutionResult]] = {}
        self._labels: dict[str, str] = {}

    async def submit(self, code: str, *, label: str) -> JobStatus:
        await self.executor.mode()  # refuse at submission when no sandbox may run
        job_id = f"job-{secrets.token_hex(6)}"
        limits = self.executor.config.limits
        self._labels[job_id] = label
        self._tasks[job_id] = asyncio.create_task(
            self.executor.run_script(
                code,
                produced_by=job_id,
                label=job_id,
                cpu_seconds=limits.job_wall_seconds,
                wall_seconds=limits.job_wall_seconds,
            )
        )
        return await self.status(job_id)

    def _task(self, job_id: str) -> asyncio.Task[ExecutionResult]:
        task = self._tasks.get(job_id)
        if task is None:
            raise JobNotFoundError(job_id)
        return task

    async def status(self, job_id: str) -> JobStatus:
        task = self._task(job_id)
        label = self._labels[job_id]
        if not task.done():
            return JobStatus(job_id, JobState.RUNNING, label)
        if task.cancelled():
            return JobStatus(job_id, JobState.CANCELLED, label, "cancelled on request")
        error = task.exception()
        if error is not None:
            return JobStatus(job_id, JobState.FAILED, label, f"{type(error).__name__}: {error}")
        result = task.result()
        state = JobState.SUCCEEDED if result.ok else JobState.FAILED
        return JobStatus(job_id, state, label, "" if result.ok else result.status)

    async def cancel(self, job_id: str) -> JobStatus:
        task = self._task(job_id)
        if not task.done():
            task.cancel()
            await asyncio.wait([task])
        return await self.status(job_id)

    async def fetch_results(self, job_id: str) -> ExecutionResult:
        task = self._task(job_id)
        if not task.done():
            raise JobNotFinishedError(job_id)
        if task.cancelled():
            raise ExecutorError(f"job {job_id!r} was cancelled and has no results")
        return task.result()

    async def close(self) -> None:
        """Cancel every running job (their sandboxes are killed)."""
        for job_id, task in self._tasks.items():
            if not task.done():
                await self.cancel(job_id)
