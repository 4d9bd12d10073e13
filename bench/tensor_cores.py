"""Tensor cores: the emulator's `mma`/`wmma` throughput against numpy's matmul of the same
tiles (a ratio), and the verify time of the tensor-core pairs at one fixed shape and over
their whole claims, with how the fixed-shape time grows with K.

    python bench/tensor_cores.py            # about 4 min on the 2-core project machine
    python bench/tensor_cores.py --quick    # throughput and the fixed shapes only

The emulator runs keq's bit-accurate model of the sm_80 datapath (semantics/tensor_core.py:
per output element, exact products aligned and truncated, Python integers), so it is far
slower than numpy's float32 matmul, which rounds differently; the ratio says how much.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from semantics.machine import prepare, run_kernel  # noqa: E402
from semantics.ptx import parse_ptx  # noqa: E402
from verifier.api import verify  # noqa: E402
from verifier.spec import load_spec  # noqa: E402

WARPS = 64

# each warp: wmma.load A, B (16x16 f16 tiles, one per warp), C = 0, one mma, store D
WMMA = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pd)
{
.reg .b32 %a<8>;
.reg .b32 %b<8>;
.reg .b32 %d<8>;
.reg .b32 %r<4>;
.reg .b64 %p<8>;
ld.param.u64 %p1, [pa];
ld.param.u64 %p2, [pb];
ld.param.u64 %p3, [pd];
mov.u32 %r1, %ctaid.x;
mul.wide.u32 %p4, %r1, 512;
add.s64 %p1, %p1, %p4;
add.s64 %p2, %p2, %p4;
mul.wide.u32 %p5, %r1, 1024;
add.s64 %p3, %p3, %p5;
mov.b32 %r2, 0;
wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%a0,%a1,%a2,%a3,%a4,%a5,%a6,%a7}, [%p1];
wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {%b0,%b1,%b2,%b3,%b4,%b5,%b6,%b7}, [%p2];
wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%d0,%d1,%d2,%d3,%d4,%d5,%d6,%d7}, {%a0,%a1,%a2,%a3,%a4,%a5,%a6,%a7}, {%b0,%b1,%b2,%b3,%b4,%b5,%b6,%b7}, {%r2,%r2,%r2,%r2,%r2,%r2,%r2,%r2};
wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%p3], {%d0,%d1,%d2,%d3,%d4,%d5,%d6,%d7};
ret;
}
"""


def throughput() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((WARPS, 16, 16)).astype(np.float16)
    b = rng.standard_normal((WARPS, 16, 16)).astype(np.float16)     # stored as N rows of K
    k = prepare(parse_ptx(WMMA, "bench.ptx"), "k")
    t0 = time.perf_counter()
    res = run_kernel(k, None, WARPS, 32, [a.ravel(), b.ravel(), np.zeros(WARPS * 256, np.float32)])
    emu = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(100):
        ref = np.matmul(a.astype(np.float32), b.astype(np.float32).transpose(0, 2, 1))
    npy = (time.perf_counter() - t0) / 100
    got = res.buffers["pd"].reshape(WARPS, 16, 16)
    err = float(np.max(np.abs(got - ref)))
    flops = 2 * WARPS * 16 * 16 * 16
    print(f"emulator wmma m16n16k16 (f16 -> f32, sm_80 model): {WARPS} tiles in {emu:.3f} s "
          f"({flops / emu / 1e6:.2f} MFLOP/s)")
    print(f"numpy float32 matmul of the same tiles: {npy * 1e3:.3f} ms "
          f"({flops / npy / 1e6:.0f} MFLOP/s)")
    print(f"ratio emulator / numpy: {emu / npy:.0f}x slower; max |difference| {err:.2e} "
          f"(the datapath truncates, numpy rounds)")


PAIRS = ["kernels/tensorcore/wmma_shared.toml", "kernels/tensorcore/wmma_scaled.toml",
         "kernels/tensorcore/wmma_real.toml", "kernels/tensorcore/wmma_b_row.toml",
         "tests/data/mma_gemm/ok.toml", "tests/data/mma_gemm/real.toml"]


def _timed(spec, fixed=None) -> tuple[str, float]:
    t0 = time.perf_counter()
    v = verify(spec, fixed=fixed, timeout_s=900)
    return v.kind, time.perf_counter() - t0


def verify_times(quick: bool) -> None:
    print(f"\n{'pair':40s} {'fixed shape':>22s} {'whole claim':>22s}")
    for rel in PAIRS:
        spec = load_spec(ROOT / rel)
        fixed = {"M": 16, "N": 16, "K": 16}
        kind, t = _timed(spec, fixed)
        whole = "-" if quick else "{} {:.1f} s".format(*_timed(spec))
        print(f"{rel:40s} {f'{kind} {t:.1f} s':>22s} {whole:>22s}")
    print("\ngrowth with K (M = N = 16), fixed shapes:")
    for rel in ("kernels/tensorcore/wmma_shared.toml", "kernels/tensorcore/wmma_real.toml"):
        spec = load_spec(ROOT / rel)
        row = []
        for k in (16, 32, 48):
            kind, t = _timed(spec, {"M": 16, "N": 16, "K": k})
            row.append(f"K={k}: {t:.1f} s")
        print(f"  {rel:38s} " + ", ".join(row))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the whole claims")
    args = ap.parse_args()
    throughput()
    verify_times(args.quick)


if __name__ == "__main__":
    main()
