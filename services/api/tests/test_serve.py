"""Starting the service marks runs left unfinished by a crash as interrupted; they resume through the API."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sciencediscovery.api.bootstrap.platform import Platform
from sciencediscovery.api.serve import build_server
from sciencediscovery.api.settings import ServiceSettings
from sciencediscovery.runtime_core import Message


def test_unfinished_runs_are_marked_interrupted_and_resume(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"content": "resumed answer"}]}))
    settings = ServiceSettings.load(data_dir=tmp_path / "data", environ={"SCIENCEDISCOVERY_DISABLE_PLUGINS": "hello"})
    platform = Platform(settings)
    session = platform.runs.create_session({"objective": "Finish the review"}, {"model": f"scripted:{script}"})
    platform.store.append_step(session.context_id, [Message.user("Finish the review")])
    platform.store.start_run("run-crashed", session.context_id)  # the process died with this run open

    build_server(platform, host="127.0.0.1", port=0, token=None)
    crashed = platform.store.get_run("run-crashed")
    assert crashed.status == "interrupted"
    assert "resume" in crashed.reason

    summary = asyncio.run(platform.runs.run(session.context_id))  # what POST /sessions/{id}/runs does
    assert summary.status == "completed" and summary.final_answer == "resumed answer"
    assert platform.store.load_history(session.context_id)[0] == Message.user("Finish the review")


def test_a_session_without_a_model_is_a_clear_error_not_a_crash(tmp_path: Path) -> None:
    import pytest

    from sciencediscovery.runtime_core import ConfigurationError

    platform = Platform(
        ServiceSettings.load(data_dir=tmp_path / "data", environ={"SCIENCEDISCOVERY_DISABLE_PLUGINS": "hello"})
    )
    session = platform.runs.create_session({"objective": "x"}, {})
    with pytest.raises(ConfigurationError, match="names no model and the service has no default model"):
        asyncio.run(platform.runs.run(session.context_id, Message.user("x")))
    assert platform.store.runs_of(session.context_id) == []


def test_one_platform_per_data_directory(tmp_path: Path) -> None:
    import pytest

    from sciencediscovery.api.errors import StoreError

    settings = ServiceSettings.load(data_dir=tmp_path / "data", environ={"SCIENCEDISCOVERY_DISABLE_PLUGINS": "hello"})
    first = Platform(settings)
    with pytest.raises(StoreError, match=r"is in use by another process \(pid \d+\)"):
        Platform(settings)
    first.close()
    Platform(settings).close()  # released with close()


def test_searches_leave_out_what_a_deny_rule_protects(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "secret").mkdir(parents=True)
    (workspace / "secret" / "key.txt").write_text("TOP-SECRET-TOKEN")
    (workspace / "notes.txt").write_text("TOP notes")
    script = tmp_path / "script.json"
    search = {"path": "workspace", "pattern": "TOP"}
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {"tool_calls": [{"id": "s1", "name": "search_files", "arguments": search}]},
                    {"content": "done"},
                ]
            }
        )
    )
    settings = ServiceSettings.load(
        data_dir=tmp_path / "data",
        model=f"scripted:{script}",
        workspace=workspace,
        environ={
            "SCIENCEDISCOVERY_DISABLE_PLUGINS": "hello",
            "SCIENCE_AGENT_PERMISSION_ALLOW": "search_files(*)",
            "SCIENCE_AGENT_PERMISSION_DENY": "read_file(workspace/secret/**)",
        },
    )
    platform = Platform(settings)
    summary = asyncio.run(platform.run_new({"objective": "Search"}))
    [result] = [m for m in platform.store.load_history(summary.context_id) if m.tool_call_id == "s1"]
    assert "TOP notes" in result.content
    assert "TOP-SECRET-TOKEN" not in result.content
    platform.close()
