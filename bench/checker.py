"""The warm `Checker` (verifier/checker.py) against one cold `keq verify` process per
candidate, on a search-like workload: mutants of a corpus pair's candidate (bench/mutants.py's
operators), most of them wrong. Prints, per pair, candidates judged per second both ways and
their ratio, the split refuted / proved / inconclusive, and whether every verdict kind agrees.

    .venv/bin/python bench/checker.py                           # vec4, a reduction, tiled matmul
    .venv/bin/python bench/checker.py kernels/vector_add/vec4.toml --mutants 20 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import mutants as mut  # noqa: E402  (bench/mutants.py: the operators and the cold runner)

from verifier.checker import Checker  # noqa: E402

DEFAULT = ["kernels/vector_add/vec4.toml", "kernels/reduce/i32_tree_shfl.toml",
           "kernels/matmul/tiled_bitexact_k16.toml"]


def _mutants(spec: Path, n: int, seed: int) -> tuple[str, list]:
    import tomllib
    doc = tomllib.loads(spec.read_text())
    ptx = spec.parent / doc["candidate"]["ptx"]
    text = ptx.read_text()
    g = mut.generate(text, doc["candidate"]["kernel"], mut.pair_name(spec, doc), str(ptx))
    return text, mut.select(g.mutants, n, seed, mut.pair_name(spec, doc))


def _cold(spec: Path, text: str, muts: list, timeout_s: float, tmp: Path) -> list[str]:
    kinds = []
    for m in muts:
        ptx = tmp / f"{m.slug}.ptx"
        ptx.write_text(m.apply(text))
        toml = tmp / f"{m.slug}.toml"
        toml.write_text(mut.rewrite_spec(spec.read_text(), spec.parent, ptx))
        res = mut.keq(["verify", str(toml), "--json", "-j", "1", "--timeout", str(timeout_s)],
                      timeout_s * 4)
        try:
            kinds.append(json.loads(res["stdout"])["verdict"])
        except (ValueError, KeyError):
            kinds.append("inconclusive" if res["timed_out"] else f"error rc={res['rc']}")
    return kinds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", default=DEFAULT)
    ap.add_argument("--mutants", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout-s", type=float, default=30.0)
    ap.add_argument("--jobs", type=int, default=1, help="the warm checker's processes")
    args = ap.parse_args()
    ok = True
    for name in args.specs:
        spec = (ROOT / name).resolve()
        text, muts = _mutants(spec, args.mutants, args.seed)
        t0 = time.perf_counter()
        checker = Checker(spec, timeout_s=args.timeout_s)
        warm_kinds = {j.label: str(j.verdict.kind) for j in checker.check_many(
            [(m.id, m.apply(text), None) for m in muts], jobs=args.jobs,
            budget_s=args.timeout_s * 4)}
        warm = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            cold_kinds = _cold(spec, text, muts, args.timeout_s, Path(tmp))
            cold = time.perf_counter() - t0
        warm_list = [warm_kinds[m.id] for m in muts]
        agree = warm_list == cold_kinds
        ok &= agree
        split = Counter(warm_list)
        print(f"{name}: {len(muts)} mutants  warm {warm:.1f} s ({len(muts) / warm:.2f}/s, "
              f"{args.jobs} process(es))  cold {cold:.1f} s ({len(muts) / cold:.2f}/s)  "
              f"speedup {cold / warm:.2f}x")
        print(f"    refuted {split['not-equivalent']}, proved {split['equivalent']}, "
              f"inconclusive {split['inconclusive']}; kinds "
              + ("agree" if agree else "DIFFER: " + ", ".join(
                  f"{m.id} warm {w} cold {c}" for m, w, c in zip(muts, warm_list, cold_kinds)
                  if w != c)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
