"""Addresses that depend on input data (verifier/address_values.py), atomics at such addresses
(SymbolicPort.atomic), increments kept as sums, and sums compared over launch shapes without a
solver (verifier/guarded_sums.py). The histogram pairs in kernels/ are the golden cases; these
are the pieces, and mutants that must be refuted."""

from __future__ import annotations

from semantics.choices import Choices

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import z3

from semantics.machine.symbolic_port import _unless_zero
from verifier.address_values import DATA_BITS, offset_values
from verifier.equiv import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.guarded_sums import SumsMemo, same_sums
from verifier.spec import load_spec

from replaying import assert_replays

K = Path(__file__).resolve().parents[2] / "kernels"


# -- the values of a data-dependent offset ------------------------------------------------------

def test_a_byte_index_takes_256_values_each_tested_on_the_byte():
    d = z3.BitVec("data[3]", 8)
    off = z3.ZeroExt(56, d) * 4                       # a 64-bit byte offset into u32 bins
    tests = offset_values(off, True, {}, 1, 4096)
    assert sorted(tests) == [4 * v for v in range(256)]
    assert tests[12].eq(d == 3)                       # restated on the byte, whatever the width
    same = offset_values(z3.ZeroExt(24, d) * 4, True, {}, 1, 4096)   # a 32-bit one
    assert same[12].eq(tests[12])
    down = offset_values((255 - z3.ZeroExt(56, d)) * 4, True, {}, 1, 4096)   # bins reversed
    assert down[0].eq(d == 255) and down[1020].eq(d == 0) and down[12].eq(d == 252)
    pairs = offset_values(z3.ZeroExt(56, z3.LShR(d, 1)) * 4, True, {}, 1, 4096)  # two per bin
    assert len(pairs) == 128 and pairs[4].eq(z3.Or(d == 2, d == 3))


def test_a_byte_of_a_wider_word_is_read_in_its_bits():
    w = z3.BitVec("word[0]", 32)
    tests = offset_values(z3.ZeroExt(24, z3.Extract(7, 0, w)) * 4, True, {}, 1, 4096)
    assert len(tests) == 256 and tests[8].eq(z3.Extract(7, 0, w) == 2)


def test_too_many_input_bits_or_values_are_refused():
    w = z3.BitVec("word[0]", 32)
    assert offset_values(w * 4, True, {}, 1, 1 << 20) is None        # 32 bits > DATA_BITS
    assert DATA_BITS < 32
    d = z3.BitVec("data[0]", 8)
    assert offset_values(z3.ZeroExt(24, d), True, {}, 1, 100) is None   # 256 values > 100


def test_an_offset_over_shapes_and_data_lists_every_combination():
    n, d = z3.BitVec("n", 32), z3.BitVec("data[0]", 8)
    off = n + z3.ZeroExt(24, d)
    points = {"n": np.array([0, 1000], dtype=np.uint64)}
    vals = offset_values(off, True, points, 2, 4096)
    assert set(vals) == set(range(256)) | set(range(1000, 1256))
    assert all(t is None for t in vals.values())       # tested as `off == k` by the caller
    # a condition that reads the data is not used to filter (it may read unseen bits)
    only = offset_values(off, z3.ULT(d, 2), points, 2, 4096)
    assert set(only) == set(vals)
    # a shape-only condition is
    at_n0 = offset_values(off, n == 0, points, 2, 4096)
    assert set(at_n0) == set(range(256))


# -- increments ---------------------------------------------------------------------------------

def test_a_nonzero_guard_on_the_increment_itself_is_dropped():
    c, e = z3.BitVec("count", 32), z3.Bool("exists")
    assert _unless_zero(z3.And(e, z3.Not(c == 0)), c).eq(e)
    assert _unless_zero(z3.Not(c == 0), c) is True
    other = z3.BitVec("other", 32)
    m = z3.And(e, z3.Not(other == 0))
    assert _unless_zero(m, c).eq(m)                    # a guard on something else stays
    f = z3.Bool("f")                                   # `c != 0` as z3 builds it: Distinct
    assert _unless_zero(z3.And(e, c != 0, f), c).eq(z3.And(f, e))
    assert _unless_zero(z3.And(e, z3.BitVecVal(0, 32) != c), c).eq(e)
    assert _unless_zero(z3.And(e, c != 1), c).eq(z3.And(e, c != 1))   # not a zero test


def test_an_increment_is_recognized_only_when_it_does_not_read_the_old_word():
    from semantics.machine.symbolic_port import SymbolicPort
    b = z3.BitVec("b", 32)
    assert SymbolicPort._delta(lambda d, old, lanes: [old[0] + b], 0, 32).eq(b)
    assert SymbolicPort._delta(lambda d, old, lanes: [old[0] - b], 0, 32) is not None
    # old + old, and an exchange, are not increments by a term of their own
    assert SymbolicPort._delta(lambda d, old, lanes: [old[0] + old[0]], 0, 32) is None
    assert SymbolicPort._delta(lambda d, old, lanes: [b], 0, 32) is None
    assert SymbolicPort._delta(lambda d, old, lanes: [b + old[0]], 0, 32).eq(b)
    # a difference that reads the old word, found by the add's shape or by simplification
    assert SymbolicPort._delta(lambda d, old, lanes: [old[0] + (old[0] & b)], 0, 32) is None
    assert SymbolicPort._delta(lambda d, old, lanes: [old[0] * 3], 0, 32) is None
    assert SymbolicPort._delta(lambda d, old, lanes: [7], 0, 32) is None


def _sums():
    """Per shape n in 0..3: `a` adds x_i for i < n one by one; `b` adds the x_i with i >= 2
    as one block that exists only when n > 2, as a privatized histogram merges a block."""
    n = z3.BitVec("n", 32)
    xs = [z3.BitVec(f"x{i}", 32) for i in range(4)]
    zero = z3.BitVecVal(0, 32)
    live = [z3.ULT(z3.BitVecVal(i, 32), n) for i in range(4)]
    a = z3.BitVec("init", 32)
    for i in range(4):
        a = a + z3.If(z3.And(live[i], xs[i] == 7), z3.BitVecVal(1, 32), zero)
    block0 = sum((z3.If(z3.And(live[i], xs[i] == 7), z3.BitVecVal(1, 32), zero)
                  for i in range(2)), zero)
    block1 = sum((z3.If(z3.And(live[i], xs[i] == 7), z3.BitVecVal(1, 32), zero)
                  for i in range(2, 4)), zero)
    b = z3.BitVec("init", 32) + block0 + z3.If(z3.UGT(n, 2), block1, zero)
    points = {"n": np.arange(4, dtype=np.uint64)}

    def at_shapes(t):
        from verifier.term_eval import NotEvaluable, evaluate
        try:
            return evaluate(t, points, 4)
        except NotEvaluable:
            return None
    return a, b, at_shapes, xs, n


def test_sums_added_in_blocks_under_shape_guards_are_equal_without_a_solver():
    a, b, at_shapes, _, _ = _sums()
    assert same_sums(a, b, np.ones(4, bool), at_shapes, 4)


def test_a_count_added_at_a_shape_where_the_other_side_does_not_is_not_shown_equal():
    a, b, at_shapes, xs, n = _sums()
    zero = z3.BitVecVal(0, 32)
    extra = z3.If(z3.And(z3.UGT(n, 0), xs[0] == 7), z3.BitVecVal(1, 32), zero)
    assert not same_sums(a + extra, b, np.ones(4, bool), at_shapes, 4)
    # ... unless that shape is not one where the element exists
    at_n0 = np.array([True, False, False, False])
    assert same_sums(a + extra, b, at_n0, at_shapes, 4)


def test_a_split_increment_built_nested_is_the_same_guarded_atom():
    # The port builds `If(x == 7, If(live, 1, 0), 0)`; a sum of `If(live and x == 7, 1, 0)`
    # adds the same atoms under the same shape guards.
    a, b, at_shapes, xs, n = _sums()
    one, zero = z3.BitVecVal(1, 32), z3.BitVecVal(0, 32)
    live = [z3.ULT(z3.BitVecVal(i, 32), n) for i in range(4)]
    nested = z3.BitVec("init", 32)
    for i in range(4):
        nested = nested + z3.If(xs[i] == 7, z3.If(live[i], one, zero), zero)
    everywhere = np.ones(4, bool)
    assert same_sums(nested, a, everywhere, at_shapes, 4)
    assert same_sums(nested, b, everywhere, at_shapes, 4)
    # near misses: a nonzero else on either selection is no such increment
    for i, bad in ((3, z3.If(xs[3] == 7, z3.If(live[3], one, zero), one)),
                   (3, z3.If(xs[3] == 7, z3.If(live[3], one, one), zero))):
        mutant = z3.BitVec("init", 32)
        for j in range(4):
            mutant = mutant + (bad if j == i else
                               z3.If(xs[j] == 7, z3.If(live[j], one, zero), zero))
        assert not same_sums(mutant, a, everywhere, at_shapes, 4)
    # another test, or a guard of another shape, is another atom
    other = z3.BitVec("init", 32)
    for i in range(4):
        other = other + z3.If(xs[i] == 8, z3.If(live[i], one, zero), zero)
    assert not same_sums(other, a, everywhere, at_shapes, 4)
    late = z3.BitVec("init", 32)
    for i in range(4):
        late = late + z3.If(xs[i] == 7, z3.If(live[min(i + 1, 3)], one, zero), zero)
    assert not same_sums(late, a, everywhere, at_shapes, 4)


def test_increments_kept_pending_read_back_as_one_sum_and_see_later_stores():
    from semantics.machine.memory import ConcreteMemory, GlobalLayout
    from semantics.machine.symbolic_port import SymbolicPort
    layout = GlobalLayout()
    layout.allocate("bins", 16)
    mem = ConcreteMemory(layout, {})
    port = SymbolicPort(mem)
    xs = [z3.BitVec(f"inc{i}", 32) for i in range(3)]
    for x in xs:
        port._add(mem.g, 0, 4, x, 32)
    got = port._read(mem.g, 0, 4)
    assert got.decl().kind() == z3.Z3_OP_BADD and got.num_args() == 4     # 0 + three addends
    assert _proved(got == xs[0] + xs[1] + xs[2])
    # the word read is the word kept; one more increment starts from it
    port._add(mem.g, 0, 4, xs[0], 32)
    assert _proved(port._read(mem.g, 0, 4) == 2 * xs[0] + xs[1] + xs[2])
    # a byte stored into a word with increments pending: the sum goes on from the new word
    port._add(mem.g, 0, 4, xs[1], 32)
    b = z3.BitVec("byte", 8)
    port._write(mem.g, 1, 1, b)
    port._add(mem.g, 0, 4, xs[2], 32)
    before = 2 * xs[0] + 2 * xs[1] + xs[2]
    stored = z3.Concat(z3.Extract(31, 16, before), b, z3.Extract(7, 0, before))
    assert _proved(port._read(mem.g, 0, 4) == stored + xs[2])
    # a store to another word of the region between increments leaves this sum one sum
    port._add(mem.g, 8, 4, xs[0], 32)
    port._write(mem.g, 12, 4, z3.BitVec("other", 32))
    port._add(mem.g, 8, 4, xs[1], 32)
    port._write(mem.g, 4, 1, 9)                      # (a concrete byte: into the array)
    port._add(mem.g, 8, 4, xs[2], 32)
    got = port._read(mem.g, 8, 4)
    assert got.decl().kind() == z3.Z3_OP_BADD and got.num_args() == 4
    assert _proved(got == xs[0] + xs[1] + xs[2])


def test_sums_read_from_their_recorded_parts_answer_as_the_walk():
    # The port records how it built a sum of `If(test, step, 0)` increments
    # (semantics/machine/pending_sums.py); same_sums reads the record instead of the term.
    # Every answer must be the walk's, equal or not, whatever the tests and steps are.
    from semantics.machine.pending_sums import PendingSum
    _, _, at_shapes, xs, n = _sums()
    one, zero = z3.BitVecVal(1, 32), z3.BitVecVal(0, 32)
    live = [z3.ULT(z3.BitVecVal(i, 32), n) for i in range(4)]
    init = z3.BitVec("init", 32)

    def built(tests, steps, others=(zero,) * 4):
        record: dict = {}
        pending = PendingSum(init)
        for test, step, other in zip(tests, steps, others):
            pending.add(z3.If(test, step, other), (test, step, other))
        return pending.term(record), record

    def walked(tests, steps, others=(zero,) * 4):
        return init + sum((z3.If(t, s, o) for t, s, o in zip(tests, steps, others)), zero)

    steps = [z3.If(live[i], one, zero) for i in range(4)]
    cases = {
        "port": ([xs[i] == 7 for i in range(4)], steps),
        "other test": ([xs[i] == 8 for i in range(4)], steps),
        "late guard": ([xs[i] == 7 for i in range(4)],
                       [steps[min(i + 1, 3)] for i in range(4)]),
        "plain step": ([xs[i] == 7 for i in range(4)], [one] * 4),
        "shape test": ([live[i] for i in range(4)], [z3.If(xs[i] == 7, one, zero)
                                                     for i in range(4)]),
        "conjunction": ([z3.And(live[i], xs[i] == 7) for i in range(4)], [one] * 4),
    }
    everywhere = np.ones(4, bool)
    reference = walked(*cases["port"])
    answers = {}
    for name, (tests, steps_) in cases.items():
        term, record = built(tests, steps_)
        assert record and all(p.node.eq(term) for p in record.values())
        memo = SumsMemo()
        with_parts = same_sums(term, reference, everywhere, at_shapes, 4, memo, sums=record)
        assert len(memo.sums)                                              # (read, not walked)
        assert with_parts == same_sums(walked(tests, steps_), reference, everywhere,
                                       at_shapes, 4), name
        answers[name] = with_parts
    assert answers == {"port": True, "other test": False, "late guard": False,
                       "plain step": False, "shape test": False, "conjunction": True}
    # a nonzero else is no increment of the kind: walked, and not equal
    term, record = built(cases["port"][0], steps, (zero, zero, zero, one))
    assert not same_sums(term, reference, everywhere, at_shapes, 4, sums=record)


def _proved(claim) -> bool:
    s = z3.Solver()
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


# -- mutants of the privatized histogram are refuted --------------------------------------------

def _mutant(tmp_path: Path, old: str, new: str) -> Path:
    for f in ("shared.toml", "histogram_global.ptx", "histogram_shared.ptx"):
        shutil.copy(K / "histogram" / f, tmp_path / f)
    ptx = tmp_path / "histogram_shared.ptx"
    text = ptx.read_text()
    assert old in text
    ptx.write_text(text.replace(old, new))
    return tmp_path / "shared.toml"


def test_counting_twice_is_refuted_with_a_replayed_counterexample(tmp_path):
    spec = load_spec(_mutant(tmp_path, "atom.shared.add.u32 \t%r14, [%r13], 1;",
                             "atom.shared.add.u32 \t%r14, [%r13], 2;"))
    v = verify(spec, fixed={"n": 40}, timeout_s=30)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert v.counterexample.differences
    assert_replays(spec, v.counterexample)


def test_binning_by_the_next_byte_value_is_refuted(tmp_path):
    # bins[data[i] + 1]: off by one bin (and past the end for data[i] == 255 in shared memory)
    spec = load_spec(_mutant(tmp_path, "mul.wide.u16 \t%r11, %rs1, 4;",
                             "mul.wide.u16 \t%r11, %rs1, 4;\n\tadd.s32 \t%r11, %r11, 4;"))
    v = verify(spec, fixed={"n": 40}, timeout_s=30)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    # a byte of 255 counts into bin 256, past the shared array: a fault, replayed
    assert "the candidate faults" in v.reasons[0] and "shared" in v.reasons[0]
    assert v.counterexample.note


def test_counting_into_never_zeroed_shared_bins_is_refuted_with_another_fill(tmp_path):
    # Without `smem[tid] = 0` the privatized histogram counts into whatever shared memory
    # holds at launch (unspecified in PTX). The emulator's zeros give the right bins, so the
    # difference shows only with another state the GPU may leave (another fill, or the
    # solver's values of the never-written bytes). The counterexample says so and replays
    # with those choices (and not with zeros).
    spec = load_spec(_mutant(tmp_path, "st.shared.u32 \t[%r2], %r8;", ""))
    v = verify(spec, timeout_s=30)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    cex = v.counterexample
    assert cex.choices is not None and cex.choices.fill != "zero"
    assert "never-written shared memory" in cex.note and cex.differences
    assert_replays(spec, cex)
    zeros = replace(cex, choices=Choices())
    with pytest.raises(AssertionError):
        assert_replays(spec, zeros)
    # at one fixed shape too, and with no testing at all: the symbolic run's never-written
    # bytes are the solver's to choose
    for trials in (8, 0):
        v = verify(spec, fixed={"n": 40}, timeout_s=30, trials=trials)
        assert v.kind == NOT_EQUIVALENT, v.reasons
        assert v.counterexample.choices != Choices() and "shared" in v.counterexample.note
        assert_replays(spec, v.counterexample)
    # the kernel that zeroes its bins is not refuted this way
    assert verify(load_spec(K / "histogram" / "shared.toml"), fixed={"n": 40},
                  timeout_s=30).kind == EQUIVALENT


# -- loads at data-dependent addresses: a table staged in shared memory (tests/data/lut) -------

LUT = Path(__file__).resolve().parents[1] / "data" / "lut"


def test_a_table_staged_in_shared_memory_equals_the_global_lookup():
    spec = load_spec(LUT / "shared.toml")
    v = verify(spec, fixed={"n": 300}, timeout_s=30)
    assert v.kind == EQUIVALENT, v.reasons


def test_staging_a_table_without_the_barrier_is_a_named_race():
    spec = load_spec(LUT / "shared_nosync.toml")
    v = verify(spec, fixed={"n": 40}, timeout_s=30)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert "data race" in v.reasons[0] and "read by" in v.reasons[0]
    assert "write by" in v.reasons[0] and v.counterexample.note


def test_looking_up_the_neighbouring_entry_is_refuted(tmp_path):
    for f in LUT.iterdir():
        shutil.copy(f, tmp_path / f.name)
    ptx = tmp_path / "lut_shared.ptx"
    old = "mul.wide.u16 \t%r10, %rs1, 4;"
    assert old in ptx.read_text()
    ptx.write_text(ptx.read_text().replace(old, "xor.b16 \t%rs1, %rs1, 1;\n\t" + old))
    spec = load_spec(tmp_path / "shared.toml")
    v = verify(spec, fixed={"n": 40}, timeout_s=30)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert v.counterexample.differences
    assert_replays(spec, v.counterexample)
