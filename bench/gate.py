"""Benchmark `keq gate` over the whole corpus (the manifest in pyproject.toml, certificates in
proofs/): the static gate (hashes, staleness, schema, stored obligations), the gate with
--recheck (re-run verify on every claim and re-solve every stored obligation with a solver
other than the one that proved it), and `keq gate` as CI runs it (a fresh process).

Baseline in the same run: a plain `keq verify` of the same pairs under the same claims (what
proving costs; the static gate should be a small fraction of it, --recheck a bit more than it).

    python bench/gate.py                       # ~1-5 min on 2 cores (see --recheck-timeout)
    python bench/gate.py --recheck-timeout 60  # the certificates' own solver timeout

The proofs must be fresh (`keq prove --manifest pyproject.toml`), or the gate measures
failures.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from verifier.certs import manifest as mf  # noqa: E402
from verifier.certs.gate import PASS, run_gate  # noqa: E402
from verifier.certs.prove import fixed_from_sets  # noqa: E402
from verifier.api import verify  # noqa: E402
from verifier.solvers import available_backends  # noqa: E402
from verifier.spec import load_spec  # noqa: E402


def baseline(m) -> tuple[float, dict[str, float]]:
    """Plain verify of every gated pair under its manifest claim."""
    per, total = {}, 0.0
    for e in m.entries:
        if e.rel in m.excluded:
            continue
        spec = load_spec(e.spec)
        if e.rel not in m.explicit and spec.expect != "equivalent":
            continue
        t = time.perf_counter()
        verify(spec, fixed=fixed_from_sets(spec, e.sets), timeout_s=e.timeout_s,
               unroll=e.unroll, max_shapes=e.max_shapes, trials=e.trials, seed=e.seed)
        per[spec.name] = time.perf_counter() - t
        total += per[spec.name]
    return total, per


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manifest", default=str(ROOT / "pyproject.toml"))
    ap.add_argument("--recheck-timeout", type=float, default=20.0, metavar="S",
                    help="per-solver timeout when re-solving (default 20; certificates say 60)")
    ap.add_argument("--repeat", type=int, default=3, help="static gate repetitions (best of)")
    ap.add_argument("--listed", action="store_true",
                    help="only the manifest's [[pair]] entries (a spec matched only by a glob "
                         "is proved over its full ranges, which can take minutes)")
    args = ap.parse_args()
    m = mf.load(args.manifest)
    if args.listed:
        m = replace(m, entries=tuple(e for e in m.entries if e.rel in m.explicit))
    solvers = ", ".join(n for n, why in available_backends().items() if not why)
    print(f"machine   {platform.machine()}, {platform.python_implementation()} "
          f"{platform.python_version()}, solvers: {solvers}")

    t_verify, per_verify = baseline(m)
    print(f"baseline  keq verify, {len(per_verify)} pairs:          {t_verify:8.2f} s")

    best = min(_timed(lambda: run_gate(m)) for _ in range(args.repeat))
    rep = run_gate(m)
    print(f"gate      static (in process, best of {args.repeat}):      {best:8.2f} s   "
          f"{rep.count(PASS)} pass, {rep.count('fail')} fail   "
          f"({best / t_verify:.1%} of verify)")

    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", "import sys; from verifier.cli import main; "
                        "sys.exit(main())", "gate", "--manifest", args.manifest],
                       capture_output=True, text=True, cwd=ROOT)
    cli = time.perf_counter() - t
    print(f"gate      `keq gate` (fresh process, as CI):      {cli:8.2f} s   exit {r.returncode}"
          f"{'  (whole manifest)' if args.listed else ''}")

    t = time.perf_counter()
    rr = run_gate(m, do_recheck=True, recheck_timeout_s=args.recheck_timeout)
    t_re = time.perf_counter() - t
    print(f"gate      --recheck (timeout {args.recheck_timeout:g} s per solver):  {t_re:8.2f} s   "
          f"{rr.count(PASS)} pass, {rr.count('fail')} fail   ({t_re / t_verify:.2f}x verify)")
    print("\nper pair (s)                      verify  recheck  result")
    for x in rr.results:
        if x.status not in ("pass", "fail"):
            continue
        why = "" if x.status == PASS else "  " + "; ".join(f.message for f in x.findings)[:90]
        print(f"  {x.name:<32} {per_verify.get(x.name, float('nan')):6.2f}  {x.seconds:7.2f}"
              f"  {x.status}{why}")
    return 0


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())
