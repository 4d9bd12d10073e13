"""Output comparisons when the terms apply values the hardware fixes as functions of the
inputs (`keq!uf!` functions: the NaN an f32 operation returns, which f64 payload wins).

A proof must hold for every such function (the solver leaves them free). A refutation must
hold for the GPU's own, which keq does not know: a solver asked only "can the outputs differ"
finds the cheapest way, a NaN payload that one free function picks and the other does not,
which proves nothing. So the questions are asked in turn, each narrower:
1. do they differ for some function (free)? unsat: equal for every one, proved;
2. do they differ where not both are NaN? (what a NaN returns matters only to NaN results);
3. do they differ with the emulator's functions (canonical NaNs, the first operand's payload)?
A model of 2 or 3 is replayed as usual and then checked to differ for every function
(`verifier.counterexample._for_every_function`); when neither has one, the kernels may
differ only through those values: Inconclusive, with the target assumptions that decide it.
"""

from __future__ import annotations

import z3

from semantics.choices import FUNCTION_PREFIX
from semantics.domains.nan_wrappers import MASKS
from semantics.ops.common import CANONICAL_NAN
from verifier.terms import subterms

_FORMAT = {"f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64"}


def open_functions(*terms) -> list:
    """The `keq!uf!` function declarations the terms apply."""
    seen: dict[str, z3.FuncDeclRef] = {}
    for e in subterms(*[t for t in terms if not isinstance(t, int)]):
        if z3.is_app(e) and e.num_args() > 0 and e.decl().name().startswith(FUNCTION_PREFIX):
            seen.setdefault(e.decl().name(), e.decl())
    return list(seen.values())


def not_both_nan(a, b, fmt: str):
    """Neither of the output bits `a`, `b` is a NaN of `fmt`, or only one is."""
    exp, mant, _ = MASKS[fmt]

    def nan(v):
        return z3.And(v & exp == exp, v & mant != 0)
    return z3.Not(z3.And(nan(a), nan(b)))


def defaulted(t, functions: list):
    """`t` with every open function replaced by the emulator's (the canonical NaN; the first
    operand's payload when several are NaN)."""
    if isinstance(t, int) or not functions:
        return t
    pairs = []
    for f in functions:
        w = f.range().size()
        value = 1 if "/pick" in f.name() else CANONICAL_NAN.get(_width_fmt(f.name(), w), 0)
        pairs.append((f, z3.BitVecVal(value, w)))
    return z3.substitute_funs(t, *pairs)


def _width_fmt(name: str, w: int) -> str:
    for fmt in ("bf16", "f16", "f32", "f64"):
        if name.endswith(f".{fmt}") or f".{fmt}/" in name:
            return fmt
    return {16: "f16", 32: "f32", 64: "f64"}.get(w, "f32")


__all__ = ["open_functions", "not_both_nan", "defaulted"]
