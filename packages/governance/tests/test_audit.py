"""The audit log: a real SQLite file, mode 0600, append-only, replayed for project grants."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from sciencediscovery.governance import AuditLog, AuditLogError, AuditRecord, Grant, GrantScope, Rule


def _record(outcome: str) -> AuditRecord:
    return AuditRecord(
        epoch_id="e", run_id="r", context_id="c", tool="read_file", specifier="data/x", outcome=outcome, source="s"
    )


def test_file_is_private_and_records_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite3"
    log = AuditLog(path)
    log.record(_record("allow"))
    log.record(_record("deny"))
    log.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    reopened = AuditLog(path)
    assert [r.outcome for r in reopened.records()] == ["allow", "deny"]
    reopened.close()


def test_rows_cannot_be_changed_or_deleted(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite3"
    log = AuditLog(path)
    log.record(_record("deny"))
    log.grant_event("granted", Grant("g-1", Rule.parse("allow", "list_files(out)"), GrantScope.SESSION, "e", "c", "s"))
    log.retire_epoch("e", "e2")
    db = sqlite3.connect(path)
    for statement in (
        "DELETE FROM retired_epochs",
        "UPDATE decisions SET outcome = 'allow'",
        "DELETE FROM decisions",
        "UPDATE grant_events SET event = 'revoked'",
        "DELETE FROM grant_events",
    ):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute(statement)
    assert db.execute("SELECT outcome FROM decisions").fetchall() == [("deny",)]


def test_an_unusable_path_is_a_typed_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(AuditLogError) as raised:
        AuditLog(tmp_path / "missing-dir" / "audit.sqlite3")
    assert raised.value.path.endswith("missing-dir/audit.sqlite3")


def test_the_audit_log_can_be_used_from_another_thread(tmp_path) -> None:
    """A server may decide on a worker thread while the log was opened on the main one."""
    import threading

    from sciencediscovery.governance.audit import AuditLog

    log = AuditLog(tmp_path / "audit.sqlite3")
    failures: list[BaseException] = []

    def use() -> None:
        try:
            log.is_retired("epoch-0-x")
            log.retire_epoch("epoch-0-x", "epoch-1-y")
        except BaseException as error:
            failures.append(error)

    worker = threading.Thread(target=use)
    worker.start()
    worker.join()
    assert failures == []
    assert log.is_retired("epoch-0-x")
