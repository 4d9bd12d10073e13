"""More SASS forms (VOTE, ATOMG add/max/exch/cas, F2F, F2FP, HADD2.F32, VIMNMX, I2FP, FLO,
POPC, BREV, IMAD.IADD.U32), from a PTX kernel compiled by ptxas for sm_90 and sm_80 (skipped
where ptxas or nvdisasm is missing): the SASS run on the emulator leaves exactly the buffers
the PTX leaves, on random inputs. ptxas turns the atomic add into a warp-aggregated one (VOTE
ballot, POPC, one ATOMG per warp, a prefix per lane), which exercises the uniform reading of
the per-lane results."""

from __future__ import annotations

import numpy as np
import pytest

from semantics.ir.types import TYPES
from semantics.machine import run_kernel
from semantics.ptx import parse_ptx
from semantics.sass import find_nvdisasm
from semantics.sass.machine import prepare_sass
from verifier.cli.tv_cmd import compile_ptx, find_ptxas

PTX = """\
.version 8.0
.target sm_90
.address_size 64

.visible .entry extra(.param .u64 p_in, .param .u64 p_out, .param .u64 p_cnt)
{
	.reg .pred %p<4>;
	.reg .b32 %r<40>;
	.reg .b16 %h<4>;
	.reg .f32 %f<8>;
	.reg .f64 %fd<4>;
	.reg .b64 %rd<12>;
	ld.param.u64 %rd1, [p_in];
	ld.param.u64 %rd2, [p_out];
	ld.param.u64 %rd3, [p_cnt];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	cvta.to.global.u64 %rd3, %rd3;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd4, %r1, 4;
	add.s64 %rd5, %rd1, %rd4;
	ld.global.u32 %r2, [%rd5];
	ld.global.u32 %r3, [%rd5+128];
	setp.gt.s32 %p1, %r2, 0;
	vote.sync.ballot.b32 %r4, %p1, -1;
	vote.sync.any.pred %p2, %p1, -1;
	vote.sync.all.pred %p3, %p1, -1;
	selp.u32 %r5, 1, 0, %p2;
	selp.u32 %r6, 2, 0, %p3;
	add.u32 %r7, %r5, %r6;
	min.s32 %r8, %r2, %r3;
	max.u32 %r9, %r2, %r3;
	popc.b32 %r10, %r2;
	brev.b32 %r11, %r3;
	bfind.u32 %r12, %r2;
	mov.b32 %f1, %r2;
	cvt.rn.f16.f32 %h1, %f1;
	cvt.f32.f16 %f2, %h1;
	mov.b32 %r13, %f2;
	cvt.f64.f32 %fd1, %f1;
	cvt.rn.f32.f64 %f3, %fd1;
	mov.b32 %r14, %f3;
	atom.global.add.u32 %r15, [%rd3], %r2;
	atom.global.max.s32 %r16, [%rd3+4], %r3;
	atom.global.exch.b32 %r17, [%rd3+8], %r1;
	atom.global.cas.b32 %r18, [%rd3+12], %r1, %r2;
	cvt.rzi.s32.f32 %r19, %f1;
	cvt.rn.f32.s32 %f4, %r3;
	mov.b32 %r20, %f4;
	xor.b32 %r21, %r4, %r7;
	add.s64 %rd6, %rd2, %rd4;
	st.global.u32 [%rd6], %r21;
	st.global.u32 [%rd6+128], %r8;
	st.global.u32 [%rd6+256], %r9;
	st.global.u32 [%rd6+384], %r10;
	st.global.u32 [%rd6+512], %r11;
	st.global.u32 [%rd6+640], %r12;
	st.global.u32 [%rd6+768], %r13;
	st.global.u32 [%rd6+896], %r14;
	st.global.u32 [%rd6+1024], %r15;
	st.global.u32 [%rd6+1152], %r16;
	st.global.u32 [%rd6+1280], %r17;
	st.global.u32 [%rd6+1408], %r18;
	st.global.u32 [%rd6+1536], %r19;
	st.global.u32 [%rd6+1664], %r20;
	ret;
}
"""

pytestmark = pytest.mark.skipif(find_ptxas() is None or find_nvdisasm() is None,
                                reason="ptxas/nvdisasm not installed")


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_more_forms_match_the_ptx(arch, tmp_path):
    src = tmp_path / "extra.ptx"
    src.write_text(PTX)
    sass = compile_ptx(src, arch)
    forms = {i.form.name for f in sass.functions for i in f.instructions}
    assert {"VOTE.ANY", "VOTE.ALL", "F2F.F64.F32", "F2F.F32.F64", "HADD2.F32"} <= forms
    assert any(f.startswith("ATOMG.E.CAS") for f in forms)
    k = prepare_sass(sass, "extra", [TYPES["u64"]] * 3)
    ptx = parse_ptx(PTX.replace(".target sm_90", f".target {arch}"), "extra.ptx")
    rng = np.random.default_rng(5)
    for trial in range(6):
        inp = rng.integers(-2**31, 2**31, 64, dtype=np.int64).astype(np.int32)
        if trial % 2:
            inp[rng.integers(0, 64, 20)] = rng.integers(-3, 3, 20)     # ties, zeros
        cnt = rng.integers(0, 2**31, 4).astype(np.int32)
        want = run_kernel(ptx, "extra", 1, 32, [inp, np.zeros(448, np.int32), cnt])
        got = run_kernel(k, None, 1, 32, [inp, np.zeros(448, np.int32), cnt])
        assert np.array_equal(want.buffers["p_out"], got.buffers["extra_param_1"])
        assert np.array_equal(want.buffers["p_cnt"], got.buffers["extra_param_2"])
