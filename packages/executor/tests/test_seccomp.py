"""The seccomp program is well formed for every supported architecture (its behaviour is in the catalogue)."""

from __future__ import annotations

import struct

import pytest

from sciencediscovery.executor.seccomp import setid_filter

_JUMPS = {0x15, 0x35, 0x45}
_RET = 0x06


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_every_jump_lands_inside_the_program_and_every_path_returns(machine: str) -> None:
    program = setid_filter(machine)
    assert program is not None and len(program) % 8 == 0
    instructions = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    for index, (code, jt, jf, _) in enumerate(instructions):
        if code in _JUMPS:
            assert index + 1 + max(jt, jf) < len(instructions)
    assert instructions[-1][0] == _RET and instructions[-2][0] == _RET


def test_unsupported_architectures_get_no_filter() -> None:
    assert setid_filter("riscv64") is None
