"""The plugin's hooks, a third-party specialist installed through an entry point, and tool selection by name."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from sciencediscovery.context import ContextScope, ContributionRequest
from sciencediscovery.orchestration import SpecialistDefinition, prepare_settings
from sciencediscovery.runtime_core import (
    RunStatus,
    ToolCall,
    ToolResultStatus,
    hookimpl,
    list_plugins,
    make_plugin_manager,
)
from sciencediscovery.runtime_core.events import RunStarted
from sciencediscovery.specialist import (
    ChildEventRelay,
    RequiredSections,
    Specialist,
    builtin_specialists,
    render_catalogue,
)
from sciencediscovery.specialist import plugin as specialist_plugin
from sciencediscovery.tools.definitions import ToolAction, ToolDefinition

from .conftest import reply

THIRD_PARTY = """
from sciencediscovery.runtime_core import hookimpl
from sciencediscovery.specialist import RequiredSections, Specialist


@hookimpl
def register_specialists(register, settings):
    register(
        Specialist.create(
            name="sequence-checker",
            description="Checks a DNA construct against its design.",
            identity="You are the sequence checker.",
            tools=["read_file"],
            max_turns=3,
            contract=RequiredSections(["Verdict", "Mismatches"]),
        )
    )
"""


@pytest.fixture
def lab_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A real distribution on sys.path: a module and a dist-info folder whose entry point names it."""
    (tmp_path / "sd_test_lab.py").write_text(THIRD_PARTY)
    dist_info = tmp_path / "sd_test_lab-0.3.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: sd-test-lab\nVersion: 0.3.0\n")
    (dist_info / "entry_points.txt").write_text("[sciencediscovery]\nlab = sd_test_lab\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("sd_test_lab", None)


def test_a_third_party_specialist_from_an_entry_point_is_catalogued_and_runs(harness, lab_distribution) -> None:
    manager = make_plugin_manager(
        environ={"SCIENCEDISCOVERY_LOAD_PLUGINS": "tools,context,orchestration,specialist,lab"}
    )
    info = {plugin.name: plugin for plugin in list_plugins(manager)}
    assert (info["lab"].distribution, info["lab"].hooks) == ("sd-test-lab", ("register_specialists",))
    assert info["specialist"].distribution == "sciencediscovery-specialist"

    brief = "## Verdict\nThe construct matches.\n## Mismatches\nNone."
    script = [
        reply("", ToolCall("call-1", "task", {"objective": "Check pUC19-x", "specialist": "sequence-checker"})),
        reply("ok"),
    ]
    result, run, factory = harness.run_main(manager, script, {"sequence-checker": [reply("Looks fine."), reply(brief)]})

    catalogue = run.model.inputs[0].system_prompt
    line = "- sequence-checker: Checks a DNA construct against its design."
    assert f"{line} (up to 3 turns; brief: sections Verdict, Mismatches)" in catalogue
    assert result.status is RunStatus.COMPLETED
    assert (result.history[2].status, result.history[2].content) == (ToolResultStatus.OK, brief)
    assert factory.models["sequence-checker"].inputs[0].system_prompt.startswith("You are the sequence checker.")
    assert [e.conforming for e in run.sink.of_kind("subagent_brief_checked")] == [False, True]


def test_register_specialists_registers_the_four_built_ins() -> None:
    found: list[SpecialistDefinition] = []
    specialist_plugin.register_specialists(register=found.append, settings={})
    assert found == list(builtin_specialists())


def test_register_event_sinks_registers_the_child_relay() -> None:
    found: list = []
    specialist_plugin.register_event_sinks(register=found.append, settings={})
    [relay] = found
    assert isinstance(relay, ChildEventRelay)
    relay.emit(RunStarted(run_id="r", context_id="c", max_turns=1))  # outside a supervised child: ignored


def test_register_context_contributors_adds_the_catalogue_only_where_task_is_offered(harness) -> None:
    plain = SpecialistDefinition(
        name="plain",
        description="A plain definition",
        identity="You are plain.",
        tools=(),
        max_turns=2,
        output_contract="A paragraph " + "x" * 300,
    )
    settings = prepare_settings(harness.manager(), {})
    settings["specialists"] = {**settings["specialists"], "plain": plain}
    found: list = []
    specialist_plugin.register_context_contributors(register=found.append, settings=settings)
    [factory] = found
    contributor = factory.create(ContextScope.MAIN)
    task = ToolDefinition("task", "Delegate", {"type": "object"}, _noop).spec()

    def sections(tools):
        request = ContributionRequest("ctx", "run", 1, ContextScope.MAIN, (), tools=tools)
        return asyncio.run(contributor.contribute(request)).sections

    [section] = sections((task,))
    assert section.content == render_catalogue(settings["specialists"])
    assert "- plain: A plain definition (up to 2 turns; brief: A paragraph xxx" in section.content
    assert len(section.content.splitlines()[-1]) < 260  # a long text contract is clipped in the catalogue
    assert sections(()) == ()
    empty: list = []
    specialist_plugin.register_context_contributors(register=empty.append, settings={})
    assert empty[0].create(ContextScope.MAIN) is None


async def _noop(invocation):
    return "ok"


class Executor:
    """Registers tools under the executor's names, as sciencediscovery-executor does when installed."""

    @hookimpl
    def register_tools(self, register, settings):
        code = {"type": "object", "properties": {"code": {"type": "string"}}}
        register(ToolDefinition("run_code", "Run Python", code, _noop, action=ToolAction.CODE))
        register(ToolDefinition("python_session", "Jupyter session", code, _noop, action=ToolAction.CODE))


@pytest.mark.parametrize("installed", [True, False])
def test_the_data_analyst_gets_the_executor_tools_exactly_when_they_are_installed(harness, installed) -> None:
    plugins = [harness.LabTools(), *([Executor()] if installed else [])]
    script = [reply("", ToolCall("call-1", "task", {"objective": "Fit", "specialist": "data-analyst"})), reply("ok")]
    brief = "## Data\nd\n## Methods\nm\n## Results\nr\n## Limitations\nl"
    _, _, factory = harness.run_main(harness.manager(*plugins), script, {"data-analyst": [reply(brief)]})
    tools = [t.name for t in factory.models["data-analyst"].inputs[0].tools]
    expected = ["run_code", "python_session"] if installed else []
    assert sorted(tools) == sorted(["read_file", "list_files", *expected])


class Modelled:
    @hookimpl
    def register_specialists(self, register, settings):
        register(
            Specialist.create(
                name="modelled",
                description="Runs on its own model",
                identity="You are modelled.",
                tools=(),
                max_turns=2,
                contract=RequiredSections(["Answer"]),
                model="scripted:lab-model.json",
            )
        )


def test_a_specialist_model_spec_reaches_the_child_and_none_means_the_parents(harness) -> None:
    calls = [
        ToolCall("call-1", "task", {"objective": "a", "specialist": "modelled"}),
        ToolCall("call-2", "task", {"objective": "b", "specialist": "methods-comparer"}),
    ]
    comparison = "## Methods\na\n## Criteria\nb\n## Comparison\nc\n## Recommendation\nd\n## Limitations\ne"
    children = {"modelled": [reply("## Answer\n42")], "methods-comparer": [reply(comparison)]}
    _, _, factory = harness.run_main(harness.manager(Modelled()), [reply("", *calls), reply("ok")], children)
    assert {spec.specialist: spec.profile.model for spec in factory.specs} == {
        "modelled": "scripted:lab-model.json",
        "methods-comparer": None,  # the composition root uses the parent's model
    }
