"""The remote execution port with its local sandbox backend: submit, status, cancel, fetch results."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.executor import (
    ExecutorToolkit,
    JobNotFinishedError,
    JobNotFoundError,
    JobState,
    LocalSandboxJobs,
    RemoteExecutionPort,
)
from sciencediscovery.tools.definitions import ToolOutput


async def appears(path: Path) -> None:
    """Wait (bounded) for the sandboxed code to create ``path``."""
    for _ in range(1200):
        if await asyncio.to_thread(path.exists):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def test_local_backend_implements_the_port(sandboxed: Any) -> None:
    assert isinstance(LocalSandboxJobs(sandboxed), RemoteExecutionPort)


def test_submit_poll_and_fetch_a_job_through_the_tools(sandboxed: Any, make_invocation: Any) -> None:
    toolkit = ExecutorToolkit(sandboxed)
    tools = {d.name: d.handler for d in toolkit.definitions()}
    code = (
        "import os\n"
        "open(os.environ['SCIENCEDISCOVERY_OUTPUT_DIR'] + '/table.csv', 'w').write('a,b\\n1,2\\n')\n"
        "print('job done')"
    )

    async def scenario() -> tuple[ToolOutput, ToolOutput, ToolOutput]:
        submitted = await tools["remote_job_submit"](make_invocation("remote_job_submit", {"code": code}, "j1"))
        assert isinstance(submitted, ToolOutput)
        job_id = submitted.metadata["job_id"]
        status = await tools["remote_job_status"](make_invocation("remote_job_status", {"job_id": job_id}, "j2"))
        for _ in range(1200):
            if (await toolkit.jobs.status(job_id)).state is not JobState.RUNNING:
                break
            await asyncio.sleep(0.05)
        results = await tools["remote_job_results"](make_invocation("remote_job_results", {"job_id": job_id}, "j3"))
        return submitted, status, results  # type: ignore[return-value]

    submitted, status, results = asyncio.run(scenario())
    assert submitted.metadata["state"] == "running" and submitted.metadata["environment_revision"].startswith("env-")
    assert status.metadata["state"] in {"running", "succeeded"}
    assert not results.is_error and "job done" in results.content
    (artifact,) = results.metadata["artifacts"]
    assert artifact["name"] == "table.csv" and artifact["produced_by"] == submitted.metadata["job_id"]
    assert artifact["environment_revision"] == results.metadata["environment_revision"]


def test_cancel_kills_the_job_and_its_processes(sandboxed: Any, shared_workspace: Any) -> None:
    jobs = LocalSandboxJobs(sandboxed)
    flag = shared_workspace.data / "job-still-running.txt"
    code = "import time\nwhile True:\n    open('/workspace/data/job-still-running.txt', 'w').write('x')\n"
    code += "    time.sleep(0.05)"

    async def scenario() -> Any:
        status = await jobs.submit(code, label="endless")
        await appears(flag)
        with pytest.raises(JobNotFinishedError):
            await jobs.fetch_results(status.job_id)
        cancelled = await jobs.cancel(status.job_id)
        flag.unlink()
        await asyncio.sleep(0.5)
        return cancelled

    cancelled = asyncio.run(scenario())
    assert cancelled.state is JobState.CANCELLED and cancelled.label == "endless"
    assert not flag.exists(), "the cancelled job kept writing"


def test_unknown_job_ids_are_named(sandboxed: Any, make_invocation: Any, tool_output: Any) -> None:
    toolkit = ExecutorToolkit(sandboxed)
    handler = next(d.handler for d in toolkit.definitions() if d.name == "remote_job_status")
    output = asyncio.run(tool_output(handler, make_invocation("remote_job_status", {"job_id": "job-missing"})))
    assert isinstance(output, ToolOutput)
    assert output.is_error and "'job-missing'" in output.content
    with pytest.raises(JobNotFoundError):
        asyncio.run(LocalSandboxJobs(sandboxed).status("job-missing"))


def test_cancelling_a_run_code_call_kills_its_sandbox(sandboxed: Any, shared_workspace: Any) -> None:
    marker = f"sd-cancel-marker-{id(shared_workspace)}"
    code = "import subprocess, sys, time\n"
    code += f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', '{marker}'])\n"
    code += "open('/workspace/data/cancel-started.txt', 'w').write('x')\ntime.sleep(60)"

    async def scenario() -> None:
        task = asyncio.create_task(sandboxed.run_script(code, produced_by="cancel-me", wall_seconds=120))
        await appears(shared_workspace.data / "cancel-started.txt")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    survivors = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _has_marker(p, marker)]
    assert survivors == []


def _has_marker(proc: Path, marker: str) -> bool:
    try:
        return marker.encode() in (proc / "cmdline").read_bytes()
    except OSError:
        return False
