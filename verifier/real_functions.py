"""The real functions mode real reads approximate and root instructions as (`verifier.
real_mode`): each an uninterpreted real function of its argument's polynomial normal form
(`verifier.real_poly`), so two kernels that apply it to the same real value agree by
congruence, and nothing else about it is used. The claim prints the assumption each reading
makes; `TRUE` gives the function each stands for, in interval arithmetic, for
`verifier.real_check`.

| PTX | reading | assumption |
|---|---|---|
| `sqrt.rn`, `sqrt.approx` | `SQRT(x)` | (rn: none besides mode real) approx: sqrt.approx is sqrt |
| `rsqrt.approx` | `1 / SQRT(x)` | rsqrt.approx is 1/sqrt(x) |
| `rcp.approx`, `div.approx`, `div.full` | `1 / x`, `a / b` | the approximation is the quotient |
| `tanh.approx`, `lg2.approx`, `sin.approx`, `cos.approx` | `TANH`, `LG2`, `SIN`, `COS` | ... is tanh (log2, sin, cos) |
| `abs` (the sign bit cleared) | `ABS(x)` | (none besides mode real) |
"""

from __future__ import annotations

import z3
from mpmath import iv

SQRT = z3.Function("keq!sqrt", z3.RealSort(), z3.RealSort())
TANH = z3.Function("keq!tanh", z3.RealSort(), z3.RealSort())
LG2 = z3.Function("keq!lg2", z3.RealSort(), z3.RealSort())
SIN = z3.Function("keq!sin", z3.RealSort(), z3.RealSort())
COS = z3.Function("keq!cos", z3.RealSort(), z3.RealSort())
ABS = z3.Function("keq!abs", z3.RealSort(), z3.RealSort())        # `abs`: the sign bit cleared

# the approximate instruction (its name's first part) -> (reading of its arguments, assumption)
APPROXIMATIONS = {
    "sqrt": (lambda x: SQRT(x), "mode real: sqrt.approx is the square root"),
    "rsqrt": (lambda x: 1 / SQRT(x), "mode real: rsqrt.approx is 1/sqrt(x)"),
    "rcp": (lambda x: 1 / x, "mode real: rcp.approx is 1/x"),
    "div": (lambda a, b: a / b, "mode real: div.approx and div.full are the quotient"),
    "tanh": (lambda x: TANH(x), "mode real: tanh.approx is tanh"),
    "lg2": (lambda x: LG2(x), "mode real: lg2.approx is log2"),
    "sin": (lambda x: SIN(x), "mode real: sin.approx is sin"),
    "cos": (lambda x: COS(x), "mode real: cos.approx is cos"),
}


def _sqrt(x):
    if x.a < 0:
        raise ValueError("the square root of an interval below zero")
    return iv.sqrt(x)


def _log2(x):
    if x.a <= 0:
        raise ValueError("the logarithm of an interval not above zero")
    return iv.log(x) / iv.log(2)


def _tanh(x):
    """tanh is increasing: the enclosure of tanh at each end, 1 - 2 / (e^(2t) + 1)."""
    def at(t):
        return 1 - 2 / (iv.exp(2 * iv.mpf(t)) + 1)
    return iv.mpf([at(x.a).a, at(x.b).b])


def _abs(x):
    lo, hi = x.a, x.b
    if lo >= 0:
        return x
    if hi <= 0:
        return -x
    return iv.mpf([0, max(-lo, hi).b])


# function name -> its true value on an interval (ValueError: outside its domain)
TRUE = {"keq!abs": _abs, "keq!sqrt": _sqrt, "keq!tanh": _tanh, "keq!lg2": _log2, "keq!sin": iv.sin,
        "keq!cos": iv.cos}

__all__ = ["ABS", "SQRT", "TANH", "LG2", "SIN", "COS", "APPROXIMATIONS", "TRUE"]
