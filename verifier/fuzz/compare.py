"""Comparing one out/inout buffer of the two sides under a pair's mode.

- bitexact: bit patterns (a NaN equals only the same NaN pattern; -0 differs from +0).
- real: integers exactly; floats within a tolerance: ``ulp:K`` (at most K units in the last
  place apart, counted through zero), ``rel:E`` (|a - b| <= E * max(|a|, |b|)), or the
  default ``auto:K``, derived from the operation count (below); under all of them any NaN
  equals any NaN, infinities must be equal, and +0 equals -0.

``auto:K`` (default K = 4): a reference result a and a candidate result b that compute the
same real value, rounding differently, may differ by

    |a - b| <= K * n * (u * S + eta),   S = max(|a|, |b|, S_n)

u the unit roundoff of the output type (2^-24 f32, 2^-53 f64, 2^-11 f16, 2^-8 bf16), eta its
smallest subnormal (the absolute error of one rounding in the subnormal range), n the number
of floating-point operations on the path to the element, and S_n the sum of the n largest
magnitudes among the float inputs (in/inout buffers, float scalars; at most n * M, M the
largest). Each side's result is within about n * u * (the largest partial result on its way)
of the real value. Which inputs feed an element is not known here, so S takes the larger of
the results and S_n, which bounds every partial sum of a chain of n operations that each add
one input (a sequential sum: the classic (n - 1) * u * sum |x_i| bound). A tree of depth n
whose partial sums cancel can exceed it; K leaves room. `verifier.fuzz.op_counting` gives n
per example: the most float instructions (add sub mul fma mad div rcp sqrt ex2 ...
cvt) one thread of either kernel executed, plus the float atomics of all threads (an atomic
accumulator chains every thread's add), as the emulator counts them; `OpsContext` carries n,
M and S_n.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from semantics.errors import KeqError
from verifier.spec import PairSpec, ParamSpec, is_float_type, type_bits

DEFAULT_SAFETY = 4
DEFAULT_REAL_TOLERANCE = f"auto:{DEFAULT_SAFETY}"
UNIT_ROUNDOFF = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24, "f64": 2.0**-53}
_UNIT_TEXT = {"f16": "2^-11", "bf16": "2^-8", "f32": "2^-24", "f64": "2^-53"}
SMALLEST_SUBNORMAL = {"f16": 2.0**-24, "bf16": 2.0**-133, "f32": 2.0**-149, "f64": 2.0**-1074}


@dataclass(frozen=True)
class Tolerance:
    kind: str          # "ulp" | "rel" | "auto"
    value: float       # K ulps | E | the safety factor K of auto

    def __str__(self) -> str:
        return f"{self.kind}:{int(self.value) if self.kind == 'ulp' else self.value:g}"

    @property
    def derived(self) -> bool:
        return self.kind == "auto"


@dataclass(frozen=True)
class OpsContext:
    """What `auto` needs for one example: n, the float operations on the path to an element
    (at least 1), M, the largest magnitude among the float inputs (0 when none), and S_n, the
    sum of the n largest of those magnitudes (None: n * M)."""
    ops: int = 1
    magnitude: float = 0.0
    scale: float | None = None


def auto_formula(k: float, types=()) -> str:
    """The auto tolerance in one line of text."""
    us = ", ".join(f"{_UNIT_TEXT[t]} for {t}" for t in dict.fromkeys(types) if t in _UNIT_TEXT)
    return (f"|ref - cand| <= {k:g} * n * (u * max(|ref|, |cand|, S_n) + eta)"
            + (f", u = {us}" if us else ""))


def auto_bound(p: ParamSpec, a: np.ndarray, b: np.ndarray, k: float,
               ctx: OpsContext) -> np.ndarray:
    """The auto tolerance per element (a, b: float64 results of the two sides)."""
    n = float(max(1, ctx.ops))
    s_n = n * ctx.magnitude if ctx.scale is None else ctx.scale
    s = np.maximum(np.maximum(np.abs(a), np.abs(b)), s_n)
    return k * n * (UNIT_ROUNDOFF[p.type] * s + SMALLEST_SUBNORMAL[p.type])


def parse_tolerance(text: str) -> Tolerance:
    m = re.fullmatch(r"\s*(ulp|rel|auto)\s*:\s*(\S+)\s*", text or "")
    if not m:
        raise KeqError(f"--tolerance {text!r}: expected ulp:K (K a non-negative integer), "
                       f"rel:E (E a non-negative number) or auto:K (K times the bound derived "
                       f"from the operation count; the default is auto:{DEFAULT_SAFETY}), "
                       f"e.g. ulp:2 or rel:1e-5")
    kind, num = m.groups()
    try:
        v = int(num) if kind == "ulp" else float(num)
    except ValueError:
        raise KeqError(f"--tolerance {text!r}: {num!r} is not "
                       f"{'an integer' if kind == 'ulp' else 'a number'}") from None
    if not v >= 0 or v != v or v == float("inf"):
        raise KeqError(f"--tolerance {text!r}: the bound must be finite and >= 0")
    return Tolerance(kind, float(v))


def resolve_tolerance(spec: PairSpec, text: str | None) -> Tolerance | None:
    """The pair's tolerance: None for a bitexact pair (where a given one is an error), else
    the given one or the default ``auto``."""
    if spec.mode == "bitexact":
        if text is not None:
            raise KeqError(f"--tolerance {text}: {spec.name} is a bitexact pair (bit patterns "
                           f"are compared); a tolerance applies to mode = \"real\" pairs only")
        return None
    return parse_tolerance(text if text is not None else DEFAULT_REAL_TOLERANCE)


def _bits(a: np.ndarray, p: ParamSpec) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.dtype(f"<u{type_bits(p.type) // 8}"))


def _as_f64(a: np.ndarray, p: ParamSpec) -> np.ndarray:
    if p.type == "bf16":
        return (a.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def _ordinal(bits: np.ndarray, nbits: int) -> np.ndarray:
    """Float bit patterns as integers that count ulps through zero (+0 and -0 are both 0)."""
    b = bits.astype(np.int64) if nbits < 64 else bits.view(np.int64)
    if nbits < 64:
        sign = np.int64(1) << np.int64(nbits - 1)
        mag = b & (sign - 1)
        return np.where(b & sign, -mag, mag)
    mag = b & np.int64(0x7FFF_FFFF_FFFF_FFFF)
    return np.where(b < 0, -mag, mag)


def differing(p: ParamSpec, ref: np.ndarray, cand: np.ndarray, mode: str,
              tol: Tolerance | None, ctx: OpsContext | None = None) -> np.ndarray:
    """Indices of the elements that differ under the mode (`ctx`: for an auto tolerance;
    without it n = 1 and S_n = 0)."""
    if ref.shape != cand.shape:
        return np.arange(max(ref.size, cand.size))
    rb, cb = _bits(ref, p), _bits(cand, p)
    neq = rb != cb
    if mode == "bitexact" or not is_float_type(p.type) or not neq.any():
        return np.flatnonzero(neq)
    idx = np.flatnonzero(neq)
    a, b = _as_f64(ref[idx], p), _as_f64(cand[idx], p)
    both_nan = np.isnan(a) & np.isnan(b)
    special = ~np.isfinite(a) | ~np.isfinite(b)
    ok = both_nan | (~special & (a == b))
    if tol is not None:
        fin = ~special
        if tol.kind == "rel":
            close = np.abs(a - b) <= tol.value * np.maximum(np.abs(a), np.abs(b))
        elif tol.kind == "auto":
            with np.errstate(invalid="ignore", over="ignore"):
                close = np.abs(a - b) <= auto_bound(p, a, b, tol.value, ctx or OpsContext())
        else:
            nb = type_bits(p.type)
            oa, ob = _ordinal(rb[idx], nb), _ordinal(cb[idx], nb)
            close = np.array([abs(int(x) - int(y)) <= tol.value for x, y in zip(oa, ob)],
                             dtype=bool)
        ok |= fin & close
    return idx[~ok]
