from __future__ import annotations

import os

from sciencediscovery.tools.paths import stable_realpath


def test_a_loop_cannot_hide_where_a_path_leads(tmp_path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    os.symlink("loop", ws / "loop")
    os.symlink("../outside", ws / "link_out")
    tricky = str(ws / "loop" / ".." / "link_out")
    assert os.path.realpath(tricky) == str(ws / "link_out")  # one pass is fooled
    assert stable_realpath(tricky) == str(outside)


def test_plain_paths_resolve_in_one_pass(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    assert stable_realpath(tmp_path / "a" / ".." / "a") == str(tmp_path / "a")
