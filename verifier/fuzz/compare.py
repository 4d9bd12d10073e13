"""Comparing one out/inout buffer of the two sides under a pair's mode.

- bitexact: bit patterns (a NaN equals only the same NaN pattern; -0 differs from +0).
- real: integers exactly; floats within a tolerance: ``ulp:K`` (at most K units in the last
  place apart, counted through zero) or ``rel:E`` (|a - b| <= E * max(|a|, |b|)); under both,
  any NaN equals any NaN, infinities must be equal, and +0 equals -0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from semantics.errors import KeqError
from verifier.spec import ParamSpec, is_float_type, type_bits

DEFAULT_REAL_TOLERANCE = "rel:1e-5"


@dataclass(frozen=True)
class Tolerance:
    kind: str          # "ulp" | "rel"
    value: float

    def __str__(self) -> str:
        return f"{self.kind}:{int(self.value) if self.kind == 'ulp' else self.value:g}"


def parse_tolerance(text: str) -> Tolerance:
    m = re.fullmatch(r"\s*(ulp|rel)\s*:\s*(\S+)\s*", text or "")
    if not m:
        raise KeqError(f"--tolerance {text!r}: expected ulp:K (K a non-negative integer) or "
                       f"rel:E (E a non-negative number), e.g. ulp:2 or rel:1e-5")
    kind, num = m.groups()
    try:
        v = int(num) if kind == "ulp" else float(num)
    except ValueError:
        raise KeqError(f"--tolerance {text!r}: {num!r} is not "
                       f"{'an integer' if kind == 'ulp' else 'a number'}") from None
    if not v >= 0 or v != v or v == float("inf"):
        raise KeqError(f"--tolerance {text!r}: the bound must be finite and >= 0")
    return Tolerance(kind, float(v))


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
              tol: Tolerance | None) -> np.ndarray:
    """Indices of the elements that differ under the mode."""
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
        else:
            nb = type_bits(p.type)
            oa, ob = _ordinal(rb[idx], nb), _ordinal(cb[idx], nb)
            close = np.array([abs(int(x) - int(y)) <= tol.value for x, y in zip(oa, ob)],
                             dtype=bool)
        ok |= fin & close
    return idx[~ok]
