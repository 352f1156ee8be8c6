"""Trace files: names, privacy, atomic writes and containment."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from sciencediscovery.context import SCHEMA_VERSION, TraceWriter


def test_turn_and_recovery_files_sit_side_by_side(tmp_path: Path) -> None:
    writer = TraceWriter(tmp_path)
    first = writer.write("ctx-1", 1, 0, {"mode": "dynamic"})
    recovery = writer.write("ctx-1", 1, 1, {"mode": "dynamic", "recovery": {"attempt": 1}})
    assert first == tmp_path / "ctx-1" / "turn-0001.json"
    assert recovery == tmp_path / "ctx-1" / "turn-0001-recovery-1.json"
    assert json.loads(first.read_text()) == {"schemaVersion": SCHEMA_VERSION, "mode": "dynamic"}
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert stat.S_IMODE(first.parent.stat().st_mode) == 0o700
    writer.write("ctx-1", 1, 0, {"mode": "legacy"})
    assert json.loads(first.read_text())["mode"] == "legacy"
    assert sorted(p.name for p in first.parent.iterdir()) == ["turn-0001-recovery-1.json", "turn-0001.json"]


def test_a_hostile_context_id_cannot_leave_the_trace_folder(tmp_path: Path) -> None:
    root = tmp_path / "traces"
    path = TraceWriter(root).write("../../etc/passwd", 12, 0, {})
    assert path.resolve().is_relative_to(root.resolve())
    assert path.name == "turn-0012.json"
