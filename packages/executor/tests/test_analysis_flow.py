"""The scripted flow of the issue: analyse a CSV in the workspace, get a figure artifact naming the environment."""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.executor import plugin as executor_plugin
from sciencediscovery.runtime_core import (
    CollectingSink,
    ExternalWaits,
    Message,
    ToolCall,
    ToolResultStatus,
    TurnContext,
    hookimpl,
    make_plugin_manager,
)
from sciencediscovery.tools import plugin as tools_plugin
from sciencediscovery.tools.compose import build_tools
from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolInvocation, ToolOutput

ANALYSIS = """
import csv, os, statistics
import matplotlib.pyplot as plt

with open('/workspace/data/measurements.csv') as file:
    rows = list(csv.DictReader(file))
dose = [float(r['dose']) for r in rows]
response = [float(r['response']) for r in rows]
slope = statistics.linear_regression(dose, response).slope
print(f'n={len(rows)} mean_response={statistics.fmean(response):.2f} slope={slope:.3f}')

out = os.environ['SCIENCEDISCOVERY_OUTPUT_DIR']
with open(os.path.join(out, 'summary.csv'), 'w') as file:
    file.write(f'n,slope\\n{len(rows)},{slope:.3f}\\n')
fig, ax = plt.subplots()
ax.scatter(dose, response)
ax.set_xlabel('dose'); ax.set_ylabel('response')
fig.savefig(os.path.join(out, 'dose_response.png'))
plt.figure(); plt.plot(dose)  # open figures (1 and 2) are saved automatically
"""


def registered_tools(settings: dict[str, Any]) -> dict[str, ToolDefinition]:
    manager = make_plugin_manager(load_entry_points=False, plugins=[tools_plugin, executor_plugin])
    tools: dict[str, ToolDefinition] = {}
    manager.hook.register_tools(register=lambda tool: tools.setdefault(tool.name, tool), settings=settings)
    return tools


def test_register_tools_hook_declares_the_execution_tools(workspace: Any) -> None:
    tools = registered_tools(workspace.settings())
    assert {name: tool.action for name, tool in tools.items()} == {
        "run_code": ToolAction.CODE,
        "python_session": ToolAction.CODE,
        "remote_job_submit": ToolAction.REMOTE_JOB,
        "remote_job_status": ToolAction.REMOTE_JOB,
        "remote_job_cancel": ToolAction.REMOTE_JOB,
        "remote_job_results": ToolAction.REMOTE_JOB,
        "execution_environment": ToolAction.READ,
    }


class RecordingObserver:
    """Stands in for the artifact manager and provenance observers: sees every canonical result."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ToolAction, Message]] = []

    async def after(self, invocation: ToolInvocation, tool: ToolDefinition, result: Message) -> None:
        self.seen.append((tool.name, tool.action, result))


class ObserverPlugin:
    def __init__(self, observer: RecordingObserver) -> None:
        self.observer = observer

    @hookimpl
    def register_tool_observers(self, register: Callable[[Any], None], settings: Mapping[str, Any]) -> None:
        register(self.observer)


def test_csv_analysis_produces_a_figure_artifact_with_its_environment_revision(workspace: Any) -> None:
    with (workspace.data / "measurements.csv").open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["dose", "response"])
        writer.writerows([(d, 2.5 * d + 1) for d in range(1, 21)])
    settings = workspace.settings()
    settings["executor"]["limits"].update(wall_seconds=60, cpu_seconds=30, memory_mb=2048)
    observer = RecordingObserver()
    manager = make_plugin_manager(
        load_entry_points=False, plugins=[tools_plugin, executor_plugin, ObserverPlugin(observer)]
    )
    run_tools = build_tools(manager, settings)
    sink = CollectingSink()
    context = TurnContext("run-csv", "ctx", 1, sink, ExternalWaits("run-csv", "ctx", sink.emit))

    async def scenario() -> tuple[Message, Message]:
        analysis = await run_tools.dispatcher.dispatch(
            ToolCall("call-analysis", "run_code", {"code": ANALYSIS}), context
        )
        environment = await run_tools.dispatcher.dispatch(ToolCall("call-env", "execution_environment", {}), context)
        return analysis, environment

    result, environment = asyncio.run(scenario())

    assert result.status is ToolResultStatus.OK, result.content
    assert "n=20 mean_response=27.25 slope=2.500" in result.content
    revision = result.metadata["environment_revision"]
    assert revision.startswith("env-")
    assert result.metadata["sandbox"] == {"mode": "bubblewrap", "network_allowed": False}
    artifacts = {a["name"]: a for a in result.metadata["artifacts"]}
    assert sorted(artifacts) == ["dose_response.png", "figure-1.png", "figure-2.png", "summary.csv"]
    figure = artifacts["dose_response.png"]
    assert figure["media_type"] == "image/png"
    assert figure["environment_revision"] == revision
    assert figure["produced_by"] == "call-analysis"
    assert Path(figure["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert artifacts["summary.csv"]["media_type"] == "text/csv"
    assert Path(artifacts["summary.csv"]["path"]).read_text() == "n,slope\n20,2.500\n"

    observed = {name: (action, message) for name, action, message in observer.seen}
    action, observed_result = observed["run_code"]
    assert action is ToolAction.CODE
    assert observed_result.metadata["environment_revision"] == revision
    assert observed_result.metadata["artifacts"] == result.metadata["artifacts"]
    assert environment.metadata["environment_revision"] == revision
    assert "matplotlib==" in environment.content
    exported = {a["name"]: Path(a["path"]) for a in environment.metadata["artifacts"]}
    assert sorted(exported) == ["environment.json", "requirements.txt"]
    assert exported["requirements.txt"].read_text().startswith(f"# environment revision {revision}\n")


def test_code_runs_with_the_sandbox_interpreter_in_the_workspace(
    workspace: Any, make_invocation: Any, tool_output: Any
) -> None:
    tools = registered_tools(workspace.settings())
    code = "import os, sys\nprint(os.getcwd(), sys.executable, os.getuid())"
    output = asyncio.run(tool_output(tools["run_code"].handler, make_invocation("run_code", {"code": code})))
    assert isinstance(output, ToolOutput)
    cwd, executable, uid = output.content.split("--- stdout ---\n")[1].split()
    assert cwd == "/workspace/data" and uid == "65534"
    assert Path(executable).name.startswith("python")


def test_a_failing_script_is_an_error_result_with_its_traceback(
    workspace: Any, make_invocation: Any, tool_output: Any
) -> None:
    tools = registered_tools(workspace.settings())
    code = "values = []\nprint('before')\nvalues[3]"
    output = asyncio.run(tool_output(tools["run_code"].handler, make_invocation("run_code", {"code": code})))
    assert isinstance(output, ToolOutput)
    assert output.is_error and output.error_kind == "execution_error"
    assert output.metadata["exit_code"] == 1
    assert "before" in output.content
    assert 'File "<run_code>", line 3' in output.content and "IndexError" in output.content
    assert "_boot" not in output.content
