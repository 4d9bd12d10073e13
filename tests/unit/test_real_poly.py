"""Mode real's exact readings: the polynomial normal form of atom arguments
(verifier/real_poly.py) and, in the symbolic domain, concrete float results that round kept
as terms (semantics/domains/real_exactness.py)."""

from __future__ import annotations

import numpy as np
import z3

from semantics.domains.real_exactness import rounded_conversions, rounded_lanes
from semantics.domains.symbolic import SymbolicDomain
from verifier.real_poly import Normalizer

x, y, z = z3.Reals("x y z")


def _f32(v: float) -> int:
    return int(np.array([v], np.float32).view(np.uint32)[0])


def test_welford_and_two_pass_variances_meet_as_one_term():
    two_pass = ((x - (x + y + z) / 3) ** 2 + (y - (x + y + z) / 3) ** 2
                + (z - (x + y + z) / 3) ** 2) / 3
    n, mean, m2 = 1, x, z3.RealVal(0)
    for v in (y, z):
        n += 1
        d = v - mean
        mean = mean + d / n
        m2 = m2 + d * (v - mean)
    norm = Normalizer()
    assert norm.normal(two_pass).eq(norm.normal(m2 / 3))
    assert not norm.normal(two_pass).eq(norm.normal(m2 / 2))


def test_a_quotient_by_a_non_constant_is_an_atom_of_its_normal_denominator():
    norm = Normalizer()
    assert norm.normal(x / (y + z)).eq(norm.normal(x * (1 / (z + y))))
    assert norm.normal(x - x).eq(z3.RealVal(0))


def test_concrete_results_that_round_are_found():
    one, three = _f32(1.0), _f32(3.0)
    third = _f32(np.float32(1.0) / np.float32(3.0))
    assert rounded_lanes("div", "f32", "f32", [[one, three], [three, one]],
                         [third, three]) == [0]
    assert rounded_lanes("add", "f32", "f32", [[one], [three]], [_f32(4.0)]) == []
    assert rounded_lanes("sqrt", "f32", "f32", [[_f32(2.0)]], [_f32(np.sqrt(2.0))]) == [0]


def test_the_symbolic_domain_keeps_a_rounded_constant_as_a_term_in_mode_real():
    one, three = _f32(1.0), _f32(3.0)
    exact = SymbolicDomain(1).fdiv("f32", "rn", [one], [three])[0]
    real = SymbolicDomain(1, real_floats=True).fdiv("f32", "rn", [one], [three])[0]
    assert isinstance(exact, int) and isinstance(real, z3.ExprRef)
    assert z3.simplify(real).as_long() == exact          # the same value, as a term
    assert isinstance(SymbolicDomain(1, real_floats=True).fadd("f32", "rn", [one], [three])[0],
                      int)


def test_a_conversion_of_a_large_integer_that_rounds_stays_a_term_in_mode_real():
    big = (1 << 24) + 1                      # f32 has no such value: it rounds to 2^24
    folded = SymbolicDomain(1).int2f(32, True, "f32", "rn", [big])[0]
    kept = SymbolicDomain(1, real_floats=True).int2f(32, True, "f32", "rn", [big])[0]
    assert folded == _f32(float(1 << 24))
    assert isinstance(kept, z3.ExprRef)
    small = SymbolicDomain(1, real_floats=True).int2f(32, True, "f32", "rn", [-7 & 0xFFFFFFFF])[0]
    assert small == _f32(-7.0)               # exact: stays concrete
    assert rounded_conversions(32, True, "f32", [-1 & 0xFFFFFFFF], [_f32(-1.0)]) == []
