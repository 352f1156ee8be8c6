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
