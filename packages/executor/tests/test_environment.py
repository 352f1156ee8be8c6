"""Environment records: what the sandbox interpreter really has, hashed into a revision; requirements export."""

from __future__ import annotations

import asyncio
import importlib.metadata
import re
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.executor import (
    Distribution,
    EnvironmentRecord,
    Executor,
    ExecutorConfig,
    environment_for_settings,
)

BASE = EnvironmentRecord(
    python_version="3.11.7",
    implementation="CPython",
    platform="Linux-x86_64",
    machine="x86_64",
    distributions=(Distribution("numpy", "2.1.0"), Distribution("sciencediscovery-executor", "0.1.0", local=True)),
    environment_variables={"LANG": "C.UTF-8"},
    sandbox={"mode": "bubblewrap", "network_allowed": False},
)


def test_record_describes_the_sandbox_interpreter(sandboxed: Executor) -> None:
    record = asyncio.run(sandboxed.environment())
    versions = {d.name.lower(): d.version for d in record.distributions}
    assert versions["matplotlib"] == importlib.metadata.version("matplotlib")
    assert versions["ipykernel"] == importlib.metadata.version("ipykernel")
    assert record.sandbox["mode"] == "bubblewrap"
    assert record.sandbox["network_allowed"] is False
    assert record.sandbox["mounts"] == [
        {"name": "data", "mode": "read_write"},
        {"name": "reference", "mode": "read_only"},
    ]
    assert re.fullmatch(r"env-[0-9a-f]{16}", record.revision)


def test_requirements_pin_every_index_distribution_exactly(sandboxed: Executor) -> None:
    record = asyncio.run(sandboxed.environment())
    lines = record.requirements().splitlines()
    assert lines[0] == f"# environment revision {record.revision}"
    pins = [line for line in lines if not line.startswith("#")]
    assert f"matplotlib=={importlib.metadata.version('matplotlib')}" in pins
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[^\s=]+", pin) for pin in pins)
    local = [line for line in lines if "installed from a local path" in line]
    assert any(line.startswith("# sciencediscovery-executor==") for line in local)
    assert len(pins) + len(local) == len(record.distributions)


def test_allow_listed_variables_are_recorded_and_change_the_revision(shared_workspace: Any) -> None:
    settings_value = shared_workspace.settings(env_allowlist=["TZ"])
    config = ExecutorConfig.from_settings(settings_value)
    utc = asyncio.run(Executor(config, environ={"TZ": "UTC", "API_TOKEN": "x"}).environment())
    paris = asyncio.run(Executor(config, environ={"TZ": "Europe/Paris", "API_TOKEN": "x"}).environment())
    assert utc.environment_variables["TZ"] == "UTC"
    assert "API_TOKEN" not in utc.environment_variables
    assert utc.revision != paris.revision


def test_the_sandbox_policy_is_part_of_the_revision(shared_workspace: Any, sandboxed: Executor) -> None:
    settings_value = shared_workspace.settings()
    settings_value["network_allowed"] = True
    networked = asyncio.run(Executor(ExecutorConfig.from_settings(settings_value)).environment())
    assert networked.sandbox["network_allowed"] is True
    assert networked.revision != asyncio.run(sandboxed.environment()).revision


def test_revision_is_stable_for_equal_records() -> None:
    copy = attrs.evolve(BASE, environment_variables=dict(BASE.environment_variables), sandbox=dict(BASE.sandbox))
    assert copy.revision == BASE.revision


@settings(max_examples=60, deadline=None)
@given(
    field=st.sampled_from(["python_version", "implementation", "platform", "machine"]),
    value=st.text(min_size=1, max_size=12),
    version=st.text(alphabet="0123456789.", min_size=1, max_size=8),
)
def test_any_change_to_the_record_changes_the_revision(field: str, value: str, version: str) -> None:
    changed = attrs.evolve(BASE, **{field: value})  # type: ignore[arg-type]
    if getattr(BASE, field) != value:
        assert changed.revision != BASE.revision
    bumped = attrs.evolve(BASE, distributions=(Distribution("numpy", version), BASE.distributions[1]))
    assert (bumped.revision == BASE.revision) == (version == "2.1.0")


def test_the_composition_root_gets_the_same_revision_and_a_governance_summary(
    shared_workspace: Any, sandboxed: Executor
) -> None:
    record = asyncio.run(environment_for_settings(shared_workspace.settings()))
    assert record.revision == asyncio.run(sandboxed.environment()).revision
    assert record.summary() == (
        "code execution: bubblewrap sandbox, no network, mounts: data (read_write), reference (read_only); "
        f"environment {record.revision}"
    )
