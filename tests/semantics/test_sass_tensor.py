"""SASS tensor-core and async-copy instructions (HMMA, LDSM, MOVM, LDGSTS, LDGDEPBAR, DEPBAR;
issue 30), from kernels compiled here by nvcc for sm_80 and sm_90 (skipped without nvcc or
nvdisasm): each new form is parsed from real nvdisasm output, `keq tv` proves each kernel's
SASS equivalent to its PTX, the SASS and the PTX leave the same buffers on the emulator, and
mutated listings (a transposed LDSM, an inverted LDGSTS predicate, an early DEPBAR) are
refused. Forms outside the mapping are refused by name."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from semantics.errors import UnsupportedError
from semantics.ir.types import TYPES
from semantics.machine import run_kernel
from semantics.ptx import parse_ptx_file
from semantics.sass import find_nvdisasm, parse_cubin, parse_sass
from semantics.sass.disasm import disassemble
from semantics.sass.machine import prepare_sass
from verifier.api import verify
from verifier.cli.tv_cmd import pair_from_ptx

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None or find_nvdisasm() is None,
                                reason="nvcc/nvdisasm not installed")

SOURCE = r"""#include <cuda_fp16.h>
#include <cuda_bf16.h>
// one warp; a: 16x16 halves in global, b: 8x16, c out
extern "C" __global__ void mma_x4(const uint4* A, const uint4* B, float* C)
{
    __shared__ __align__(16) unsigned short sa[16 * 16];
    __shared__ __align__(16) unsigned short sb[8 * 16];
    int lane = threadIdx.x;
    ((uint4*)sa)[lane] = A[lane];
    if (lane < 16) ((uint4*)sb)[lane] = B[lane];
    __syncthreads();
    unsigned a0, a1, a2, a3, b0, b1;
    unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(pa));
    unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[(lane % 8) * 16 + ((lane / 8) % 2) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                 : "=r"(b0), "=r"(b1) : "r"(pb));
    float d0 = C[lane*4], d1 = C[lane*4+1], d2 = C[lane*4+2], d3 = C[lane*4+3];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    C[lane*4] = d0; C[lane*4+1] = d1; C[lane*4+2] = d2; C[lane*4+3] = d3;
}
extern "C" __global__ void mma_forms(const unsigned* A, unsigned* C)
{
    int lane = threadIdx.x;
    unsigned a0 = A[lane], a1 = A[32+lane], a2 = A[64+lane], a3 = A[96+lane];
    unsigned b0 = A[128+lane], b1 = A[160+lane];
    unsigned h0 = A[192+lane], h1 = A[224+lane];
    float f0 = __int_as_float(A[256+lane]), f1 = __int_as_float(A[288+lane]),
          f2 = __int_as_float(A[320+lane]), f3 = __int_as_float(A[352+lane]);
    // f16 accumulators
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                 : "+r"(h0), "+r"(h1) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    // bf16
    float g0 = f0, g1 = f1, g2 = f2, g3 = f3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(g0), "+f"(g1), "+f"(g2), "+f"(g3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    // k8 f32
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+f"(f0), "+f"(f1), "+f"(f2), "+f"(f3) : "r"(a2), "r"(a3), "r"(b1));
    unsigned k0 = A[384+lane], k1 = A[416+lane];
    // k8 f16
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%0,%1};"
                 : "+r"(k0), "+r"(k1) : "r"(a0), "r"(a1), "r"(b0));
    C[lane] = h0; C[32+lane] = h1;
    C[64+lane] = __float_as_int(g0); C[96+lane] = __float_as_int(g1); C[128+lane] = __float_as_int(g2); C[160+lane] = __float_as_int(g3);
    C[192+lane] = __float_as_int(f0); C[224+lane] = __float_as_int(f1); C[256+lane] = __float_as_int(f2); C[288+lane] = __float_as_int(f3);
    C[320+lane] = k0; C[352+lane] = k1;
}
extern "C" __global__ void ldsm_forms(const uint4* A, unsigned* C)
{
    __shared__ __align__(16) uint4 s[64];
    int lane = threadIdx.x;
    s[lane] = A[lane]; s[32+lane] = A[32+lane];
    __syncthreads();
    unsigned p = (unsigned)__cvta_generic_to_shared(&s[(lane * 5) % 64]);
    unsigned r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r1), "=r"(r2) : "r"(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r3) : "r"(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r4), "=r"(r5) : "r"(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r6), "=r"(r7), "=r"(r8), "=r"(r9) : "r"(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r10), "=r"(r11), "=r"(r8), "=r"(r9) : "r"(p));
    C[lane] = r0; C[32+lane] = r1 ^ r2 * 3; C[64+lane] = r3; C[96+lane] = r4 + r5;
    C[128+lane] = r6; C[160+lane] = r7; C[192+lane] = r8; C[224+lane] = r9 ^ r10 ^ r11;
}
extern "C" __global__ void cp_async16(const int4* a, int* out)
{
    __shared__ __align__(16) int4 s[64];
    int t = threadIdx.x;
    unsigned p = (unsigned)__cvta_generic_to_shared(&s[t]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(p), "l"(a + t));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 0;");
    __syncthreads();
    int4 v = s[(t + 1) % 64];
    out[t] = v.x + v.y * 3 + v.z * 5 + v.w * 7;
}
extern "C" __global__ void cp_async_forms(const int* a, int* out, int n)
{
    __shared__ __align__(16) int s[384];
    int t = threadIdx.x;
    unsigned p = (unsigned)__cvta_generic_to_shared(&s[4 * t]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(p), "l"(a + 4 * t));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(p + 8), "l"(a + 4 * t + 2));
    asm volatile("cp.async.commit_group;");
    unsigned q = (unsigned)__cvta_generic_to_shared(&s[128 + 4 * t]);
    int sz = (t < n) ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(q), "l"(a + 128 + 4 * t), "r"(sz));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(q + 128 * 4), "l"(a + 512 + 4 * t));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 1;");
    int x = s[4 * t] + s[4 * t + 3];
    asm volatile("cp.async.wait_group 0;");
    __syncthreads();
    out[t] = x + s[128 + (4 * t + 4) % 128] * 3;
}

extern "C" __global__ void cp_zfill(const int* a, int* out, int n)
{
    __shared__ __align__(16) int s[384];
    int t = threadIdx.x;
    unsigned q = (unsigned)__cvta_generic_to_shared(&s[4 * t]);
    int sz = min(max(n - 4 * t, 0), 4) * 4;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(q), "l"(a + 4 * t), "r"(sz));
    int sz2 = (n - t) & 7;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" :: "r"(q + 512), "l"(a + 4 * t + 128), "r"(sz2));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(q + 1024), "l"(a + 4 * t + 256), "r"(sz2 & 4));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 2;");
    asm volatile("cp.async.wait_all;");
    __syncthreads();
    out[t] = s[(4 * t + 4) % 128] * 3 + s[128 + 4 * t + 1] * 5 + s[256 + 4 * t];
}
"""

# kernel -> (grid, block, integer scalars, the new SASS forms it must contain on both archs)
KERNELS = {
    "mma_x4": (1, 32, {}, {"LDSM.16.M88.4", "LDSM.16.M88.2", "HMMA.16816.F32"}),
    "mma_forms": (1, 32, {}, {"HMMA.16816.F16", "HMMA.16816.F32.BF16", "HMMA.1688.F32",
                              "HMMA.1688.F16"}),
    "ldsm_forms": (1, 32, {}, {"LDSM.16.M88", "LDSM.16.M88.2", "LDSM.16.M88.4", "LDSM.16.MT88",
                               "LDSM.16.MT88.2", "LDSM.16.MT88.4"}),
    "cp_async16": (1, 64, {}, {"LDGSTS.E.BYPASS.128", "LDGDEPBAR", "DEPBAR.LE"}),
    "cp_async_forms": (1, 32, {"p2": 20}, {"LDGSTS.E", "LDGSTS.E.64", "LDGSTS.E.128",
                                           "LDGSTS.E.BYPASS.128", "LDGDEPBAR", "DEPBAR.LE"}),
    "cp_zfill": (1, 32, {"p2": 37}, {"LDGSTS.E.BYPASS.128.ZFILL", "LDGSTS.E.64.ZFILL",
                                     "LDGSTS.E", "LDGDEPBAR", "DEPBAR.LE"}),
}
ARCHES = ("sm_80", "sm_90")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """arch -> (PTX path, cubin path, nvdisasm listing), compiled once per test module."""
    root = tmp_path_factory.mktemp("sass_tensor")
    cu = root / "forms.cu"
    cu.write_text(SOURCE)
    out = {}
    for arch in ARCHES:
        ptx, cubin = root / f"forms.{arch}.ptx", root / f"forms.{arch}.cubin"
        for flag, dst in (("-ptx", ptx), ("-cubin", cubin)):
            subprocess.run(["nvcc", f"-arch={arch}", "-O3", flag, "-o", str(dst), str(cu)],
                           check=True, capture_output=True, timeout=300)
        out[arch] = (ptx, cubin, disassemble(cubin))
    return out


def _forms(module, kernel: str) -> set[str]:
    return {i.form.name for i in module.entries[kernel].instructions}


def _tv(ptx: Path, sass_module, kernel: str):
    grid, block, scalars, _ = KERNELS[kernel]
    spec, fixed = pair_from_ptx(ptx, parse_ptx_file(ptx), kernel, sass_module, ptx,
                                grid=str(grid), block=str(block), length=1024,
                                values=scalars)
    return verify(spec, fixed=fixed, timeout_s=20, shapes="enumerate")


@pytest.mark.parametrize("arch", ARCHES)
def test_new_forms_are_parsed(built, arch):
    module = parse_cubin(built[arch][1])
    for kernel, (*_, forms) in KERNELS.items():
        assert forms <= _forms(module, kernel), (kernel, _forms(module, kernel))
    hmma = next(i for i in module.entries["mma_x4"].instructions if i.opcode == "HMMA")
    assert [str(o) for o in hmma.operands][3] == "RZ" or len(hmma.operands) == 4


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("arch", ARCHES)
def test_tv_proves_the_translation(built, arch, kernel):
    ptx, cubin, _ = built[arch]
    v = _tv(ptx, parse_cubin(cubin), kernel)
    assert v.kind == "equivalent", (v.kind, v.reasons)


def _mutant(built, arch: str, kernel: str, old: str, new: str):
    """The listing with the first `old` in `kernel`'s code replaced by `new`."""
    text = built[arch][2]
    at = text.index(f".text.{kernel}:")
    hit = text.index(old, at)
    return parse_sass(text[:hit] + new + text[hit + len(old):], f"forms.{arch}.mutant.sass")


@pytest.mark.parametrize("arch", ARCHES)
def test_a_transposed_ldsm_is_refuted(built, arch):
    # the non-transposing .x2 read with the transposing form: other halves in each register
    v = _tv(built[arch][0], _mutant(built, arch, "ldsm_forms", "LDSM.16.M88.2 ",
                                    "LDSM.16.MT88.2 "), "ldsm_forms")
    assert v.kind == "not-equivalent", (v.kind, v.reasons)


@pytest.mark.parametrize("arch", ARCHES)
def test_a_transposed_b_fragment_is_not_proved(built, arch):
    # B transposed before the mma: the outputs differ only through the tensor core's open
    # function (C is any bit pattern here, NaN included): keq refutes it, or is Inconclusive
    # (the solver's answer through the open function, or a timeout on a loaded machine)
    v = _tv(built[arch][0], _mutant(built, arch, "mma_x4", "LDSM.16.M88.2",
                                    "LDSM.16.MT88.2"), "mma_x4")
    assert v.kind in ("not-equivalent", "inconclusive"), (v.kind, v.reasons)


@pytest.mark.parametrize("arch", ARCHES)
def test_an_inverted_copy_predicate_is_refuted(built, arch):
    # `, !P0`: the source is read where P0 (t >= n) is false; inverted, where it is true
    v = _tv(built[arch][0], _mutant(built, arch, "cp_async_forms", "], !P0 ;", "], P0 ;"),
            "cp_async_forms")
    assert v.kind == "not-equivalent", (v.kind, v.reasons)


@pytest.mark.parametrize("arch", ARCHES)
def test_an_early_depbar_is_refuted(built, arch):
    # waiting for all but two groups: the second group's bytes are read in flight
    v = _tv(built[arch][0], _mutant(built, arch, "cp_async_forms", "DEPBAR.LE SB0, 0x1",
                                     "DEPBAR.LE SB0, 0x2"),
            "cp_async_forms")
    assert v.kind == "not-equivalent", (v.kind, v.reasons)
    assert any("in flight" in r for r in v.reasons), v.reasons


@pytest.mark.parametrize("kernel,old,new,name", [
    ("cp_async_forms", "DEPBAR.LE SB0, 0x1", "DEPBAR.LE SB1, 0x1", "SB1"),
    ("mma_forms", "HMMA.1688.F16", "HMMA.1688.F16.BF16", "HMMA.1688.F16.BF16"),
    ("mma_x4", "LDSM.16.M88.4", "LDSM.16.U8.M88.4", "LDSM.16.U8.M88.4"),
])
def test_unmapped_forms_are_refused_by_name(built, kernel, old, new, name):
    module = _mutant(built, "sm_80", kernel, old, new)
    params = module.entries[kernel].params
    with pytest.raises(UnsupportedError, match=name):
        k = prepare_sass(module, kernel, [TYPES["u64"] if p.size == 8 else TYPES["b32"]
                                          for p in params])
        run_kernel(k, None, 1, 32, [np.zeros(1024, np.int32) if p.size == 8 else 20
                                    for p in params])


@pytest.mark.parametrize("arch", ARCHES)
def test_sass_and_ptx_leave_the_same_buffers(built, arch):
    """The emulator (concrete domain) on random inputs, including NaN/inf/subnormal halves."""
    ptx_path, cubin, _ = built[arch]
    ptx, sass = parse_ptx_file(ptx_path), parse_cubin(cubin)
    rng = np.random.default_rng(11)
    for kernel, (grid, block, scalars, _) in KERNELS.items():
        params = sass.entries[kernel].params
        k = prepare_sass(sass, kernel, [TYPES["u64"] if p.size == 8 else TYPES["b32"]
                                        for p in params])
        for _ in range(2):
            bufs = [rng.integers(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32)
                    for p in params if p.size == 8]
            bufs[0][:64] = [0x7C00, 0xFC00, 0x7E00, 0x0001, 0x8000, 0x3C00FC00, 0x7C007C00,
                            0x00010001] * 8
            args = [bufs[j] if p.size == 8 else scalars[f"p{j}"]
                    for j, p in enumerate(params)]
            want = run_kernel(ptx, kernel, grid, block, [a.copy() if isinstance(a, np.ndarray)
                                                         else a for a in args])
            got = run_kernel(k, None, grid, block, [a.copy() if isinstance(a, np.ndarray)
                                                    else a for a in args])
            for (name, w), g in zip(sorted(want.buffers.items()),
                                    [got.buffers[n] for n in sorted(got.buffers)]):
                assert np.array_equal(w.view(np.uint8), g.view(np.uint8)), (kernel, name)
