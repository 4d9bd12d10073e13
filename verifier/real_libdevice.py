"""libdevice `expf`'s scaling by 2^j, recognized for mode real (`verifier.real_mode`).

`expf` reduces its argument to `x * log2(e) = j + r` and scales `2^r` by `2^j`, made by
shifting a float's bits into the exponent: `bits(J) << 23` with `J = fma.rm(t, 252,
12582913)` (`12582912 + 127 + j`: the integer rounded into the 2^23 binade). The reading of
that shift as `E2(J - MAGIC)` is EXP_ASSUMPTION; these functions only say whether a term is
that shift, as the kernel computes it or as z3's simplifier leaves it.
"""

from __future__ import annotations

import z3

from semantics.domains.nan_wrappers import is_nan_test, wrapped_value


def range_reduced(bits):
    """The float J when `bits` are J's (NaN wrapper allowed) and J is libdevice expf's
    range-reduction integer (`rounds_to_integer`), else None: only then is
    `bits << 23` read as 2^(J - MAGIC)."""
    if bits is None:
        return None
    inner = wrapped_value(bits)
    bits = bits if inner is None else inner
    if not (z3.is_app(bits) and bits.decl().kind() == z3.Z3_OP_FPA_TO_IEEE_BV):
        return None
    j = bits.arg(0)
    if z3.is_app(j) and j.decl().kind() == z3.Z3_OP_FPA_FMA and \
            rounds_to_integer([j.arg(i) for i in range(4)]):
        return j
    return None


def shifted_into_exponent(t):
    """W when the 32-bit `t` is `W << 23`, as the kernel computes it or as z3's simplifier
    leaves it, `Concat(Extract(8, 0, W), 0)` (with W's NaN wrapper pushed inside, its finite
    branch taken: this mode reads finite values); else None."""
    if t.size() != 32:
        return None
    k = t.decl().kind()
    if k == z3.Z3_OP_BSHL:
        shift = t.arg(1)
        return t.arg(0) if z3.is_bv_value(shift) and shift.as_long() == 23 else None
    if k != z3.Z3_OP_CONCAT or t.num_args() != 2:
        return None
    low = t.arg(1)
    if not (z3.is_bv_value(low) and low.size() == 23 and low.as_long() == 0):
        return None
    return _low_nine_bits_of(t.arg(0))


def _low_nine_bits_of(x):
    """W when `x` is W's bits 8..0, or a NaN wrapper's selection between such bits."""
    if z3.is_app_of(x, z3.Z3_OP_EXTRACT) and x.params() == [8, 0] and x.arg(0).size() == 32:
        return x.arg(0)
    if z3.is_app_of(x, z3.Z3_OP_ITE) and is_nan_test(x.arg(0)):
        return _low_nine_bits_of(x.arg(2))
    return None


def rounds_to_integer(args) -> bool:
    """An fma rounding toward -inf whose addend is 2^23 + 2^22 + 1: a float rounded to an
    integer in the 2^23 binade (libdevice expf's `j`)."""
    rm, c = args[0], args[3]
    if not (z3.is_app(rm) and rm.decl().kind() == z3.Z3_OP_FPA_RM_TOWARD_NEGATIVE):
        return False
    if z3.is_app(c) and c.decl().kind() == z3.Z3_OP_FPA_TO_FP and c.num_args() == 1 and \
            z3.is_bv_value(c.arg(0)):
        return c.arg(0).as_long() == 0x4B400001
    return z3.is_fp_value(c) and not c.isNaN() and not c.isInf() and \
        float(z3.simplify(z3.fpToReal(c)).as_fraction()) == 12582913.0


__all__ = ["range_reduced", "rounds_to_integer", "shifted_into_exponent"]
