"""Shared fixtures: a PermissionService over a real SQLite audit file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from sciencediscovery.governance import AuditLog, NetworkPolicy, PermissionEpoch, PermissionService, RuleSet

RULES = RuleSet.from_lists(
    allow=["read_file(data/**)", "http_get(domain:*.nih.gov)"],
    ask=["run_code(*)"],
    deny=["read_file(data/secret/**)", "http_get(domain:evil.nih.gov)"],
)


def make_epoch(root: Path) -> PermissionEpoch:
    return PermissionEpoch(
        mounts=[
            {"name": "data", "path": str(root / "data"), "mode": "read_only"},
            {"name": "out", "path": str(root / "out"), "mode": "read_write"},
        ],
        network=NetworkPolicy(allow=["*.nih.gov"], default="deny"),
        environment_revision="env-rev-1",
        secret_refs=["NCBI_API_KEY"],
    )


@pytest.fixture
def audit_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.sqlite3"


@pytest.fixture
def make_service(tmp_path: Path, audit_path: Path) -> Callable[..., PermissionService]:
    opened: list[AuditLog] = []

    def build(rules: RuleSet = RULES, timeout_s: float = 300.0) -> PermissionService:
        audit = AuditLog(audit_path)
        opened.append(audit)
        return PermissionService(rules, make_epoch(tmp_path), audit, timeout_s=timeout_s)

    yield build
    for audit in opened:
        audit.close()


@pytest.fixture
def service(make_service: Callable[..., PermissionService]) -> PermissionService:
    return make_service()
