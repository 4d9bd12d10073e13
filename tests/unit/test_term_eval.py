"""verifier.term_eval evaluates terms exactly as z3 does (z3.simplify after substitution)."""

import numpy as np
import z3
from hypothesis import given, settings, strategies as st

from verifier.term_eval import evaluate

n = z3.BitVec("n", 32)
m = z3.BitVec("m", 32)
n64 = z3.SignExt(32, n)
TERMS = [
    n + m * 3, n - m, -n, n & m, n | 7, n ^ m, ~n, n << 3, z3.LShR(n, 2), n >> 5,
    z3.LShR(n, m), n << m, z3.Extract(15, 4, n), z3.ZeroExt(32, n) * 16, n64 * 4 + 0x1000,
    z3.Concat(z3.Extract(7, 0, n), z3.Extract(7, 0, m)), z3.UDiv(n, m), z3.URem(n, m),
    (n64 + 255) / 256, z3.If(n < m, n, m), z3.SRem(n, 7), n / 3,
    # runs of one argument in a Concat (z3's form of a sign extension), numerals alone
    z3.Concat(*([z3.Extract(31, 31, n)] * 32 + [n])),
    z3.Concat(*([z3.Extract(31, 31, n)] * 40 + [z3.Extract(23, 0, m)])),
    z3.Concat(z3.Extract(3, 0, n), z3.Extract(3, 0, n), z3.Extract(3, 0, m)),
    z3.Concat(*[z3.Extract(0, 0, m)] * 64), z3.Concat(z3.BitVecVal(0, 32), n),
    z3.Concat(z3.Extract(31, 31, n), z3.Concat(z3.Extract(31, 31, n),
                                               z3.Concat(z3.Extract(31, 31, n), n))),
    z3.Concat(z3.Concat(z3.Extract(3, 0, m), z3.Extract(31, 31, n)), z3.Extract(9, 0, n)),
    z3.If(n < m, z3.BitVecVal(1, 32), z3.BitVecVal(2, 32)) * (z3.BitVecVal(3, 32) + 4),
]
PREDS = [n < m, z3.ULT(n, m), n <= m, z3.UGE(n, m), z3.And(n > 0, m != 3),
         z3.Or(n == m, z3.Not(n < 5)), z3.Extract(1, 0, n) == 0,
         z3.And(n > 0, z3.BoolVal(True)), z3.BitVecVal(3, 32) < z3.BitVecVal(5, 32)]

ints = st.integers(min_value=-(2 ** 31), max_value=2 ** 31 - 1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(ints, ints), min_size=1, max_size=8))
def test_matches_z3_simplify(points):
    env = {"n": np.array([p[0] & 0xFFFFFFFF for p in points], np.uint64),
           "m": np.array([p[1] & 0xFFFFFFFF for p in points], np.uint64)}
    for t in TERMS + PREDS:
        got = evaluate(t, env, len(points))
        for i, (a, b) in enumerate(points):
            want = z3.simplify(z3.substitute(t, (n, z3.BitVecVal(a, 32)),
                                             (m, z3.BitVecVal(b, 32))))
            if z3.is_bool(want):
                assert bool(got[i]) == z3.is_true(want), (t, a, b)
            elif (z3.is_bv_value(want)):
                assert int(got[i]) == want.as_long(), (t, a, b, int(got[i]), want)
