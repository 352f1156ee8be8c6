"""A seccomp filter for the sandbox: no setuid/setgid bits, no foreign syscall ABIs.

When the executor runs as root, files created in read-write mounts are owned by root on the
host, so a setuid bit set from inside would leave a root setuid file behind. The filter makes
every syscall that can set such a bit (``chmod`` family, ``open``/``creat``/``mknod`` with such a
mode) fail with EPERM, ``openat2`` (whose mode hides behind a pointer) fail with ENOSYS so libc
falls back to ``openat``, and any other syscall ABI (i386, x32) fail with ENOSYS.
"""

from __future__ import annotations

import errno
import platform
import struct

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_SETID_BITS = 0o6000
_X32_BIT = 0x40000000


class _Arch:
    def __init__(self, audit: int, mode_args: dict[int, int], unsupported: tuple[int, ...], x32: bool) -> None:
        self.audit = audit
        self.mode_args = mode_args  # syscall number -> index of its mode argument
        self.unsupported = unsupported
        self.x32 = x32


_ARCHES = {
    # chmod 90, fchmod 91, fchmodat 268, fchmodat2 452, open 2, openat 257, creat 85, mknod 133, mknodat 259
    "x86_64": _Arch(0xC000003E, {90: 1, 91: 1, 268: 2, 452: 2, 2: 2, 257: 3, 85: 1, 133: 1, 259: 2}, (437,), x32=True),
    # fchmod 52, fchmodat 53, fchmodat2 452, openat 56, mknodat 33
    "aarch64": _Arch(0xC00000B7, {52: 1, 53: 2, 452: 2, 56: 3, 33: 2}, (437,), x32=False),
}


def _instruction(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def setid_filter(machine: str | None = None) -> bytes | None:
    """The compiled filter for ``machine`` (default: this one), or ``None`` where it is not supported."""
    arch = _ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    checks = sorted(arch.mode_args.items())
    arg_blocks = sorted(set(arch.mode_args.values()))
    # Layout: header, one JEQ per checked or unsupported syscall, ALLOW, one 3-instruction block per
    # mode-argument index (load, JSET, ALLOW), then the EPERM and ENOSYS returns.
    header = 4 if arch.x32 else 3
    dispatch = header + len(checks) + len(arch.unsupported)
    block_at = {index: dispatch + 1 + 3 * n for n, index in enumerate(arg_blocks)}
    eperm = dispatch + 1 + 3 * len(arg_blocks)
    enosys = eperm + 1
    program = [_instruction(_LD_ABS, 4), _instruction(_JEQ, arch.audit, 0, enosys - 2)]
    program.append(_instruction(_LD_ABS, 0))
    if arch.x32:
        program.append(_instruction(_JGE, _X32_BIT, enosys - 4, 0))
    for number, index in checks:
        program.append(_instruction(_JEQ, number, block_at[index] - len(program) - 1, 0))
    for number in arch.unsupported:
        program.append(_instruction(_JEQ, number, enosys - len(program) - 1, 0))
    program.append(_instruction(_RET, _ALLOW))
    for index in arg_blocks:
        program.append(_instruction(_LD_ABS, 16 + 8 * index))  # low 32 bits of args[index] (little endian)
        program.append(_instruction(_JSET, _SETID_BITS, eperm - len(program) - 1, 0))
        program.append(_instruction(_RET, _ALLOW))
    program.append(_instruction(_RET, _ERRNO | errno.EPERM))
    program.append(_instruction(_RET, _ERRNO | errno.ENOSYS))
    assert len(program) == enosys + 1
    return b"".join(program)
