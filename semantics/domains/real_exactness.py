"""Which concrete float results round, for the symbolic domain in mode real.

The symbolic domain computes lanes whose operands are all concrete with the concrete
domain: `1.0f / n` at a fixed launch shape becomes the rounded constant 0x3EAAAAAB. Mode
real reads every floating-point operation as the exact real operation it rounds
(`verifier.real_mode`), so such a folded constant would carry a rounding the reading never
sees: `x * (1.0f / n)` would differ from `x / n` as reals. With `real_floats`, a concrete
result that is not the exact real result of its concrete operands stays a term (the
operation on constants), which mode real reads exactly. A conversion from an integer that
rounds (past 2^24 for f32) stays a term the same way. Exact results (counts, sums of small
integers, zeros) stay concrete, so control flow on them is unchanged.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

_DTYPES = {"f16": (np.uint16, np.float16), "f32": (np.uint32, np.float32),
           "f64": (np.uint64, np.float64)}


def value(fmt: str, bits: int) -> Fraction | None:
    """The real value of `bits` in format `fmt`; None for NaN, infinity or a format
    without a numpy view (bf16: its value is the f32 of its bits shifted up)."""
    if fmt == "bf16":
        fmt, bits = "f32", bits << 16
    kinds = _DTYPES.get(fmt)
    if kinds is None:
        return None
    f = float(np.array([bits], dtype=kinds[0]).view(kinds[1])[0])
    return Fraction(f) if np.isfinite(f) else None


# operation -> exact(operands, result) -> is the result the real result of the operands?
EXACT: dict[str, Callable[[Sequence[Fraction], Fraction], bool]] = {
    "add": lambda x, r: r == x[0] + x[1],
    "sub": lambda x, r: r == x[0] - x[1],
    "mul": lambda x, r: r == x[0] * x[1],
    "div": lambda x, r: x[1] != 0 and r == x[0] / x[1],
    "fma": lambda x, r: r == x[0] * x[1] + x[2],
    "sqrt": lambda x, r: r >= 0 and r * r == x[0],
    "cvt": lambda x, r: r == x[0],
}


def rounded_lanes(op: str, src: str, dst: str, vecs: Sequence[list], out: list) -> list[int]:
    """The lanes whose operands in `vecs` and result in `out` are all concrete finite
    values (ints) and whose result is not the exact real result of `op`."""
    exact = EXACT[op]
    rounded = []
    for i, r in enumerate(out):
        if not isinstance(r, (int, np.integer)) or \
                not all(isinstance(v[i], (int, np.integer)) for v in vecs):
            continue
        xs = [value(src, int(v[i])) for v in vecs]
        got = value(dst, int(r))
        if got is None or any(x is None for x in xs):
            continue
        if not exact(xs, got):
            rounded.append(i)
    return rounded


def rounded_conversions(w: int, signed: bool, fmt: str, a: list, out: list) -> list[int]:
    """The lanes whose `w`-bit integer in `a` and float result in `out` are concrete and
    whose result is not that integer exactly (it rounded: above 2^24 for f32)."""
    rounded = []
    for i, (x, r) in enumerate(zip(a, out)):
        if not isinstance(x, (int, np.integer)) or not isinstance(r, (int, np.integer)):
            continue
        n = int(x) & ((1 << w) - 1)
        if signed and n >> (w - 1):
            n -= 1 << w
        got = value(fmt, int(r))
        if got is not None and got != n:
            rounded.append(i)
    return rounded


__all__ = ["rounded_lanes", "rounded_conversions", "value", "EXACT"]
