"""Settings validation: every bad value is refused with the key at fault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.executor import ExecutorConfig, ExecutorConfigError, Limits, MountMode


def test_defaults_deny_network_and_unsandboxed_execution() -> None:
    config = ExecutorConfig.from_settings({})
    assert config.network_allowed is False
    assert config.allow_unsandboxed is False
    assert config.mounts == ()
    assert config.limits == Limits()


def test_mounts_are_resolved_and_keep_their_modes(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    config = ExecutorConfig.from_settings(
        {"workspace_mounts": [{"name": "data", "path": str(tmp_path / "alias"), "mode": "read_write"}]}
    )
    (mount,) = config.mounts
    assert mount.path == (tmp_path / "real").resolve()
    assert mount.mode is MountMode.READ_WRITE
    assert mount.sandbox_path == "/workspace/data"


@pytest.mark.parametrize(
    ("settings_value", "key"),
    [
        ({"network_allowed": "yes"}, "network_allowed"),
        ({"workspace_mounts": {"name": "x"}}, "workspace_mounts"),
        ({"workspace_mounts": [{"name": "../up", "path": "/tmp"}]}, "workspace_mounts[0].name"),
        ({"workspace_mounts": [{"name": "d", "path": "relative/dir"}]}, "workspace_mounts[0].path"),
        ({"workspace_mounts": [{"name": "d", "path": "/nonexistent/dir"}]}, "workspace_mounts[0].path"),
        ({"workspace_mounts": [{"name": "d", "path": "/tmp", "mode": "rw"}]}, "workspace_mounts[0].mode"),
        ({"workspace_mounts": [{"name": "d", "path": "/tmp", "extra": 1}]}, "workspace_mounts[0].extra"),
        (
            {"workspace_mounts": [{"name": "d", "path": "/tmp"}, {"name": "d", "path": "/tmp"}]},
            "workspace_mounts[1].name",
        ),
        ({"executor": []}, "executor"),
        ({"executor": {"sandbox": "none"}}, "executor.sandbox"),
        ({"executor": {"allow_unsandboxed": 1}}, "executor.allow_unsandboxed"),
        ({"executor": {"python": ""}}, "executor.python"),
        ({"executor": {"env_allowlist": ["OK", "not-a-name"]}}, "executor.env_allowlist[1]"),
        ({"executor": {"limits": {"cpu_seconds": 0}}}, "executor.limits.cpu_seconds"),
        ({"executor": {"limits": {"memory_mb": True}}}, "executor.limits.memory_mb"),
        ({"executor": {"limits": {"gpu_count": 1}}}, "executor.limits.gpu_count"),
    ],
)
def test_invalid_settings_name_their_key(settings_value: dict[str, Any], key: str) -> None:
    with pytest.raises(ExecutorConfigError) as caught:
        ExecutorConfig.from_settings(settings_value)
    assert caught.value.key == key
    assert f"settings[{key}]" in str(caught.value)


LIMIT_NAMES = sorted(field.name for field in attrs.fields(Limits))


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(LIMIT_NAMES),
    value=st.one_of(st.integers(max_value=0), st.floats(), st.text(max_size=3), st.booleans(), st.none()),
)
def test_any_non_positive_or_non_integer_limit_is_refused_by_name(name: str, value: Any) -> None:
    with pytest.raises(ExecutorConfigError) as caught:
        ExecutorConfig.from_settings({"executor": {"limits": {name: value}}})
    assert caught.value.key == f"executor.limits.{name}"


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(LIMIT_NAMES), value=st.integers(min_value=1, max_value=10**9))
def test_any_positive_integer_limit_is_accepted(name: str, value: int) -> None:
    config = ExecutorConfig.from_settings({"executor": {"limits": {name: value}}})
    assert getattr(config.limits, name) == value
