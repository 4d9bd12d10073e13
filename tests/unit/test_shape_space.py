"""`verifier.shape_space`: the allowed launch shapes as a grid, terms of the shape evaluated
over it without expanding axes they do not vary along, and every answer read at the allowed
shapes alone (a point an `assume` excludes never decides anything)."""

from __future__ import annotations

import functools

import itertools
from pathlib import Path

import numpy as np
import z3
from hypothesis import given, settings, strategies as st

from verifier.equiv import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.shape_space import PointSet, ShapeSpace, ShapeValues, bits_of, mask_of
from verifier.shape_plan import plan
from verifier.spec import load_spec

DATA = Path(__file__).resolve().parents[1] / "data"
KERNELS = Path(__file__).resolve().parents[2] / "kernels"
M, K = z3.BitVec("M", 64), z3.BitVec("K", 64)


def _space(allowed=lambda m, k: True) -> ShapeSpace:
    axes = [[1, 2, 3], [4, 5, 6, 7]]
    shapes = [{"M": m, "K": k} for m, k in itertools.product(*axes) if allowed(m, k)]
    return ShapeSpace(["M", "K"], axes, shapes)


def test_values_keep_only_the_axes_they_vary_along():
    values = ShapeValues(_space(), {"M": 64, "K": 64})
    assert np.shape(values.grid(M + 1)) == (3, 1)
    assert np.shape(values.grid(K * 2)) == (1, 4)
    assert np.shape(values.grid(M * K)) == (3, 4)
    assert np.ndim(values.grid(z3.BitVecVal(7, 64) + 1)) == 0
    # at every shape in the plan's order: M slowest
    assert values.full(M * 10 + K).tolist() == [14, 15, 16, 17, 24, 25, 26, 27, 34, 35, 36, 37]
    assert values.full(z3.BitVecVal(3, 64)).tolist() == [3] * 12


def test_excluded_points_never_answer():
    # M + K <= 7 allows (1,4) (1,5) (1,6) (2,4) (2,5) (3,4)
    space = _space(lambda m, k: m + k <= 7)
    values = ShapeValues(space, {"M": 64, "K": 64})
    assert space.count == 6
    assert values.full(M * 10 + K).tolist() == [14, 15, 16, 24, 25, 34]
    big = values.grid(z3.UGT(M + K, 7))            # true only at excluded points
    assert not space.any(big) and space.first(big) is None and space.bits(big) == 0
    assert not space.any_of([values.grid(z3.UGE(M, 2)), values.grid(z3.UGE(K, 6))])
    assert space.all(values.grid(z3.ULE(M + K, 7)))
    some = values.grid(M == 2)
    assert space.first(some) == 3
    assert mask_of(space.bits(some), 6).tolist() == [False] * 3 + [True] * 2 + [False]


def test_a_conjunction_over_disjoint_axes_holds_where_each_part_does():
    space = _space()
    values = ShapeValues(space, {"M": 64, "K": 64})
    m1, k6 = values.grid(M == 1), values.grid(K == 6)
    assert space.any_of([m1, k6])
    # parts that share an axis are decided together: M == K - 3 and M == 1 and K == 6 fail
    joint = values.grid(M == K - 3)
    assert not space.any_of([joint, m1, k6])
    assert space.any_of([joint, m1, values.grid(K == 4)])
    assert space.first_of([joint, m1, values.grid(K == 4)]) == 0
    # a constant false part
    assert not space.any_of([m1, np.False_])


def test_factors_flatten_conjunctions_and_negated_disjunctions():
    space = _space()
    big = ShapeValues(space, {"M": 64, "K": 64})
    big.SMALL = 0                                  # keep conjuncts apart on this tiny grid
    cond = z3.And(z3.Not(z3.Or(M == 2, K == 5)), z3.And(z3.UGT(K, 4), M != 3))
    parts = big.factors(cond)
    assert len(parts) == 4 and all(np.ndim(p) == 2 for p in parts)
    assert {np.shape(p) for p in parts} == {(3, 1), (1, 4)}
    whole = big.full(cond)
    product = np.logical_and.reduce([space.full(p) for p in parts])
    assert np.array_equal(whole, product)
    # a conjunct over input data is not a factor of the shape
    assert big.factors(z3.And(M == 1, K == z3.BitVec("d", 64))) is None


def test_each_conjunct_is_evaluated_where_the_ones_before_it_hold():
    # `exists and not (exists and K == 5)` mentions M and K as written; where `exists` (M == 2)
    # holds, its second conjunct is about K alone, and the conjunction is the same function
    space = _space()
    big = ShapeValues(space, {"M": 64, "K": 64})
    big.SMALL = 0
    exists = M == 2
    cond = z3.And(exists, z3.Not(z3.And(exists, K == 5)))
    parts = big.factors(cond)
    assert [np.shape(p) for p in parts] == [(3, 1), (1, 4)]
    product = np.logical_and.reduce([space.full(p) for p in parts])
    assert np.array_equal(product, big.full(cond))
    # and an offset where the condition holds (the indexed buffers' `where_holds`):
    # `If(exists, K, 0) + 1` is `K + 1` there
    from semantics.machine.indexed_buffers import where_holds
    off = z3.If(exists, K, z3.BitVecVal(0, 64)) + 1
    held = where_holds(off, cond, {})
    assert np.shape(big.grid(held)) == (1, 4)
    where = big.full(cond)
    assert np.array_equal(big.full(held)[where], big.full(off)[where])
    assert not np.array_equal(big.full(held), big.full(off))      # (elsewhere it differs)
    # laid out once per condition (a lane's loads in one step share it): the same terms
    laid_out: dict = {}
    other = z3.If(exists, M, z3.BitVecVal(0, 64)) * 4
    assert where_holds(off, cond, {}, laid_out).eq(held)
    assert where_holds(other, cond, {}, laid_out).eq(where_holds(other, cond, {}))
    assert len(laid_out) == 1 and next(iter(laid_out.values()))[0].eq(cond)   # (pinned)


def test_a_condition_one_conjunct_longer_goes_on_from_the_one_before():
    # A lane's condition grows a conjunct at a time, `And(before, c)`: its factors are
    # `before`'s, then `c`'s evaluated where `before`'s literals hold, the same as evaluating
    # the whole conjunction afresh (`exists` fixes `M == 2`, so `c` is about K alone there)
    exists = M == 2
    steps = [exists, z3.Not(z3.And(exists, K == 5)), z3.ULT(K, 7), z3.Or(M == 1, K == 4)]
    grown = ShapeValues(_space(), {"M": 64, "K": 64})
    grown.SMALL = 0
    evaluated = []
    under = grown._under
    grown._under = lambda raw, *fixed: evaluated.append(raw) or under(raw, *fixed)
    cond = steps[0]
    for c in steps[1:]:
        grown.factors(cond)
        cond = z3.And(cond, c)
        fresh = ShapeValues(_space(), {"M": 64, "K": 64})
        fresh.SMALL = 0
        evaluated.clear()
        mine, theirs = grown.factors(cond), fresh.factors(cond)
        assert len(evaluated) == 1                 # the new conjunct alone
        assert [np.shape(p) for p in mine] == [np.shape(p) for p in theirs]
        assert all(np.array_equal(a, b) for a, b in zip(mine, theirs))
    assert [np.shape(p) for p in grown.factors(cond)] == [(3, 1), (1, 4), (1, 4), (3, 4)]
    # a `before` that is not of the shape alone leaves its extension not of it either
    data = z3.And(M == 1, K == z3.BitVec("d", 64))
    assert grown.factors(data) is None and grown.factors(z3.And(data, K == 4)) is None


def test_a_conjunct_without_the_literals_before_it_is_not_substituted(monkeypatch):
    # `M + K < 6` mentions two scalars but none of the literals `M == 2` fixes: substituting
    # would give the very same term (a CTA's existence in every access's condition); `Not(And(
    # M == 2, K == 5))` holds `M == 2`, and is evaluated where it is True
    import semantics.domains.z3raw as z3raw_module
    calls = []
    real = z3raw_module.substitute
    monkeypatch.setattr(z3raw_module, "substitute",
                        lambda raw, pairs: calls.append(raw) or real(raw, pairs))
    exists = M == 2
    for c, substituted in ((z3.ULT(M + K, 6), False), (z3.Not(z3.And(exists, K == 5)), True)):
        values = ShapeValues(_space(), {"M": 64, "K": 64})
        values.SMALL = 0
        fresh = ShapeValues(_space(), {"M": 64, "K": 64})
        fresh.SMALL = 0
        calls.clear()
        values.factors(exists)
        mine = values.factors(z3.And(exists, c))
        assert bool(calls) == substituted
        # the same factors as the whole conjunction evaluated afresh, where it holds
        theirs = fresh.factors(z3.And(exists, c))
        held = values.space.full(functools.reduce(np.logical_and, mine))
        assert np.array_equal(held, fresh.space.full(functools.reduce(np.logical_and, theirs)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["M", "K", "MK"]), st.integers(0, 11)),
                min_size=1, max_size=5),
       st.booleans())
def test_any_of_agrees_with_the_whole_grid(parts, holes):
    space = _space((lambda m, k: (m * k) % 5 != 0) if holes else (lambda m, k: True))
    values = ShapeValues(space, {"M": 64, "K": 64})
    terms = {"M": lambda c: z3.ULE(M, 1 + c % 3), "K": lambda c: z3.UGE(K, 4 + c % 4),
             "MK": lambda c: z3.URem(M + K, 4) == c % 4}
    factors = [values.grid(terms[kind](c)) for kind, c in parts]
    brute = np.logical_and.reduce([space.full(f) for f in factors])
    assert space.any_of(factors) == bool(brute.any())
    # the same question with the last factor added to the others, grouped first
    assert space.any_with(space.group(factors[:-1]), factors[-1]) == bool(brute.any())
    first = space.first_of(factors)
    assert first == (int(np.argmax(brute)) if brute.any() else None)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["M", "K", "MK", "-M", "-K"]), st.integers(0, 11)),
                min_size=1, max_size=6),
       st.booleans())
def test_a_condition_grown_a_conjunct_at_a_time_is_grouped_as_afresh(parts, holes):
    # `grouped` and `everywhere` of `And(before, c)` start from `before`'s (a lane's
    # condition, grown one conjunct per step): the same answers as the whole conjunction
    # on its own, and as every allowed shape says
    space = _space((lambda m, k: (m * k) % 5 != 0) if holes else (lambda m, k: True))
    terms = {"M": lambda c: z3.ULE(M, 1 + c % 3), "K": lambda c: z3.UGE(K, 4 + c % 4),
             "MK": lambda c: z3.URem(M + K, 4) != c % 4,
             "-M": lambda c: z3.UGT(M, c % 4), "-K": lambda c: z3.ULT(K, 4 + c % 5)}
    grown = ShapeValues(space, {"M": 64, "K": 64})
    grown.SMALL = 0
    cond = None
    for kind, c in parts:
        cond = terms[kind](c) if cond is None else z3.And(cond, terms[kind](c))
        fresh = ShapeValues(space, {"M": 64, "K": 64})
        fresh.SMALL = 0
        mine, theirs = grown.grouped(cond), fresh.grouped(cond)
        brute = space.full(fresh.grid(cond))
        assert mine.possible == theirs.possible == bool(brute.any())
        assert grown.everywhere(cond) == fresh.everywhere(cond) == bool(brute.all())
        if mine.possible:        # (the groups' conjunction is the condition, shape by shape)
            held = np.logical_and.reduce([space.full(v) for _, v in mine.parts])
            assert np.array_equal(held, brute)


def test_the_plan_narrows_an_axis_by_an_assume_about_it_alone():
    sp = plan(load_spec(KERNELS / "matmul/tiled_bitexact_k16.toml"), {})
    names = list(sp.names)
    assert sp.axes[names.index("K")] == (16, 32)
    assert len(sp.axes[names.index("M")]) == 32
    assert sp.count == 32 * 32 * 2 == ShapeSpace(sp.names, sp.axes, sp.shapes).size


def _copy2d(tmp_path: Path, bug: str, assume: str) -> Path:
    text = (DATA / "copy2d" / f"{bug}.toml").read_text()
    text = text.replace('ptx = "', f'ptx = "{DATA / "copy2d"}/')
    text = text.replace('mode = "bitexact"', f'mode = "bitexact"\nassume = ["{assume}"]')
    path = tmp_path / f"{bug}.toml"
    path.write_text(text)
    return path


def test_an_assume_over_two_scalars_excludes_grid_points_exactly(tmp_path):
    # Both candidates are wrong exactly where cols > 1. `rows * cols <= rows` (cols == 1 for
    # rows >= 1) is about two scalars: the grid keeps every point and the answers read only
    # the allowed ones, where both are right; a claim that allows cols > 1 refutes them.
    for bug in ("corner", "mirror"):
        v = verify(load_spec(_copy2d(tmp_path, bug, "rows * cols <= rows")), timeout_s=30,
                   trials=0)
        assert v.kind == EQUIVALENT, (bug, v.reasons)
        assert v.assignments == 24 and "one symbolic maximal launch" in v.coverage
        v = verify(load_spec(_copy2d(tmp_path, bug, "rows * cols <= rows + 1")), timeout_s=30,
                   trials=0)
        assert v.kind == NOT_EQUIVALENT, (bug, v.reasons)
        assert v.counterexample.scalars["cols"] == 2, v.counterexample.scalars


def test_a_point_set_numbers_its_shapes_anew_and_remembers_values_by_content():
    space = _space(lambda m, k: (m, k) != (2, 5))           # 11 shapes
    values = ShapeValues(space, {"M": 64, "K": 64})
    points = np.array([0, 3, 4, 10])                        # (1,4) (1,7) (2,4) (3,7)
    some = PointSet(space, points)
    assert some.count == 4 and some.ones == 0b1111
    k7 = values.grid(K == 7)
    assert some.bits(k7) == 0b1010 and some.bits(values.grid(M == 1)) == 0b0011
    # conditions remembered by content: a copy answers alike, another axis otherwise
    m = np.array([True, False, False]).reshape(3, 1)               # M == 1
    k = np.array([True, False, False, False]).reshape(1, 4)        # K == 4
    assert some.bits(m) == some.bits(m.copy()) == 0b0011
    assert some.bits(k) == 0b0101 and some.bits(k.astype(np.uint8)) == 0b0101
    assert some.bits(np.True_) == 0b1111 and some.bits(values.grid(M == 9)) == 0
    every = PointSet(space)
    assert every.bits(k7) == bits_of(space.full(k7)) == space.bits(k7)
    # the same bytes along another axis are another condition
    square = PointSet(ShapeSpace(["M", "K"], [[1, 2, 3], [4, 5, 6]],
                                 [{"M": m, "K": k} for m in (1, 2, 3) for k in (4, 5, 6)]))
    first = np.array([True, False, False])
    assert square.bits(first.reshape(3, 1)) == 0b000000111          # M == 1
    assert square.bits(first.reshape(1, 3)) == 0b001001001          # K == 4
