"""bar.red.{popc,and,or} (`__syncthreads_count/and/or`) and nanosleep: the emulator against a
numpy model of the CTA-wide reductions, and the symbolic domain through pairs proved and
refuted against a shared-memory atomic count (kernels/block_reduce/)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semantics.machine import run_kernel
from semantics.ptx import parse_ptx_file
from verifier.api import EQUIVALENT, NOT_EQUIVALENT, load_pair, verify

DATA = Path(__file__).resolve().parents[2] / "kernels" / "block_reduce"


@pytest.mark.parametrize("block,grid", [(40, 3), (64, 2), (1, 4)])
def test_the_reductions_of_nvccs_kernel(block, grid):
    # nvcc's kernel (block_reductions.cu) indexes by threadIdx alone: every CTA reduces the
    # same predicates and writes the same out.
    m = parse_ptx_file(DATA / "block_reductions.ptx")
    rng = np.random.default_rng(block)
    for n in (block, max(1, block // 3)):
        x = rng.integers(-5, 5, size=block).astype(np.int32)
        out = np.zeros(block, dtype=np.int32)
        res = run_kernel(m, "count_by_bar_red", grid=grid, block=block, args=[x, out, n])
        got = res.buffers["count_by_bar_red_param_1"][:n]
        p = (np.arange(block) < n) & (x > 0)
        want = p.sum() * 4 + int(p.all()) * 2 + int(p.any())
        assert (got == want).all(), (n, got, want)


# Each thread's predicate from its own element: x[ctaid * ntid + tid] > 0; out likewise gets
# its CTA's count, and with .and / .or.
PER_CTA = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry per_cta(.param .u64 x, .param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mul.wide.s32 %rd3, %r4, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r5, [%rd4];
    setp.gt.s32 %p1, %r5, 0;
    bar.red.popc.u32 %r6, 0, %p1;
    bar.red.and.pred %p2, 0, %p1;
    bar.red.or.pred %p3, 0, !%p1;
    selp.u32 %r7, 2, 0, %p2;
    selp.u32 %r8, 1, 0, %p3;
    shl.b32 %r9, %r6, 2;
    add.s32 %r10, %r9, %r7;
    add.s32 %r11, %r10, %r8;
    add.s64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r11;
    ret;
}
"""


@pytest.mark.parametrize("block,grid", [(40, 3), (32, 2), (1, 3)])
def test_every_cta_reduces_its_own_threads_predicates(tmp_path, block, grid):
    f = tmp_path / "per_cta.ptx"
    f.write_text(PER_CTA)
    m = parse_ptx_file(f)
    rng = np.random.default_rng(block + grid)
    x = rng.integers(-1, 3, size=block * grid).astype(np.int32)
    x[:block] = 1                              # CTA 0: all true
    out = np.zeros(block * grid, dtype=np.int32)
    res = run_kernel(m, "per_cta", grid=grid, block=block, args=[x, out])
    got = res.buffers["out"].reshape(grid, block)
    p = (x > 0).reshape(grid, block)
    want = p.sum(1) * 4 + p.all(1) * 2 + (~p).any(1)      # (.or of the negated predicate)
    assert (got == want[:, None]).all(), (got, want)


@pytest.mark.parametrize("name,n,expect", [("bar_red", 40, EQUIVALENT),
                                           ("bar_red", 17, EQUIVALENT),
                                           ("swapped", 40, NOT_EQUIVALENT)])
def test_block_reductions_against_an_atomic_count(name, n, expect):
    v = verify(load_pair(DATA / f"{name}.toml"), fixed={"n": n}, timeout_s=60)
    assert v.kind == expect, v.reasons


def test_griddepcontrol_changes_no_value_in_either_domain():
    # programmatic dependent launch: the claim is one launch per side, so wait and
    # launch_dependents order nothing a value can see; other spellings do not parse
    import z3
    from semantics.errors import PtxSyntaxError
    from semantics.machine import prepare
    from semantics.machine.symbolic_run import SymBuffer, run_symbolic
    from semantics.ptx import parse_ptx
    ptx = """.version 8.0\n.target sm_90\n.address_size 64
.visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<2>;
ld.param.u64 %rd1, [p];\ngriddepcontrol.wait;\nld.global.u32 %r1, [%rd1];
add.u32 %r1, %r1, 1;\ngriddepcontrol.launch_dependents;\nst.global.u32 [%rd1], %r1;
ret;\n}\n"""
    k = prepare(parse_ptx(ptx, "g.ptx"), "k")
    buf = np.array([41], np.uint32)
    assert run_kernel(k, None, (1, 1, 1), (1, 1, 1), {"p": buf}).buffers["p"].tolist() == [42]
    x = z3.BitVec("x", 32)
    (t,) = run_symbolic(k, (1, 1, 1), (1, 1, 1), [SymBuffer(32, (x,))]).buffers["p"]
    assert z3.simplify(t - x).eq(z3.BitVecVal(1, 32))
    with pytest.raises(PtxSyntaxError, match="unknown modifier '.foo'"):
        parse_ptx(ptx.replace("griddepcontrol.wait", "griddepcontrol.wait.foo"), "g.ptx")
