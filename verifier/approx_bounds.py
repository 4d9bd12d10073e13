"""What the PTX ISA states about its approximate instructions, for refutations.

Symbolically an approximate instruction is an uninterpreted function of its input bits
(`semantics.ops.float_arith._approx`): a proof holds for whatever the GPU computes. A
refutation must hold for every function the GPU may compute, and the ISA bounds those: a
counterexample's inputs fix each application's argument, and the function's value there
lies in the set of results this module computes from the documented error bound (and the
documented special cases). `verifier.counterexample` asks the solver whether the kernels
differ for every choice within these sets; only then is the difference a counterexample.

The bounds (PTX ISA 9.x, "Floating Point Instructions"):

| instruction | bound | where |
|---|---|---|
| `ex2.approx.f32` | 2 ulp from the correctly rounded 2^x | the full range of inputs |
| `rcp.approx.f32` | 1 ulp | the full range of inputs |
| `rsqrt.approx.f32` | relative error 2^-22.9 | the positive finite range |

plus each page's table of special inputs (`ex2(+-0) = 1`, `ex2(-inf) = +0`, `rcp(+-inf) =
-+0`, ...). Each set is widened by one ulp on either side (the correctly rounded value is
found through a double, which may round twice): a larger set only makes a refutation
harder, never wrong. An application whose argument is not fixed (it depends on another
approximation), an instruction not in the table, a subnormal input or result under `.ftz`,
and results near the subnormal range are left free: any value.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

_F32_MAX_BITS = 0x7F7FFFFF
_POS_INF, _NEG_INF, _POS_ZERO, _NEG_ZERO, _ONE = 0x7F800000, 0xFF800000, 0, 0x80000000, 0x3F800000

# (instruction, format) -> (ulps | None, relative bound | None, true function, special cases)
_TABLE = {
    ("ex2", "f32"): (2, None, lambda x: mpmath.power(2, x),
                     {_NEG_INF: _POS_ZERO, _NEG_ZERO: _ONE, _POS_ZERO: _ONE, _POS_INF: _POS_INF}),
    ("rcp", "f32"): (1, None, lambda x: 1 / x,
                     {_NEG_INF: _NEG_ZERO, _NEG_ZERO: _NEG_INF, _POS_ZERO: _POS_INF,
                      _POS_INF: _POS_ZERO}),
    ("rsqrt", "f32"): (None, mpmath.mpf(2) ** mpmath.mpf(-22.9), lambda x: 1 / mpmath.sqrt(x),
                       {}),
}


def _f32(bits: int) -> float:
    return float(np.array([bits], np.uint32).view(np.float32)[0])


def _bits(f: float) -> int:
    with np.errstate(over="ignore"):          # (past the f32 range: inf, not normal)
        return int(np.array([f], np.float32).view(np.uint32)[0])


def _normal(bits: int) -> bool:
    e = (bits >> 23) & 0xFF
    return 0 < e < 0xFF


def _step(bits: int, k: int) -> int | None:
    """The float `k` ulps above (k > 0) or below `bits`, same sign, normal; else None."""
    sign, mag = bits & 0x80000000, bits & 0x7FFFFFFF
    mag += k if not sign else -k
    out = sign | mag
    return out if mag >= 0x00800000 and mag <= _F32_MAX_BITS else None


def admissible(function: str, arg_bits: int) -> tuple[int, int] | None:
    """(lowest, highest) f32 bit patterns the approximate `function` (the symbolic
    domain's name, `<op>[.ftz].approx.<fmt>`) may return for the argument `arg_bits`, as
    floats (the lowest below the highest); None when the ISA's bound does not apply here
    (the value is then any)."""
    parts = function.split(".")
    op, fmt = parts[0], parts[-1]
    entry = _TABLE.get((op, fmt))
    if entry is None or len(parts) > 4:
        return None
    ulps, rel, true, special = entry
    if arg_bits in special:
        return special[arg_bits], special[arg_bits]
    if not _normal(arg_bits):
        return None                        # (NaN, subnormal under .ftz or not: left free)
    x = _f32(arg_bits)
    with mpmath.workprec(120):
        try:
            t = true(mpmath.mpf(x))
        except (ValueError, ZeroDivisionError):
            return None
        if not mpmath.isfinite(t) or mpmath.im(t) != 0:
            return None
        if ulps is not None:
            near = float(t)
            if not math.isfinite(near) or not _normal(_bits(near)):
                return None
            r = _bits(near)
            ends = (_step(r, -(ulps + 1)), _step(r, ulps + 1))
        else:
            if t <= 0:
                return None
            lo_f, hi_f = float(t * (1 - rel)), float(t * (1 + rel))
            if not (math.isfinite(lo_f) and math.isfinite(hi_f)):
                return None
            ends = (_step(_bits(lo_f), -1), _step(_bits(hi_f), 1))
    if ends[0] is None or ends[1] is None:
        return None
    lo, hi = sorted(ends, key=_f32)
    return lo, hi


__all__ = ["admissible"]
