"""Correctly rounded IEEE arithmetic on numpy arrays, in every rounding mode.

numpy computes in round-to-nearest-even only. Every operation here first computes a float64
approximation `s` of the exact result together with enough information to know on which side
of `s` the exact result lies, then rounds to the target format:
- add/sub: `s + err` is exact (TwoSum); fma of f32/f16/bf16: the product is exact in f64, then
  TwoSum; mul of f32/f16/bf16: exact in f64.
- div and sqrt of f32/f16/bf16: `s` rounded to the target in RNE is correct (double rounding
  is innocuous when 53 >= 2p + 2); for directed modes the side of a candidate `c` is the sign of
  `c*y - x` (resp. `c*c - x`), both products exact in f64.
- f64 results in directed modes and f64 fma use exact rationals per lane (`fractions`): slow,
  rare in kernels, and obviously right.
The conformance suite checks all of it against z3's IEEE semantics.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from semantics.domains.base import FP_FORMATS

F64 = np.float64
U64 = np.uint64


# ---------------------------------------------------------------------------------------------
# bits <-> float64 values

def to_f64(fmt: str, bits: np.ndarray) -> np.ndarray:
    """Bit patterns (uint64 holding `fmt` bits) -> float64 values (exact for non-NaNs; a NaN
    stays a NaN, its payload is not kept: the ops canonicalize NaN results anyway)."""
    with np.errstate(invalid="ignore"):
        return _to_f64(fmt, bits)


def _to_f64(fmt: str, bits: np.ndarray) -> np.ndarray:
    if fmt == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(F64)
    if fmt == "f64":
        return bits.astype(U64).view(F64).copy()
    if fmt == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(F64)
    if fmt == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(F64)
    raise ValueError(fmt)


def from_f64(fmt: str, x: np.ndarray) -> np.ndarray:
    """float64 values that are exactly representable in `fmt` -> bit patterns (uint64)."""
    if fmt == "f32":
        return x.astype(np.float32).view(np.uint32).astype(U64)
    if fmt == "f64":
        return x.astype(F64).view(U64).copy()
    if fmt == "f16":
        return x.astype(np.float16).view(np.uint16).astype(U64)
    if fmt == "bf16":
        return (x.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(U64)
    raise ValueError(fmt)


# ---------------------------------------------------------------------------------------------
# round-to-nearest-even and neighbours in the target format, on float64 carriers

def _bf16_rne(s: np.ndarray, inexact: np.ndarray) -> np.ndarray:
    """f64 -> bf16 (RNE), via f32 rounded to odd (exact: 24 >= 8 + 2), then RNE on the bits."""
    with np.errstate(over="ignore", invalid="ignore"):
        c = s.astype(np.float32)
        c64 = c.astype(F64)
        # Round to odd: truncate toward zero, then set the last bit if anything was lost.
        too_big = np.abs(c64) > np.abs(s)
        c = np.where(too_big, np.nextafter(c, np.float32(0)), c)
        lost = (c.astype(F64) != s) | inexact
        bits = c.view(np.uint32).copy()
        finite = np.isfinite(s)
        bits = np.where(lost & finite, bits | np.uint32(1), bits)
        rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))
        rounded = rounded & np.uint32(0xFFFF0000)
        rounded = np.where(np.isnan(s), np.uint32(0x7FC00000), rounded)
        return rounded.view(np.float32).astype(F64)


def rne(fmt: str, s: np.ndarray, inexact: np.ndarray | None = None) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        if fmt == "f64":
            return s.copy()
        if fmt == "f32":
            return s.astype(np.float32).astype(F64)
        if fmt == "f16":
            return s.astype(np.float16).astype(F64)
        if fmt == "bf16":
            if inexact is None:
                inexact = np.zeros(s.shape, bool)
            return _bf16_rne(s, inexact)
    raise ValueError(fmt)


def neighbour(fmt: str, c: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The next representable value of `fmt` above (up) or below (~up) c."""
    with np.errstate(over="ignore", invalid="ignore"):
        if fmt == "f64":
            return np.where(up, np.nextafter(c, np.inf), np.nextafter(c, -np.inf))
        if fmt in ("f32", "f16"):
            dt = np.float32 if fmt == "f32" else np.float16
            x = c.astype(dt)
            return np.where(up, np.nextafter(x, dt(np.inf)),
                            np.nextafter(x, dt(-np.inf))).astype(F64)
        if fmt == "bf16":
            bits = from_f64("bf16", c).astype(np.int64)
            neg = (bits >> 15) & 1
            mag = bits & 0x7FFF
            # Moving away from zero grows the magnitude; toward zero shrinks it (through 0).
            away = up != neg.astype(bool)
            zero = mag == 0
            new_mag = np.where(away, mag + 1, mag - 1)
            new_neg = np.where(zero & ~away, 1 - neg, neg)
            new_mag = np.where(zero & ~away, 1, new_mag)
            out = (new_neg << 15) | new_mag
            return to_f64("bf16", out.astype(U64))
    raise ValueError(fmt)


def _sign(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(x), 0, np.sign(x)).astype(np.int8)


def round_to(fmt: str, rm: str, s: np.ndarray, *, err: np.ndarray | None = None,
             side=None) -> np.ndarray:
    """Round the exact value to `fmt` under `rm`; returns float64 carriers.

    The exact value is `s + err` (err defaults to 0), or, when `side` is given, `side(c)`
    returns sign(c - exact) for a candidate c in the target format (and `s` rounds correctly
    to nearest).
    """
    if err is None:
        err = np.zeros(s.shape, F64)
    with np.errstate(over="ignore", invalid="ignore"):
        errsign = _sign(err)
        c = rne(fmt, s, errsign != 0)
        if rm in ("rn", "rna") and side is None:
            # s may sit exactly on a midpoint of fmt while the exact value does not.
            off = (c != s) & np.isfinite(c) & np.isfinite(s)
            toward_s = s > c
            other = neighbour(fmt, c, toward_s)
            mid = off & ((s - c) == (other - s))
            flip = mid & (errsign != 0) & (_sign(other - s) == errsign)
            if rm == "rna":
                # ties away from zero: at an exact midpoint take the larger magnitude.
                exact_tie = mid & (errsign == 0)
                flip |= exact_tie & (np.abs(other) > np.abs(c))
            c = np.where(flip, other, c)
            if fmt == "f64" and rm == "rna":
                raise NotImplementedError("rna on f64")  # not produced by PTX arithmetic
            return c
        if rm in ("rn", "rna"):
            return c
        if side is not None:
            d = side(c)
        else:
            d = np.where(c != s, _sign(c - s), -errsign)
            d = np.where(np.isinf(c) & ~np.isinf(s), np.sign(c).astype(np.int8), d)
        if rm == "rz":
            adjust = ((c > 0) & (d > 0)) | ((c < 0) & (d < 0))
            return np.where(adjust, neighbour(fmt, c, c < 0), c)
        if rm == "rm":
            return np.where(d > 0, neighbour(fmt, c, np.zeros(c.shape, bool)), c)
        if rm == "rp":
            return np.where(d < 0, neighbour(fmt, c, np.ones(c.shape, bool)), c)
    raise ValueError(rm)


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(over="ignore", invalid="ignore"):
        s = a + b
        bb = s - a
        err = (a - (s - bb)) + (b - bb)
        err = np.where(np.isfinite(s), err, 0.0)
        return s, err


# ---------------------------------------------------------------------------------------------
# exact rational fallback (per lane)

def round_fraction(q: Fraction, fmt: str, rm: str, negative_zero: bool = False) -> float:
    """Round an exact rational to `fmt` under `rm`; returns the float64 carrier."""
    ebits, p = FP_FORMATS[fmt]
    bias = (1 << (ebits - 1)) - 1
    emin, emax = 1 - bias, bias
    if q == 0:
        return -0.0 if negative_zero else 0.0
    neg = q < 0
    a = -q if neg else q
    num, den = a.numerator, a.denominator
    e = num.bit_length() - den.bit_length()
    if (num << max(-e, 0)) < (den << max(e, 0)):
        e -= 1
    e = max(e, emin)
    shift = p - 1 - e                       # scale so the quantum is 1
    n2, d2 = (num << shift, den) if shift >= 0 else (num, den << -shift)
    m, rem = divmod(n2, d2)
    twice = 2 * rem
    if rm == "rn":
        up = twice > d2 or (twice == d2 and m & 1)
    elif rm == "rna":
        up = twice >= d2
    elif rm == "rz":
        up = False
    elif rm == "rp":
        up = rem != 0 and not neg
    elif rm == "rm":
        up = rem != 0 and neg
    else:
        raise ValueError(rm)
    m += up
    if m >= 1 << p:
        m >>= 1
        e += 1
    if e > emax:
        to_inf = rm in ("rn", "rna") or (rm == "rp" and not neg) or (rm == "rm" and neg)
        val = float("inf") if to_inf else float(Fraction((2 << (p - 1)) - 1) * Fraction(2) ** (emax - p + 1))
        return -val if neg else val
    val = float(Fraction(m) * Fraction(2) ** (e - p + 1)) if m else 0.0
    if val == 0.0:
        return -0.0 if neg else 0.0
    return -val if neg else val


def exact_lanes(fn, fmt: str, rm: str, *args: np.ndarray) -> np.ndarray:
    """Round `fn(*lane_floats)` per lane. `fn` returns (exact Fraction, sign of an exact zero
    result). Lanes with a non-finite argument give NaN: the caller supplies those."""
    out = np.empty(args[0].shape, F64)
    for i in range(out.size):
        vals = [float(a.flat[i]) for a in args]
        if not all(np.isfinite(v) for v in vals):
            out.flat[i] = np.nan
            continue
        q, negative_zero = fn(*vals)
        out.flat[i] = round_fraction(q, fmt, rm, negative_zero)
    return out
