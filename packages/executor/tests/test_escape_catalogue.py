"""The catalogue of escape and abuse attempts, each run through the real bubblewrap sandbox.

Every row is code an agent might run. ``refused`` rows must observe the attempt fail inside
the sandbox (they print REFUSED, never ESCAPED); other rows are contained by a limit. Host
checks then confirm that nothing outside the sandbox changed.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from sciencediscovery.executor import ExecutionResult, Executor, ExecutorConfig

CANARY = Path.home() / ".sciencediscovery-executor-canary"
SECRET_VARIABLES = {"OPENAI_API_KEY": "sk-test-do-not-leak", "AWS_SECRET_ACCESS_KEY": "aws-do-not-leak"}


def refused(attempt: str, errors: str = "OSError") -> str:
    """Code that prints REFUSED when ``attempt`` raises one of ``errors`` and ESCAPED when it succeeds."""
    body = textwrap.indent(textwrap.dedent(attempt).strip(), "    ")
    report = "    print('REFUSED', type(error).__name__, error)"
    return f"try:\n{body}\nexcept ({errors}) as error:\n{report}\nelse:\n    print('ESCAPED')\n"


@attrs.frozen
class Attempt:
    id: str
    code: str
    expect: str = "refused"  # refused | a status (cpu_limit, timeout, output_limit) | "contained"
    check: Callable[[ExecutionResult, dict[str, Any]], None] | None = None
    wall_seconds: int | None = None  # rows that must hit the wall clock use a shorter one


def _no_request(result: ExecutionResult, ctx: dict[str, Any]) -> None:
    assert ctx["server"].requests == 0


def _reference_unchanged(result: ExecutionResult, ctx: dict[str, Any]) -> None:
    workspace = ctx["workspace"]
    assert (workspace.reference / "protocol.txt").read_text() == "original protocol\n"
    assert sorted(p.name for p in workspace.reference.iterdir()) == ["protocol.txt"]


def _host_sleeper_alive(result: ExecutionResult, ctx: dict[str, Any]) -> None:
    assert ctx["sleeper"].poll() is None, "a host process was killed from inside the sandbox"


def _no_leftover_processes(result: ExecutionResult, ctx: dict[str, Any]) -> None:
    marker = ctx["marker"]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                assert marker.encode() not in (entry / "cmdline").read_bytes(), f"pid {entry.name} survived"
            except OSError:
                continue


def _bounded_output(result: ExecutionResult, ctx: dict[str, Any]) -> None:
    assert result.stdout.truncated or result.stderr.truncated
    assert len(result.content()) < 3 * 4096


def _forks_bounded(result: ExecutionResult, ctx: dict[str, Any]) -> None:
    count = int(result.stdout.text.split("started")[1].split()[0])
    assert count < 16, f"{count} processes started despite the limit of 16"


def _no_secrets(result: ExecutionResult, ctx: dict[str, Any]) -> None:
    for value in SECRET_VARIABLES.values():
        assert value not in result.stdout.text and value not in result.stderr.text


def _no_setid_files(result: ExecutionResult, ctx: dict[str, Any]) -> None:
    for path in ctx["workspace"].data.iterdir():
        assert not path.lstat().st_mode & 0o6000, f"{path.name} carries a setuid/setgid bit"


def _no_symlink_artifact(result: ExecutionResult, ctx: dict[str, Any]) -> None:
    assert [a.name for a in result.artifacts] == ["plain.txt"]


NETWORK = [
    Attempt(
        "tcp-connect-host-loopback",
        refused("socket.create_connection(('127.0.0.1', CTX['port']), timeout=2)"),
        check=_no_request,
    ),
    Attempt(
        "urllib-host-server",
        refused("urllib.request.urlopen(f'http://127.0.0.1:{CTX[\"port\"]}/', timeout=2)"),
        check=_no_request,
    ),
    Attempt(
        "http-client-host-server",
        refused("""
        c = http.client.HTTPConnection('127.0.0.1', CTX['port'], timeout=2)
        c.request('GET', '/')
        c.getresponse()
    """),
        check=_no_request,
    ),
    Attempt("dns-lookup", refused("socket.getaddrinfo('pypi.org', 443)")),
    Attempt("https-client", refused("urllib.request.urlopen('https://pypi.org/simple/', timeout=2)")),
    Attempt(
        "udp-to-public-resolver", refused("socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect(('9.9.9.9', 53))")
    ),
    Attempt(
        "only-loopback-interface", "print('REFUSED' if [n for _, n in socket.if_nameindex()] == ['lo'] else 'ESCAPED')"
    ),
    Attempt("raw-packet-socket", refused("socket.socket(socket.AF_PACKET, socket.SOCK_RAW)")),
    Attempt("raw-icmp-socket", refused("socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)")),
    Attempt(
        "abstract-unix-socket-on-host",
        refused("""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(CTX['abstract'])
    """),
    ),
    Attempt("no-resolver-config", refused("open('/etc/resolv.conf').read()")),
]

FILESYSTEM = [
    Attempt("write-system-path", refused("open('/usr/escaped.txt', 'w')")),
    Attempt("write-root-of-sandbox", refused("open('/escaped.txt', 'w')")),
    Attempt("write-etc-passwd", refused("open('/etc/passwd', 'a').write('x:0:0::/:/bin/sh\\n')")),
    Attempt("write-interpreter-prefix", refused("open(os.path.join(sys.prefix, 'escaped.pth'), 'w')")),
    Attempt(
        "create-in-read-only-mount", refused("open('/workspace/reference/new.txt', 'w')"), check=_reference_unchanged
    ),
    Attempt(
        "modify-read-only-mount",
        refused("open('/workspace/reference/protocol.txt', 'a').write('tampered')"),
        check=_reference_unchanged,
    ),
    Attempt(
        "delete-from-read-only-mount",
        refused("os.remove('/workspace/reference/protocol.txt')"),
        check=_reference_unchanged,
    ),
    Attempt(
        "rename-out-of-read-only-mount",
        refused("os.rename('/workspace/reference/protocol.txt', '/workspace/data/stolen.txt')"),
        check=_reference_unchanged,
    ),
    Attempt(
        "hardlink-read-only-into-writable",
        refused("os.link('/workspace/reference/protocol.txt', '/workspace/data/linked.txt')"),
        check=_reference_unchanged,
    ),
    Attempt(
        "chmod-read-only-mount",
        refused("os.chmod('/workspace/reference/protocol.txt', 0o777)"),
        check=_reference_unchanged,
    ),
    Attempt("read-root-home-canary", refused("open(CTX['canary']).read()")),
    Attempt("list-root-home", "print('REFUSED' if CTX['canary_name'] not in os.listdir('/root') else 'ESCAPED')"),
    Attempt("read-home-directories", refused("os.listdir('/home')")),
    Attempt("read-etc-shadow", refused("open('/etc/shadow').read()")),
    Attempt("read-outside-by-host-path", refused("open(CTX['outside_secret']).read()")),
    Attempt("dotdot-from-mount-to-host", refused("open('/workspace/data/../../' + CTX['outside_secret']).read()")),
    Attempt(
        "dotdot-lists-only-mounts",
        "print('REFUSED' if sorted(os.listdir('/workspace/data/..')) == ['data', 'reference'] else 'ESCAPED')",
    ),
    Attempt("planted-symlink-to-host-secret", refused("open('/workspace/data/planted-link').read()")),
    Attempt(
        "symlink-to-host-path-created-inside",
        refused("""
        os.symlink(CTX['outside_secret'], '/workspace/data/made-link')
        open('/workspace/data/made-link').read()
    """),
    ),
    Attempt(
        "symlink-artifact-to-host-file",
        """
        out = os.environ['SCIENCEDISCOVERY_OUTPUT_DIR']
        open(os.path.join(out, 'plain.txt'), 'w').write('ok')
        os.symlink(CTX['outside_secret'], os.path.join(out, 'leak.txt'))
        print('REFUSED')
    """,
        check=_no_symlink_artifact,
    ),
    Attempt("proc-1-root-traversal", refused("open('/proc/1/root' + CTX['outside_secret']).read()")),
    Attempt("sys-filesystem", refused("os.listdir('/sys/class')")),
    Attempt("raw-disk-device", refused("open('/dev/sda', 'rb')")),
    Attempt("kernel-memory-device", refused("open('/dev/mem', 'rb')")),
    Attempt("write-namespaced-sysctl", refused("open('/proc/sys/kernel/hostname', 'w').write('pwned')")),
    Attempt("open-core-pattern-for-write", refused("open('/proc/sys/kernel/core_pattern', 'w').close()")),
    Attempt("open-sysrq-trigger-for-write", refused("open('/proc/sysrq-trigger', 'w').close()")),
    Attempt("read-kernel-log", refused("open('/proc/kmsg', 'rb').read(1)")),
    Attempt(
        "disk-fill-beyond-file-limit",
        refused("""
        with open('/tmp/fill.bin', 'wb') as f:
            for _ in range(64):
                f.write(b'0' * 2**20)
    """),
    ),
]

PRIVILEGE = [
    Attempt(
        "mount-tmpfs-over-mount",
        refused("""
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.mount(b'none', b'/workspace/reference', b'tmpfs', 0, None) != 0:
            raise OSError(ctypes.get_errno(), 'mount failed')
    """),
    ),
    Attempt(
        "nested-user-namespace",
        refused("""
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x10000000) != 0:
            raise OSError(ctypes.get_errno(), 'unshare failed')
    """),
    ),
    Attempt("chroot", refused("os.chroot('/tmp')")),
    Attempt("become-root", refused("os.setuid(0)")),
    Attempt(
        "no-capabilities",
        "print('REFUSED' if 'CapEff:\\t0000000000000000' in open('/proc/self/status').read() else 'ESCAPED')",
    ),
]

SETID = [
    Attempt(
        "setuid-bit-in-writable-mount",
        refused("""
        open('/workspace/data/tool', 'w').close()
        os.chmod('/workspace/data/tool', 0o4755)
    """),
        check=_no_setid_files,
    ),
    Attempt(
        "setgid-bit-by-descriptor",
        refused("""
        fd = os.open('/workspace/data/tool2', os.O_CREAT | os.O_WRONLY, 0o644)
        os.fchmod(fd, 0o2755)
    """),
        check=_no_setid_files,
    ),
    Attempt(
        "create-file-with-setuid-mode",
        refused("os.open('/workspace/data/tool3', os.O_CREAT | os.O_WRONLY, 0o4755)"),
        check=_no_setid_files,
    ),
    Attempt(
        "foreign-syscall-abi",
        """
        libc = ctypes.CDLL(None, use_errno=True)
        open('/workspace/data/tool4', 'w').close()
        result = libc.syscall(0x40000000 + 90, b'/workspace/data/tool4', 0o4755)
        print('REFUSED' if result == -1 else 'ESCAPED', ctypes.get_errno())
    """,
        check=_no_setid_files,
    ),
]

PROCESSES = [
    Attempt(
        "kill-host-process",
        refused("os.kill(CTX['sleeper_pid'], signal.SIGKILL)", "ProcessLookupError"),
        check=_host_sleeper_alive,
    ),
    Attempt(
        "kill-every-process",
        """
        print('REFUSED', flush=True)
        os.kill(-1, signal.SIGKILL)
    """,
        expect="contained",
        check=_host_sleeper_alive,
    ),
    Attempt(
        "host-pids-invisible", "print('REFUSED' if str(CTX['sleeper_pid']) not in os.listdir('/proc') else 'ESCAPED')"
    ),
    Attempt("read-host-process-environ", refused("open(f\"/proc/{CTX['sleeper_pid']}/environ\").read()")),
    Attempt(
        "daemon-outlives-script",
        """
        subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', CTX['marker']], start_new_session=True)
        print('REFUSED')
    """,
        check=_no_leftover_processes,
    ),
    Attempt(
        "fork-bomb-bounded",
        """
        started = 0
        for _ in range(200):
            try:
                pid = os.fork()
            except OSError:
                continue
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            started += 1
        print('started', started)
    """,
        expect="exited",
        check=_forks_bounded,
    ),
    Attempt(
        "fork-bomb-unbounded",
        """
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """,
        expect="limit",
        check=_no_leftover_processes,
        wall_seconds=2,
    ),
    Attempt(
        "thread-bomb",
        """
        threads = 0
        try:
            for _ in range(1000):
                threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
                threads += 1
        except RuntimeError:
            print('REFUSED', threads, flush=True)
        else:
            print('ESCAPED', flush=True)
        os._exit(0)
    """,
    ),
    Attempt("memory-bomb-single-allocation", refused("bytearray(4 * 2**30)", "MemoryError")),
    Attempt(
        "memory-bomb-growth",
        refused(
            """
        hoard = []
        while True:
            hoard.append(bytearray(32 * 2**20))
    """,
            "MemoryError",
        ),
    ),
    Attempt("infinite-cpu-loop", "while True:\n    pass\n", expect="limit"),
    Attempt("sleep-forever", "time.sleep(3600)\n", expect="timeout", wall_seconds=2),
    Attempt("stdout-flood", "while True:\n    print('x' * 4096)\n", expect="output_limit", check=_bounded_output),
    Attempt(
        "stderr-flood", "while True:\n    sys.stderr.write('y' * 4096)\n", expect="output_limit", check=_bounded_output
    ),
    Attempt(
        "single-endless-line",
        "while True:\n    sys.stdout.write('z' * 65536)\n",
        expect="output_limit",
        check=_bounded_output,
    ),
]

SECRETS = [
    Attempt(
        "secret-environment-variables",
        """
        leaked = [name for name in CTX['secret_names'] if name in os.environ]
        print('REFUSED' if not leaked else 'ESCAPED ' + ' '.join(leaked))
    """,
        check=_no_secrets,
    ),
    Attempt(
        "secrets-in-proc-environ",
        """
        found = [p for p in os.listdir('/proc') if p.isdigit() and any(
            v.encode() in open(f'/proc/{p}/environ', 'rb').read() for v in CTX['secret_values'])]
        print('REFUSED' if not found else 'ESCAPED')
    """,
        check=_no_secrets,
    ),
    Attempt(
        "only-allow-listed-variables",
        """
        allowed = {'PATH', 'HOME', 'TMPDIR', 'LANG', 'MPLCONFIGDIR', 'MPLBACKEND', 'OPENBLAS_NUM_THREADS',
                   'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'SCIENCEDISCOVERY_OUTPUT_DIR',
                   'LC_ALL', 'TZ', 'PWD', 'LC_CTYPE'}
        extra = sorted(set(os.environ) - allowed)
        print('REFUSED' if not extra else 'ESCAPED ' + ' '.join(extra))
    """,
    ),
]

CATALOGUE = NETWORK + FILESYSTEM + PRIVILEGE + SETID + PROCESSES + SECRETS
PREAMBLE = "import ctypes, http.client, json, os, signal, socket, subprocess, sys, threading, time, urllib.request\n"


def test_catalogue_is_large_enough() -> None:
    assert len(CATALOGUE) >= 40
    assert len({attempt.id for attempt in CATALOGUE}) == len(CATALOGUE)


@pytest.fixture(scope="module")
def context(shared_workspace: Any, loopback_server: Any) -> Any:
    CANARY.write_text("root-only canary\n")
    (shared_workspace.data / "planted-link").symlink_to(shared_workspace.outside / "secret.txt")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract = f"\0sd-executor-test-{os.getpid()}"
    listener.bind(abstract)
    listener.listen()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    ctx = {
        "port": loopback_server.port,
        "abstract": abstract,
        "canary": str(CANARY),
        "canary_name": CANARY.name,
        "outside_secret": str(shared_workspace.outside / "secret.txt"),
        "sleeper_pid": sleeper.pid,
        "marker": f"sd-executor-marker-{os.getpid()}",
        "secret_names": sorted(SECRET_VARIABLES),
        "secret_values": sorted(SECRET_VARIABLES.values()),
    }
    yield {**ctx, "server": loopback_server, "workspace": shared_workspace, "sleeper": sleeper}
    sleeper.kill()
    sleeper.wait()
    listener.close()
    CANARY.unlink()


@pytest.fixture(scope="module")
def leaky_host_executor(shared_workspace: Any, sandboxed: Executor) -> Executor:
    """An executor whose host environment holds secrets (as a developer's shell would)."""
    return Executor(sandboxed.config, environ={**os.environ, **SECRET_VARIABLES})


@pytest.mark.parametrize("attempt", CATALOGUE, ids=lambda attempt: attempt.id)
def test_attempt_is_refused_or_contained(attempt: Attempt, context: Any, leaky_host_executor: Executor) -> None:
    plain = {k: v for k, v in context.items() if k not in {"server", "workspace", "sleeper"}}
    code = PREAMBLE + f"CTX = json.loads({json.dumps(plain)!r})\n"
    code += textwrap.dedent(attempt.code)
    result = asyncio.run(
        leaky_host_executor.run_script(code, produced_by=f"catalogue-{attempt.id}", wall_seconds=attempt.wall_seconds)
    )
    output = result.stdout.text + result.stderr.text
    assert "ESCAPED" not in output, output
    if attempt.expect == "refused":
        assert "REFUSED" in result.stdout.text, output
        assert result.ok, output
    elif attempt.expect == "limit":
        assert result.status in {"cpu_limit", "timeout"}, output
    elif attempt.expect != "contained":
        assert result.status == attempt.expect, output
    if attempt.check is not None:
        attempt.check(result, context)
    assert result.sandbox_mode.value == "bubblewrap"


def test_network_is_reachable_only_when_the_epoch_allows_it(shared_workspace: Any, loopback_server: Any) -> None:
    settings_value = shared_workspace.settings()
    settings_value["network_allowed"] = True
    executor = Executor(ExecutorConfig.from_settings(settings_value))
    code = f"import urllib.request\nprint(urllib.request.urlopen('http://127.0.0.1:{loopback_server.port}/').read())"
    before = loopback_server.requests
    result = asyncio.run(executor.run_script(code, produced_by="networked"))
    assert result.ok, result.stderr.text
    assert "reached the host" in result.stdout.text
    assert loopback_server.requests == before + 1
    assert result.metadata()["sandbox"] == {"mode": "bubblewrap", "network_allowed": True}
