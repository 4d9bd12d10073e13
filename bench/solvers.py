"""Solver portfolio benchmark: each solver alone vs the portfolio, in one run.

DESIGN.md claims an f32 `fma` vs `mul+add` counterexample takes z3 about 2 s and bitwuzla about
0.1 s, so a portfolio matters. This script measures, side by side, per obligation:
z3 alone, bitwuzla alone, cvc5 alone (each in this process through `verifier.solvers`
backends, on the same canonical obligation), and `solve()` in race mode with the default portfolio
(`DEFAULT_SOLVERS`, in its order; forked processes, first definitive answer wins, SAT models
validated by z3; its wall time includes all of that).
Ratios: z3 / portfolio and z3 / best-other.

    .venv/bin/python bench/solvers.py                  # default --timeout 60
    .venv/bin/python bench/solvers.py --only fma_f32 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import z3  # noqa: E402

from verifier.solvers import (BACKENDS, DEFAULT_SOLVERS, Obligation, get_backend,  # noqa: E402
                              solve)


def _fp(b, e=8, s=24):
    return z3.fpBVToFP(b, z3.FPSort(e, s))


def _canon(b, e=8, s=24):
    w = e + s
    return z3.If(z3.fpIsNaN(_fp(b, e, s)), z3.BitVecVal((1 << (w - 1)) - 1, w), b)


def fma_vs_mul_add(e=8, s=24):
    """fma.rn(x, y, z) vs add.rn(mul.rn(x, y), z), NaN canonicalized as keq's ops do: SAT."""
    w = e + s
    x, y, z_ = (z3.BitVec(n, w) for n in "xyz")
    rne = z3.RNE()
    a = z3.fpToIEEEBV(z3.fpFMA(rne, _fp(x, e, s), _fp(y, e, s), _fp(z_, e, s)))
    m = z3.fpToIEEEBV(z3.fpMul(rne, _fp(x, e, s), _fp(y, e, s)))
    b = z3.fpToIEEEBV(z3.fpAdd(rne, _fp(m, e, s), _fp(z_, e, s)))
    return _canon(a, e, s) != _canon(b, e, s)


def fma_vs_mul_add_expr(e=8, s=24):
    """The same claim as one expression (fp.mul feeds fp.add directly, no to_ieee_bv between)."""
    w = e + s
    x, y, z_ = (z3.BitVec(n, w) for n in "xyz")
    rne = z3.RNE()
    a = z3.fpToIEEEBV(z3.fpFMA(rne, _fp(x, e, s), _fp(y, e, s), _fp(z_, e, s)))
    b = z3.fpToIEEEBV(z3.fpAdd(rne, z3.fpMul(rne, _fp(x, e, s), _fp(y, e, s)), _fp(z_, e, s)))
    return _canon(a, e, s) != _canon(b, e, s)


def fmul_commutes(e=8, s=24):
    """mul.rn(a, b) vs mul.rn(b, a): UNSAT."""
    w = e + s
    a, b = z3.BitVec("a", w), z3.BitVec("b", w)
    rne = z3.RNE()
    return (_canon(z3.fpToIEEEBV(z3.fpMul(rne, _fp(a, e, s), _fp(b, e, s))), e, s)
            != _canon(z3.fpToIEEEBV(z3.fpMul(rne, _fp(b, e, s), _fp(a, e, s))), e, s))


def popcount_swar():
    """The SWAR popcount vs a bit-by-bit sum, 32-bit: UNSAT."""
    x = z3.BitVec("x", 32)
    v = x - (z3.LShR(x, 1) & 0x55555555)
    v = (v & 0x33333333) + (z3.LShR(v, 2) & 0x33333333)
    v = z3.LShR(((v + z3.LShR(v, 4)) & 0x0F0F0F0F) * 0x01010101, 24)
    naive = sum(z3.ZeroExt(31, z3.Extract(i, i, x)) for i in range(32))
    return v != naive


def average_trick(wrong=False):
    """(x & y) + ((x ^ y) >> 1) vs the 33-bit average; the `wrong` mutant uses | : SAT."""
    x, y = z3.BitVec("x", 32), z3.BitVec("y", 32)
    a = ((x | y) if wrong else (x & y)) + z3.LShR(x ^ y, 1)
    ref = z3.Extract(31, 0, z3.LShR(z3.ZeroExt(1, x) + z3.ZeroExt(1, y), 1))
    return a != ref


def mul_assoc():
    """(x*y)*z vs x*(y*z), 24-bit: UNSAT (hard for bit-blasting)."""
    x, y, z_ = (z3.BitVec(n, 24) for n in "xyz")
    return (x * y) * z_ != x * (y * z_)


CASES = {
    "fma_f32": (lambda: fma_vs_mul_add(), "sat"),
    "fma_f32_expr": (lambda: fma_vs_mul_add_expr(), "sat"),
    "fma_f64": (lambda: fma_vs_mul_add(11, 53), "sat"),
    "fmul_comm_f32": (lambda: fmul_commutes(), "unsat"),
    "popcount_swar": (popcount_swar, "unsat"),
    "average": (lambda: average_trick(), "unsat"),
    "average_mutant": (lambda: average_trick(True), "sat"),
    "mul_assoc_bv24": (mul_assoc, "unsat"),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0, help="per solver run, seconds")
    ap.add_argument("--repeat", type=int, default=1, help="timed runs per cell, best kept")
    ap.add_argument("--only", nargs="*", help="case names")
    args = ap.parse_args(argv)

    solvers = [n for n in DEFAULT_SOLVERS if BACKENDS[n].available()[0]]
    print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
          f"python {platform.python_version()}")
    for n in ("z3", "bitwuzla", "cvc5"):
        ok, why = BACKENDS[n].available()
        print(f"  {n:9s} {get_backend(n).version if ok else 'absent: ' + why}")
    print(f"portfolio: {', '.join(solvers)} (in this order, at most one per core at a time)")
    print(f"timeout {args.timeout:g} s per run; best of {args.repeat}; 'alone' = in-process "
          f"backend.check, 'portfolio' = solve(race) wall time incl. fork + model validation")
    print()
    cols = ["z3", "bitwuzla", "cvc5"]
    hdr = f"{'obligation':16s} {'expect':6s} " + " ".join(
        f"{c + ' s':>{max(12, len(c) + 2)}s}" for c in cols)
    hdr += f" {'portfolio s':>12s} {'winner':>15s} {'z3/portf':>9s} {'z3/best':>8s}"
    print(hdr)
    print("-" * len(hdr))
    names = args.only or list(CASES)
    for name in names:
        mk, expect = CASES[name]
        times: dict[str, float | None] = {}
        answers: dict[str, str] = {}
        for c in cols:
            if c not in solvers:
                times[c] = None
                answers[c] = "absent"
                continue
            best = None
            for _ in range(args.repeat):
                ob = Obligation(mk(), name)
                backend = get_backend(c)
                if backend.supports(ob):
                    answers[c] = "skip"
                    break
                r = backend.check(ob, args.timeout)
                answers[c] = r.answer
                if r.answer != expect:
                    if r.definitive:
                        raise SystemExit(f"{name}: {c} answered {r.answer}, expected {expect}")
                    break
                best = r.seconds if best is None else min(best, r.seconds)
            times[c] = best
        pbest, winner = None, ""
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            pr = solve(Obligation(mk(), name), solvers=solvers, timeout_s=args.timeout)
            dt = time.perf_counter() - t0
            if pr.answer != expect:
                raise SystemExit(f"{name}: portfolio answered {pr.answer}, expected {expect}")
            if pbest is None or dt < pbest:
                pbest, winner = dt, pr.solver

        def cell(c):
            t = times[c]
            w = max(12, len(c) + 2)
            return f"{t:{w}.3f}" if t is not None else f"{answers[c]:>{w}s}"

        z3t = times["z3"]
        others = [times[c] for c in cols if c != "z3" and times[c] is not None]
        r1 = f"{z3t / pbest:9.1f}" if z3t else f"{'>' + format(args.timeout / pbest, '.0f'):>9s}"
        r2 = (f"{z3t / min(others):8.1f}" if z3t and others else f"{'-':>8s}")
        print(f"{name:16s} {expect:6s} " + " ".join(cell(c) for c in cols)
              + f" {pbest:12.3f} {winner:>15s} {r1} {r2}", flush=True)
    print()
    print("z3/portf > 1: the portfolio is faster than z3 alone; a cell that is not a time is the "
          "solver's answer (timeout, skip: the solver cannot take the obligation, absent).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
