"""Benchmark `keq verify`: per corpus pair at a fixed launch shape, the stages, solver queries
and total time; z3 alone against the solver portfolio on the floating-point pairs (random
testing off, so the solvers do the work); and how verification time grows with the size bound
of an elementwise kernel and of the int32 reduction.

    python bench/verify.py            # everything (a few minutes on 2 cores)
    python bench/verify.py --quick    # fewer pairs and sizes

Baselines named in the same run: z3 alone (`--solver z3`) vs the portfolio (z3, bitwuzla,
cvc5 raced), and, for scaling, the time per element at the smallest size (linear growth means
a constant time per element).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from verifier.equiv import verify  # noqa: E402
from verifier.solvers import available_backends  # noqa: E402
from verifier.spec import load_spec  # noqa: E402

K = ROOT / "kernels"

PAIRS = [
    ("vector_add/vec4.toml", {"n": 1001}),
    ("vector_add/vec4_notail.toml", {"n": 1001}),
    ("triton/vector_add.toml", {"n": 1000}),
    ("saxpy/fma_bitexact.toml", {"n": 64}),
    ("saxpy/fma_real.toml", {"n": 64}),
    ("reduce/i32_sequential.toml", {"n": 512}),
    ("reduce/i32_warp_shfl.toml", {"n": 512}),
    ("reduce/i32_warp_shfl_badoffset.toml", {"n": 512}),
    ("reduce/f32_sequential_real.toml", {"n": 512}),
    ("reduce/f32_sequential_bitexact.toml", {"n": 512}),
    ("transpose/tiled.toml", {"rows": 64, "cols": 64}),
    ("transpose/padded.toml", {"rows": 64, "cols": 64}),
    ("scan/blelloch.toml", {"n": 512}),
    ("scan/hillis_steele_1buf.toml", {"n": 512}),
    ("stencil/shared.toml", {"n": 1024}),
    ("matmul/tiled_real.toml", {"M": 32, "N": 32, "K": 32}),
    ("matmul/tiled_bitexact_k16.toml", {"M": 16, "N": 16, "K": 32}),
    ("softmax/online.toml", {"rows": 2, "cols": 64}),
]
FP_PAIRS = [("saxpy/fma_bitexact.toml", {"n": 8}), ("matmul/tiled_bitexact.toml",
                                                   {"M": 2, "N": 15, "K": 1})]


def _run(path, shape, **kw):
    spec = load_spec(K / path)
    fixed = {k: v for k, v in shape.items() if any(p.name == k for p in spec.scalars)}
    t = time.perf_counter()
    v = verify(spec, fixed=fixed, **kw)
    return spec, v, time.perf_counter() - t


def pairs_table(pairs) -> None:
    print("== corpus pairs at a fixed launch shape (default settings)")
    print(f"   {'pair':<40} {'shape':<22} {'verdict':<15} {'expect':<15} {'solver q':>8} "
          f"{'total s':>8}")
    for path, shape in pairs:
        spec, v, secs = _run(path, shape, timeout_s=60)
        queries = sum(1 for s in v.stages if s.name.startswith("outputs"))
        shape_s = ",".join(f"{k}={x}" for k, x in shape.items())
        print(f"   {path:<40} {shape_s:<22} {v.kind:<15} {spec.expect:<15} {queries:>8} "
              f"{secs:>8.2f}")
        for s in v.stages[-4:]:
            print(f"       {s.name:<20} {s.status:<10} {s.seconds:7.3f} s  {s.detail}")


def portfolio_table() -> None:
    print("\n== floating-point obligations: z3 alone vs the portfolio (random testing off)")
    avail = ", ".join(f"{k}{'' if not why else ' (missing)'}"
                      for k, why in available_backends().items())
    print(f"   solvers: {avail}")
    for path, shape in FP_PAIRS:
        times = {}
        for label, solvers in (("z3", ("z3",)), ("portfolio", ("z3", "bitwuzla", "cvc5"))):
            _, v, secs = _run(path, shape, trials=0, solvers=solvers, timeout_s=30)
            times[label] = (secs, v.kind)
        z, p = times["z3"], times["portfolio"]
        print(f"   {path:<34} z3 {z[0]:7.2f} s ({z[1]})   portfolio {p[0]:7.2f} s ({p[1]})   "
              f"ratio {z[0] / max(p[0], 1e-9):5.1f}x")


def scaling_table(sizes) -> None:
    print("\n== scaling with the size bound (time per element should stay flat: linear)")
    for path in ("vector_add/vec4.toml", "reduce/i32_sequential.toml"):
        spec = load_spec(K / path)
        print(f"   {path}")
        base = None
        for n in sizes:
            lo, hi = spec.param("n").range
            if not lo <= n <= hi:
                spec = _widen(spec, n)
            t = time.perf_counter()
            v = verify(spec, fixed={"n": n}, timeout_s=120)
            secs = time.perf_counter() - t
            per = secs / n * 1e3
            base = base or per
            print(f"     n={n:<6} {v.kind:<13} {secs:7.2f} s   {per:6.3f} ms/element   "
                  f"x{per / base:4.2f} of the smallest size's per-element time")


def _widen(spec, n):
    """The reduction spec bounds n at 512; scaling past it widens the range (same kernels)."""
    from dataclasses import replace
    params = tuple(replace(p, range=(p.range[0], max(p.range[1], n))) if p.name == "n" else p
                   for p in spec.params)
    return replace(spec, params=params)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer pairs and sizes")
    ap.add_argument("--only", choices=("pairs", "portfolio", "scaling"), action="append",
                    help="run only these parts (repeatable)")
    args = ap.parse_args()
    parts = set(args.only or ("pairs", "portfolio", "scaling"))
    print(f"keq verify benchmark — {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")
    if "pairs" in parts:
        pairs_table(PAIRS[:6] if args.quick else PAIRS)
    if "portfolio" in parts:
        portfolio_table()
    if "scaling" in parts:
        scaling_table([64, 256, 1024] if args.quick else [64, 256, 1024, 4096])


if __name__ == "__main__":
    main()
