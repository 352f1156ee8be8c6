"""Through the composition root: a scripted main run delegates to two specialists in one turn."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sciencediscovery.api.bootstrap.platform import Platform
from sciencediscovery.api.settings import ServiceSettings
from sciencediscovery.runtime_core import hookimpl, make_plugin_manager
from sciencediscovery.specialist import RequiredSections, Specialist

BRIEF = "## Findings\nTP53 mutants drive resistance.\n\n## Limitations\nCell lines only."


def write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


class LabSpecialists:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @hookimpl
    def register_specialists(self, register, settings):
        for name in ("scout", "checker"):
            script = write(self.folder / f"{name}.json", {"turns": [{"content": f"{BRIEF}\n\n({name})"}]})
            register(
                Specialist.create(
                    name=name,
                    description=f"the {name}",
                    identity=f"You are the {name} specialist.",
                    tools=[],
                    max_turns=3,
                    contract=RequiredSections(["Findings", "Limitations"]),
                    model=f"scripted:{script}",
                )
            )


def test_main_run_receives_two_validated_briefs(tmp_path: Path) -> None:
    main = write(
        tmp_path / "main.json",
        {
            "turns": [
                {
                    "tool_calls": [
                        {
                            "id": "t1",
                            "name": "task",
                            "arguments": {"objective": "Scout TP53 papers", "specialist": "scout"},
                        },
                        {
                            "id": "t2",
                            "name": "task",
                            "arguments": {"objective": "Check the evidence", "specialist": "checker"},
                        },
                    ]
                },
                {"content": "Both briefs received."},
            ]
        },
    )
    settings = ServiceSettings(
        data_dir=tmp_path / "data",
        model=f"scripted:{main}",
        environ={"SCIENCE_AGENT_PERMISSION_DEFAULT": "allow", "SCIENCEDISCOVERY_DISABLE_PLUGINS": "hello"},
    )
    platform = Platform(
        settings, plugin_manager=make_plugin_manager(environ=settings.environ, plugins=[LabSpecialists(tmp_path)])
    )
    summary = asyncio.run(platform.run_new({"objective": "Review TP53 resistance"}))
    assert summary.status == "completed", summary.reason
    history = platform.store.load_history(summary.context_id)
    results = {m.tool_call_id: m for m in history if m.tool_call_id in {"t1", "t2"}}
    assert set(results) == {"t1", "t2"}
    assert "(scout)" in results["t1"].content and "(checker)" in results["t2"].content
    assert all("## Findings" in m.content and m.status.value == "ok" for m in results.values())
    # each child ran as its own durable session under the parent's context id
    children = [s for s in platform.store.list_sessions() if s.config.get("parent") == summary.context_id]
    assert sorted(s.config["specialist"] for s in children) == ["checker", "scout"]
    assert all(s.config["scope"] == "subagent" for s in children)
