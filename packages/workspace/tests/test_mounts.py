"""settings["workspace_mounts"] validation: every error names the entry and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciencediscovery.workspace import MountConfigError, MountMode, mounts_from_settings


def test_valid_mounts_resolve_their_host_paths(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    mounts = mounts_from_settings([{"name": "data", "path": str(tmp_path / "alias")}])
    assert mounts[0].root == (tmp_path / "real").resolve()
    assert mounts[0].mode is MountMode.READ_ONLY  # the default
    assert mounts_from_settings(None) == ()


@pytest.mark.parametrize(
    ("entries", "where"),
    [
        ([{"name": "a/b", "path": "."}], "[0].name"),
        ([{"name": "", "path": "."}], "[0].name"),
        ([{"path": "."}], "[0].name"),
        ([{"name": "a"}], "[0].path"),
        ([{"name": "a", "path": "/does/not/exist"}], "[0].path"),
        ([{"name": "a", "path": ".", "mode": "rw"}], "[0].mode"),
        ([{"name": "a", "path": ".", "readonly": True}], "[0].readonly"),
        ([{"name": "a", "path": "."}, {"name": "a", "path": "."}], "[1].name"),
        (["data"], "[0]"),
        ({"name": "a", "path": "."}, ""),
    ],
)
def test_malformed_mounts_are_typed_errors_naming_the_field(entries: object, where: str) -> None:
    with pytest.raises(MountConfigError) as raised:
        mounts_from_settings(entries)  # type: ignore[arg-type]
    assert raised.value.where == where
    assert str(raised.value).startswith(f"workspace_mounts{where}:")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("proj/data", "proj"),  # a read-write parent around a read-only child (the review's case)
        ("proj", "proj/data"),  # the other order
        ("proj", "proj"),  # the same directory twice
        ("proj", "alias"),  # the same directory through a symlink
    ],
)
def test_overlapping_mounts_are_refused_naming_both_entries(tmp_path: Path, first: str, second: str) -> None:
    (tmp_path / "proj" / "data").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "proj")
    entries = [
        {"name": "data", "path": str(tmp_path / first), "mode": "read_only"},
        {"name": "proj", "path": str(tmp_path / second), "mode": "read_write"},
    ]
    with pytest.raises(MountConfigError) as raised:
        mounts_from_settings(entries)
    assert raised.value.where == "[1].path"
    assert "'data'" in str(raised.value) and "'proj'" in str(raised.value)
    assert "workspace_mounts[0]" in str(raised.value)


def test_sibling_mounts_with_a_common_prefix_do_not_overlap(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data-2").mkdir()
    mounts = mounts_from_settings(
        [{"name": "a", "path": str(tmp_path / "data")}, {"name": "b", "path": str(tmp_path / "data-2")}]
    )
    assert [m.name for m in mounts] == ["a", "b"]
