"""`semantics.domains.nan_wrappers`: the NaN wrapper around a result is recognized in the
forms the semantics build and in the forms z3's simplifier turns them into, and `float_view`
drops exactly the wrappers that cannot matter."""

from __future__ import annotations

import z3

from semantics.domains.nan_wrappers import float_view, is_nan_pattern, unwrapped

F32 = z3.Float32()
X, Y, U = z3.BitVec("x", 32), z3.BitVec("y", 32), z3.BitVec("u", 32)


def _wrapper(r, nan):
    """The semantics' `If(is_nan(r), nan, r)` on f32 bits."""
    is_nan = z3.And(r & 0x7F800000 == 0x7F800000, z3.Not(r & 0x007FFFFF == 0))
    return z3.If(is_nan, nan, r)


def _sum_bits():
    return z3.fpToIEEEBV(z3.fpAdd(z3.RNE(), z3.fpBVToFP(X, F32), z3.fpBVToFP(Y, F32)))


def test_an_unspecified_quiet_nan_is_a_nan_pattern_also_as_z3_simplifies_it():
    built = U | 0x7FC00000                   # every exponent bit and the quiet bit set
    simplified = z3.simplify(built)          # Concat(Extract(31, 31, u), 511, Extract(21, 0, u))
    assert z3.is_app_of(simplified, z3.Z3_OP_CONCAT)
    assert is_nan_pattern(built.as_ast(), 32) and is_nan_pattern(simplified.as_ast(), 32)


def test_bits_that_may_be_an_infinity_or_a_number_are_no_nan_pattern():
    assert not is_nan_pattern(z3.simplify(U | 0x7F800000).as_ast(), 32)   # quiet bit open
    assert not is_nan_pattern((U | 0x00400000).as_ast(), 32)               # exponent open
    assert not is_nan_pattern(z3.BitVecVal(0x7F800000, 32).as_ast(), 32)   # +inf
    assert is_nan_pattern(z3.BitVecVal(0x7FFFFFFF, 32).as_ast(), 32)


def test_a_wrapper_with_a_simplified_unspecified_nan_is_unwrapped():
    r = _sum_bits()
    for nan in (z3.BitVecVal(0x7FFFFFFF, 32), U | 0x7FC00000, z3.simplify(U | 0x7FC00000)):
        assert unwrapped(_wrapper(r, nan), "f32").eq(r)
    # a selection whose branch may be a number is no wrapper
    assert unwrapped(_wrapper(r, U), "f32").eq(_wrapper(r, U))


def test_float_view_drops_the_wrapper_read_back_as_a_float_and_keeps_bits_that_leave():
    r = _sum_bits()
    wrapped = _wrapper(r, z3.simplify(U | 0x7FC00000))
    product = z3.fpToIEEEBV(z3.fpMul(z3.RNE(), z3.fpBVToFP(wrapped, F32), z3.fpBVToFP(X, F32)))
    want = z3.fpToIEEEBV(z3.fpMul(z3.RNE(), z3.fpBVToFP(r, F32), z3.fpBVToFP(X, F32)))
    memo: dict = {}
    assert float_view(product, memo).eq(want)
    assert float_view(wrapped, memo).eq(wrapped)     # stored bits: the NaN's bits matter
    assert float_view(r) is r                        # nothing to rewrite: the term itself
