"""The symbolic domain's C-API constructors build exactly z3's terms (semantics/domains/z3raw.py)."""

from __future__ import annotations

import pytest
import z3

from semantics.domains import z3raw


def test_each_constructor_builds_the_term_z3_builds():
    a, b = z3.BitVec("a", 32), z3.BitVec("b", 32)
    p, q = z3.Bool("p"), z3.Bool("q")
    pairs = [
        (z3raw.If(p, a, b), z3.If(p, a, b)),
        (z3raw.If(p, q, p), z3.If(p, q, p)),
        (z3raw.If(p, z3.BitVecVal(7, 32), a), z3.If(p, z3.BitVecVal(7, 32), a)),
        (z3raw.And(p, q), z3.And(p, q)),
        (z3raw.Or(p, q), z3.Or(p, q)),
        (z3raw.Not(p), z3.Not(p)),
        (z3raw.Eq(a, b), a == b),
        (z3raw.BvAnd(a, b), a & b),
        (z3raw.BvAdd(a, b), a + b),
        (z3raw.BvSub(a, b), a - b),
        (z3raw.BvMul(a, b), a * b),
        (z3raw.BvOr(a, b), a | b),
        (z3raw.BvXor(a, b), a ^ b),
        (z3raw.BvShl(a, b), a << b),
        (z3raw.BvLShr(a, b), z3.LShR(a, b)),
        (z3raw.BvAShr(a, b), a >> b),
        (z3raw.ULT(a, b), z3.ULT(a, b)),
        (z3raw.ULE(a, b), z3.ULE(a, b)),
        (z3raw.SLT(a, b), a < b),
        (z3raw.SLE(a, b), a <= b),
    ]
    for got, want in pairs:
        # (the same wrapper class, or z3raw's subclass of it that counts references unchecked)
        assert got.eq(want) and isinstance(got, type(want)), (got, want)
    assert isinstance(z3raw.If(p, a, b), z3.BitVecRef) and z3raw.If(p, a, b).size() == 32


def test_terms_built_here_outlive_their_arguments():
    import gc
    made = []
    for i in range(2000):
        x = z3.BitVec(f"x{i}", 32)
        made.append(z3raw.BvAdd(z3raw.BvAnd(x, x), x))
        del x
    gc.collect()
    # each still names its own argument (a freed AST would show another term or crash)
    assert [str(t) for t in made[:3]] == [f"(x{i} & x{i}) + x{i}" for i in range(3)]
    assert len({t.get_id() for t in made}) == 2000


def test_comparisons_keep_the_order_they_are_given():
    # z3's operators mirror a comparison whose right operand is a numeral: `x <= 50` is
    # `bvsge(50, x)`, because Python asks the right operand's reflected method first when
    # its class (BitVecNumRef) derives from the left one's. The domain builds what it asks.
    x, c = z3.BitVec("x", 32), z3.BitVecVal(50, 32)
    assert (x <= c).decl().kind() == z3.Z3_OP_SGEQ            # z3's operator: mirrored
    for build, kind in ((z3raw.SLE, z3.Z3_OP_SLEQ), (z3raw.SLT, z3.Z3_OP_SLT),
                        (z3raw.ULE, z3.Z3_OP_ULEQ), (z3raw.ULT, z3.Z3_OP_ULT)):
        t = build(x, c)
        assert t.decl().kind() == kind and t.arg(0).eq(x) and t.arg(1).eq(c)


def test_a_substitution_laid_out_once_applies_to_many_terms():
    a, b = z3.BitVec("a", 32), z3.BitVec("b", 32)
    p, q = z3.Bool("p"), z3.Bool("q")
    s = z3raw.Substitution([(p.as_ast(), z3.BoolVal(True).as_ast()),
                            (q.as_ast(), z3.BoolVal(False).as_ast())])
    for t, want in ((z3.If(p, a, b), z3.If(True, a, b)), (z3.And(p, z3.Not(q)),
                                                          z3.And(True, z3.Not(False)))):
        got = s.apply(t)
        assert got.eq(want) and isinstance(got, type(t)), (got, want)   # not simplified
    assert s.apply(a + b).eq(a + b)                          # nothing to replace
    assert z3raw.substitute(z3.If(p, a, b).as_ast(), [(p.as_ast(),
                                                       z3.BoolVal(True).as_ast())]).eq(
        z3.If(True, a, b))


def test_a_sort_mismatch_still_raises():
    a, w = z3.BitVec("a", 32), z3.BitVec("w", 16)
    with pytest.raises(z3.Z3Exception):
        z3raw.If(z3.Bool("p"), a, w)
    with pytest.raises(z3.Z3Exception):
        z3raw.Eq(a, w)
    with pytest.raises(z3.Z3Exception):
        z3raw.BvAdd(a, w)
    with pytest.raises(z3.Z3Exception):
        z3raw.SLT(a, w)


def test_every_failed_constructor_raises_libz3s_message_and_leaves_no_error_behind():
    # (libz3 is called directly: the error state is read only when a call returns no term)
    a, w, p = z3.BitVec("a", 32), z3.BitVec("w", 16), z3.Bool("p")
    rne = z3raw.rounding("rn")
    failing = [lambda: z3raw.And(p, a), lambda: z3raw.Or(a, p), lambda: z3raw.Not(a),
               lambda: z3raw.BvAnd(a, w), lambda: z3raw.BvMul(a, w), lambda: z3raw.BvAShr(w, a),
               lambda: z3raw.ULE(a, w), lambda: z3raw.If(a, a, a),
               lambda: z3raw.FpAdd(rne, a, a), lambda: z3raw.FpFMA(rne, a, a, a),
               lambda: z3raw.Select(a, a),
               lambda: z3raw.Substitution([(a.as_ast(), w.as_ast())]).apply(a + 1)]
    for build in failing:
        with pytest.raises(z3.Z3Exception) as e:
            build()
        assert isinstance(e.value.value, str) and e.value.value, e.value   # libz3's words
        assert z3raw.BvAdd(a, a).eq(a + a)       # the next call is not haunted by the error


def test_wrapping_an_int_is_refused_before_it_reaches_libz3():
    a = z3.BitVec("a", 32)
    with pytest.raises(TypeError):
        z3raw.wrap(a.as_ast().value, a)        # (an address as a Python int: cut to 32 bits)


def test_floating_point_constructors_build_the_terms_z3_builds():
    f32 = z3raw.fp_sort(8, 24)
    assert f32 == z3.Float32()
    a, b, c = (z3.BitVec(n, 32) for n in "abc")
    x, y, z = (z3raw.FromBits(v, f32) for v in (a, b, c))
    assert x.eq(z3.fpBVToFP(a, z3.Float32()))
    rne, rtz = z3raw.rounding("rn"), z3raw.rounding("rz")
    assert rne.eq(z3.RNE()) and rtz.eq(z3.RTZ())
    pairs = [
        (z3raw.FpAdd(rne, x, y), z3.fpAdd(z3.RNE(), x, y)),
        (z3raw.FpSub(rtz, x, y), z3.fpSub(z3.RTZ(), x, y)),
        (z3raw.FpMul(rne, x, y), z3.fpMul(z3.RNE(), x, y)),
        (z3raw.FpDiv(rne, x, y), z3.fpDiv(z3.RNE(), x, y)),
        (z3raw.FpFMA(rne, x, y, z), z3.fpFMA(z3.RNE(), x, y, z)),
        (z3raw.FpSqrt(rne, x), z3.fpSqrt(z3.RNE(), x)),
        (z3raw.ToBits(x), z3.fpToIEEEBV(x)),
    ]
    for got, want in pairs:
        assert got.eq(want) and isinstance(got, type(want)), (got, want)


def test_unchecked_getters_read_what_z3py_reads():
    a, b = z3.BitVec("a", 32), z3.BitVec("b", 32)
    t = z3.If(z3.Bool("p"), a + b, a)
    ref, R = t.ctx_ref(), z3raw.read
    x = t.as_ast()
    assert R.ast_id(ref, x) == t.get_id()
    assert R.ast_kind(ref, x) == z3.Z3_APP_AST
    assert R.decl_kind(ref, R.app_decl(ref, x)) == z3.Z3_OP_ITE
    assert R.num_args(ref, x) == 3
    kids = [R.ast_id(ref, R.app_arg(ref, x, i)) for i in range(3)]
    assert kids == [c.get_id() for c in t.children()]


def test_an_n_ary_sum_is_one_node_equal_to_the_chain():
    for w in (8, 32, 64):
        xs = [z3.BitVec(f"x{i}_{w}", w) for i in range(5)]
        s = z3raw.BvSum(xs)
        assert s.decl().kind() == z3.Z3_OP_BADD and s.num_args() == 5 and s.size() == w
        assert [s.arg(i).get_id() for i in range(5)] == [x.get_id() for x in xs]   # in order
        solver = z3.Solver()
        solver.add(s != xs[0] + xs[1] + xs[2] + xs[3] + xs[4])
        assert solver.check() == z3.unsat
    with pytest.raises(z3.Z3Exception):                    # one width only
        z3raw.BvSum([z3.BitVec("a8", 8), z3.BitVec("a16", 16)])
