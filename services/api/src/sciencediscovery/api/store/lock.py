"""One process per data directory: an exclusive advisory lock held for the platform's lifetime."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ..errors import StoreError


class DataDirLock:
    """Holds ``<data_dir>/.lock`` exclusively; a second process (or platform) gets a clear :class:`StoreError`.

    The operating system releases the lock when the holder dies, so a crashed
    run never leaves the directory locked.
    """

    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.path = data_dir / ".lock"
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(descriptor, 32).decode(errors="replace").strip() or "unknown"
            os.close(descriptor)
            raise StoreError(f"data directory {data_dir} is in use by another process (pid {holder})") from None
        os.ftruncate(descriptor, 0)
        os.write(descriptor, str(os.getpid()).encode())
        self._descriptor: int | None = descriptor

    def release(self) -> None:
        if self._descriptor is not None:
            fcntl.flock(self._descriptor, fcntl.LOCK_UN)
            os.close(self._descriptor)
            self._descriptor = None
