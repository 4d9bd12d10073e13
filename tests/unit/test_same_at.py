"""`verifier.indexed.SameAt`: two terms equal at every shape of a set, for every input, shown
by walking both at once. The matmuls need it: the tiled kernel's `fma(If(k < K, A[..], 0),
...)` against the naive `fma(A[..], ...)`, with multiplicands in either order. Each rule is
tested with a near miss that must not be shown equal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import z3

from replaying import assert_replays
from semantics.domains.symbolic import SymbolicDomain
from semantics.ops.common import canonicalize
from semantics.machine.indexed_buffers import array
from verifier.equiv import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.indexed import IndexedBuffer, SameAt
from verifier.spec import load_spec
from verifier.shape_space import ShapeSpace, ShapeValues

K = z3.BitVec("K", 64)
ALL = np.ones(4, dtype=bool)
K_VALUES = np.array([1, 2, 3, 4])
RM = z3.RNE()
F32 = z3.Float32()
A_ELEMS = [z3.BitVec(f"A[{i}]", 32) for i in range(8)]
D = Path(__file__).resolve().parents[1] / "data" / "matmul_order"


def _same(real: bool = False) -> SameAt:
    values = ShapeValues(ShapeSpace(["K"], [[1, 2, 3, 4]], [{"K": k} for k in (1, 2, 3, 4)]),
                         {"K": 64})
    info = IndexedBuffer("A", 4, np.array([e.get_id() for e in A_ELEMS]),
                         np.full(4, 32, np.uint64), np.uint64(32))
    return SameAt(values.grid_raw, values.space, {"A": info}, real=real)


def _a(offset_elems) -> z3.BitVecRef:
    return z3.Select(array("A", 4), offset_elems * 4)


def _f(bits) -> z3.FPRef:
    return z3.fpBVToFP(bits, F32)


def _bits(x) -> z3.BitVecRef:
    return z3.fpToIEEEBV(x)


def test_loads_are_equal_where_their_offsets_name_the_same_element():
    same = _same()
    # K - 1 + 1 and K name the same element at every shape, though built differently
    assert same(_a(K - 1 + 1), _a(K), ALL)
    # K and 4 meet only at K = 4
    assert same(_a(K), _a(z3.BitVecVal(4, 64)), np.array([False, False, False, True]))
    assert not same(_a(K), _a(z3.BitVecVal(4, 64)), ALL)
    # a load at a concrete address returns the element's own term: the same value
    assert same(_a(K), A_ELEMS[2], np.array([False, True, False, False]))
    assert not same(_a(K), A_ELEMS[2], np.array([True, True, False, False]))


def test_a_selection_on_the_shape_is_decided_shape_by_shape():
    same = _same()
    padded = z3.If(z3.ULT(z3.BitVecVal(2, 64), K), _a(K), z3.BitVecVal(0, 32))
    # where 2 < K (K = 3, 4) the padding picks the load
    assert same(padded, _a(K), np.array([False, False, True, True]))
    # at K = 1 it is the zero, which is no load
    assert not same(padded, _a(K), ALL)


def test_fma_multiplicands_commute_but_its_addend_does_not():
    same = _same()
    a, b, c = (_f(_a(K + i)) for i in range(3))
    ref = _bits(z3.fpFMA(RM, a, b, c))
    assert same(ref, _bits(z3.fpFMA(RM, b, a, c)), ALL)
    assert not same(ref, _bits(z3.fpFMA(RM, a, c, b)), ALL)
    assert not same(ref, _bits(z3.fpFMA(RM, c, b, a)), ALL)
    # add and multiply commute; subtraction does not
    assert same(_bits(z3.fpAdd(RM, a, b)), _bits(z3.fpAdd(RM, b, a)), ALL)
    assert same(_bits(z3.fpMul(RM, a, b)), _bits(z3.fpMul(RM, b, a)), ALL)
    assert not same(_bits(z3.fpSub(RM, a, b)), _bits(z3.fpSub(RM, b, a)), ALL)
    # another rounding mode is another operation
    assert not same(ref, _bits(z3.fpFMA(z3.RTZ(), a, b, c)), ALL)


def test_a_long_chain_is_walked_without_exhausting_the_stack():
    same = _same()
    acc_r = acc_c = _f(z3.BitVecVal(0, 32))
    for k in range(2000):
        a, b = _f(_a(K + k % 4)), _f(_a(K + (k + 1) % 4))
        acc_r = z3.fpFMA(RM, a, b, acc_r)
        acc_c = z3.fpFMA(RM, b, a, acc_c)
    assert same(_bits(acc_r), _bits(acc_c), ALL)
    # one step different at the bottom of the chain is still found
    acc_w = z3.fpFMA(RM, _f(_a(K)), _f(_a(K)), _f(z3.BitVecVal(0, 32)))
    for k in range(1, 2000):
        a, b = _f(_a(K + k % 4)), _f(_a(K + (k + 1) % 4))
        acc_w = z3.fpFMA(RM, b, a, acc_w)
    assert not same(_bits(acc_r), _bits(acc_w), ALL)


def test_what_was_shown_at_some_shapes_is_not_taken_for_others():
    # The walk keeps, per pair of subterms, the shapes it looked at and those it showed:
    # K - 3 + 3 and 2 name the same element only at K = 2, so the pair shown there first
    # must still fail at K = 1, and a later question about K = 2 alone needs no new walk.
    same = _same()
    x, y = _f(_a(K - 3 + 3)), _f(_a(z3.BitVecVal(2, 64)))
    add_x, add_y = _bits(z3.fpAdd(RM, x, x)), _bits(z3.fpAdd(RM, y, y))
    at2 = np.array([False, True, False, False])
    assert same(add_x, add_y, at2)
    assert not same(add_x, add_y, np.array([True, True, False, False]))
    assert same(add_x, add_y, at2)
    assert not same(add_x, add_y, ALL)


def test_commuting_operands_may_meet_in_another_order_at_each_shape():
    # at K <= 2 the operands meet as written, at K >= 3 swapped: IEEE add commutes, so the
    # sums are equal at every shape though neither order shows it everywhere
    same = _same()
    low = z3.ULE(K, 2)
    p, q = _f(_a(K)), _f(_a(5 - K))
    r, t = _f(_a(z3.If(low, K, 5 - K))), _f(_a(z3.If(low, 5 - K, K)))
    assert same(_bits(z3.fpAdd(RM, p, q)), _bits(z3.fpAdd(RM, r, t)), ALL)
    # subtraction does not commute: only the shapes where they meet as written
    assert same(_bits(z3.fpSub(RM, p, q)), _bits(z3.fpSub(RM, r, t)), ~(K_VALUES >= 3))
    assert not same(_bits(z3.fpSub(RM, p, q)), _bits(z3.fpSub(RM, r, t)), ALL)


def _semantics_canon(bits, mantissa: int = 0x007FFFFF) -> z3.BitVecRef:
    """The canonical-NaN wrapper as the instruction semantics build it (`canonicalize` on the
    symbolic domain), or with another mantissa mask (a near miss of the same shape)."""
    d = SymbolicDomain(1)
    if mantissa == 0x007FFFFF:
        return canonicalize(d, "f32", [bits], 32)[0]
    nan = d.pand(d.eq(d.band([bits], d.const(0x7F800000, 32), 32), d.const(0x7F800000, 32), 32),
                 d.pnot(d.eq(d.band([bits], d.const(mantissa, 32), 32), d.const(0, 32), 32)))
    return d.ite(nan, d.const(0x7FFFFFFF, 32), [bits], 32)[0]


def test_canonical_nan_wrappers_are_equal_where_what_they_wrap_is():
    same = _same()
    a, b = _f(_a(K)), _f(_a(K + 1))
    ab, ba = _bits(z3.fpMul(RM, a, b)), _bits(z3.fpMul(RM, b, a))
    assert same(_semantics_canon(ab), _semantics_canon(ba), ALL)
    assert not same(_semantics_canon(ab), _semantics_canon(_bits(z3.fpAdd(RM, a, b))), ALL)
    # another test (a mantissa mask that misses a bit) is another function of the bits
    assert not same(_semantics_canon(ab), _semantics_canon(ba, 0x003FFFFF), ALL)
    # and a wrapper is no bare result
    assert not same(_semantics_canon(ab), ba, ALL)


def test_the_semantics_nan_test_is_recognised_in_every_format_and_a_near_miss_is_not():
    # (recognised: the wrapper is walked as one operation; not: as its seven nodes)
    same, d = _same(), SymbolicDomain(1)
    signatures = set()
    for fmt, w in (("f16", 16), ("bf16", 16), ("f32", 32), ("f64", 64)):
        b = z3.BitVec(f"nan_test_{fmt}", w)
        wrapped = canonicalize(d, fmt, [b], w)[0]
        test = same._nan_test(wrapped.arg(0).as_ast(), b.as_ast())
        assert test is not None, fmt
        signatures.add(test)
        # another value's test, or a test on another value, is not it
        assert same._nan_test(wrapped.arg(0).as_ast(), (b + 1).as_ast()) is None, fmt
    assert len(signatures) == 4                      # f16 and bf16 are different functions
    near = _semantics_canon(z3.BitVec("nan_near", 32), 0x003FFFFF)
    assert same._nan_test(near.arg(0).as_ast(), near.arg(2).as_ast()) is None


# -- mode real: an fma with a zero multiplicand is its addend ------------------------------------

NAN = z3.BitVecVal(0x7FFFFFFF, 32)


def _canon(bits) -> z3.BitVecRef:
    """The semantics' canonical-NaN wrapper around a result's bits."""
    nan = z3.And(bits & 0x7F800000 == 0x7F800000, bits & 0x007FFFFF != 0)
    return z3.If(nan, NAN, bits)


def _padded_step(acc_bits, k: int) -> z3.BitVecRef:
    """One step of a tiled kernel's dot product: both operands zero where k >= K (padding)."""
    inside = z3.ULT(z3.BitVecVal(k, 64), K)
    a = z3.If(inside, _a(K + k), z3.BitVecVal(0, 32))
    b = z3.If(inside, _a(K + k + 1), z3.BitVecVal(0x80000000, 32))         # (-0 is zero too)
    return _canon(_bits(z3.fpFMA(RM, _f(a), _f(b), _f(acc_bits))))


def test_mode_real_reads_a_padded_fma_as_its_addend_where_the_padding_is_zero():
    zero = z3.BitVecVal(0, 32)
    acc = _canon(_bits(z3.fpFMA(RM, _f(_a(K)), _f(_a(K + 1)), _f(zero))))
    tiled = _padded_step(acc, 2)             # a real product only where 2 < K (K = 3, 4)
    naive = z3.If(z3.ULT(z3.BitVecVal(2, 64), K),
                  _canon(_bits(z3.fpFMA(RM, _f(_a(K + 2)), _f(_a(K + 3)), _f(acc)))), acc)
    assert _same(real=True)(naive, tiled, ALL)
    # bit for bit, fma(0, 0, -0.0) is +0.0: not shown
    assert not _same()(naive, tiled, ALL)
    # near misses: zero where K <= 1 only, then the naive one's product is missing at K = 2
    early = z3.If(z3.ULT(z3.BitVecVal(1, 64), K),
                  _canon(_bits(z3.fpFMA(RM, _f(_a(K + 2)), _f(_a(K + 3)), _f(acc)))), acc)
    assert not _same(real=True)(early, tiled, ALL)
    # a multiplicand of 1.0, not 0, in the padding
    one = z3.BitVecVal(0x3F800000, 32)
    inside = z3.ULT(z3.BitVecVal(2, 64), K)
    ones = _canon(_bits(z3.fpFMA(RM, _f(z3.If(inside, _a(K + 2), one)),
                                 _f(z3.If(inside, _a(K + 3), one)), _f(acc))))
    assert not _same(real=True)(naive, ones, ALL)
    # the padding's addend is another accumulator
    other = _canon(_bits(z3.fpFMA(RM, _f(_a(K + 1)), _f(_a(K)), _f(one))))
    assert not _same(real=True)(naive, _padded_step(other, 2), ALL)
    # a product of data that happens to be zero is no padding: only a shape makes it zero
    data = _canon(_bits(z3.fpFMA(RM, _f(A_ELEMS[0]), _f(A_ELEMS[1]), _f(acc))))
    assert not _same(real=True)(acc, data, ALL)


def test_mode_real_proves_the_padded_tiled_matmul_over_its_whole_claim():
    v = verify(load_spec(D / "real.toml"), timeout_s=60, trials=0)
    assert v.kind == EQUIVALENT, (v.reasons, v.stages)
    assert v.assignments == 16 * 16 * 20
    assert any(s.name == "indexed outputs" for s in v.stages)
    assert any("mode real" in a for a in v.assumptions)
    # the kernel that drops the partial k tile is not equal as real numbers either
    spec = load_spec(D / "real_floor_k.toml")
    v = verify(spec, timeout_s=60, trials=0)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert_replays(spec, v.counterexample)


# -- whole claims: the corpus's tiled matmul and two near misses (tests/data/matmul_order) ------




def test_the_tiled_matmul_is_proved_bit_exact_for_every_shape_with_whole_k_tiles():
    v = verify(load_spec(D / "tiled.toml"), timeout_s=60, trials=0)
    assert v.kind == EQUIVALENT, (v.reasons, v.stages)
    assert v.assignments == 16 * 16 * 2
    assert any(s.name == "indexed outputs" for s in v.stages)


def test_a_tile_summed_in_reverse_order_is_not_shown_equal():
    # The same products in another order round differently: the walk must not accept it.
    # (The solver's refutation at that shape takes about 20 s; a short timeout suffices.)
    v = verify(load_spec(D / "reversed.toml"), timeout_s=2, trials=0)
    assert v.kind != EQUIVALENT
    stage = next(s for s in v.stages if s.name == "symbolic shapes")
    assert "is not shown to be the same term in both kernels" in stage.detail
    # testing finds it at once
    v = verify(load_spec(D / "reversed.toml"), timeout_s=30)
    assert v.kind == NOT_EQUIVALENT


def test_a_transposed_b_tile_is_refuted_at_the_shape_the_walk_hands_back():
    spec = load_spec(D / "bt.toml")
    v = verify(spec, timeout_s=60, trials=0)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert v.coverage.startswith("one symbolic maximal launch, then") and \
        v.coverage.endswith("on its own")
    assert_replays(spec, v.counterexample)


def test_sets_of_shapes_round_trip_as_bit_sets():
    from verifier.same_at import bits_of, mask_of
    rng = np.random.default_rng(7)
    for count in (1, 7, 8, 9, 2048, 32771):
        mask = rng.random(count) < 0.5
        bits = bits_of(mask)
        assert np.array_equal(mask_of(bits, count), mask)
        assert [i for i in range(count) if bits >> i & 1] == np.nonzero(mask)[0].tolist()
