"""Without a sandbox the executor refuses to run code, unless unsandboxed execution was opted into."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sciencediscovery.executor import Executor, ExecutorConfig, ExecutorToolkit, SandboxUnavailableError
from sciencediscovery.tools.definitions import ToolOutput

MARKER_CODE = (
    "open('/workspace/data/ran.txt' if __import__('os').path.isdir('/workspace') else 'ran.txt', 'w').write('x')"
)


def handler(toolkit: ExecutorToolkit, name: str) -> Any:
    return next(d.handler for d in toolkit.definitions() if d.name == name)


def test_missing_bubblewrap_refuses_every_execution_tool(
    workspace: Any, make_invocation: Any, tool_output: Any
) -> None:
    toolkit = ExecutorToolkit.from_settings(workspace.settings(bwrap="/nonexistent/bwrap"))
    for name, arguments in [
        ("run_code", {"code": MARKER_CODE}),
        ("python_session", {"code": MARKER_CODE}),
        ("remote_job_submit", {"code": MARKER_CODE}),
        ("execution_environment", {}),
    ]:
        output = asyncio.run(tool_output(handler(toolkit, name), make_invocation(name, arguments)))
        assert isinstance(output, ToolOutput)
        assert output.is_error and output.error_kind == "sandbox_unavailable", name
        assert "bubblewrap is not installed" in output.content
        assert output.metadata["sandbox"]["mode"] == "unavailable"
    assert not (workspace.data / "ran.txt").exists()
    assert not list(workspace.data.iterdir())


def test_refusal_is_a_typed_error_for_library_callers(workspace: Any) -> None:
    executor = Executor(ExecutorConfig.from_settings(workspace.settings(bwrap="/nonexistent/bwrap")))
    with pytest.raises(SandboxUnavailableError) as caught:
        asyncio.run(executor.run_script("print(1)", produced_by="c"))
    assert "allow_unsandboxed" in str(caught.value)


def test_opted_in_unsandboxed_execution_is_marked_everywhere(
    workspace: Any, make_invocation: Any, sandboxed: Any, tool_output: Any
) -> None:
    toolkit = ExecutorToolkit.from_settings(workspace.settings(bwrap="/nonexistent/bwrap", allow_unsandboxed=True))
    code = "import os\nprint(os.environ.get('SCIENCEDISCOVERY_OUTPUT_DIR'))\nopen('result.txt', 'w').write('done')"
    output = asyncio.run(tool_output(handler(toolkit, "run_code"), make_invocation("run_code", {"code": code})))
    assert isinstance(output, ToolOutput)
    assert not output.is_error, output.content
    assert output.metadata["sandbox"] == {"mode": "unsandboxed", "network_allowed": False}
    assert "UNSANDBOXED" in output.content
    assert (workspace.data / "result.txt").read_text() == "done"
    record = asyncio.run(toolkit.executor.environment())
    assert record.sandbox["mode"] == "unsandboxed"
    assert record.summary().startswith("code execution: UNSANDBOXED")
    assert output.metadata["environment_revision"] == record.revision
    assert record.revision != asyncio.run(sandboxed.environment()).revision


def test_opted_in_unsandboxed_session_is_marked(workspace: Any, make_invocation: Any, tool_output: Any) -> None:
    settings_value = workspace.settings(bwrap="/nonexistent/bwrap", allow_unsandboxed=True)
    settings_value["executor"]["limits"].update(processes=64, memory_mb=2048, wall_seconds=60)
    toolkit = ExecutorToolkit.from_settings(settings_value)
    session = handler(toolkit, "python_session")
    with asyncio.Runner() as loop:
        first = loop.run(tool_output(session, make_invocation("python_session", {"code": "value = 6 * 7"}, "u1")))
        second = loop.run(tool_output(session, make_invocation("python_session", {"code": "print(value)"}, "u2")))
        loop.run(toolkit.aclose())
    assert not first.is_error, first.content
    assert "42" in second.content and "UNSANDBOXED" in second.content
    assert second.metadata["sandbox"]["mode"] == "unsandboxed"
