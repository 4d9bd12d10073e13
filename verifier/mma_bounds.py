"""How far a tensor core's result may be from the exact one, for refutations.

Symbolically a floating-point `mma`/`wmma` is an uninterpreted function of its inputs
(`semantics.ops.mma_float`): a proof holds whatever the tensor core computes. A difference
that goes through one is a counterexample only when it holds for every tensor core keq
admits; with no bound at all, none does (a constant function makes any two kernels agree).
The published analyses of NVIDIA's tensor cores agree on the datapath's shape for f16 and
bf16 inputs (docs/tensor-cores.md has the sources: Fasi et al. 2021; MMA-Sim, arXiv
2511.10909; Khattak and Mikaitis, arXiv 2512.07004): products are exact; they and the
addend are aligned to the largest exponent and truncated to a fixed number of bits below it
(23 on Volta, 24 on Turing to Ada, 25 on Hopper), summed, and the sum normalized with
round-toward-zero (an f16 result: to nearest); wider shapes run as two chained halves.

keq's bound is looser than every one of those, so a refutation through it holds on all of
them. With M = |c| + sum |a_k b_k| and E = floor(log2 M): every partial sum is at most
M plus the error so far, so a step's largest term has an exponent of at most E + 1; with at
least 23 bits kept below it, the first of two chained steps loses less than
(k/2 + 2) * 2^(E - 23) to truncating its terms and normalizing, the second less than
(k/2 + 2) * 2^(E - 22), in all (3k/4 + 3) * 2^(E - 22), within

    |result - (sum a_k b_k + c)| <= (k + 4) * 2^(E - 22) + 2 * 2^(E - 10) [f16 result] + N

where the f16 term allows an f16 result rounded at both chained steps, and N, the format's
smallest normal, allows a result flushed to zero or rounded among subnormals. Only f16 and
bf16 inputs that are normal or zero are bounded (whether a tensor core flushes subnormal
inputs is not settled in the sources), and only where the range stays finite in the
result's format; anything else (tf32, f64, fp8, subnormal inputs, infinities, NaN, overflow)
is left free. The range is widened outward by one ulp of the result's format.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np

_NP = {"f16": np.float16, "f32": np.float32}
_NORMAL = {"f16": Fraction(2) ** -14, "bf16": Fraction(2) ** -126, "f32": Fraction(2) ** -126}
_U = {"f16": np.uint16, "f32": np.uint32}
# (m8n8k4 .f16 names its .alayout/.blayout: any of .row/.col)
_FORM = re.compile(r"(?:mma\.m\d+n\d+k(\d+)\.(?:row|col)\.(?:row|col)|wmma\.m\d+n\d+k(\d+))"
                   r"\.(f16|f32)\.(f16|bf16)\.(f16|bf16)\.(f16|f32)$")


def _decode(fmt: str, bits: int) -> float:
    if fmt == "bf16":
        return float(np.array([bits << 16], np.uint32).view(np.float32)[0])
    if fmt == "f16":
        return float(np.array([bits], np.uint16).view(np.float16)[0])
    return float(np.array([bits], np.uint32).view(np.float32)[0])


def _outward(x: Fraction, fmt: str, down: bool) -> int | None:
    """The bits of a `fmt` float at or beyond `x` (below when `down`), or None past the
    finite range."""
    t = _NP[fmt]
    with np.errstate(over="ignore"):
        f = t(float(x))
    if not np.isfinite(f):
        return None
    f = np.nextafter(f, t(-np.inf) if down else t(np.inf))
    if not np.isfinite(f):
        return None
    return int(np.array([f], t).view(_U[fmt])[0])


def tensor_range(function: str, args: list[int]) -> tuple[int, int, str] | None:
    """(lowest, highest, format): the bit patterns the tensor-core `function` (the
    symbolic domain's name without its prefix, `mma.m16n8k16.row.col.f32.f16.f16.f32`,
    `mma.m8n8k4.col.row.f16.f16.f16.f16` or `wmma.m16n16k16.f32.f16.f16.f32`) may return for the arguments `args` (row of A,
    column of B, then C, as bits), as floats; None where keq bounds nothing (any value)."""
    m = _FORM.match(function)
    if m is None:
        return None
    k = int(m.group(1) or m.group(2))
    dt, at, bt, ct = m.group(3, 4, 5, 6)
    if at != bt or len(args) != 2 * k + 1:
        return None
    a = [_decode(at, x) for x in args[:k]]
    b = [_decode(bt, x) for x in args[k:2 * k]]
    c = _decode(ct, args[-1])
    if not all(np.isfinite(v) and (v == 0 or abs(v) >= _NORMAL[f])
               for v, f in zip(a + b + [c], [at] * k + [bt] * k + [ct])):
        return None
    products = [Fraction(x) * Fraction(y) for x, y in zip(a, b)]
    exact = sum(products, Fraction(c))
    size = abs(Fraction(c)) + sum(abs(p) for p in products)
    if size == 0:
        lo = hi = Fraction(0)
    else:
        e = size.numerator.bit_length() - size.denominator.bit_length()
        if Fraction(2) ** e > size:      # (floor(log2 size), exactly)
            e -= 1
        err = (k + 4) * Fraction(2) ** (e - 22) + _NORMAL[dt]
        if dt == "f16":
            err += 2 * Fraction(2) ** (e - 10)
        lo, hi = exact - err, exact + err
    low, high = _outward(lo, dt, True), _outward(hi, dt, False)
    if low is None or high is None:
        return None
    return low, high, dt


def bounded_effect(effect) -> bool:
    """Is `effect` what a tensor core's open result records (bounded here)?"""
    return effect.kind == "unspecified" and effect.what.startswith(
        ("the results of mma.", "the results of wmma."))


__all__ = ["bounded_effect", "tensor_range"]
