"""Path resolution for tools that take file paths from the model."""

from __future__ import annotations

import os

MAX_PASSES = 8


class SymlinkLoopError(OSError):
    """A path runs into a symlink loop, so where it leads cannot be decided."""


def stable_realpath(path: str | os.PathLike[str]) -> str:
    """``os.path.realpath`` repeated until it is stable.

    After a symlink loop, ``realpath`` returns the rest of the path unresolved
    (``ws/loop/../link_out`` comes back as ``ws/link_out`` even when ``link_out``
    points elsewhere), so a single pass cannot be trusted to say where a path
    leads. Raises :class:`SymlinkLoopError` when no fixed point is reached.
    """
    real = os.path.realpath(path)
    for _ in range(MAX_PASSES):
        again = os.path.realpath(real)
        if again == real:
            return real
        real = again
    raise SymlinkLoopError(f"{os.fspath(path)!r} runs into a symlink loop")
