"""Both domains fault on exactly the same shared-memory accesses (per-variable windows, and
each access confined to the variables its address derives from: `semantics.machine.layout`),
with the same message naming the variable, and read the same bytes where they do not."""

from __future__ import annotations

import numpy as np
import pytest

from semantics.machine import prepare, run_kernel
from semantics.machine.memory import SHARED_SPACING, MemoryFault
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ptx import parse_ptx

# Thread t stores t + 1 to a[t], b[t] and smem[t] (16 threads, 64 bytes each), then thread 0
# reads 4 bytes at `from + at`, `from` the address of a, b or smem (param `which`: 0, 1, 2).
KERNEL = """.version 8.8
.target sm_90
.address_size 64
.extern .shared .align 16 .b8 smem[];
.visible .entry k(.param .u64 out, .param .u32 which, .param .u32 at)
{
.shared .align 4 .b8 a[64];
.shared .align 8 .b8 b[64];
.reg .pred %p<4>;
.reg .b32 %r<16>;
.reg .b64 %rd<4>;
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [which];
ld.param.u32 %r2, [at];
mov.u32 %r3, %tid.x;
shl.b32 %r4, %r3, 2;
add.s32 %r5, %r3, 1;
mov.u32 %r6, a;
add.s32 %r7, %r6, %r4;
st.shared.u32 [%r7], %r5;
mov.u32 %r8, b;
add.s32 %r9, %r8, %r4;
st.shared.u32 [%r9], %r5;
mov.u32 %r10, smem;
add.s32 %r11, %r10, %r4;
st.shared.u32 [%r11], %r5;
bar.sync 0;
setp.ne.u32 %p1, %r3, 0;
@%p1 bra DONE;
setp.eq.u32 %p2, %r1, 1;
@%p2 bra FROM_B;
setp.eq.u32 %p3, %r1, 2;
@%p3 bra FROM_SMEM;
add.s32 %r13, %r6, %r2;
ld.shared.u32 %r14, [%r13];
bra.uni STORE;
FROM_B:
add.s32 %r13, %r8, %r2;
ld.shared.u32 %r14, [%r13];
bra.uni STORE;
FROM_SMEM:
add.s32 %r13, %r10, %r2;
ld.shared.u32 %r14, [%r13];
STORE:
st.global.u32 [%rd1], %r14;
DONE:
ret;
}
"""
CASES = [(w, at) for w in (0, 1, 2)
         for at in (0, 60, 64, 128, 1024, SHARED_SPACING - 4, SHARED_SPACING, -4)]


def _outcome(run):
    try:
        return ("ok", run())
    except MemoryFault as e:
        return ("fault", str(e))


@pytest.mark.parametrize("which,at", CASES)
def test_both_domains_fault_alike(which, at):
    k = prepare(parse_ptx(KERNEL, "two.ptx"), "k")
    at &= 0xFFFFFFFF

    def concrete():
        out = np.zeros(1, np.uint32)
        return int(run_kernel(k, None, 1, 16, [out, which, at],
                              dynamic_shared=64).buffers["out"][0])

    def symbolic():
        launch = run_symbolic(k, (1, 1, 1), (16, 1, 1), [SymBuffer(32, (0,)), which, at],
                              dynamic_shared=64)
        return int(launch.buffers["out"][0])
    got, want = _outcome(symbolic), _outcome(concrete)
    assert got == want
    if at in (0, 60):
        assert got == ("ok", at // 4 + 1)
    else:       # past the variable or before it, in its window or another's: out of it
        name = ("a", "b", "smem")[which]
        assert got[0] == "fault"
        assert f"out of bounds of shared variable '{name}' (64 bytes)" in got[1]
