"""The normal form of mode real with exponentials and maxima (verifier/real_exp.py): the
identities it applies are exact over the reals, and two orders of the same computation meet
as one term (the outputs stage then needs no solver)."""

from __future__ import annotations

import z3

from verifier.real_exp import E2, LOWEST, Maxima, canonical, exp2, plus, times

x, m, n, y = z3.Reals("x m n y")


def test_linear_exponents_are_canonical():
    assert canonical(x - m + m - n).eq(canonical(x - n))
    assert canonical(2 * x - x).eq(canonical(x))
    assert canonical(x - x).eq(z3.RealVal(0))


def test_a_product_of_exponentials_is_one_exponential():
    assert times(exp2(x - m), exp2(m - n)).eq(exp2(x - n))


def test_products_distribute_over_sums_of_exponentials():
    d = plus(exp2(x - m), exp2(y - m))
    got = plus(times(d, exp2(m - n)), exp2(n - n))
    want = plus(plus(exp2(x - n), exp2(y - n)), exp2(z3.RealVal(0)))
    assert got.eq(want)


def test_sums_of_exponentials_are_order_independent_and_drop_zeros():
    a, b, c = exp2(x), exp2(y), exp2(m)
    assert plus(plus(a, b), c).eq(plus(c, plus(z3.RealVal(0), plus(b, a))))


def test_plain_arithmetic_is_left_alone():
    assert times(x, y) is None and plus(x, y) is None


def test_maxima_are_sets_flattened_and_the_lowest_constant_never_wins():
    mx = Maxima()
    low = z3.RealVal(LOWEST)
    left = mx.of(mx.of(low, x), mx.of(y, m))
    right = mx.of(m, mx.of(x, mx.of(y, low)))
    assert left.eq(right)
    assert mx.of(low, x).eq(x)
    assert not mx.of(x, y).eq(mx.of(x, m))


def test_the_exponential_is_uninterpreted_except_for_the_identities():
    # no value of E2 is assumed: E2(0) = 1 is not provable
    s = z3.Solver()
    s.add(E2(z3.RealVal(0)) != 1)
    assert s.check() == z3.sat


def test_only_libdevice_s_range_reduced_integer_is_read_as_a_power_of_two():
    import pytest
    from verifier.real_mode import NotReal, RealTranslator
    f32 = z3.Float32()
    t = z3.FP("t", f32)
    j = z3.fpFMA(z3.RTN(), t, z3.FPVal(252.0, f32), z3.FPVal(12582913.0, f32))
    got = RealTranslator().value(z3.fpToIEEEBV(j) << 23, 32)
    assert "keq!e2" in str(got) and "keq!int!" in str(got)
    with pytest.raises(NotReal):                    # an integer's bits shifted: no reading
        RealTranslator().value(z3.BitVec("n", 32) << 23, 32)


def test_a_selection_that_only_looks_like_max_is_not_read_as_max():
    import pytest
    from verifier.real_mode import NotReal, RealTranslator
    f32 = z3.Float32()
    a, b = z3.BitVecs("a b", 32)
    fa, fb = z3.fpBVToFP(a, f32), z3.fpBVToFP(b, f32)
    assert "keq!max!" in str(RealTranslator().value(z3.If(z3.fpLT(fa, fb), b, a), 32))
    other = z3.Bool("other")                         # x < y or something else: not max
    with pytest.raises(NotReal):
        RealTranslator().value(z3.If(z3.Or(z3.fpLT(fa, fb), other), b, a), 32)


def _model_of(*constraints):
    s = z3.Solver()
    s.add(*constraints)
    assert s.check() == z3.sat
    return s.model()


def test_a_difference_only_of_the_opaque_readings_is_not_shown():
    from verifier.real_check import TrueReals
    from verifier.real_mode import RealTranslator
    tr = RealTranslator()
    v = tr.variables["x"] = z3.Real("x")
    one = exp2(v - v)                                  # E2(0): 1 for the true 2^x
    model = _model_of(v == 3, E2(z3.RealVal(0)) == 2)
    assert model.eval(v * one != v, True)               # the solver's readings differ ...
    assert not TrueReals(tr, model).differ(v * one, v, True)     # ... the reals do not
    assert TrueReals(tr, model).differ(v * one, v + 1, True)


def test_a_max_atom_is_its_largest_member_and_a_zero_denominator_shows_nothing():
    from verifier.real_check import TrueReals
    from verifier.real_mode import RealTranslator
    tr = RealTranslator()
    a = tr.variables["a"] = z3.Real("a")
    b = tr.variables["b"] = z3.Real("b")
    mx = tr.maxima.of(a, b)
    model = _model_of(a == 2, b == 5, mx == 0)
    check = TrueReals(tr, model)
    assert not check.differ(mx, b, True) and check.differ(mx, a, True)
    assert not check.differ(a / (b - b), b, True)      # z3's x/0 is free: no evidence


def test_the_isa_bounds_of_approximate_instructions():
    import numpy as np
    from verifier.approx_bounds import admissible

    def f32(bits):
        return float(np.array([bits], np.uint32).view(np.float32)[0])
    lo, hi = admissible("ex2.approx.f32", 0x3F800000)           # 2^1, within 2 (+1) ulp
    assert f32(lo) < 2.0 < f32(hi) and hi - lo == 6
    assert admissible("ex2.ftz.approx.f32", 0) == (0x3F800000, 0x3F800000)   # ex2(0) = 1
    assert admissible("ex2.approx.f32", 0xFF800000) == (0, 0)    # ex2(-inf) = +0
    lo, hi = admissible("rsqrt.approx.f32", 0x40000000)          # 1/sqrt(2), 2^-22.9
    assert f32(lo) < 2 ** -0.5 < f32(hi)
    assert admissible("rsqrt.approx.f32", 0xC0000000) is None    # outside its domain: free
    assert admissible("tanh.approx.f32", 0x3F800000) is None     # no bound in the table
    assert admissible("ex2.approx.f32", 0x7FC00000) is None      # NaN: free


def test_min_is_read_as_a_set_and_evaluated_as_the_smallest_member():
    from verifier.real_check import TrueReals
    from verifier.real_mode import RealTranslator
    f32 = z3.Float32()
    a, b = z3.BitVecs("a b", 32)
    fa, fb = z3.fpBVToFP(a, f32), z3.fpBVToFP(b, f32)
    tr = RealTranslator()
    mn = tr.value(z3.If(z3.fpLT(fa, fb), a, b), 32)          # picks the smaller: min
    assert "keq!min!" in str(mn)
    ra, rb = tr.variables["a"], tr.variables["b"]
    model = _model_of(ra == 2, rb == 5, mn == 7)
    check = TrueReals(tr, model)
    assert not check.differ(mn, ra, True) and check.differ(mn, rb, True)


def test_abs_is_the_sign_bit_cleared_and_evaluated_as_the_absolute_value():
    from verifier.real_check import TrueReals
    from verifier.real_mode import RealTranslator
    x = z3.BitVec("x", 32)
    tr = RealTranslator()
    got = tr.value(x & 0x7FFFFFFF, 32)
    assert "keq!abs" in str(got)
    rx = tr.variables["x"]
    model = _model_of(rx == -3)
    assert not TrueReals(tr, model).differ(got, -rx, True)
    assert TrueReals(tr, model).differ(got, rx, True)


def test_an_infinity_that_would_win_a_max_or_min_has_no_reading():
    import pytest
    from verifier.real_mode import NotReal, RealTranslator
    f32 = z3.Float32()
    a = z3.BitVec("a", 32)
    for inf, pick_larger in ((0x7F800000, True), (0xFF800000, False)):
        b = z3.BitVecVal(inf, 32)
        fa, fb = z3.fpBVToFP(a, f32), z3.fpBVToFP(b, f32)
        sel = z3.If(z3.fpLT(fa, fb), b, a) if pick_larger else z3.If(z3.fpLT(fa, fb), a, b)
        with pytest.raises(NotReal):
            RealTranslator().value(sel, 32)
    low = z3.BitVecVal(0xFF800000, 32)                # max(a, -inf) is a
    fa, fl = z3.fpBVToFP(a, f32), z3.fpBVToFP(low, f32)
    tr = RealTranslator()
    assert tr.value(z3.If(z3.fpLT(fa, fl), low, a), 32).eq(tr.variables["a"])


def test_one_approximate_function_gives_one_value_for_one_argument():
    from verifier.approx_evidence import bounded_approximations
    f = z3.Function("ex2.approx.f32", z3.BitVecSort(32), z3.BitVecSort(32))
    one = z3.BitVecVal(0x3F800000, 32)
    # the same argument reached by two terms: the same value, so f(1) - f(1 + 0) is 0
    a, b, within = bounded_approximations(f(one), f(one + 0))
    s = z3.Solver()
    s.add(*within, a != b)
    assert s.check() == z3.unsat and len(within) == 1
