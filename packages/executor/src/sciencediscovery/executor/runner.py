"""The executor: launches the bootstrap inside the sandbox (or, only when opted in, without one)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .artifacts import collect
from .cgroups import PidsCgroup
from .config import ExecutorConfig
from .environment import EnvironmentRecord
from .errors import ExecutorError, SandboxUnavailableError
from .process import ProcessOutcome, run_bounded
from .results import ExecutionResult
from .sandbox import SANDBOX_OUTPUTS, ProcessLimit, SandboxLayout, SandboxMode, SandboxStatus, bwrap_argv, probe
from .seccomp import setid_filter

BOOTSTRAP_SOURCE = (Path(__file__).parent / "_boot.py").read_text()
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@attrs.frozen
class Launch:
    """A prepared process: command line, environment and the cgroup it will enter."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None
    cgroup: PidsCgroup | None
    mode: SandboxMode
    pass_fds: tuple[int, ...] = ()

    def release(self) -> None:
        """Remove the cgroup (killing what is left in it) and close the inherited descriptors."""
        if self.cgroup is not None:
            self.cgroup.remove()
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


class Executor:
    """Runs Python under one :class:`ExecutorConfig`; probes the sandbox and the environment once."""

    def __init__(self, config: ExecutorConfig, *, environ: Mapping[str, str] | None = None) -> None:
        self.config = config
        self._environ = dict(os.environ if environ is None else environ)
        self._status: SandboxStatus | None = None
        self._layout: SandboxLayout | None = None
        self._environment: EnvironmentRecord | None = None

    async def status(self) -> SandboxStatus:
        """Whether the sandbox can run here (probed once)."""
        if self._status is None:
            self._status = await asyncio.to_thread(probe, self.config)
        return self._status

    async def mode(self) -> SandboxMode:
        """The mode code runs in; raises :class:`SandboxUnavailableError` unless a sandbox or the opt-in exists."""
        status = await self.status()
        if status.available:
            return SandboxMode.BUBBLEWRAP
        if self.config.allow_unsandboxed:
            return SandboxMode.UNSANDBOXED
        raise SandboxUnavailableError(status.reason)

    def sandbox_environment(self, mode: SandboxMode, *, outputs: str, kernel: bool) -> dict[str, str]:
        """The variables code sees: fixed values plus the allow-listed ones from the host (never anything else)."""
        home = "/tmp" if mode is SandboxMode.BUBBLEWRAP else str(self._unsandboxed_home())
        env = {
            "PATH": f"{Path(self.config.python).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "TMPDIR": home,
            "LANG": "C.UTF-8",
            "MPLCONFIGDIR": f"{home}/.matplotlib",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "SCIENCEDISCOVERY_OUTPUT_DIR": outputs,
        }
        if not kernel:
            env["MPLBACKEND"] = "Agg"
        env.update({name: self._environ[name] for name in self.config.env_allowlist if name in self._environ})
        return env

    def _unsandboxed_home(self) -> Path:
        home = self.config.output_dir / ".unsandboxed-home"
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        return home

    def _sandbox_settings(self, mode: SandboxMode, status: SandboxStatus) -> dict[str, Any]:
        return {
            "mode": mode.value,
            "network_allowed": self.config.network_allowed,
            "mounts": [{"name": m.name, "mode": m.mode.value} for m in self.config.mounts],
            "limits": attrs.asdict(self.config.limits),
            "process_limit": status.process_limit.value,
            "seccomp": mode is SandboxMode.BUBBLEWRAP and setid_filter() is not None,
        }

    async def environment(self) -> EnvironmentRecord:
        """The environment record of this executor's sandbox interpreter and policy (probed once)."""
        if self._environment is None:
            mode = await self.mode()
            outputs = self.new_output_dir("environment-probe")
            outcome = await self._run(mode, "probe", outputs, stdin=b"", cpu_seconds=None, wall_seconds=None)
            if not outcome.ok:
                raise ExecutorError(
                    f"the environment probe failed ({outcome.termination.value}): {outcome.stderr.text}"
                )
            env = self.sandbox_environment(mode, outputs=SANDBOX_OUTPUTS, kernel=False)
            del env["SCIENCEDISCOVERY_OUTPUT_DIR"]
            self._environment = EnvironmentRecord.from_probe(
                json.loads((outputs / "environment.json").read_text()),
                environment_variables=env,
                sandbox=self._sandbox_settings(mode, await self.status()),
            )
        return self._environment

    def new_output_dir(self, label: str) -> Path:
        """A fresh directory for one execution's files (``/outputs`` inside the sandbox)."""
        base = self.config.output_dir / (_UNSAFE.sub("_", label).strip("._") or "run")
        path, counter = base, 1
        while True:
            try:
                path.mkdir(parents=True)
                return path
            except FileExistsError:
                counter += 1
                path = base.with_name(f"{base.name}-{counter}")

    async def prepare(
        self,
        mode: SandboxMode,
        boot_mode: str,
        outputs: Path,
        *,
        cpu_seconds: int,
        shared_dirs: Sequence[Path] = (),
        extra: Mapping[str, Any] | None = None,
    ) -> Launch:
        """Build the command that runs the bootstrap in ``boot_mode`` with this executor's limits."""
        limits = self.config.limits
        status = await self.status()
        rlimits = {"cpu": cpu_seconds, "as": limits.memory_mb * 2**20, "fsize": limits.file_mb * 2**20, "core": 0}
        if status.process_limit is ProcessLimit.RLIMIT:
            rlimits["nproc"] = limits.processes
        inside_outputs = SANDBOX_OUTPUTS if mode is SandboxMode.BUBBLEWRAP else str(outputs)
        boot = {"mode": boot_mode, "limits": rlimits, "output_dir": inside_outputs, **(extra or {})}
        command = [self.config.python, "-s", "-B", "-c", BOOTSTRAP_SOURCE, json.dumps(boot)]
        env = self.sandbox_environment(mode, outputs=inside_outputs, kernel=boot_mode == "kernel")
        first_mount = self.config.mounts[0] if self.config.mounts else None
        seccomp_fd = None
        if mode is SandboxMode.BUBBLEWRAP:
            layout = await self._sandbox_layout()
            seccomp_fd = layout.open_seccomp()
            cwd = first_mount.sandbox_path if first_mount else "/tmp"
            argv = bwrap_argv(
                self.config, layout, command, outputs=outputs, shared_dirs=shared_dirs, cwd=cwd, seccomp_fd=seccomp_fd
            )
            host_cwd: str | None = "/"
        else:
            argv, host_cwd = command, str(first_mount.path if first_mount else outputs)
        pass_fds = () if seccomp_fd is None else (seccomp_fd,)
        cgroup = None
        if status.process_limit is ProcessLimit.CGROUP:
            cgroup = PidsCgroup.create(limits.processes)
            if cgroup is None and mode is SandboxMode.BUBBLEWRAP:
                Launch(argv, env, host_cwd, None, mode, pass_fds).release()
                raise SandboxUnavailableError("the pids cgroup for the process limit could not be created")
        if cgroup is not None:
            argv = cgroup.launcher(argv)
        return Launch(argv, env, host_cwd, cgroup, mode, pass_fds)

    async def _sandbox_layout(self) -> SandboxLayout:
        if self._layout is None:
            self._layout = await asyncio.to_thread(SandboxLayout.prepare, self.config)
        return self._layout

    async def _run(
        self,
        mode: SandboxMode,
        boot_mode: str,
        outputs: Path,
        *,
        stdin: bytes,
        cpu_seconds: int | None,
        wall_seconds: int | None,
    ) -> ProcessOutcome:
        limits = self.config.limits
        launch = await self.prepare(mode, boot_mode, outputs, cpu_seconds=cpu_seconds or limits.cpu_seconds)
        try:
            return await run_bounded(
                launch.argv,
                env=launch.env,
                cwd=launch.cwd,
                stdin=stdin,
                wall_seconds=wall_seconds or limits.wall_seconds,
                output_bytes=limits.output_bytes,
                capture_bytes=limits.capture_bytes,
                cgroup=launch.cgroup,
                signal_offset=mode is SandboxMode.BUBBLEWRAP,
                pass_fds=launch.pass_fds,
            )
        finally:
            launch.release()

    async def run_script(
        self,
        code: str,
        *,
        produced_by: str,
        label: str | None = None,
        cpu_seconds: int | None = None,
        wall_seconds: int | None = None,
    ) -> ExecutionResult:
        """Run ``code`` to completion; files it writes to ``$SCIENCEDISCOVERY_OUTPUT_DIR`` become artifacts."""
        mode = await self.mode()
        record = await self.environment()
        outputs = self.new_output_dir(label or produced_by)
        outcome = await self._run(
            mode, "script", outputs, stdin=code.encode(), cpu_seconds=cpu_seconds, wall_seconds=wall_seconds
        )
        return ExecutionResult(
            status=outcome.termination.value,
            ok=outcome.ok,
            exit_code=outcome.exit_code,
            stdout=outcome.stdout,
            stderr=outcome.stderr,
            artifacts=collect(outputs, environment_revision=record.revision, produced_by=produced_by),
            environment_revision=record.revision,
            sandbox_mode=mode,
            network_allowed=self.config.network_allowed,
            detail=_detail(outcome),
        )


def _detail(outcome: ProcessOutcome) -> str:
    if outcome.signal is not None:
        return f"killed by signal {outcome.signal}"
    return {
        "timeout": "stopped: wall-clock limit reached",
        "output_limit": "stopped: output limit reached",
    }.get(outcome.termination.value, "")
