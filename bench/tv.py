"""Translation-validation time per corpus kernel: each distinct PTX kernel of kernels/ (every
side of every pair spec) proved equivalent to its committed sm_80 and sm_90 SASS at a small
fixed launch shape (`tv_pairs`), with `verifier.equiv.verify`.

    .venv/bin/python bench/tv.py                 # every kernel, both archs
    .venv/bin/python bench/tv.py --arch sm_90 --only vector_add --json

Prints one line per kernel and arch: verdict, total seconds, and the seconds of each stage
(symbolic execution of both sides, races, random testing, solver). The golden test
tests/golden/test_tv_corpus.py checks the same pairs (and mutants) at the same shapes.
"""

from __future__ import annotations

import argparse
import glob
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from semantics.errors import KeqError
from verifier.cli.tv_cmd import load_sass, pair_from_side, small_scalars
from verifier.spec import load_spec


def tv_pairs(arches=("sm_90", "sm_80"), only: str | None = None):
    """(label, pair spec, fixed scalars) for each distinct corpus kernel and arch."""
    seen = set()
    for f in sorted(glob.glob(str(ROOT / "kernels/*/*.toml"))):
        if "/triton/" in f or Path(f).name.startswith("tv_"):
            continue
        spec = load_spec(f)
        env = small_scalars(spec)
        for side in (spec.reference, spec.candidate):
            key = (str(side.ptx), side.kernel)
            if key in seen or (only and only not in side.kernel):
                continue
            seen.add(key)
            for arch in arches:
                sass = Path(str(side.ptx)[:-4] + f".{arch}.sass")
                if not sass.is_file():
                    continue
                pair = pair_from_side(spec, side, load_sass(sass), sass)
                names = {p.name for p in pair.params}
                fixed = {k: v for k, v in (env or {}).items() if k in names}
                yield f"{side.kernel}/{arch}", pair, fixed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", action="append", choices=("sm_80", "sm_90"))
    ap.add_argument("--only", help="kernels whose name contains this")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from verifier.api import verify
    print(f"# keq bench/tv.py on {platform.node()} ({platform.processor() or platform.machine()},"
          f" python {platform.python_version()})", file=sys.stderr)
    rows = []
    t_all = time.perf_counter()
    for label, pair, fixed in tv_pairs(tuple(args.arch or ("sm_90", "sm_80")), args.only):
        t0 = time.perf_counter()
        try:
            v = verify(pair, fixed=fixed, timeout_s=args.timeout, shapes="enumerate")
            kind, stages_list, reasons = v.kind, v.stages, list(v.reasons)[:1]
        except KeqError as e:        # e.g. the reference PTX itself races at this shape
            kind, stages_list, reasons = "error", (), [str(e)]
        secs = time.perf_counter() - t0
        stages = {}
        for s in stages_list:
            stages[s.name] = stages.get(s.name, 0.0) + s.seconds
        row = {"kernel": label, "shape": fixed, "verdict": kind, "seconds": round(secs, 2),
               "stages": {k: round(t, 2) for k, t in stages.items()}, "reasons": reasons}
        rows.append(row)
        if not args.json:
            st = " ".join(f"{k}={t:.2f}" for k, t in row["stages"].items())
            why = f"  [{row['reasons'][0][:110]}]" if row["reasons"] else ""
            print(f"{label:<42} {kind:<13} {secs:7.2f} s  {fixed}  {st}{why}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        n = len(rows)
        eq = sum(r["verdict"] == "equivalent" for r in rows)
        print(f"# {eq}/{n} equivalent, total {time.perf_counter() - t_all:.1f} s")


if __name__ == "__main__":
    main()
