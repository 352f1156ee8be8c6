"""The bubblewrap sandbox: what is visible inside it, and whether it can run on this host.

Inside, code sees read-only system paths and interpreter prefixes, the workspace mounts at
``/workspace/<name>`` with their modes, ``/outputs`` (read-write, collected as artifacts),
a private ``/tmp``, its own ``/proc`` and ``/dev``, no network unless the policy allows it,
new PID/IPC/UTS/user namespaces, no capabilities and no nested user namespaces. ``/root``,
``/home`` and the rest of the host file system are simply absent.
"""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs

from .cgroups import PidsCgroup
from .config import ExecutorConfig, MountMode
from .seccomp import setid_filter

SANDBOX_OUTPUTS = "/outputs"
SANDBOX_UID = 65534
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/mime.types",
    "/etc/ssl/certs",
    "/etc/fonts",
)
_NETWORK_ETC_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf")
# Root-writable or kernel-revealing /proc entries: read-only or hidden, whatever the caller's uid.
_PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")
_PROC_HIDDEN = (
    "/proc/kcore",
    "/proc/kmsg",
    "/proc/kpagecount",
    "/proc/kpageflags",
    "/proc/kpagecgroup",
    "/proc/timer_list",
    "/proc/sched_debug",
    "/proc/keys",
    "/proc/key-users",
)
_PASSWD = "nobody:x:65534:65534:sandbox:/tmp:/usr/sbin/nologin\n"
_GROUP = "nogroup:x:65534:\n"


class SandboxMode(str, enum.Enum):
    """How code runs: inside bubblewrap, or (only when opted in) directly on the host."""

    BUBBLEWRAP = "bubblewrap"
    UNSANDBOXED = "unsandboxed"


class ProcessLimit(str, enum.Enum):
    """How the process-count limit is enforced."""

    CGROUP = "cgroup"
    RLIMIT = "rlimit"
    NONE = "none"


@attrs.frozen
class SandboxStatus:
    """The result of probing the host: can the sandbox run, and if not, exactly why."""

    available: bool
    reason: str
    process_limit: ProcessLimit


def process_limit_method() -> ProcessLimit:
    """A writable pids cgroup is preferred; ``RLIMIT_NPROC`` only works for a non-root user."""
    cgroup = PidsCgroup.create(8)
    if cgroup is not None:
        cgroup.remove()
        return ProcessLimit.CGROUP
    return ProcessLimit.RLIMIT if os.geteuid() != 0 else ProcessLimit.NONE


def interpreter_paths(python: str) -> tuple[Path, ...]:
    """The prefixes the interpreter needs to start (its venv and its base installation)."""
    if Path(python) == Path(sys.executable):
        prefixes = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    else:
        script = (
            "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))"
        )
        completed = subprocess.run([python, "-s", "-c", script], capture_output=True, text=True, timeout=30, check=True)
        prefixes = json.loads(completed.stdout)
    paths: list[Path] = []
    for prefix in sorted(
        {Path(p).resolve() for p in prefixes} | {Path(p) for p in prefixes}, key=lambda p: len(p.parts)
    ):
        if not any(prefix.is_relative_to(bound) for bound in (*paths, *(Path(d) for d in _SYSTEM_DIRS))):
            paths.append(prefix)
    return tuple(paths)


@attrs.frozen
class SandboxLayout:
    """Host facts the bubblewrap command is built from (computed once per executor)."""

    bwrap: str
    interpreter_paths: tuple[Path, ...]
    etc_dir: Path
    seccomp: Path | None

    @classmethod
    def prepare(cls, config: ExecutorConfig) -> SandboxLayout:
        etc_dir = config.output_dir / ".sandbox-etc"
        etc_dir.mkdir(parents=True, exist_ok=True)
        (etc_dir / "passwd").write_text(_PASSWD)
        (etc_dir / "group").write_text(_GROUP)
        program = setid_filter()
        seccomp = None
        if program is not None:
            seccomp = etc_dir / "seccomp.bpf"
            seccomp.write_bytes(program)
        return cls(config.bwrap or "bwrap", interpreter_paths(config.python), etc_dir, seccomp)

    def open_seccomp(self) -> int | None:
        """A file descriptor of the compiled filter for ``--seccomp`` (the caller closes it)."""
        return os.open(self.seccomp, os.O_RDONLY) if self.seccomp else None


def bwrap_argv(
    config: ExecutorConfig,
    layout: SandboxLayout,
    command: Sequence[str],
    *,
    outputs: Path | None,
    shared_dirs: Sequence[Path] = (),
    cwd: str,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The full ``bwrap`` command line running ``command`` under ``config``'s policy."""
    argv = [layout.bwrap, "--die-with-parent", "--new-session", "--unshare-all"]
    if config.network_allowed:
        argv.append("--share-net")
    argv += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--disable-userns"]
    argv += ["--hostname", "sandbox", "--cap-drop", "ALL"]
    for system_dir in _SYSTEM_DIRS:
        if os.path.islink(system_dir):
            argv += ["--symlink", os.readlink(system_dir), system_dir]
        elif os.path.isdir(system_dir):
            argv += ["--ro-bind", system_dir, system_dir]
    etc_files = _ETC_FILES + (_NETWORK_ETC_FILES if config.network_allowed else ())
    for name in etc_files:
        argv += ["--ro-bind-try", name, name]
    argv += ["--ro-bind", str(layout.etc_dir / "passwd"), "/etc/passwd"]
    argv += ["--ro-bind", str(layout.etc_dir / "group"), "/etc/group"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/workspace"]
    for name in _PROC_READ_ONLY:
        argv += ["--ro-bind-try", name, name]
    for name in _PROC_HIDDEN:
        if os.path.exists(name):  # a fresh procfs has the host's entries; absent ones cannot be covered
            argv += ["--ro-bind", "/dev/null", name]
    for prefix in layout.interpreter_paths:
        argv += ["--ro-bind", str(prefix), str(prefix)]
    for mount in config.mounts:
        flag = "--bind" if mount.mode is MountMode.READ_WRITE else "--ro-bind"
        argv += [flag, str(mount.path), mount.sandbox_path]
    if outputs is not None:
        argv += ["--bind", str(outputs), SANDBOX_OUTPUTS]
    for shared in shared_dirs:
        argv += ["--bind", str(shared), str(shared)]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--remount-ro", "/", "--chdir", cwd, "--", *command]
    return argv


def probe(config: ExecutorConfig) -> SandboxStatus:
    """Check that bubblewrap can create its namespaces here and that process counts can be limited."""
    limit = process_limit_method()
    if not config.bwrap or not Path(config.bwrap).exists():
        return SandboxStatus(False, f"bubblewrap is not installed (bwrap={config.bwrap!r})", limit)
    seccomp_fd = None
    try:
        layout = SandboxLayout.prepare(config)
        seccomp_fd = layout.open_seccomp()
        command = [config.python, "-s", "-c", "pass"]
        argv = bwrap_argv(config, layout, command, outputs=None, cwd="/tmp", seccomp_fd=seccomp_fd)
        completed = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin"},
            pass_fds=() if seccomp_fd is None else (seccomp_fd,),
        )
    except (OSError, subprocess.SubprocessError) as error:
        return SandboxStatus(False, f"bubblewrap could not start: {error}", limit)
    finally:
        if seccomp_fd is not None:
            os.close(seccomp_fd)
    if completed.returncode != 0:
        detail = completed.stderr.strip().splitlines()[-1:] or [f"exit code {completed.returncode}"]
        return SandboxStatus(False, f"bubblewrap failed: {detail[0]}", limit)
    if limit is ProcessLimit.NONE:
        return SandboxStatus(False, "the process limit cannot be enforced (root without a writable pids cgroup)", limit)
    return SandboxStatus(True, "", limit)
