"""keq's model of a tensor core's f16/bf16 -> f32 dot product (`mma.sync ... .f32.f16.f16.f32`
and `.f32.bf16.bf16.f32`), the emulator's value of the uninterpreted function the symbolic
domain leaves open (docs/tensor-cores.md says where the model comes from and what is unsure).

One output element is D = C + sum_k A[k] * B[k] over K (8 or 16) pairs:
- every product is exact (two 11- or 8-bit significands);
- the nonzero products and C are aligned to the largest exponent E among them (E: the
  exponent of the leading bit) and each is truncated toward zero to a multiple of 2^(E-24)
  (24 fraction bits below E, the Ampere/Ada width);
- the truncated terms are summed exactly and the sum converted to f32 rounding toward zero;
- k16 is two chained k8 steps: the second's addend is the first's f32 result (sm_80);
- a NaN input, inf * 0 or inf - inf gives the canonical NaN 0x7FFFFFFF; else an inf wins.
Exactness: the aligned significands are Python ints. Lanes are few, so a Python loop over
them is fast enough for the emulator.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from semantics.domains.base import FP_FORMATS

CANONICAL_NAN = 0x7FFFFFFF
FRACTION_BITS = 24          # bits kept below the largest exponent (sm_80 / sm_89)
CHAIN = 8                   # products summed in one step; k16 chains two steps

# A finite term: (negative, significand, exponent): the value is (-1)^negative * sig * 2^exp.
Term = tuple[bool, int, int]


def decode(fmt: str, bits: int) -> Term | str:
    """A bit pattern of `fmt` as an exact term, or "nan", "+inf", "-inf"."""
    ebits, sbits = FP_FORMATS[fmt]
    mbits = sbits - 1
    neg = bool(bits >> (ebits + mbits) & 1)
    e = bits >> mbits & ((1 << ebits) - 1)
    f = bits & ((1 << mbits) - 1)
    if e == (1 << ebits) - 1:
        return "nan" if f else ("-inf" if neg else "+inf")
    bias = (1 << (ebits - 1)) - 1
    sig = f | (1 << mbits) if e else f          # subnormals are exact too
    return neg, sig, max(e, 1) - bias - mbits


def _special(products: list, c) -> int | None:
    """The result when an input is NaN or inf (else None): inf * 0 and inf - inf are NaN."""
    infs = set()
    for p in products + [c]:
        if p == "nan":
            return CANONICAL_NAN
        if isinstance(p, str):
            infs.add(p)
    if len(infs) == 2:
        return CANONICAL_NAN
    if infs:
        return 0xFF800000 if infs == {"-inf"} else 0x7F800000
    return None


def _product(a, b):
    """The exact product of two decoded inputs (a term, "nan", or a signed inf)."""
    if a == "nan" or b == "nan":
        return "nan"
    if isinstance(a, str) or isinstance(b, str):
        other = b if isinstance(a, str) else a
        if not isinstance(other, str) and other[1] == 0:
            return "nan"                                    # inf * 0
        neg = (a[0] == "-" if isinstance(a, str) else a[0]) != \
            (b[0] == "-" if isinstance(b, str) else b[0])
        return "-inf" if neg else "+inf"
    return a[0] != b[0], a[1] * b[1], a[2] + b[2]


def _sum_truncated(terms: list[Term]) -> tuple[int, int]:
    """(S, e): the sum of the terms, each truncated toward zero to a multiple of 2^e, where
    e = E - 24 and E is the largest leading-bit exponent among the nonzero terms."""
    live = [t for t in terms if t[1]]
    if not live:
        return 0, 0
    top = max(exp + sig.bit_length() - 1 for _, sig, exp in live)
    unit = top - FRACTION_BITS
    total = 0
    for neg, sig, exp in live:
        shift = exp - unit
        mag = sig << shift if shift >= 0 else sig >> -shift   # toward zero: magnitude
        total += -mag if neg else mag
    return total, unit


def to_f32_rz(total: int, unit: int, zero_negative: bool) -> int:
    """total * 2^unit as f32 bits, rounded toward zero (an overflow gives the largest finite
    value; subnormal results are kept)."""
    if total == 0:
        return 0x80000000 if zero_negative else 0
    sign = 0x80000000 if total < 0 else 0
    mag = abs(total)
    n = mag.bit_length()
    exp = unit + n - 1
    if exp > 127:
        return sign | 0x7F7FFFFF
    if exp >= -126:
        mant = mag >> (n - 24) if n > 24 else mag << (24 - n)
        return sign | (exp + 127) << 23 | (mant & 0x7FFFFF)
    shift = unit + 149                               # in units of 2^-149
    return sign | (mag << shift if shift >= 0 else mag >> -shift)


def dot_step(fmt: str, a: Sequence[int], b: Sequence[int], c: int) -> int:
    """One chained step: f32 bits of C + sum a[k]*b[k] (halves of `fmt`, C f32 bits)."""
    products = [_product(decode(fmt, x), decode(fmt, y)) for x, y in zip(a, b)]
    addend = decode("f32", c)
    special = _special(products, addend)
    if special is not None:
        return special
    terms = products + [addend]
    total, unit = _sum_truncated(terms)
    # an exact zero: -0 only when every term is a negative zero or negative (as IEEE's sum
    # of zeros in round-toward-zero); keq's guess, see docs/tensor-cores.md
    return to_f32_rz(total, unit, all(t[0] for t in terms))


def dot(fmt: str, a: Sequence[int], b: Sequence[int], c: int) -> int:
    """One output element of the mma: steps of CHAIN products, each step's f32 result the
    next step's addend."""
    for lo in range(0, len(a), CHAIN):
        c = dot_step(fmt, a[lo:lo + CHAIN], b[lo:lo + CHAIN], c)
    return c


def mma_model(fmt: str, k: int):
    """The lane-vector model `Domain.tensor_fn` applies: args are the K A-halves, the K
    B-halves and C, each a numpy array over lanes; the result is f32 bits per lane."""
    def model(*args: np.ndarray) -> np.ndarray:
        cols = [np.asarray(x).astype(np.uint64) for x in args]
        out = np.zeros(cols[0].shape, np.uint32)
        for i in range(out.size):
            vals = [int(col.flat[i]) for col in cols]
            out.flat[i] = dot(fmt, vals[:k], vals[k:2 * k], vals[2 * k])
        return out
    return model
