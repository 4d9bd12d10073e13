"""Fuzzing throughput: examples per second of `keq fuzz` (hypothesis + both kernels + compare).

Pairs: vector add (scalar vs float4), block reduction (interleaved vs sequential, int32) and
transpose (naive vs 32x32 tiled), each at 2^10 and 2^16 elements, on the emulator with race
detection on (the default) and off, and on the GPU through pycuda when one is present.

Baseline measured in the same run: one launch of each kernel on the emulator with the same
inputs, without hypothesis (`bare ex/s` = 1 / (reference + candidate launch time), with race
detection as in the row; the pycuda rows show the emulator's figure); the ratio
fuzz/bare shows the runner's own overhead. Target: >= 200 examples/s on the emulator for the
2^10-element vector add.

    .venv/bin/python bench/fuzz.py                 # ~1-2 minutes on 2 cores
    .venv/bin/python bench/fuzz.py --examples 50 --only vector_add
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore")

from verifier.emulate import prepare_side, run_side  # noqa: E402
from verifier.fuzz.backends import get_backend  # noqa: E402
from verifier.fuzz.runner import fuzz  # noqa: E402
from verifier.spec import load_spec, make_inputs  # noqa: E402

K = ROOT / "kernels"

# name -> (spec to widen, scalar ranges for the bench, sizes: {label: fixed scalars})
CASES = {
    "vector_add": ("vector_add/vec4.toml", {"n": (1, 1 << 16)},
                   {"2^10": {"n": 1 << 10}, "2^16": {"n": 1 << 16}}),
    "reduce_i32": ("reduce/i32_sequential.toml", {"n": (1, 1 << 16)},
                   {"2^10": {"n": 1 << 10}, "2^16": {"n": 1 << 16}}),
    "transpose": ("transpose/tiled.toml", {"rows": (1, 256), "cols": (1, 256)},
                  {"2^10": {"rows": 32, "cols": 32}, "2^16": {"rows": 256, "cols": 256}}),
}


def widened(spec_rel: str, ranges: dict, tmp: Path) -> Path:
    """A copy of the spec with absolute PTX paths and the bench's scalar ranges."""
    src = K / spec_rel
    lines = src.read_text().splitlines()
    out, current = [], None
    for line in lines:
        s = line.strip()
        if s.startswith("ptx ="):
            rel = s.split("=", 1)[1].strip().strip('"')
            line = f'ptx = "{(src.parent / rel).resolve()}"'
        if s.startswith("name ="):
            current = s.split("=", 1)[1].strip().strip('"')
        if s.startswith("range =") and current in ranges:
            lo, hi = ranges[current]
            line = f"range = [{lo}, {hi}]"
        if s.startswith("assume"):
            continue
        out.append(line)
    p = tmp / src.name
    p.write_text("\n".join(out) + "\n")
    return p


def bare_rate(spec, fixed: dict, races: bool, repeats: int = 20) -> float:
    rng = np.random.default_rng(0)
    values = make_inputs(spec, fixed, rng)
    prep = {s.role: prepare_side(s) for s in (spec.reference, spec.candidate)}
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for s in (spec.reference, spec.candidate):
            run_side(s, values, fixed, prepared=prep[s.role], detect_races=races)
        best = min(best, time.perf_counter() - t)
    return 1.0 / best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=200, help="examples per 2^10 case")
    ap.add_argument("--examples-large", type=int, default=30, help="examples per 2^16 case")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    import hypothesis
    print(f"bench/fuzz.py  python {platform.python_version()}  numpy {np.__version__}  "
          f"hypothesis {hypothesis.__version__}  {platform.machine()} "
          f"{os.cpu_count()} cpu(s)")
    backends = [("emulator", {"detect_races": True}, "emulator+races"),
                ("emulator", {"detect_races": False}, "emulator")]
    try:
        g = get_backend("pycuda")
        backends.append(("pycuda", {}, "pycuda"))
        print(f"GPU: {g.describe()}")
    except Exception as e:
        print(f"GPU: none ({str(e).splitlines()[0]})")
    print(f"{'case':<12} {'size':<5} {'backend':<15} {'examples':>8} {'ex/s':>8} "
          f"{'bare ex/s':>9} {'fuzz/bare':>9}")
    with tempfile.TemporaryDirectory() as d:
        for name, (rel, ranges, sizes) in CASES.items():
            if args.only and name not in args.only:
                continue
            spec = load_spec(widened(rel, ranges, Path(d)))
            for label, fixed in sizes.items():
                bares = {r: bare_rate(spec, fixed, r) for r in (True, False)}
                n = args.examples if label == "2^10" else args.examples_large
                for bname, kw, shown in backends:
                    bare = bares[kw.get("detect_races", False)]
                    rep = fuzz(spec, get_backend(bname, **kw), examples=n, fixed=fixed)
                    assert rep.difference is None, rep.difference.summary
                    rate = rep.examples_per_second
                    ratio = f"{rate / bare:.2f}" if bname == "emulator" else "-"
                    print(f"{name:<12} {label:<5} {shown:<15} {rep.examples:>8} {rate:>8.1f} "
                          f"{bare:>9.1f} {ratio:>9}", flush=True)
    print("target: >= 200 ex/s for vector_add 2^10 on the emulator")
    return 0


if __name__ == "__main__":
    sys.exit(main())
