"""Running one bounded process: wall-clock timeout, output cap, cancellation, whole-group kill."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import os
import signal
from collections.abc import Mapping, Sequence

import attrs

from .capture import CapturedText, HeadTailBuffer
from .cgroups import PidsCgroup

_CHUNK = 65_536


class Termination(str, enum.Enum):
    """Why a process ended."""

    EXITED = "exited"
    SIGNALLED = "signalled"
    CPU_LIMIT = "cpu_limit"
    TIMEOUT = "timeout"
    OUTPUT_LIMIT = "output_limit"


@attrs.frozen
class ProcessOutcome:
    """How a bounded process ended and what it printed (head/tail bounded)."""

    termination: Termination
    exit_code: int | None
    signal: int | None
    stdout: CapturedText
    stderr: CapturedText

    @property
    def ok(self) -> bool:
        return self.termination is Termination.EXITED and self.exit_code == 0


def kill_group(process: asyncio.subprocess.Process, cgroup: PidsCgroup | None) -> None:
    """SIGKILL the process group (the sandbox's PID namespace dies with it) and every task in the cgroup."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if cgroup is not None:
        cgroup.kill_all()


def _signal_of(returncode: int, signal_offset: bool) -> int | None:
    """bubblewrap reports a child killed by signal N as 128+N; a direct child has a negative return code."""
    if returncode < 0:
        return -returncode
    if signal_offset and 128 < returncode < 160:
        return returncode - 128
    return None


async def run_bounded(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    stdin: bytes,
    wall_seconds: float,
    output_bytes: int,
    capture_bytes: int,
    cgroup: PidsCgroup | None,
    signal_offset: bool,
    pass_fds: tuple[int, ...] = (),
) -> ProcessOutcome:
    """Run ``argv`` to completion within the bounds; on cancellation kill it and re-raise."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
        pass_fds=pass_fds,
    )
    buffers = (HeadTailBuffer(capture_bytes), HeadTailBuffer(capture_bytes))
    flooded = False

    async def pump(stream: asyncio.StreamReader, buffer: HeadTailBuffer) -> None:
        nonlocal flooded
        while chunk := await stream.read(_CHUNK):
            buffer.feed(chunk)
            if not flooded and buffers[0].total_bytes + buffers[1].total_bytes > output_bytes:
                flooded = True
                kill_group(process, cgroup)

    async def feed_stdin() -> None:
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(stdin)
            await process.stdin.drain()
            process.stdin.close()

    assert process.stdout is not None and process.stderr is not None
    timed_out = False
    try:
        async with asyncio.timeout(wall_seconds):
            await asyncio.gather(
                feed_stdin(), pump(process.stdout, buffers[0]), pump(process.stderr, buffers[1]), process.wait()
            )
    except TimeoutError:
        timed_out = True
    finally:
        kill_group(process, cgroup)
        await asyncio.shield(process.wait())
    returncode = process.returncode
    assert returncode is not None
    signum = _signal_of(returncode, signal_offset)
    if timed_out:
        termination = Termination.TIMEOUT
    elif flooded:
        termination = Termination.OUTPUT_LIMIT
    elif signum == signal.SIGXCPU:
        termination = Termination.CPU_LIMIT
    elif signum is not None:
        termination = Termination.SIGNALLED
    else:
        termination = Termination.EXITED
    exit_code = None if timed_out or flooded or signum is not None else returncode
    return ProcessOutcome(termination, exit_code, signum, buffers[0].result(), buffers[1].result())
