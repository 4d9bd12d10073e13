"""keq's model of a tensor core's dot products, the emulator's value of the uninterpreted
function the symbolic domain leaves open (docs/tensor-cores.md says where the model comes from
and what is unsure): `mma.sync` with f16/bf16 inputs (f32 or f16 accumulators), tf32 inputs
(f32 accumulators), and f64.

One output element is D = C + sum_k A[k] * B[k] over K pairs. f16, bf16, tf32 inputs:
- tf32 inputs are f32 bit patterns whose low 13 significand bits are ignored;
- every product is exact (two 11-, 8- or 11-bit significands);
- the nonzero products and C are aligned to the largest exponent E among them (E: the
  exponent of the leading bit) and each is truncated toward zero to a multiple of 2^(E-24)
  (24 fraction bits below E, the Ampere/Ada width);
- the truncated terms are summed exactly; the sum of a step that feeds another step is
  converted to f32 rounding toward zero; the last step's sum is converted to D's format:
  f32 rounding toward zero, f16 rounding to nearest even;
- f16/bf16: steps of 8 products (k16: two chained k8 steps, the second's addend the first's
  f32 result, sm_80); tf32: steps of 4 products (k8: two chained k4 steps); fp8 (e4m3,
  e5m2; sm_89): steps of 16 (k32: two chained k16 steps), with the same 24-bit alignment (the
  sources report a narrower one on Ada: unsure, docs/tensor-cores.md);
- a NaN input, inf * 0 or inf - inf gives D's canonical NaN (0x7FFFFFFF, 0x7FFF); else an
  inf wins.
f64 (`fma_chain`): C, then one IEEE fma per k in k order, rounding to nearest even; a NaN
result is the canonical 0x7FFFFFFFFFFFFFFF.
Exactness: the aligned significands are Python ints. Lanes are few, so a Python loop over
them is fast enough for the emulator.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import numpy as np

from semantics.domains.base import FP_FORMATS
from semantics.domains.fp_numpy import round_fraction
from semantics.fp8 import FP8

CANONICAL_NAN = 0x7FFFFFFF
NANS = {"f16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}
INFS = {"f16": 0x7C00, "f32": 0x7F800000, "f64": 0x7FF0000000000000}
FRACTION_BITS = 24          # bits kept below the largest exponent (sm_80 to sm_89)
# Per architecture (a claim's `arch`): Hopper's mma.sync is reported to keep 25 bits (MMA-Sim,
# arXiv 2511.10909), unchecked on silicon here (docs/tensor-cores.md).
ARCH_FRACTION_BITS = {"sm_80": 24, "sm_86": 24, "sm_87": 24, "sm_89": 24, "sm_90": 25}
CHAIN = 8                   # f16/bf16 products summed in one step; k16 chains two steps
CHAINS = {"f16": CHAIN, "bf16": CHAIN, "tf32": 4,    # tf32: k8 chains two k4 steps
          "e4m3": 16, "e5m2": 16}                     # fp8: k32 chains two k16 steps
TF32_IGNORED = 0x1FFF       # the low 13 significand bits of a tf32 operand's f32 pattern

# A finite term: (negative, significand, exponent): the value is (-1)^negative * sig * 2^exp.
Term = tuple[bool, int, int]


def decode(fmt: str, bits: int) -> Term | str:
    """A bit pattern of `fmt` as an exact term, or "nan", "+inf", "-inf"."""
    if fmt == "tf32":
        fmt, bits = "f32", bits & ~TF32_IGNORED
    if fmt in FP8:                   # e4m3, e5m2: semantics/fp8.py
        return FP8[fmt].decode(bits)
    ebits, sbits = FP_FORMATS[fmt]
    return _decode_bits(bits, ebits, sbits - 1)


def _decode_bits(bits: int, ebits: int, mbits: int) -> Term | str:
    """An IEEE-style pattern (`ebits` exponent and `mbits` fraction bits) as a term."""
    neg = bool(bits >> (ebits + mbits) & 1)
    e = bits >> mbits & ((1 << ebits) - 1)
    f = bits & ((1 << mbits) - 1)
    if e == (1 << ebits) - 1:
        return "nan" if f else ("-inf" if neg else "+inf")
    bias = (1 << (ebits - 1)) - 1
    sig = f | (1 << mbits) if e else f          # subnormals are exact too
    return neg, sig, max(e, 1) - bias - mbits


def _special(products: list, c, out: str = "f32") -> int | None:
    """The result (in format `out`) when an input is NaN or inf (else None): inf * 0 and
    inf - inf are NaN."""
    infs = set()
    for p in products + [c]:
        if p == "nan":
            return NANS[out]
        if isinstance(p, str):
            infs.add(p)
    if len(infs) == 2:
        return NANS[out]
    if infs:
        sign = 1 << (FP_FORMATS[out][0] + FP_FORMATS[out][1] - 1)
        return INFS[out] | sign if infs == {"-inf"} else INFS[out]
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


def _sum_truncated(terms: list[Term], bits: int = FRACTION_BITS) -> tuple[int, int]:
    """(S, e): the sum of the terms, each truncated toward zero to a multiple of 2^e, where
    e = E - `bits` and E is the largest leading-bit exponent among the nonzero terms."""
    live = [t for t in terms if t[1]]
    if not live:
        return 0, 0
    top = max(exp + sig.bit_length() - 1 for _, sig, exp in live)
    unit = top - bits
    total = 0
    for neg, sig, exp in live:
        shift = exp - unit
        mag = sig << shift if shift >= 0 else sig >> -shift   # toward zero: magnitude
        total += -mag if neg else mag
    return total, unit


def to_float(total: int, unit: int, fmt: str, rm: str, zero_negative: bool) -> int:
    """total * 2^unit as bits of `fmt` (f16, f32), rounded toward zero (`rm` "rz": an
    overflow gives the largest finite value) or to nearest even ("rn": an overflow gives an
    infinity); subnormal results are kept."""
    ebits, p = FP_FORMATS[fmt]
    mbits, bias = p - 1, (1 << (ebits - 1)) - 1
    sign = 1 << (ebits + mbits) if (total < 0 or (total == 0 and zero_negative)) else 0
    if total == 0:
        return sign
    mag = abs(total)
    quantum = max(unit + mag.bit_length() - 1, 1 - bias) - mbits   # the result's last bit
    drop = quantum - unit
    if drop <= 0:
        m = mag << -drop
    else:
        m, rest = mag >> drop, mag & ((1 << drop) - 1)
        half = 1 << (drop - 1)
        if rm == "rn" and (rest > half or (rest == half and m & 1)):
            m += 1
    if m >> p:                                   # rounding carried into a new bit
        m, quantum = m >> 1, quantum + 1
    if not m >> mbits:                           # subnormal
        return sign | m
    exp = quantum + mbits
    if exp > bias:
        return sign | (INFS[fmt] if rm == "rn" else INFS[fmt] - 1)
    return sign | (exp + bias) << mbits | (m & ((1 << mbits) - 1))


def to_f32_rz(total: int, unit: int, zero_negative: bool) -> int:
    """total * 2^unit as f32 bits, rounded toward zero (an overflow gives the largest finite
    value; subnormal results are kept)."""
    return to_float(total, unit, "f32", "rz", zero_negative)


def dot_step(fmt: str, a: Sequence[int], b: Sequence[int], c: int, c_fmt: str = "f32",
             out: str = "f32", b_fmt: str | None = None, arch: str = "sm_80") -> int:
    """One chained step: bits of C + sum a[k]*b[k] (A of `fmt`, B of `b_fmt`, default the
    same, C of `c_fmt`) in format `out`: f32 rounded toward zero, f16 to nearest even."""
    products = [_product(decode(fmt, x), decode(b_fmt or fmt, y)) for x, y in zip(a, b)]
    addend = decode(c_fmt, c)
    special = _special(products, addend, out)
    if special is not None:
        return special
    terms = products + [addend]
    total, unit = _sum_truncated(terms, ARCH_FRACTION_BITS[arch])
    # an exact zero: -0 only when every term is a negative zero or negative (as IEEE's sum
    # of zeros in round-toward-zero); keq's guess, see docs/tensor-cores.md
    return to_float(total, unit, out, "rz" if out == "f32" else "rn", all(t[0] for t in terms))


def dot(fmt: str, a: Sequence[int], b: Sequence[int], c: int, c_fmt: str = "f32",
        d_fmt: str = "f32", b_fmt: str | None = None, arch: str = "sm_80") -> int:
    """One output element of the mma: steps of CHAINS[fmt] products, each step's f32 result
    the next step's addend; the last step gives D's format."""
    step = CHAINS[fmt]
    for lo in range(0, len(a), step):
        last = lo + step >= len(a)
        c = dot_step(fmt, a[lo:lo + step], b[lo:lo + step], c, c_fmt, d_fmt if last else "f32",
                     b_fmt, arch)
        c_fmt = "f32"
    return c


def fma_chain(a: Sequence[int], b: Sequence[int], c: int) -> int:
    """f64: c = fma(a[k], b[k], c) for k in order, each rounded to nearest even (IEEE)."""
    for x, y in zip(a, b):
        c = _fma64(x, y, c)
    return c


def _fma64(a: int, b: int, c: int) -> int:
    fa, fb, fc = (float(np.uint64(v).view(np.float64)) for v in (a, b, c))
    if not (math.isfinite(fa) and math.isfinite(fb)):
        r = fa * fb + fc                         # an inf or NaN product decides
    elif not math.isfinite(fc):
        r = fc                                   # a finite product does not change it
    else:
        q = Fraction(fa) * Fraction(fb) + Fraction(fc)
        zero_neg = fa * fb == 0 and fc == 0 and \
            math.copysign(1, fa) * math.copysign(1, fb) < 0 and math.copysign(1, fc) < 0
        r = round_fraction(q, "f64", "rn", zero_neg)
    if math.isnan(r):
        return NANS["f64"]
    return int(np.float64(r).view(np.uint64))


def mma_model(fmt: str, k: int, c_fmt: str = "f32", d_fmt: str = "f32",
              b_fmt: str | None = None, arch: str = "sm_80"):
    """The lane-vector model `Domain.tensor_fn` applies: args are the K A-elements, the K
    B-elements and C, each a numpy array over lanes; the result is D's bits per lane."""
    def one(vals: list[int]) -> int:
        if fmt == "f64":
            return fma_chain(vals[:k], vals[k:2 * k], vals[2 * k])
        return dot(fmt, vals[:k], vals[k:2 * k], vals[2 * k], c_fmt, d_fmt, b_fmt, arch)

    def model(*args: np.ndarray) -> np.ndarray:
        cols = [np.asarray(x).astype(np.uint64) for x in args]
        out = np.zeros(cols[0].shape, np.uint64)
        for i in range(out.size):
            out.flat[i] = one([int(col.flat[i]) for col in cols])
        return out
    return model
