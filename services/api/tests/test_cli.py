"""The `sciencediscovery` command line, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SKILL = """---
name: literature-review
description: Systematic literature review
version: "1.0.0"
---
Search, screen, synthesize.
"""


def cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sciencediscovery.api", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    (tmp_path / "skills" / "literature-review").mkdir(parents=True)
    (tmp_path / "skills" / "literature-review" / "SKILL.md").write_text(SKILL)
    script = {
        "turns": [
            {"tool_calls": [{"id": "c1", "name": "read_skill", "arguments": {"name": "literature-review"}}]},
            {"content": "TP53 summary with citations."},
        ]
    }
    (tmp_path / "script.json").write_text(json.dumps(script))
    return tmp_path


def run_args(folder: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--objective",
        "Review TP53 resistance",
        "--constraint",
        "Cite sources",
        "--model",
        f"scripted:{folder / 'script.json'}",
        "--skills",
        str(folder / "skills"),
        "--data-dir",
        str(folder / "data"),
        *extra,
    ]


def test_run_prints_one_json_object_and_writes_traces(scenario: Path) -> None:
    done = cli(*run_args(scenario, "--trace-dir", str(scenario / "traces"), "--json"))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "completed"
    assert result["final_answer"] == "TP53 summary with citations."
    assert result["turns"] == 2
    assert result["trace_dir"] == str(scenario / "traces" / result["context_id"])
    traces = sorted(Path(result["trace_dir"]).glob("turn-*.json"))
    assert [t.name for t in traces] == ["turn-0001.json", "turn-0002.json"]
    assert all(t.stat().st_mode & 0o777 == 0o600 for t in traces)
    shown = cli("trace", "show", str(traces[1]))
    assert shown.returncode == 0, shown.stderr
    assert "run_contract" in shown.stdout and "compaction" in shown.stdout


def test_plain_output_names_status_context_and_answer(scenario: Path) -> None:
    done = cli(*run_args(scenario, "--mode", "legacy"))
    assert done.returncode == 0, done.stderr
    assert "status:     completed" in done.stdout
    assert "TP53 summary with citations." in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--objective", "x", "--model", "nope:gpt"], "no provider named 'nope'"),
        (["run", "--objective", "x", "--model", "scripted:/missing/script.json"], "/missing/script.json"),
        (["run", "--objective", "x", "--model", "scripted:s.json", "--skills", "/missing/skills"], "--skills"),
        (["run", "--objective", "x", "--model", "scripted:s.json", "--mode", "fast"], "Invalid value for '--mode'"),
        (["resume", "ctx-unknown"], "no session with context id 'ctx-unknown'"),
        (["trace", "show", "/missing/trace.json"], "no trace file at /missing/trace.json"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path: Path, args: list[str], message: str) -> None:
    done = cli(*args, "--data-dir", str(tmp_path)) if args[0] == "resume" else cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.startswith("error:")]) <= 1


def test_bad_environment_value_names_the_variable(scenario: Path) -> None:
    import os

    env = {**os.environ, "SCIENCE_AGENT_CONTEXT_MODE": "turbo"}
    done = cli(*run_args(scenario), env=env)
    assert done.returncode == 2
    assert "SCIENCE_AGENT_CONTEXT_MODE" in done.stderr and "Traceback" not in done.stderr


def test_plugins_and_tools_are_listed(tmp_path: Path) -> None:
    plugins = cli("plugins", "list", cwd=tmp_path)
    assert plugins.returncode == 0, plugins.stderr
    for name in ("tools", "context", "orchestration", "governance", "workspace", "model"):
        assert name in plugins.stdout
    tools = cli("tools", "list", "--workspace", str(tmp_path), cwd=tmp_path)
    assert tools.returncode == 0, tools.stderr
    for name in ("read_file", "write_file", "update_plan", "read_tool_output"):
        assert name in tools.stdout


def test_resume_rebuilds_the_sessions_workspace_and_returns_a_finished_answer(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("TP53 notes")
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {"tool_calls": [{"id": "p1", "name": "update_plan", "arguments": {"items": []}}]},
                    {"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "workspace/notes.md"}}]},
                    {"content": "read the notes"},
                ]
            }
        )
    )
    data = str(tmp_path / "data")
    first = cli(
        "run",
        "--objective",
        "Read the notes",
        "--model",
        f"scripted:{script}",
        "--workspace",
        str(workspace),
        "--data-dir",
        data,
        "--context-id",
        "ctx-ws",
        "--max-turns",
        "1",
        "--json",
    )
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["status"] == "turn_limit"
    resumed = cli("resume", "ctx-ws", "--data-dir", data, "--json")  # one more turn (the bound is per run)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "turn_limit"
    from sciencediscovery.api.store import SqliteSessionStore

    store = SqliteSessionStore(tmp_path / "data" / "sessions.sqlite")
    [read] = [m for m in store.load_history("ctx-ws") if m.tool_call_id == "r1"]
    store.close()
    assert "TP53 notes" in read.content  # the resumed run had the session's workspace mounted
    final = cli("resume", "ctx-ws", "--data-dir", data, "--json")
    assert json.loads(final.stdout)["final_answer"] == "read the notes"
    again = cli("resume", "ctx-ws", "--data-dir", data, "--json")  # already answered: the stored result
    assert json.loads(again.stdout)["run_id"] == json.loads(final.stdout)["run_id"]
