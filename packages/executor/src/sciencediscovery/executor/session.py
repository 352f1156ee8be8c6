"""Stateful Python sessions: an ipykernel started inside the sandbox, driven through jupyter_client.

The kernel listens on IPC (Unix) sockets in a private directory shared with the sandbox,
so it needs no network even when the sandbox has none. Interrupts travel on the control
channel (``interrupt_request``), which ipykernel answers from its control thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from queue import Empty

from ipykernel.kernelspec import make_ipkernel_cmd
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.connect import write_connection_file

from .artifacts import collect, write_rich_output
from .capture import HeadTailBuffer
from .errors import SessionError
from .process import kill_group
from .results import ExecutionResult
from .runner import Executor, Launch
from .sandbox import SandboxMode

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_INTERRUPT_GRACE_S = 10.0
_STARTUP_TIMEOUT_S = 60.0


def kernel_command(python: str, connection_file: Path) -> list[str]:
    """ipykernel's own launch command for ``python`` (no user site, no bytecode files)."""
    command = make_ipkernel_cmd(executable=python, python_arguments=["-s", "-B"])
    return [part.replace("{connection_file}", str(connection_file)) for part in command]


class KernelSession:
    """One kernel: execute cells with shared state, interrupt, restart, shut down."""

    def __init__(self, executor: Executor, name: str) -> None:
        self.executor = executor
        self.name = name
        self._lock = asyncio.Lock()
        self._process: asyncio.subprocess.Process | None = None
        self._launch: Launch | None = None
        self._client: AsyncKernelClient | None = None
        self._runtime_dir: Path | None = None
        self._outputs: Path | None = None
        self._mode: SandboxMode | None = None
        self._cells = 0

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def start(self) -> None:
        """Start the kernel inside the sandbox and wait until it answers ``kernel_info``."""
        executor = self.executor
        mode = await executor.mode()
        self._runtime_dir = Path(tempfile.mkdtemp(prefix="sd-kernel-"))
        self._outputs = executor.new_output_dir(f"session-{self.name}")
        connection_file = self._runtime_dir / "connection.json"
        write_connection_file(
            str(connection_file), transport="ipc", ip=str(self._runtime_dir / "k"), key=secrets.token_hex(16).encode()
        )
        launch = await executor.prepare(
            mode,
            "kernel",
            self._outputs,
            cpu_seconds=executor.config.limits.session_cpu_seconds,
            shared_dirs=[self._runtime_dir],
            extra={"argv": kernel_command(executor.config.python, connection_file)},
        )
        log = (self._runtime_dir / "kernel.log").open("wb")
        self._launch, self._mode = launch, mode
        self._process = await asyncio.create_subprocess_exec(
            *launch.argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=launch.env,
            cwd=launch.cwd,
            start_new_session=True,
            pass_fds=launch.pass_fds,
        )
        log.close()
        client = AsyncKernelClient()
        client.load_connection_file(str(connection_file))
        client.start_channels(hb=False)
        self._client = client
        try:
            await self._wait_ready()
        except BaseException:  # a failed or cancelled start leaves no kernel, cgroup or directory behind
            await asyncio.shield(self.shutdown())
            raise

    async def _wait_ready(self) -> None:
        client = self._require_client()
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if not self.running:
                raise SessionError(self.name, f"the kernel exited during startup: {self._log_tail()}")
            client.kernel_info()
            try:
                reply = await client.get_shell_msg(timeout=1)
            except Empty:
                continue
            if reply["msg_type"] == "kernel_info_reply":
                with contextlib.suppress(Empty):
                    await client.get_iopub_msg(timeout=0.5)
                    while True:
                        await client.get_iopub_msg(timeout=0.1)
                return
        raise SessionError(self.name, f"the kernel did not answer within {_STARTUP_TIMEOUT_S:.0f} s")

    def _log_tail(self) -> str:
        if self._runtime_dir is None:
            return ""
        with contextlib.suppress(OSError):
            return (self._runtime_dir / "kernel.log").read_text(errors="replace")[-2000:]
        return ""

    def _require_client(self) -> AsyncKernelClient:
        if self._client is None:
            raise SessionError(self.name, "the kernel is not running")
        return self._client

    async def execute(self, code: str, *, produced_by: str, timeout_s: float | None = None) -> ExecutionResult:
        """Run one cell; on timeout the cell is interrupted and the session's state is kept."""
        async with self._lock:
            detail = ""
            if not self.running:
                if self._client is not None:
                    await self.shutdown()
                    detail = "the previous kernel had died; a new kernel was started (earlier state is lost)"
                await self.start()
            try:
                return await self._execute(code, produced_by, timeout_s, detail)
            except asyncio.CancelledError:
                if self.running:
                    self.interrupt()  # a cancelled call stops its cell; the session keeps its state
                raise

    async def _execute(self, code: str, produced_by: str, timeout_s: float | None, detail: str) -> ExecutionResult:
        client = self._require_client()
        limits = self.executor.config.limits
        record = await self.executor.environment()
        assert self._outputs is not None and self._mode is not None
        before = set(self._outputs.rglob("*"))
        stdout, stderr = HeadTailBuffer(limits.capture_bytes), HeadTailBuffer(limits.capture_bytes)
        self._cells += 1
        # stop_on_error=False: a failed or interrupted cell must not abort the next call's cell
        msg_id = client.execute(code, store_history=True, allow_stdin=False, stop_on_error=False)
        deadline = time.monotonic() + (timeout_s or limits.wall_seconds)
        status, interrupted_at, outputs = "ok", None, 0
        while True:
            if not self.running:
                status = "kernel_died"
                break
            now = time.monotonic()
            if interrupted_at is None and now > deadline:
                status, interrupted_at = "timeout", now
                self.interrupt()
            if interrupted_at is not None and now > interrupted_at + _INTERRUPT_GRACE_S:
                await self.shutdown()
                detail = "the kernel did not stop after an interrupt and was shut down (state is lost)"
                break
            try:
                message = await client.get_iopub_msg(timeout=0.2)
            except Empty:
                continue
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "status" and content["execution_state"] == "idle":
                break
            if kind == "stream":
                (stdout if content["name"] == "stdout" else stderr).feed(content["text"].encode())
            elif kind in {"display_data", "execute_result"}:
                outputs += 1
                write_rich_output(self._outputs, f"cell-{self._cells}-output-{outputs}", content["data"])
                if kind == "execute_result" and "text/plain" in content["data"]:
                    stdout.feed((content["data"]["text/plain"] + "\n").encode())
            elif kind == "error":
                if status == "ok":
                    status = "interrupted" if content["ename"] == "KeyboardInterrupt" else "error"
                stderr.feed(_ANSI.sub("", "\n".join(content["traceback"])).encode() + b"\n")
            if stdout.total_bytes + stderr.total_bytes > limits.output_bytes and interrupted_at is None:
                status, interrupted_at = "output_limit", time.monotonic()
                self.interrupt()
        if status == "kernel_died":
            detail = "the kernel died (a resource limit was reached?); the next call starts a new kernel"
        artifacts = collect(
            self._outputs, environment_revision=record.revision, produced_by=produced_by, exclude=before
        )
        return ExecutionResult(
            status=status,
            ok=status == "ok",
            exit_code=None,
            stdout=stdout.result(),
            stderr=stderr.result(),
            artifacts=artifacts,
            environment_revision=record.revision,
            sandbox_mode=self._mode,
            network_allowed=self.executor.config.network_allowed,
            detail=detail,
        )

    def interrupt(self) -> None:
        """Ask the kernel to raise KeyboardInterrupt in the running cell (state is kept)."""
        client = self._require_client()
        client.control_channel.send(client.session.msg("interrupt_request", {}))

    async def restart(self) -> None:
        """Stop the kernel and start a fresh one (all state is cleared)."""
        async with self._lock:
            await self.shutdown()
            await self.start()

    async def shutdown(self) -> None:
        """Stop the kernel and its whole sandbox; remove the private runtime directory."""
        if self._client is not None:
            self._client.stop_channels()
            self._client = None
        if self._process is not None:
            launch = self._launch
            kill_group(self._process, launch.cgroup if launch else None)
            await self._process.wait()
            self._process = None
        if self._launch is not None:
            self._launch.release()
            self._launch = None
        if self._runtime_dir is not None:
            shutil.rmtree(self._runtime_dir, ignore_errors=True)
            self._runtime_dir = None


class SessionPool:
    """Named sessions of one executor, started on first use."""

    def __init__(self, executor: Executor, *, max_sessions: int = 4) -> None:
        self.executor = executor
        self.max_sessions = max_sessions
        self._sessions: dict[str, KernelSession] = {}

    def get(self, name: str) -> KernelSession:
        session = self._sessions.get(name)
        if session is None:
            if len(self._sessions) >= self.max_sessions:
                raise SessionError(name, f"at most {self.max_sessions} sessions may be open; shut one down first")
            session = self._sessions[name] = KernelSession(self.executor, name)
        return session

    def existing(self, name: str) -> KernelSession:
        session = self._sessions.get(name)
        if session is None or not session.running:
            raise SessionError(name, "no such running session")
        return session

    async def close(self, name: str) -> None:
        session = self._sessions.pop(name, None)
        if session is None:
            raise SessionError(name, "no such session")
        await session.shutdown()

    async def close_all(self) -> None:
        for name in list(self._sessions):
            await self.close(name)

    def names(self) -> list[str]:
        return sorted(self._sessions)
