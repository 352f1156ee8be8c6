"""Entry-point plugin of sciencediscovery-governance: registers the permission gate."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import hookimpl
from sciencediscovery.tools.definitions import ToolGate

from .gate import PermissionGate
from .settings import service_from_settings


@hookimpl
def register_tool_gates(register: Callable[[ToolGate], None], settings: Mapping[str, Any]) -> None:
    """Register one :class:`PermissionGate` over the session's permission service (see :mod:`.settings`)."""
    register(PermissionGate(service_from_settings(settings)))
