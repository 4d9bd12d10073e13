"""Mode real reads libdevice expf's `bits(J) << 23` as 2^(J - MAGIC) however z3 spells it."""

from __future__ import annotations

import z3

from verifier.real_mode import RealTranslator
from verifier.real_exp import E2

RTN = z3.RoundTowardNegative()
F32 = z3.Float32()


def _j(t):
    # libdevice's range reduction: fma.rm(t, 252, 12582913), an integer in the 2^23 binade
    return z3.fpFMA(RTN, t, z3.FPVal(252.0, F32), z3.FPVal(12582913.0, F32))


def test_shift_and_its_simplified_concat_read_alike():
    x = z3.fpBVToFP(z3.BitVec("x", 32), F32)
    bits = z3.fpToIEEEBV(_j(x))
    shifted = bits << 23
    simplified = z3.simplify(shifted)
    assert simplified.decl().kind() == z3.Z3_OP_CONCAT     # (what the simplifier leaves)
    tr = RealTranslator()
    a, b = tr.value(shifted, 32), tr.value(simplified, 32)
    assert a.eq(b) and a.decl().eq(E2)


def test_other_concatenations_are_not_read_as_powers():
    x = z3.BitVec("x", 32)
    tr = RealTranslator()
    other = z3.Concat(z3.Extract(8, 0, x), z3.BitVecVal(0, 23))     # x's bits, no fma
    try:
        tr.value(other, 32)
    except Exception as e:                                  # NotReal: named, never a guess
        assert "concat" in str(e) or "extract" in str(e)
    else:
        raise AssertionError("a shifted integer read as a power of two")
