"""A run in a subprocess killed with SIGKILL at many points, then resumed, loses no committed step."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sciencediscovery.api.store import SqliteSessionStore
from sciencediscovery.runtime_core import check_pairing

STEPS = 8
CONTEXT = "ctx-crash"


def script(folder: Path) -> Path:
    """A scripted run of STEPS plan updates (two parallel calls each), then a final answer."""
    turns = []
    for step in range(STEPS):
        items = [{"step": f"step {i}", "status": "completed" if i < step else "pending"} for i in range(STEPS)]
        turns.append(
            {
                "tool_calls": [
                    {
                        "id": f"plan-{step}",
                        "name": "update_plan",
                        "arguments": {"explanation": f"at {step}", "items": items},
                    },
                    {"id": f"claims-{step}", "name": "list_claims", "arguments": {}},
                ]
            }
        )
    turns.append({"content": "all steps done"})
    path = folder / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return path


def start(folder: Path, data: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sciencediscovery.api",
            "run",
            "--objective",
            "Stress the store",
            "--model",
            f"scripted:{folder / 'script.json'}",
            "--data-dir",
            str(data),
            "--context-id",
            CONTEXT,
            "--max-turns",
            "40",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def committed_messages(data: Path) -> int:
    path = data / "sessions.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM messages WHERE context_id = ?", (CONTEXT,)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def history(data: Path) -> list[tuple[str, str, str | None]]:
    store = SqliteSessionStore(data / "sessions.sqlite")
    try:
        loaded = store.load_history(CONTEXT)
        check_pairing(loaded)  # never an unpaired call, even right after a kill
        return [(m.role.value, m.content, m.tool_call_id) for m in loaded]
    finally:
        store.close()


def resume(data: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "sciencediscovery.api", "resume", CONTEXT, "--data-dir", str(data), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> list[tuple[str, str, str | None]]:
    folder = tmp_path_factory.mktemp("reference")
    script(folder)
    process = start(folder, folder / "data")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert json.loads(out)["status"] == "completed"
    return history(folder / "data")


# kill once at least this many messages are committed (1 = just the objective), plus one kill right at start
KILL_POINTS = [0, 1, 3, 6, 10, 15, 21]


@pytest.mark.parametrize("kill_after", KILL_POINTS)
def test_kill_then_resume_loses_no_committed_step(tmp_path: Path, reference, kill_after: int) -> None:
    script(tmp_path)
    data = tmp_path / "data"
    process = start(tmp_path, data)
    deadline = time.monotonic() + 60
    while committed_messages(data) < kill_after and process.poll() is None:
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.005)
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)

    if not _session_exists(data):
        # killed before anything was committed: resuming names the missing session, nothing half-exists
        done = subprocess.run(
            [sys.executable, "-m", "sciencediscovery.api", "resume", CONTEXT, "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2 and f"no session with context id {CONTEXT!r}" in done.stderr
        return
    before = history(data)
    assert before == reference[: len(before)], "what was committed before the kill is a prefix of the full run"

    result = resume(data)
    assert result["status"] == "completed"
    assert result["final_answer"] == "all steps done"
    after = history(data)
    assert after == reference
    assert after[: len(before)] == before


def _session_exists(data: Path) -> bool:
    path = data / "sessions.sqlite"
    if not path.exists():
        return False
    with sqlite3.connect(path, timeout=5) as db:
        return db.execute("SELECT COUNT(*) FROM sessions WHERE context_id = ?", (CONTEXT,)).fetchone()[0] == 1
