"""Input sets for the silicon check: matrices A (n, M, K), B (n, K, N), C (n, M, N) as bit
patterns (uint64) of each operand's format, seeded so the GPU run and the dry run draw the
same instances.

Every set aims at a place where tensor cores differ from IEEE arithmetic or from each other
(docs/tensor-cores.md): the alignment width (cancellation, mixed exponents), subnormals,
overflow of the sum and of the rounding to D, NaN/inf propagation (inf * 0, inf - inf), the
sign of an exact zero, and for tf32 the 13 low bits the operand is said to ignore.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

Mats = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Fmt:
    """An IEEE-like binary format: `shift` low bits of padding (tf32 in an f32 pattern)."""

    ebits: int
    mbits: int
    shift: int = 0
    has_inf: bool = True          # e4m3 has none: its top exponent holds normal numbers

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def top(self) -> int:
        """The largest biased exponent of a finite value."""
        return (1 << self.ebits) - (2 if self.has_inf else 1)


FMTS: dict[str, Fmt] = {
    "f16": Fmt(5, 10), "bf16": Fmt(8, 7), "tf32": Fmt(8, 10, shift=13), "f32": Fmt(8, 23),
    "f64": Fmt(11, 52), "e4m3": Fmt(4, 3, has_inf=False), "e5m2": Fmt(5, 2),
}


def _u(x) -> np.ndarray:
    return np.asarray(x, dtype=np.uint64)


def normals(fmt: str, rng: np.random.Generator, shape, lo: int, hi: int) -> np.ndarray:
    """Normal numbers with unbiased exponents uniform in [lo, hi] (clipped to the format)."""
    f = FMTS[fmt]
    sign = _u(rng.integers(0, 2, shape))
    biased = np.clip(rng.integers(lo, hi + 1, shape) + f.bias, 1, f.top)
    frac = rng.integers(0, 1 << f.mbits, shape)
    if not f.has_inf:                       # e4m3: S.1111.111 is NaN, keep it finite
        frac = np.where(biased == f.top, np.minimum(frac, (1 << f.mbits) - 2), frac)
    bits = sign << _u(f.ebits + f.mbits) | _u(biased) << _u(f.mbits) | _u(frac)
    return bits << _u(f.shift)


def subnormals(fmt: str, rng: np.random.Generator, shape) -> np.ndarray:
    f = FMTS[fmt]
    sign = _u(rng.integers(0, 2, shape))
    frac = _u(rng.integers(1, 1 << f.mbits, shape))
    return (sign << _u(f.ebits + f.mbits) | frac) << _u(f.shift)


def special(fmt: str, kind: str, rng: np.random.Generator, shape) -> np.ndarray:
    """NaNs (random payloads and signs), +inf, -inf or signed zeros; e4m3 has no inf, its
    "inf" is its NaN."""
    f = FMTS[fmt]
    sign = _u(rng.integers(0, 2, shape)) << _u(f.ebits + f.mbits)
    ones = _u((1 << f.ebits) - 1) << _u(f.mbits)
    if kind == "zero":
        bits = sign
    elif kind == "nan" or not f.has_inf:
        payload = _u(rng.integers(1, 1 << f.mbits, shape)) if f.has_inf else _u((1 << f.mbits) - 1)
        bits = sign | ones | payload
    else:                                   # "inf", either sign
        bits = ones | sign
    return bits << _u(f.shift)


def decode(fmt: str, bits: np.ndarray) -> np.ndarray:
    """The values as float64 (exact for every input format but f64's own, which is a view)."""
    if fmt == "f64":
        return bits.astype(np.uint64).view(np.float64)
    f = FMTS[fmt]
    b = bits.astype(np.uint64) >> _u(f.shift)
    sign = np.where(b >> _u(f.ebits + f.mbits) & _u(1), -1.0, 1.0)
    e = (b >> _u(f.mbits) & _u((1 << f.ebits) - 1)).astype(np.int64)
    frac = (b & _u((1 << f.mbits) - 1)).astype(np.int64)
    sig = np.where(e > 0, frac | (1 << f.mbits), frac).astype(np.float64)
    val = sign * np.ldexp(sig, np.maximum(e, 1) - f.bias - f.mbits)
    allones = e == (1 << f.ebits) - 1
    if f.has_inf:
        val = np.where(allones, np.where(frac == 0, sign * np.inf, np.nan), val)
    else:
        val = np.where(allones & (frac == (1 << f.mbits) - 1), np.nan, val)
    return val


def encode_acc(fmt: str, values: np.ndarray) -> np.ndarray:
    """float64 values as bits of an accumulator format (f16, f32, f64), rounded by numpy."""
    t = {"f16": (np.float16, np.uint16), "f32": (np.float32, np.uint32),
         "f64": (np.float64, np.uint64)}[fmt]
    with np.errstate(over="ignore"):
        return values.astype(t[0]).view(t[1]).astype(np.uint64)


@dataclass(frozen=True)
class Shapes:
    """The form's formats and sizes (a subset of bench.silicon.forms.Form)."""

    a: str
    b: str
    c: str
    m: int
    n: int
    k: int


def _base(s: Shapes, rng, count: int, lo: int = -3, hi: int = 2) -> Mats:
    return (normals(s.a, rng, (count, s.m, s.k), lo, hi),
            normals(s.b, rng, (count, s.k, s.n), lo, hi),
            normals(s.c, rng, (count, s.m, s.n), lo, hi))


def _exact_products(s: Shapes, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(decode(s.a, a), decode(s.b, b))


def random_set(s: Shapes, rng, count: int) -> Mats:
    """Magnitudes like a standard normal's (exponents -3..2), random signs and fractions."""
    return _base(s, rng, count)


def cancellation(s: Shapes, rng, count: int) -> Mats:
    """First half: C = -(A B) rounded to C's format, so D is the rounding residue. Second
    half: products cancel in pairs (A's columns 2j and 2j+1 equal, B's rows opposite) and C
    lies 18 to 30 binades below them: D = C exactly in IEEE arithmetic, but an aligned,
    truncated sum keeps only C's bits above its cut (the width: 24 bits sm_80, 25 sm_90)."""
    a, b, c = _base(s, rng, count)
    half = count // 2
    c[:half] = encode_acc(s.c, -_exact_products(s, a[:half], b[:half]))
    big_a = normals(s.a, rng, (count - half, s.m, s.k), 2, 4)
    big_b = normals(s.b, rng, (count - half, s.k, s.n), 2, 4)
    big_a[:, :, 1::2] = big_a[:, :, 0::2]
    sign = _u(1) << _u((FMTS[s.b].ebits + FMTS[s.b].mbits + FMTS[s.b].shift))
    big_b[:, 1::2, :] = big_b[:, 0::2, :] ^ sign
    a[half:], b[half:] = big_a, big_b
    c[half:] = normals(s.c, rng, (count - half, s.m, s.n), 8 - 30, 8 - 18)
    return a, b, c


def mixed(s: Shapes, rng, count: int) -> Mats:
    """Products spanning 2^-14 .. 2^14 (each factor's exponent in -7..7), C too."""
    return (normals(s.a, rng, (count, s.m, s.k), -7, 7),
            normals(s.b, rng, (count, s.k, s.n), -7, 7),
            normals(s.c, rng, (count, s.m, s.n), -14, 14))


def _mix_in(rng, base: np.ndarray, other: np.ndarray, p: float) -> np.ndarray:
    return np.where(rng.random(base.shape) < p, other, base)


def subnormal(s: Shapes, rng, count: int) -> Mats:
    """Half of A's, B's and C's elements subnormal, the rest normal and small."""
    a, b, c = _base(s, rng, count, -12, 0)
    return (_mix_in(rng, a, subnormals(s.a, rng, a.shape), 0.5),
            _mix_in(rng, b, subnormals(s.b, rng, b.shape), 0.5),
            _mix_in(rng, c, subnormals(s.c, rng, c.shape), 0.5))


def overflow(s: Shapes, rng, count: int) -> Mats:
    """Factors and C in the top two binades of their formats: the sum or its rounding to
    D may overflow (f32 rounds toward zero: the largest finite value, f16 to an inf)."""
    top = {name: FMTS[name].top - FMTS[name].bias for name in (s.a, s.b, s.c)}
    return (normals(s.a, rng, (count, s.m, s.k), top[s.a] - 1, top[s.a]),
            normals(s.b, rng, (count, s.k, s.n), top[s.b] - 1, top[s.b]),
            normals(s.c, rng, (count, s.m, s.n), top[s.c] - 1, top[s.c]))


def nan_inf(s: Shapes, rng, count: int) -> Mats:
    """NaN, +-inf and zeros sprinkled over A, B and C (inf * 0, inf - inf, NaN payloads)."""
    out = list(_base(s, rng, count))
    for i, fmt in enumerate((s.a, s.b, s.c)):
        for kind, p in (("nan", 0.01), ("inf", 0.03), ("zero", 0.05)):
            out[i] = _mix_in(rng, out[i], special(fmt, kind, rng, out[i].shape), p)
    return out[0], out[1], out[2]


def _signed_zero(fmt: str, negative: bool, shape) -> np.ndarray:
    f = FMTS[fmt]
    return np.full(shape, int(negative) << (f.ebits + f.mbits + f.shift), np.uint64)


def zeros(s: Shapes, rng, count: int) -> Mats:
    """Signed zeros, in quarters: A, B, C random +-0; every product -0 and C -0 (IEEE: -0);
    every product +0 and C -0 (IEEE: +0); A nonzero, B and C random +-0."""
    a, _, _ = _base(s, rng, count)
    b = special(s.b, "zero", rng, (count, s.k, s.n))
    c = special(s.c, "zero", rng, (count, s.m, s.n))
    q = count // 4
    a[:q] = special(s.a, "zero", rng, (q, s.m, s.k))
    for part, a_negative in ((slice(q, 2 * q), False), (slice(2 * q, 3 * q), True)):
        n = len(range(count)[part])
        a[part] = _signed_zero(s.a, a_negative, (n, s.m, s.k))
        b[part] = _signed_zero(s.b, True, (n, s.k, s.n))
        c[part] = _signed_zero(s.c, True, (n, s.m, s.n))
    return a, b, c


def tf32_low_bits(s: Shapes, rng, count: int) -> Mats:
    """tf32 operands with random garbage in the 13 low bits of their f32 patterns (keq's
    model ignores them; does the tensor core?)."""
    a, b, c = _base(s, rng, count)
    return (a | _u(rng.integers(0, 1 << 13, a.shape)),
            b | _u(rng.integers(0, 1 << 13, b.shape)), c)


Generator = Callable[[Shapes, np.random.Generator, int], Mats]
SETS: dict[str, Generator] = {
    "random": random_set, "cancellation": cancellation, "mixed-exponents": mixed,
    "subnormal": subnormal, "overflow": overflow, "nan-inf": nan_inf, "signed-zeros": zeros,
}


def sets_for(s: Shapes) -> dict[str, Generator]:
    extra = {"tf32-low-bits": tf32_low_bits} if s.a == "tf32" else {}
    return {**SETS, **extra}


__all__ = ["FMTS", "SETS", "Shapes", "decode", "sets_for"]
