"""Path resolution inside mounts against a real tree with real symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sciencediscovery.workspace import PathRefusedError, ReadOnlyMountError, Workspace


@pytest.mark.parametrize(
    ("path", "display"),
    [
        ("ws/public/a.txt", "ws/public/a.txt"),
        ("ws//public///a.txt", "ws/public/a.txt"),
        ("./ws/./public/a.txt", "ws/public/a.txt"),
        ("ws/public/nested/../a.txt", "ws/public/a.txt"),
        ("ws/public/", "ws/public"),
        ("ws", "ws"),
        ("ws/", "ws"),
        ("ws/link_in/key.txt", "ws/secret/key.txt"),  # a symlink inside the mount resolves to its target
        ("ws/key_alias", "ws/secret/key.txt"),
        ("ws/public/.hidden", "ws/public/.hidden"),
        ("ws/public/new/file.txt", "ws/public/new/file.txt"),  # not yet existing paths resolve too
    ],
)
def test_paths_inside_a_mount_resolve_to_their_real_mount_relative_form(
    workspace: Workspace, path: str, display: str
) -> None:
    assert workspace.resolve(path).display == display
    assert workspace.specifier(path) == display


def test_absolute_paths_inside_a_mount_are_accepted(workspace: Workspace, tree: Path) -> None:
    assert workspace.resolve(str(tree / "ws" / "public" / "a.txt")).display == "ws/public/a.txt"
    assert workspace.resolve(str(tree / "ro")).display == "ro"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("ws/../outside/passwd", "leaves mount"),
        ("ws/public/../../outside/passwd", "leaves mount"),
        ("ws/link_out/passwd", "leaves mount"),
        ("ws/file_link_out", "leaves mount"),
        ("ws/public/abs_link/passwd", "leaves mount"),
        ("ws/public/sibling_link/x.txt", "leaves mount"),
        ("ws/dangling_out", "leaves mount"),
        ("ro/to_other_mount/a.txt", "leaves mount"),
        ("/etc/passwd", "outside every mount"),
        ("data/x.csv", "no mount named 'data'"),
        ("WS/public/a.txt", "no mount named 'WS'"),
        ("../ws/public/a.txt", "no mount named '..'"),
        ("", "empty"),
        (".", "name a mount"),
        ("ws/public/a.txt\x00.png", "NUL"),
    ],
)
def test_escapes_are_refused_with_a_clear_error(workspace: Workspace, path: str, reason: str) -> None:
    with pytest.raises(PathRefusedError) as raised:
        workspace.resolve(path)
    assert reason in str(raised.value)
    assert raised.value.path == path
    assert workspace.specifier(path) == path  # refused paths keep their raw form; the handler refuses them


def test_absolute_path_outside_mounts_sharing_a_prefix_is_refused(workspace: Workspace, tree: Path) -> None:
    with pytest.raises(PathRefusedError, match="outside every mount"):
        workspace.resolve(str(tree / "ws-sibling" / "x.txt"))


def test_writes_to_read_only_mounts_are_refused(workspace: Workspace) -> None:
    with pytest.raises(ReadOnlyMountError, match="'ro', which is read-only"):
        workspace.resolve_for_write("ro/data.csv")
    assert workspace.resolve_for_write("ws/public/new.txt").display == "ws/public/new.txt"


SEGMENTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "public",
        "secret",
        "link_in",
        "link_out",
        "file_link_out",
        "abs_link",
        "sibling_link",
        "loop",
        "nested",
        "a.txt",
        "key_alias",
        "dangling_out",
        "to_other_mount",
        "PUBLIC",
        "pub\u200blic",
        "\uff50ublic",
    ]
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(mount=st.sampled_from(["ws", "ro"]), segments=st.lists(SEGMENTS, max_size=8))
def test_every_resolved_path_really_lies_inside_its_mount(
    workspace: Workspace, mount: str, segments: list[str]
) -> None:
    path = "/".join([mount, *segments])
    try:
        resolved = workspace.resolve(path)
    except PathRefusedError:
        return
    root = os.path.realpath(workspace.mounts[resolved.mount.name].root)
    real = os.path.realpath(resolved.host)
    assert os.path.commonpath([root, real]) == root
    assert resolved.mount.name == mount


def test_a_symlink_loop_cannot_hide_an_escape(workspace: Workspace) -> None:
    """Found by the property test above: realpath stops resolving after a loop."""
    with pytest.raises(PathRefusedError, match="leaves mount 'ws'"):
        workspace.resolve("ws/loop/../link_out")
    with pytest.raises(PathRefusedError):
        workspace.resolve("ws/loop/../link_out/passwd")
