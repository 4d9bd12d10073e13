"""One symbolic CTA standing for every CTA of a maximal launch (verifier/symbolic_cta.py): the
grid of shapes times the CTA axes, write logs composed across CTAs (two CTAs writing one
element, an element the kernels write from different CTAs), values of %ctaid itself, and the
fall back to the full maximal launch. The kernels are in tests/data/copy2d (real nvcc output)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import z3

from semantics.machine.indexed_buffers import IndexedAccess, array
from verifier.equiv import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.indexed import IndexedBuffer as Info
from verifier.indexed import compare, compare_apart
from verifier.shape_space import ShapeSpace, ShapeValues
from verifier.spec import load_spec
from verifier.symbolic_cta import CtaMismatch

from replaying import assert_replays

D = Path(__file__).resolve().parents[1] / "data" / "copy2d"
ONE_CTA = "one symbolic CTA"


# -- the grid of shapes times CTAs --------------------------------------------------------------

def test_a_point_of_the_product_is_a_shape_and_a_cta():
    axes = [[1, 2, 3], [4, 5]]
    shapes = [{"M": m, "K": k} for m, k in itertools.product(*axes) if m + k <= 6]   # 3 of 6
    space = ShapeSpace(["M", "K"], axes, shapes).times(["%ctaid.x"], [3])
    assert space.count == 3 * 3 and space.size == 6 * 3
    values = ShapeValues(space, {"M": 64, "K": 64, "%ctaid.x": 32})
    M, K, c = z3.BitVec("M", 64), z3.BitVec("K", 64), z3.BitVec("%ctaid.x", 32)
    # point p is CTA p % 3 of shape p // 3 (the plan's order), the CTA varying fastest
    assert values.full(M * 100 + K * 10 + z3.ZeroExt(32, c)).tolist() == [
        140, 141, 142, 150, 151, 152, 240, 241, 242]
    assert np.shape(values.grid(c + 1)) == (1, 1, 3)
    # excluded shapes never answer, whatever the CTA
    assert not space.any(values.grid(z3.And(M == 2, K == 5)))
    assert space.first(values.grid(z3.And(M == 2, c == 1))) == 7


# -- composing the CTAs' write logs -------------------------------------------------------------

def _two_ctas():
    """One 64-bit scalar n in {1, 2} times two CTAs; an out buffer of 2 elements and an in
    buffer (the ids are of live terms: `TERMS` keeps them, as z3 reuses a freed term's id)."""
    base = ShapeSpace(["n"], [[1, 2]], [{"n": 1}, {"n": 2}])
    values = ShapeValues(base.times(["%ctaid.x"], [2]), {"n": 64, "%ctaid.x": 32})
    init = [z3.BitVec(f"out[{i}]", 32) for i in range(2)]
    elems = [z3.BitVec(f"in[{i}]", 32) for i in range(2)]
    lengths = np.array([8, 8, 8, 8], np.uint64)          # at every point: 2 elements
    buffers = {"out": Info("out", 4, np.array([t.get_id() for t in init]), lengths, lengths),
               "in": Info("in", 4, np.array([t.get_id() for t in elems]), lengths, lengths)}
    TERMS[:] = init + elems
    return values, buffers, np.array([t.get_id() for t in init])


TERMS: list = []
C = z3.BitVec("%ctaid.x", 32)
C64 = z3.ZeroExt(32, C)


def _write(offset, value, lane=0):
    return IndexedAccess("w", "out", offset, 4, 4, True, value, lane, f"lane {lane}", None)


def _compare(values, buffers, ids, ref, cand):
    return compare(values, buffers, {"out": 32}, {"out": ids},
                   {"reference": ref, "candidate": cand}, per_shape=2)


def test_each_cta_writes_its_own_element_and_both_kernels_agree():
    values, buffers, ids = _two_ctas()
    # CTA c writes in[c] to out[c]: once by a Select at offset 4c, once by its own term per CTA
    ref = (_write(C64 * 4, z3.Select(array("in", 4), C64 * 4)),)
    own = TERMS[2:]
    cand = (_write(C64 * 4, z3.If(C == 0, own[0], own[1])),)
    cells, differs = _compare(values, buffers, ids, ref, cand)
    assert differs is None and cells == 2 * 2


def test_two_ctas_writing_one_element_is_handed_back_as_a_shape():
    values, buffers, ids = _two_ctas()
    ref = (_write(C64 * 4, z3.BitVecVal(1, 32)),)
    # lane 0 of both CTAs writes element 0: the same lane, not the same thread
    cand = (_write(0, z3.BitVecVal(1, 32)),)
    _, differs = _compare(values, buffers, ids, ref, cand)
    assert differs is not None and "two threads of the candidate" in differs.why
    assert differs.shape == 0


def test_a_value_of_the_ctaid_is_compared_at_the_cta_that_wrote_it():
    values, buffers, ids = _two_ctas()
    # both store the term %ctaid.x; the candidate writes CTA c's value to element 1 - c. The
    # codes (the term's id) agree cell by cell, but the values do not: 0 against 1.
    ref = (_write(C64 * 4, C),)
    cand = (_write((1 - C64) * 4, C),)
    with pytest.raises(CtaMismatch, match="element 0 of 'out' is written by different CTAs"):
        _compare(values, buffers, ids, ref, cand)
    # written by the same CTA, a value of %ctaid computed another way is shown equal there
    cand = (_write(C64 * 4, z3.LShR(C * 16 + 3, 4)),)
    assert _compare(values, buffers, ids, ref, cand)[1] is None
    cand = (_write(C64 * 4, C + 1),)
    _, differs = _compare(values, buffers, ids, ref, cand)
    assert differs is not None and "element 0" in differs.why


# -- one symbolic CTA per kernel (different grids) ---------------------------------------------

def _apart():
    """n in {1, 2}; the reference runs 2 CTAs of 1 lane (its `%ctaid.x/reference`), the
    candidate 1 CTA (no CTA axis); an out buffer of 2 elements and an in buffer."""
    base = ShapeSpace(["n"], [[1, 2]], [{"n": 1}, {"n": 2}])
    values = {"reference": ShapeValues(base.times([R.decl().name()], [2]),
                                       {"n": 64, R.decl().name(): 32}),
              "candidate": ShapeValues(base, {"n": 64})}
    init = [z3.BitVec(f"out[{i}]", 32) for i in range(2)]
    elems = [z3.BitVec(f"in[{i}]", 32) for i in range(2)]
    TERMS[:] = init + elems

    def info(points):
        lengths = np.full(points, 8, np.uint64)
        return {"out": Info("out", 4, np.array([t.get_id() for t in init]), lengths, lengths),
                "in": Info("in", 4, np.array([t.get_id() for t in elems]), lengths, lengths)}
    buffers = {"reference": info(4), "candidate": info(2)}
    return values, buffers, np.array([t.get_id() for t in init])


R = z3.BitVec("%ctaid.x/reference", 32)
R64 = z3.ZeroExt(32, R)


def _compare_apart(ref, cand):
    values, buffers, ids = _apart()
    return compare_apart(values, buffers, {"out": 32}, {"out": ids},
                         {"reference": ref, "candidate": cand},
                         {"reference": 2, "candidate": 1})


def test_kernels_of_different_grids_agree_shape_by_shape():
    # the reference's CTA c copies in[c] to out[c]; the candidate's one CTA, two lanes, both
    ref = (_write(R64 * 4, z3.Select(array("in", 4), R64 * 4)),)
    cand = (_write(0, TERMS[2]), _write(4, z3.Select(array("in", 4), z3.BitVecVal(4, 64)), 1))
    cells, differs = _compare_apart(ref, cand)
    assert differs is None and cells == 2 * 2


def test_a_value_of_one_kernels_ctaid_is_never_the_others():
    # the reference stores %ctaid.x/reference, the candidate 0 and 1 by lane: equal values,
    # but not equal codes, and they are not walked: handed back as a shape
    ref = (_write(R64 * 4, R),)
    cand = (_write(0, z3.BitVecVal(0, 32)), _write(4, z3.BitVecVal(1, 32), 1))
    _, differs = _compare_apart(ref, cand)
    assert differs is not None and differs.shape == 0 and "not walked" in differs.why


def test_two_ctas_of_one_kernel_writing_one_element_are_handed_back():
    ref = (_write(0, z3.BitVecVal(1, 32)),)          # lane 0 of both reference CTAs
    cand = (_write(0, z3.BitVecVal(1, 32)),)
    _, differs = _compare_apart(ref, cand)
    assert differs is not None and "two threads of the reference" in differs.why


# -- whole claims -------------------------------------------------------------------------------

def _stage(v, name):
    return next((s for s in v.stages if s.name == name), None)


def test_a_value_of_the_ctaid_computed_two_ways_is_proved_on_one_cta():
    v = verify(load_spec(D / "stamp_shift.toml"), timeout_s=30)
    assert v.kind == EQUIVALENT, v.reasons
    assert ONE_CTA in _stage(v, "symbolic execution").detail
    assert _stage(v, ONE_CTA) is None               # decided there: no fall back


def test_a_wrong_ctaid_value_is_refuted_at_a_shape_of_two_ctas_and_replays():
    spec = load_spec(D / "stamp_row.toml")
    v = verify(spec, timeout_s=30, trials=0)          # testing off: the proof must find it
    assert v.kind == NOT_EQUIVALENT, v.reasons
    cex = v.counterexample
    assert cex.scalars["cols"] > 16 or cex.scalars["rows"] > 16
    assert_replays(spec, cex)


def test_kernels_writing_an_element_from_different_ctas_fall_back_to_every_cta():
    v = verify(load_spec(D / "reversed.toml"), timeout_s=30)
    assert v.kind == EQUIVALENT, v.reasons
    fell = _stage(v, ONE_CTA)
    assert fell.status == "skipped" and "written by different CTAs" in fell.detail
    assert ONE_CTA not in _stage(v, "symbolic execution").detail


def test_two_ctas_writing_one_element_is_refuted_and_replays():
    spec = load_spec(D / "first_tile.toml")
    v = verify(spec, timeout_s=30, trials=0)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert "two threads of the candidate" in _stage(v, ONE_CTA).detail
    assert_replays(spec, v.counterexample)


def test_a_coarsened_kernel_is_proved_on_one_symbolic_cta_per_kernel():
    # copy2d against copy2d_coarse: two elements per thread, half the CTAs along y
    v = verify(load_spec(D / "coarse.toml"), timeout_s=30)
    assert v.kind == EQUIVALENT, v.reasons
    assert "one symbolic CTA per kernel" in _stage(v, "symbolic execution").detail
    assert _stage(v, ONE_CTA) is None               # decided there: no fall back


def test_values_of_ctaid_from_different_grids_fall_back_to_every_cta():
    v = verify(load_spec(D / "stamp_coarse.toml"), timeout_s=30)
    assert v.kind == EQUIVALENT, v.reasons
    fell = _stage(v, ONE_CTA)
    assert fell.status == "skipped" and "not the same term" in fell.detail
    assert ONE_CTA not in _stage(v, "symbolic execution").detail


def test_each_kernels_own_ctaid_is_kept_apart_and_the_bug_replays():
    # both kernels store the term %ctaid.y, of grids of 16-row and 32-row CTAs: one name
    # for both would prove this pair (rows 16..31 differ)
    spec = load_spec(D / "stamp_y_coarse.toml")
    v = verify(spec, timeout_s=30, trials=0)          # testing off: the proof must find it
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert v.counterexample.scalars["rows"] > 16
    assert_replays(spec, v.counterexample)
