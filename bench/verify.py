"""Benchmark `keq verify`: per corpus pair over its whole claim (one symbolic maximal launch:
the 1-D pairs, the histograms, the transposes and the k16 and real-mode matmuls with indexed
buffers; the buggy matmuls, refuted by a shape probed before the costly launch; the
real-mode matmul also at a fixed shape; softmax at a fixed shape), the
stages, solver queries and total time (and the whole process's, start to exit, as a user waits
for `keq verify`); symbolic launch shapes against enumerating the same
shapes one by one; z3 alone against the solver portfolio on the floating-point pairs (random
testing off, so the solvers do the work); and how the whole-claim time grows with the size
bound of an elementwise kernel and of the int32 reduction.

    python bench/verify.py            # everything (several minutes on 2 cores)
    python bench/verify.py --quick    # fewer pairs and sizes

Baselines named in the same run: enumeration (`shapes="enumerate"`) vs one symbolic launch;
one process vs two (`--jobs 2`) for the term-by-term comparison of indexed outputs;
z3 alone (`--solver z3`) vs the portfolio (z3, sparse, bitwuzla, cvc5 raced), end to end, in
solver time, and in solver time on the obligations that contain floating-point terms ("FP s",
read from the `--dump-smt` files), with each other member alone too and the "ceiling": z3
against the fastest member that reached the same verdict (what no race can beat by much);
and, for scaling, the
time per allowed shape at the smallest bound (linear growth means a constant time per shape).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from verifier.api import verify  # noqa: E402
from verifier.gc_policy import collect_less  # noqa: E402
from verifier.parallel import default_jobs  # noqa: E402
from verifier.solvers import DEFAULT_SOLVERS, available_backends  # noqa: E402
from verifier.spec import load_spec  # noqa: E402

K = ROOT / "kernels"

WHOLE = {}          # the whole claim: every allowed launch shape
PAIRS = [
    ("vector_add/vec4.toml", WHOLE),
    ("vector_add/vec4_notail.toml", WHOLE),
    ("vector_add/lineinfo.toml", WHOLE),
    ("triton/vector_add.toml", WHOLE),
    ("saxpy/fma_bitexact.toml", WHOLE),
    ("saxpy/fma_real.toml", WHOLE),
    ("reduce/i32_sequential.toml", WHOLE),
    ("reduce/i32_tree_shfl.toml", WHOLE),
    ("reduce/i32_warp_shfl.toml", WHOLE),
    ("reduce/i32_sequential_nosync.toml", WHOLE),
    ("reduce/i32_warp_shfl_badoffset.toml", WHOLE),
    ("reduce/f32_tree_shfl_bitexact.toml", WHOLE),
    ("reduce/f32_tree_shfl_real.toml", WHOLE),
    ("reduce/f32_sequential_real.toml", WHOLE),
    ("reduce/f32_sequential_bitexact.toml", WHOLE),
    ("reduce/f32_warp_shfl_real.toml", WHOLE),
    ("scan/blelloch.toml", WHOLE),
    ("scan/hillis_steele_1buf.toml", WHOLE),
    ("stencil/shared.toml", WHOLE),
    ("stencil/shared_halo_oob.toml", WHOLE),
    ("histogram/shared.toml", WHOLE),
    ("histogram/shared_noinit_sync.toml", WHOLE),
    ("histogram/shared_nomerge_sync.toml", WHOLE),
    ("histogram/shared.toml", {"n": 512}),
    ("transpose/tiled.toml", WHOLE),
    ("transpose/padded.toml", WHOLE),
    ("transpose/tiled_nobounds.toml", WHOLE),
    ("transpose/tiled_nobounds_aligned.toml", WHOLE),
    ("transpose/padded_badstride.toml", WHOLE),
    ("transpose/tiled.toml", {"rows": 64, "cols": 64}),
    ("matmul/tiled_bitexact.toml", WHOLE),       # refuted by a shape probe
    ("matmul/tiled_floor_k.toml", WHOLE),
    ("matmul/tiled_nosync2.toml", WHOLE),
    ("matmul/tiled_real.toml", WHOLE),           # 32768 shapes x 1024 elements: minutes
    ("matmul/tiled_real.toml", {"M": 32, "N": 32, "K": 32}),
    ("matmul/tiled_bitexact_k16.toml", WHOLE),   # fma chains compared term by term
    ("matmul/tiled_bitexact_k16.toml", {"M": 16, "N": 16, "K": 32}),
    ("softmax/online.toml", {"rows": 2, "cols": 64}),
]
FP_PAIRS = [("saxpy/fma_bitexact.toml", {"n": 8}),
            ("saxpy/fma_bitexact.toml", WHOLE),
            ("matmul/tiled_bitexact.toml", {"M": 2, "N": 15, "K": 1}),
            ("reduce/f32_sequential_bitexact.toml", {"n": 32})]


def _run(path, shape, **kw):
    collect_less()                # (as `keq verify` runs; a spawned process starts afresh)
    spec = load_spec(K / path)
    fixed = {k: v for k, v in shape.items() if any(p.name == k for p in spec.scalars)}
    t = time.perf_counter()
    v = verify(spec, fixed=fixed, **kw)
    return spec, v, time.perf_counter() - t


def _pair_summary(path, shape) -> tuple:
    """One pair's run, reduced to what the table prints (picklable: it comes back from a
    fresh process)."""
    spec, v, secs = _run(path, shape, timeout_s=60, jobs=default_jobs())
    return (spec.expect, v.kind, v.assignments, len(v.obligations),
            sum(o.seconds for o in v.obligations), secs,
            [(s.name, s.status, s.seconds, s.detail) for s in v.stages])


# One pair in a fresh interpreter started as `keq` starts (its process ends as `keq`'s does,
# without tearing its heap down): the summary comes back as JSON on stdout.
_CHILD = """
import json, sys
sys.path.insert(0, {bench!r})
from verify import _pair_summary
from verifier.cli.main import leave
print(json.dumps(_pair_summary({path!r}, {shape!r})))
leave(0)
"""


def pairs_table(pairs) -> None:
    """Each pair in a fresh process, as `keq verify` runs: in one long process, later pairs
    pay for every earlier pair's z3 terms (the histogram: 9.5 s alone, 10.9 s after 20
    others). `total s` is the verification (the verdict's own figure); `wall s` the whole
    process, interpreter start to exit, what a user waits for."""
    print(f"== corpus pairs (whole claim unless a shape is given; default settings, as `keq "
          f"verify` runs: {default_jobs()} process(es); each in a fresh process)")
    print(f"   {'pair':<40} {'claim':<22} {'shapes':>6} {'verdict':<15} {'expect':<15} "
          f"{'solver q':>8} {'solver s':>8} {'total s':>8} {'wall s':>7}")
    for path, shape in pairs:
        code = _CHILD.format(bench=str(ROOT / "bench"), path=path, shape=shape)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                              text=True, check=False)     # (its stderr is shown below)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{path}: the benchmark's process failed:\n{proc.stderr[-2000:]}")
        expect, kind, count, queries, solver_s, secs, stages = json.loads(proc.stdout)
        shape_s = ",".join(f"{k}={x}" for k, x in shape.items()) or "whole"
        print(f"   {path:<40} {shape_s:<22} {count:>6} {kind:<15} {expect:<15} "
              f"{queries:>8} {solver_s:>8.2f} {secs:>8.2f} {wall:>7.2f}", flush=True)
        for name, status, seconds, detail in stages:
            print(f"       {name:<20} {status:<10} {seconds:7.3f} s  {detail[:90]}")


JOBS_PAIRS = [("transpose/tiled.toml", WHOLE), ("matmul/tiled_bitexact_k16.toml", WHOLE),
              ("matmul/tiled_real.toml", WHOLE)]


def _jobs_summary(path, shape, jobs) -> tuple:
    spec, v, secs = _run(path, shape, timeout_s=60, jobs=jobs)
    walk = next((s.seconds for s in v.stages if s.name == "indexed outputs"), 0.0)
    return v.kind, secs, walk


def jobs_table() -> None:
    """The pairs whose outputs are compared term by term (indexed buffers), in one process
    and with the pairs of writes shared by two (`--jobs 2`), each in a fresh process."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    print("\n== term walk shared among processes: --jobs 1 vs --jobs 2 (whole claims)")
    print(f"   {'pair':<40} {'verdict':<12} {'j1 total':>9} {'j1 walk':>8} {'j2 total':>9} "
          f"{'j2 walk':>8} {'walk ratio':>10}")
    for path, shape in JOBS_PAIRS:
        got = {}
        for jobs in (1, 2):
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
                got[jobs] = pool.submit(_jobs_summary, path, shape, jobs).result()
        (k1, t1, w1), (k2, t2, w2) = got[1], got[2]
        print(f"   {path:<40} {k1 if k1 == k2 else k1 + '/' + k2:<12} {t1:9.2f} {w1:8.2f} "
              f"{t2:9.2f} {w2:8.2f} {w1 / max(w2, 1e-9):9.2f}x", flush=True)


def shapes_table() -> None:
    print("\n== one symbolic maximal launch vs enumerating the same shapes (n <= 64)")
    for path in ("vector_add/vec4.toml", "reduce/i32_warp_shfl.toml", "stencil/shared.toml"):
        spec = _bounded(load_spec(K / path), 64)
        times = {}
        for mode in ("symbolic", "enumerate"):
            t = time.perf_counter()
            v = verify(spec, shapes=mode, max_shapes=64, timeout_s=60)
            times[mode] = (time.perf_counter() - t, v.kind)
        s, e = times["symbolic"], times["enumerate"]
        print(f"   {path:<34} symbolic {s[0]:7.2f} s ({s[1]})   enumerate 64 shapes "
              f"{e[0]:7.2f} s ({e[1]})   ratio {e[0] / max(s[0], 1e-9):5.1f}x")


def _fp_seconds(v, dump: Path) -> float:
    """Solver seconds of the obligations that contain floating-point terms (read from the
    SMT-LIB2 files `--dump-smt` wrote; the abstracted and integer ones are left out)."""
    total = 0.0
    for o in v.obligations:
        f = dump / f"{o.sha256}.smt2"
        if f.exists() and ("FloatingPoint" in (text := f.read_text()) or "(fp." in text):
            total += o.seconds
    return total


def portfolio_table() -> None:
    import tempfile
    print("\n== floating-point obligations: z3 alone vs the portfolio (random testing off)")
    avail = ", ".join(f"{k}{'' if not why else ' (missing)'}"
                      for k, why in available_backends().items())
    print(f"   solvers: {avail}")
    print(f"   {'pair':<36} {'claim':<14} {'':<10} {'verdict':<15} {'total s':>8} "
          f"{'solver s':>8} {'FP s':>7}")
    for path, shape in FP_PAIRS:
        times, verdicts = {}, {}
        members = [(m, (m,)) for m in ("bitwuzla", "cvc5", "sparse")
                   if not available_backends().get(m)]
        for label, solvers in [("z3", ("z3",)), ("portfolio", DEFAULT_SOLVERS)] + members:
            with tempfile.TemporaryDirectory() as d:
                _, v, secs = _run(path, shape, trials=0, solvers=solvers, timeout_s=60,
                                  dump_smt=Path(d))
                fp = _fp_seconds(v, Path(d))
            times[label] = (secs, sum(o.seconds for o in v.obligations), fp)
            verdicts[label] = v.kind
            claim = ",".join(f"{k}={x}" for k, x in shape.items()) or "whole"
            print(f"   {path:<36} {claim:<14} {label:<10} {v.kind:<15} {secs:8.2f} "
                  f"{times[label][1]:8.2f} {fp:7.2f}")
        z, p = times["z3"], times["portfolio"]
        # z3 stopped by the timeout: its time, and so the ratio, is a lower bound
        at_least = ">=" if verdicts["z3"] == "inconclusive" else ""
        print(f"   {'':<36} {'':<14} {'ratio':<10} {at_least:<15} "
              f"{z[0] / max(p[0], 1e-9):7.1f}x {z[1] / max(p[1], 1e-9):7.1f}x "
              f"{z[2] / max(p[2], 1e-9):6.1f}x")
        # What racing can give at most: z3 against the fastest member alone that reached the
        # portfolio's verdict (one that gave up, as `sparse` does on a proof, bounds
        # nothing). A race cannot beat its best member by more than the others' luck.
        decided = [(times[m][2], m) for m, _ in members
                   if verdicts[m] == verdicts["portfolio"] != "inconclusive"]
        if decided:
            best_fp, best = min(decided)
            print(f"   {'':<36} {'':<14} {'ceiling':<10} {at_least + 'z3/' + best:<15} "
                  f"{'':>8} {'':>8} {z[2] / max(best_fp, 1e-9):6.1f}x")


def scaling_table(sizes) -> None:
    print("\n== whole claim 1 <= n <= N as the bound N grows (time per allowed shape should "
          "fall or stay flat: linear or better)")
    for path in ("vector_add/vec4.toml", "reduce/i32_sequential.toml"):
        print(f"   {path}")
        base = None
        for n in sizes:
            spec = _bounded(load_spec(K / path), n)
            t = time.perf_counter()
            v = verify(spec, timeout_s=120)
            secs = time.perf_counter() - t
            per = secs / n * 1e3
            base = base or per
            print(f"     N={n:<6} {v.kind:<13} {secs:7.2f} s   {per:7.3f} ms/shape   "
                  f"x{per / base:4.2f} of the smallest bound's per-shape time")


def _bounded(spec, n):
    """The same pair with n in [1, n] (the kernels are unchanged)."""
    from dataclasses import replace
    params = tuple(replace(p, range=(1, n)) if p.name == "n" else p for p in spec.params)
    return replace(spec, params=params)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer pairs and sizes")
    ap.add_argument("--only", choices=("pairs", "jobs", "shapes", "portfolio", "scaling"),
                    action="append", help="run only these parts (repeatable)")
    args = ap.parse_args()
    parts = set(args.only or ("pairs", "jobs", "shapes", "portfolio", "scaling"))
    print(f"keq verify benchmark — {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")
    if "pairs" in parts:
        pairs_table(PAIRS[:6] if args.quick else PAIRS)
    if "jobs" in parts:
        jobs_table()
    if "shapes" in parts:
        shapes_table()
    if "portfolio" in parts:
        portfolio_table()
    if "scaling" in parts:
        scaling_table([64, 256, 1024] if args.quick else [64, 256, 1024, 4096])


if __name__ == "__main__":
    main()
