"""PermissionGate as the tools ToolGate, and the register_tool_gates hook through a real plugin host."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.governance import (
    AllowOnce,
    PermissionConfigError,
    PermissionGate,
    PermissionService,
    RuleError,
    service_from_settings,
)
from sciencediscovery.governance import plugin as governance_plugin
from sciencediscovery.runtime_core import CollectingSink, ExternalWaits, ToolCall, TurnContext, make_plugin_manager
from sciencediscovery.tools import plugin as tools_plugin
from sciencediscovery.tools.definitions import ToolAction, ToolDefinition, ToolGate, ToolInvocation


async def _handler(invocation: ToolInvocation) -> str:
    return "ran"


def _tool(name: str, action: ToolAction, specifier: Any = None) -> ToolDefinition:
    return ToolDefinition(name, "test tool", {"type": "object"}, _handler, action=action, specifier=specifier)


def _invocation(arguments: Mapping[str, Any], sink: CollectingSink | None = None) -> ToolInvocation:
    sink = sink or CollectingSink()
    context = TurnContext("run-1", "ctx-1", 1, sink, ExternalWaits("run-1", "ctx-1", sink.emit))
    return ToolInvocation(ToolCall("call-1", "t", dict(arguments)), arguments, context)


def _gates(settings: Mapping[str, Any]) -> list[ToolGate]:
    manager = make_plugin_manager(load_entry_points=False, plugins=[tools_plugin, governance_plugin])
    gates: list[ToolGate] = []
    manager.hook.register_tool_gates(register=gates.append, settings=settings)
    return gates


def test_gate_uses_the_tool_specifier_and_action(service: PermissionService) -> None:
    gate = PermissionGate(service)
    assert isinstance(gate, ToolGate)
    read = _tool("read_file", ToolAction.READ, lambda arguments: arguments["path"])
    allowed = asyncio.run(gate.check(_invocation({"path": "data/raw.csv"}), read))
    assert allowed.allowed
    assert allowed.source == "rule:allow:read_file(data/**)"
    assert allowed.metadata == {"permission_epoch": service.epoch.epoch_id}
    denied = asyncio.run(gate.check(_invocation({"path": "data//secret/../secret/k"}), read))
    assert not denied.allowed
    write = _tool("write_file", ToolAction.WRITE, lambda arguments: arguments["path"])
    read_only = asyncio.run(gate.check(_invocation({"path": "data/x"}), write))
    assert not read_only.allowed
    assert "read-only" in read_only.reason


def test_gate_waits_on_the_decision_queue(service: PermissionService) -> None:
    gate = PermissionGate(service)
    sink = CollectingSink()

    async def scenario() -> bool:
        task = asyncio.create_task(gate.check(_invocation({}, sink), _tool("run_code", ToolAction.CODE)))
        await asyncio.sleep(0)
        [request] = service.pending()
        assert (request.tool, request.specifier, request.action) == ("run_code", "*", "code")
        service.decide(request.request_id, AllowOnce(), source="user:alice")
        return (await task).allowed

    assert asyncio.run(scenario())
    assert [event.kind for event in sink.events] == ["external_wait_started", "external_wait_finished"]


def test_a_crashing_specifier_denies(service: PermissionService) -> None:
    def broken(arguments: Mapping[str, Any]) -> str:
        raise KeyError("path")

    decision = asyncio.run(PermissionGate(service).check(_invocation({}), _tool("read_file", ToolAction.READ, broken)))
    assert not decision.allowed
    assert "specifier" in decision.reason


def test_register_tool_gates_uses_the_composition_roots_service(service: PermissionService) -> None:
    [gate] = _gates({"permission_service": service})
    assert isinstance(gate, PermissionGate)
    assert gate.service is service


def test_register_tool_gates_builds_a_service_from_settings(tmp_path: Path) -> None:
    settings = {
        "permission_rules": {"default": "deny", "allow": ["read_file(data/**)"]},
        "permission_audit_path": str(tmp_path / "audit.sqlite3"),
        "workspace_mounts": [{"name": "data", "path": str(tmp_path), "mode": "read_only"}],
        "network_policy": {"allow": ["*.nih.gov"], "default": "deny"},
        "environment_revision": "rev-7",
        "secret_refs": ["NCBI_API_KEY"],
    }
    [gate] = _gates(settings)
    assert isinstance(gate, PermissionGate)
    epoch = gate.service.epoch
    assert epoch.environment_revision == "rev-7"
    assert epoch.mount("data") is not None
    assert epoch.network.allow == ("*.nih.gov",)
    read = _tool("read_file", ToolAction.READ, lambda arguments: arguments["path"])
    assert asyncio.run(gate.check(_invocation({"path": "data/x"}), read)).allowed
    assert not asyncio.run(gate.check(_invocation({"path": "other/x"}), read)).allowed  # default deny
    assert (tmp_path / "audit.sqlite3").exists()


def test_malformed_settings_stop_startup(tmp_path: Path) -> None:
    audit = str(tmp_path / "audit.sqlite3")
    with pytest.raises(RuleError, match="settings: permission_rules"):
        _gates({"permission_rules": {"deny": ["read_file(a/**b)"]}, "permission_audit_path": audit})
    with pytest.raises(PermissionConfigError, match="network_policy"):
        service_from_settings({"network_policy": ["*.nih.gov"], "permission_audit_path": audit})
    with pytest.raises(PermissionConfigError, match="permission_service"):
        service_from_settings({"permission_service": object()})


def test_rules_come_from_the_environment_when_settings_have_none(tmp_path: Path) -> None:
    environ = {
        "SCIENCE_AGENT_PERMISSION_DENY": "run_code(*)",
        "SCIENCE_AGENT_PERMISSION_AUDIT_DB": str(tmp_path / "env-audit.sqlite3"),
        "SCIENCE_AGENT_PERMISSION_TIMEOUT_S": "12",
    }
    service = service_from_settings({}, environ)
    assert service.rules.describe()["deny"] == ["run_code(*)"]
    assert service.timeout_s == 12
    assert service.audit.path == str(tmp_path / "env-audit.sqlite3")
