"""Stateful Python sessions: an ipykernel inside the sandbox, driven through the python_session tool."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sciencediscovery.executor import ExecutorToolkit
from sciencediscovery.tools.definitions import ToolOutput


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.Runner]:
    """Kernel clients and their processes belong to one event loop, as in a real run."""
    with asyncio.Runner() as runner:
        yield runner


@pytest.fixture(scope="module")
def toolkit(shared_workspace: Any, loop: asyncio.Runner) -> Iterator[ExecutorToolkit]:
    settings = shared_workspace.settings()
    settings["executor"]["limits"].update(processes=64, memory_mb=2048, wall_seconds=60)
    toolkit = ExecutorToolkit.from_settings(settings)
    yield toolkit
    loop.run(toolkit.aclose())


@pytest.fixture
def call(
    toolkit: ExecutorToolkit, loop: asyncio.Runner, make_invocation: Any, tool_output: Any
) -> Callable[..., ToolOutput]:
    """Call the registered python_session tool's handler, as the dispatcher does."""
    handler = next(d.handler for d in toolkit.definitions() if d.name == "python_session")

    def invoke(call_id: str, **arguments: Any) -> ToolOutput:
        output = loop.run(tool_output(handler, make_invocation("python_session", arguments, call_id=call_id)))
        assert isinstance(output, ToolOutput)
        return output

    return invoke


def test_variables_persist_between_calls(call: Any, toolkit: ExecutorToolkit) -> None:
    first = call("s1", code="total = sum(range(10))")
    second = call("s2", code="print(total * 2)")
    assert not first.is_error and not second.is_error
    assert "90" in second.content
    assert second.metadata["environment_revision"].startswith("env-")
    assert second.metadata["sandbox"] == {"mode": "bubblewrap", "network_allowed": False}


def test_sessions_are_isolated_from_each_other(call: Any, toolkit: ExecutorToolkit) -> None:
    call("i1", code="secret = 7")
    other = call("i2", code="print(secret)", session="beta")
    assert other.is_error and "NameError" in other.content
    shut = call("i3", action="shutdown", session="beta")
    assert not shut.is_error and toolkit.sessions.names() == ["default"]


def test_interrupt_stops_a_running_cell_and_keeps_state(
    call: Any, toolkit: ExecutorToolkit, loop: asyncio.Runner, make_invocation: Any, tool_output: Any
) -> None:
    call("r1", code="kept = 'still here'")
    handler = next(d.handler for d in toolkit.definitions() if d.name == "python_session")

    async def scenario() -> tuple[Any, Any]:
        code = "import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(0.01)"
        running = asyncio.create_task(
            tool_output(handler, make_invocation("python_session", {"code": code}, call_id="r2"))
        )
        await asyncio.sleep(1.0)
        answer = await handler(make_invocation("python_session", {"action": "interrupt"}, call_id="r3"))
        return await running, answer

    interrupted, answer = loop.run(scenario())
    assert not answer.is_error
    assert interrupted.metadata["execution_status"] == "interrupted"
    assert "KeyboardInterrupt" in interrupted.content
    after = call("r4", code="print(kept)")
    assert "still here" in after.content and not after.is_error


def test_cell_timeout_interrupts_and_keeps_state(call: Any, toolkit: ExecutorToolkit) -> None:
    call("t1", code="counter = 41")
    slow = call("t2", code="import time\ntime.sleep(30)", timeout_s=1)
    assert slow.is_error and slow.metadata["execution_status"] == "timeout" and slow.error_kind == "resource_limit"
    after = call("t3", code="counter + 1")
    assert "42" in after.content


def test_restart_clears_state_and_session_works_again(call: Any, toolkit: ExecutorToolkit) -> None:
    call("x1", code="before_restart = 1")
    restarted = call("x2", action="restart")
    assert not restarted.is_error
    gone = call("x3", code="before_restart")
    assert gone.is_error and "NameError" in gone.content
    fresh = call("x4", code="print('fresh kernel')")
    assert "fresh kernel" in fresh.content


def test_a_killed_kernel_is_reported_and_replaced(call: Any, toolkit: ExecutorToolkit) -> None:
    call("k1", code="doomed = True")
    died = call("k2", code="import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    assert died.is_error and died.metadata["execution_status"] == "kernel_died"
    again = call("k3", code="print('alive')")
    assert "alive" in again.content and "new kernel was started" in again.content


def test_rich_outputs_become_artifacts(call: Any, toolkit: ExecutorToolkit) -> None:
    code = (
        "import matplotlib.pyplot as plt\n"
        "from IPython.display import HTML, display\n"
        "plt.plot([1, 2, 3], [2, 4, 8]); plt.show()\n"
        "display(HTML('<table><tr><td>1</td></tr></table>'))\n"
    )
    result = call("a1", code=code)
    artifacts = result.metadata["artifacts"]
    assert sorted(a["media_type"] for a in artifacts) == ["image/png", "text/html"]
    for artifact in artifacts:
        assert artifact["environment_revision"] == result.metadata["environment_revision"]
        assert artifact["produced_by"] == "a1"
    png = next(a for a in artifacts if a["media_type"] == "image/png")
    with open(png["path"], "rb") as file:
        assert file.read(8) == b"\x89PNG\r\n\x1a\n"


def test_the_kernel_has_no_network(call: Any, loopback_server: Any) -> None:
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {loopback_server.port}), timeout=2)\n"
        "    print('ESCAPED')\n"
        "except OSError:\n"
        "    print('REFUSED')\n"
    )
    result = call("n1", code=code)
    assert "REFUSED" in result.content and loopback_server.requests == 0


def test_execute_without_code_is_a_readable_error(call: Any, toolkit: ExecutorToolkit) -> None:
    result = call("e1", action="execute")
    assert result.is_error and "'code' is required" in result.content


def test_interrupting_an_unknown_session_names_it(call: Any, toolkit: ExecutorToolkit) -> None:
    result = call("e2", action="interrupt", session="nowhere")
    assert result.is_error and "'nowhere'" in result.content


def test_a_cancelled_call_interrupts_its_cell_and_keeps_state(
    call: Any, toolkit: ExecutorToolkit, loop: asyncio.Runner, make_invocation: Any, tool_output: Any
) -> None:
    call("c1", code="survivor = 'kept'")
    handler = next(d.handler for d in toolkit.definitions() if d.name == "python_session")

    async def scenario() -> None:
        code = "import time\nwhile True:\n    time.sleep(0.01)"
        running = asyncio.create_task(tool_output(handler, make_invocation("python_session", {"code": code}, "c2")))
        await asyncio.sleep(1.0)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    loop.run(scenario())
    after = call("c3", code="print(survivor)", timeout_s=20)
    assert not after.is_error, after.content
    assert "kept" in after.content
