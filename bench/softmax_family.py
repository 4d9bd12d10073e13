"""Softmax-shaped pairs in mode real (issue 31): verify time of each pair at one fixed shape
and over its whole claim, how the fixed-shape time of online softmax grows with the row
length (against the shortest row's time per column: 1.0 is linear), and the share of that
time spent in the exponential normal form (`verifier.real_exp`, measured with cProfile)
and in the real-mode check as a whole.

    python bench/softmax_family.py            # about 5 min on the 2-core project machine
    python bench/softmax_family.py --quick    # fixed shapes and two row lengths only
"""

from __future__ import annotations

import argparse
import cProfile
import platform
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from verifier.api import verify  # noqa: E402
from verifier.spec import load_spec  # noqa: E402

K = ROOT / "kernels"
# pair -> one fixed shape
PAIRS = {
    "softmax/online_rows": {"rows": 1, "cols": 33},
    "softmax/warp_rows": {"rows": 2, "cols": 33},
    "layernorm/welford": {"rows": 2, "cols": 65},
    "attention/flash": {"n": 8},
}
ROW_LENGTHS = (32, 64, 128, 256)


def _timed(spec, fixed=None, jobs: int = 1) -> tuple[str, float]:
    t0 = time.perf_counter()
    v = verify(spec, timeout_s=1800, fixed=fixed, jobs=jobs)
    return v.kind, time.perf_counter() - t0


def pairs(quick: bool) -> None:
    print(f"{'pair':24} {'fixed shape':22} {'verdict':12} {'s':>7}   "
          f"{'whole claim':12} {'s':>7}")
    for name, fixed in PAIRS.items():
        spec = load_spec(K / f"{name}.toml")
        kind, t = _timed(spec, fixed)
        shape = ",".join(f"{k}={v}" for k, v in fixed.items())
        line = f"{name:24} {shape:22} {kind:12} {t:7.1f}"
        if not quick:
            whole, tw = _timed(spec, jobs=2)
            line += f"   {whole:12} {tw:7.1f}"
        print(line, flush=True)


def _share(stats: pstats.Stats, prefix: str) -> float:
    """Cumulative seconds of the outermost calls into files under `prefix`."""
    total = 0.0
    for (file, _, _), (_, _, _, ct, callers) in stats.stats.items():
        if file.endswith(prefix) and not any(c[0].endswith(prefix) for c in callers):
            total += ct
    return total


def growth(quick: bool) -> None:
    spec = load_spec(K / "softmax/online.toml")
    lengths = ROW_LENGTHS[:2] if quick else ROW_LENGTHS
    print(f"\nonline softmax (softmax/online.toml), rows=1: time against row length")
    print(f"{'cols':>5} {'verdict':12} {'s':>7} {'s/col':>7} {'vs shortest':>12} "
          f"{'real_exp':>9} {'real check':>11}")
    base = None
    for cols in lengths:
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        v = verify(spec, timeout_s=1800, fixed={"rows": 1, "cols": cols})
        prof.disable()
        t = time.perf_counter() - t0
        stats = pstats.Stats(prof)
        exp = _share(stats, "verifier/real_exp.py")
        real = _share(stats, "verifier/real_mode.py")
        per = t / cols
        base = base or per
        print(f"{cols:5} {v.kind:12} {t:7.1f} {per:7.3f} {per / base:11.2f}x "
              f"{100 * exp / t:8.0f}% {100 * real / t:10.0f}%", flush=True)
    print("(times under cProfile: about 2x the plain run; the shares are what it shows)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    print(f"# softmax family, mode real — {platform.node()}, Python {platform.python_version()}")
    pairs(args.quick)
    growth(args.quick)


if __name__ == "__main__":
    main()
