"""Building a PermissionService from the run's ``settings`` and the environment.

Settings keys read (all optional):

``permission_service``
    a ready :class:`~.service.PermissionService` (the composition root's, so its
    decision API is reachable); when present nothing else is read.
``permission_rules``
    ``{"default", "allow", "ask", "deny"}``; otherwise the environment (:mod:`.config`).
``permission_epoch``
    a :class:`~.epoch.PermissionEpoch`; otherwise one is built from
    ``workspace_mounts`` (a list of ``{"name", "path", "mode"}``), ``network_policy``
    (a :class:`~.network.NetworkPolicy` or its config mapping; default deny-all),
    ``environment_revision`` and ``secret_refs``.
``permission_audit_path``
    the audit SQLite file; otherwise ``SCIENCE_AGENT_PERMISSION_AUDIT_DB``, otherwise
    ``~/.sciencediscovery/permission-audit.sqlite3``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .audit import AuditLog
from .config import rules_from_data, rules_from_environment, timeout_from_environment
from .epoch import PermissionEpoch
from .errors import PermissionConfigError
from .network import NetworkPolicy
from .service import PermissionService

AUDIT_VARIABLE = "SCIENCE_AGENT_PERMISSION_AUDIT_DB"


def _network(value: Any) -> NetworkPolicy:
    if value is None:
        return NetworkPolicy.deny_all()
    if isinstance(value, NetworkPolicy):
        return value
    if isinstance(value, Mapping):
        return NetworkPolicy.from_config(value)
    raise PermissionConfigError("settings: network_policy", f"must be a NetworkPolicy or a mapping, got {value!r}")


def epoch_from_settings(settings: Mapping[str, Any]) -> PermissionEpoch:
    """The run's epoch: ``permission_epoch`` or one built from the mount, network and environment keys."""
    epoch = settings.get("permission_epoch")
    if epoch is not None:
        if not isinstance(epoch, PermissionEpoch):
            raise PermissionConfigError("settings: permission_epoch", "must be a PermissionEpoch")
        return epoch
    return PermissionEpoch(
        mounts=settings.get("workspace_mounts", ()),
        network=_network(settings.get("network_policy")),
        environment_revision=settings.get("environment_revision"),
        secret_refs=settings.get("secret_refs", ()),
    )


def _audit_path(settings: Mapping[str, Any], environ: Mapping[str, str]) -> Path:
    configured = settings.get("permission_audit_path") or environ.get(AUDIT_VARIABLE, "").strip()
    if configured:
        return Path(configured)
    folder = Path.home() / ".sciencediscovery"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / "permission-audit.sqlite3"


def service_from_settings(settings: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> PermissionService:
    """The session's permission service, from settings first and the environment second."""
    service = settings.get("permission_service")
    if service is not None:
        if not isinstance(service, PermissionService):
            raise PermissionConfigError("settings: permission_service", "must be a PermissionService")
        return service
    env = os.environ if environ is None else environ
    data = settings.get("permission_rules")
    rules = (
        rules_from_data(data, source="settings: permission_rules") if data is not None else rules_from_environment(env)
    )
    return PermissionService(
        rules,
        epoch_from_settings(settings),
        AuditLog(_audit_path(settings, env)),
        timeout_s=timeout_from_environment(env),
    )
