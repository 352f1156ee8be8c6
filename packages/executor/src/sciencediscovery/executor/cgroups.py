"""Process-count limits through the ``pids`` cgroup controller (v1 or v2), when this host lets us write it.

A cgroup's ``pids.max`` bounds every process and thread of a sandbox together, which
``RLIMIT_NPROC`` cannot do for root (the kernel exempts uid 0 from it).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from pathlib import Path

_counter = itertools.count(1)


def pids_root() -> Path | None:
    """The directory of this process's own pids cgroup, if the controller is mounted here."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            candidate = Path("/sys/fs/cgroup/pids") / path.lstrip("/")
            if (candidate / "pids.max").exists() or candidate == Path("/sys/fs/cgroup/pids"):
                return candidate
    for line in lines:
        if line.startswith("0::"):
            candidate = Path("/sys/fs/cgroup") / line[3:].lstrip("/")
            if "pids" in _read(candidate / "cgroup.subtree_control").split():
                return candidate
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


class PidsCgroup:
    """One sandbox's cgroup: created with a ``pids.max``, entered by the launcher, killed and removed after."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, limit: int) -> PidsCgroup | None:
        """Create a cgroup bounded to ``limit`` tasks, or ``None`` when this host does not allow it."""
        root = pids_root()
        if root is None:
            return None
        path = root / f"sciencediscovery-executor-{os.getpid()}-{next(_counter)}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(limit))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path)

    @property
    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs")

    def launcher(self, argv: list[str]) -> list[str]:
        """``argv`` prefixed so that the process enters this cgroup before it execs."""
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', self.procs_file, *argv]

    def kill_all(self) -> None:
        """SIGKILL every task in the cgroup until none is left (a fork bomb cannot outrun ``pids.max``)."""
        for _ in range(100):
            pids = [int(p) for p in _read(self.path / "cgroup.procs").split()]
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        self.kill_all()
        for _ in range(200):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                self.kill_all()
                time.sleep(0.005)
