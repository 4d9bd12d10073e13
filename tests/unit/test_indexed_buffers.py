"""Indexed buffers (semantics/machine/indexed_buffers.py, verifier/indexed.py): loads from an
`in` buffer as `Select` on an array, stores to an `out` buffer in a write log, both decided
shape by shape. tests/data/copy2d holds a 2-D copy (symbolic rows and cols, real nvcc output)
and candidates that break each rule; the transposes in kernels/ are the golden cases."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
import z3

from semantics.errors import UnsupportedError
from semantics.machine.indexed_buffers import (IndexedAccess, IndexedBuffer, IndexedBuffers,
                                               array)
from verifier.equiv import EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, verify
from verifier.indexed import IndexedBuffer as Info
from verifier.indexed import Layout, NotIndexable, compare, violation
from verifier.spec import load_spec

from replaying import assert_replays
from verifier.shape_space import ShapeSpace, ShapeValues

D = Path(__file__).resolve().parents[1] / "data" / "copy2d"


# -- whole claims over two symbolic dimensions -------------------------------------------------

def test_a_copy_through_a_shared_tile_is_proved_for_every_shape():
    v = verify(load_spec(D / "tiled.toml"), timeout_s=30)
    assert v.kind == EQUIVALENT, v.reasons
    assert v.assignments == 24 * 24 and "one symbolic maximal launch" in v.coverage
    names = [s.name for s in v.stages]
    assert "indexed outputs" in names
    # the tile is written under the bounds check and read under the same condition: the
    # read is of written memory at every shape, decided by evaluation, not flagged
    assert not v.obligations


@pytest.mark.parametrize("name", ["corner", "mirror", "pairs"])
def test_each_broken_copy_is_refuted_and_replays(name):
    # corner: a store at a constant address (the log must see it, not memory);
    # mirror: a load at another shape-dependent offset; pairs: two threads, one element (the
    # same value: a data race all the same, which the shape checked on its own reports)
    spec = load_spec(D / f"{name}.toml")
    # testing off: the indexed comparison must find the shape itself
    v = verify(spec, timeout_s=30, trials=0)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert v.counterexample.differences or (name == "pairs" and "race" in v.reasons[0])
    assert_replays(spec, v.counterexample)
    first = next(s for s in v.stages if s.name == "symbolic shapes")
    assert "checked on its own" in first.detail
    # with testing on, the emulator shows each difference before the symbolic run
    v = verify(spec, timeout_s=30)
    assert v.kind == NOT_EQUIVALENT and v.stages[0].name == "random testing"
    assert_replays(spec, v.counterexample)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_store_past_the_buffer_is_refuted_by_bounds_though_the_replay_ran_first(jobs,
                                                                                 monkeypatch):
    # With two processes the write logs are replayed while a worker decides the bounds; the
    # replay meets the store past `out` and keeps what it raised: the verdict is the bounds'
    # (a replayed fault), never that error
    import verifier.stages.bounds as bounds
    met = []
    replay = bounds.replay_logs

    def replay_logs(*args, **kwargs):
        for entry in replay(*args, **kwargs):
            met.append(entry)
            yield entry
    monkeypatch.setattr(bounds, "replay_logs", replay_logs)
    spec = load_spec(D / "past.toml")
    v = verify(spec, timeout_s=30, trials=0, jobs=jobs)
    assert v.kind == NOT_EQUIVALENT and "the candidate faults" in v.reasons[0], v.reasons
    assert "out of bounds" in v.reasons[0] and v.counterexample.scalars   # (replayed: a fault)
    assert [type(e).__name__ for e in met] == ([] if jobs == 1 else ["InternalError"])


def test_reading_possibly_unstaged_tile_words_is_refuted_by_the_symbolic_run_alone():
    # No testing: the unstaged words are unspecified constants in the symbolic run, and the
    # solver's model of them (and of the input) is a replayable counterexample naming them.
    spec = load_spec(D / "tiled_uninit.toml")
    v = verify(spec, timeout_s=30, trials=0)
    assert v.kind == NOT_EQUIVALENT
    assert "shared byte" in v.counterexample.note and "never written" in v.counterexample.note
    assert any(k.startswith("candidate/shared/") for k in v.counterexample.choices.values)
    assert_replays(spec, v.counterexample)


def test_unstaged_tile_words_are_refuted_by_a_run_where_they_are_zero():
    # Never-written shared memory holds unspecified contents; zero (the emulator's) is one
    # state the GPU may leave, and with it the copy differs: a legal execution that differs.
    spec = load_spec(D / "tiled_uninit.toml")
    v = verify(spec, timeout_s=30)
    assert v.kind == NOT_EQUIVALENT
    assert "read of never-written shared memory" in v.counterexample.note
    assert "copy2d_tiled_uninit.ptx:" in v.counterexample.note
    assert_replays(spec, v.counterexample)


def test_a_load_from_the_write_only_buffer_is_refused_by_name():
    v = verify(load_spec(D / "readback.toml"), timeout_s=30)
    assert v.kind == INCONCLUSIVE
    assert "reads 'out', declared access = \"out\"" in v.reasons[0]


# -- the pieces ---------------------------------------------------------------------------------

def _x():
    return SimpleNamespace(form=SimpleNamespace(name="st.global.f32"),
                           ins=SimpleNamespace(loc=None), thread_name=lambda lane: f"lane {lane}")


def _split(t):
    from semantics.machine.symbolic_port import _split_address
    return _split_address(t)


def test_divert_logs_constant_and_symbolic_stores_and_refuses_the_rest():
    bufs = IndexedBuffers([IndexedBuffer("p0", 0x1000, 0x1100, "in", "in"),
                           IndexedBuffer("p1", 0x2000, 0x2100, "out", "out")])
    cols = z3.BitVec("cols", 64)
    # lane 0: a constant address hidden in a term (0 * cols); lane 1: a symbolic offset
    addr = [z3.BitVecVal(0x2000, 64) + cols * 0, z3.BitVecVal(0x2004, 64) + cols * 4]
    cond = [True, True]
    bufs.divert(_x(), "w", addr, cond, [z3.BitVecVal(7, 32), z3.BitVecVal(8, 32)], 4, 4,
                _split, lambda v, c: v)
    assert cond == [False, False]
    offs = [z3.simplify(a.offset) for a in bufs.accesses]
    assert offs[0].as_long() == 0 and z3.simplify(offs[1] - (4 + cols * 4)).as_long() == 0
    loaded = bufs.divert(_x(), "r", [z3.BitVecVal(0x1000, 64) + cols * 8], [True], None, 4, 4,
                         _split, lambda v, c: v)
    assert z3.is_select(loaded[0])
    with pytest.raises(UnsupportedError, match="reads 'out'"):
        bufs.divert(_x(), "r", [z3.BitVecVal(0x2000, 64) + cols], [True], None, 4, 4, _split,
                    lambda v, c: v)
    with pytest.raises(UnsupportedError, match="writes 'in'"):
        bufs.divert(_x(), "w", [0x1000], [True], [1], 4, 4, _split, lambda v, c: v)
    # and the ordinary path may not store into an indexed buffer behind the log's back
    with pytest.raises(UnsupportedError, match="does not follow"):
        bufs.guard(_x(), "w", [0x2008])
    bufs.guard(_x(), "r", [0x1008])          # reading an `in` buffer concretely is fine


def _evaluator(values: list[int]) -> ShapeValues:
    """Terms over one 64-bit scalar `n` that takes `values`, evaluated at each."""
    return ShapeValues(ShapeSpace(["n"], [values], [{"n": v} for v in values]), {"n": 64})


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_accesses_checked_in_several_processes_give_the_sequential_answer(jobs):
    # `violation` shares the accesses among processes; the first in order that is outside
    # (or cannot be evaluated) decides, whichever process met it
    n, data = z3.BitVec("n", 64), z3.BitVec("data", 64)
    at = _evaluator([1, 2, 3])
    lengths = np.array([4, 8, 12], np.uint64)
    buf = Info("out", 4, np.arange(3), lengths, lengths)

    def access(i: int, offset) -> IndexedAccess:
        return IndexedAccess("w", "out", offset, 4, 4, True, 0, i, f"access {i}", None)
    inside = [access(i, (n - 1) * 4) for i in range(12)]
    assert violation(at, {"out": buf}, tuple(inside), jobs) is None
    past = access(7, (n - 1) * 4 + z3.If(n == 2, z3.BitVecVal(4, 64), z3.BitVecVal(0, 64)))
    unknown = access(9, data * 4)
    accesses = inside[:7] + [past] + inside[8:9] + [unknown] + inside[10:]
    shape, hit = violation(at, {"out": buf}, tuple(accesses), jobs)
    assert (shape, hit.what) == (1, "access 7")           # n = 2 is the only shape past it
    accesses[3] = unknown
    with pytest.raises(NotIndexable, match="the offset of access 9 depends on input data"):
        violation(at, {"out": buf}, tuple(accesses), jobs)


def test_a_select_reads_the_input_element_its_offset_names_at_each_shape():
    n = z3.BitVec("n", 64)
    at = _evaluator([1, 2, 3])
    elems = [z3.BitVec(f"in[{i}]", 32) for i in range(4)]
    init = [z3.BitVec(f"out[{i}]", 32) for i in range(4)]
    ins = Info("in", 4, np.array([e.get_id() for e in elems]), np.full(3, 16, np.uint64),
               np.uint64(16))
    lengths = np.array([4, 8, 12], np.uint64)      # (one scalar: its grid is its shapes)
    out = Info("out", 4, np.array([e.get_id() for e in init]), lengths, lengths)
    buffers = {"in": ins, "out": out}
    # reference: out[0] = in[n - 1] via a Select; candidate: the same element by a concrete load
    # chosen per shape (If on n), which is the same input term at every shape
    ref = IndexedAccess("w", "out", 0, 4, 4, True, z3.Select(array("in", 4), (n - 1) * 4), 0,
                        "w", None)
    pick = z3.If(n == 1, elems[0], z3.If(n == 2, elems[1], elems[2]))
    cand = IndexedAccess("w", "out", 0, 4, 4, True, pick, 0, "w", None)
    cells, differs = compare(at, buffers, {"out": 32}, {"out": out.ids},
                             {"reference": (ref,), "candidate": (cand,)})
    assert differs is None and cells == 1 + 2 + 3
    # a candidate that reads in[n] instead differs, at the first shape
    wrong = IndexedAccess("w", "out", 0, 4, 4, True, z3.Select(array("in", 4), n * 4), 0, "w",
                          None)
    _, differs = compare(at, buffers, {"out": 32}, {"out": out.ids},
                         {"reference": (ref,), "candidate": (wrong,)})
    assert differs is not None and differs.shape == 0
    # an element one kernel never writes keeps its initial term: it differs where it exists
    _, differs = compare(at, buffers, {"out": 32}, {"out": out.ids},
                         {"reference": (ref,), "candidate": ()})
    assert differs is not None


def test_a_logged_access_past_its_buffer_at_some_shape_is_a_violation():
    n = z3.BitVec("n", 64)
    at = _evaluator([1, 2, 3])
    lengths = np.array([4, 8, 12], np.uint64)
    buf = Info("out", 4, np.arange(3), lengths, lengths)
    ok = IndexedAccess("w", "out", (n - 1) * 4, 4, 4, True, 0, 0, "ok", None)
    assert violation(at, {"out": buf}, (ok,)) is None
    past = IndexedAccess("w", "out", n * 4, 4, 4, True, 0, 1, "past", None)
    assert violation(at, {"out": buf}, (past,))[0] == 0
    # only where its condition holds
    guarded = IndexedAccess("w", "out", n * 4, 4, 4, z3.BoolVal(False), 0, 1, "never", None)
    assert violation(at, {"out": buf}, (guarded,)) is None
    misaligned = IndexedAccess("w", "out", (n - 1) * 4 + 2, 4, 4, True, 0, 1, "odd", None)
    assert violation(at, {"out": buf}, (misaligned,)) is not None


def test_a_layout_numbers_only_the_elements_each_shape_has():
    # lengths in bytes 0, 12, 0, 0, 8 of 4-byte elements: shapes with no element in between
    lengths = np.array([0, 12, 0, 0, 8], np.uint64)
    layout = Layout.of(Info("out", 4, np.arange(4), lengths, lengths), 4)
    assert layout.total == 5 and layout.starts.tolist() == [0, 0, 3, 3, 3]
    assert layout.elements().tolist() == [0, 1, 2, 0, 1]
    assert [layout.at(c) for c in range(5)] == [(1, 0), (1, 1), (1, 2), (4, 0), (4, 1)]
    # capped at the elements the table has; a partial element exists (its bytes start inside)
    odd = np.array([6, 40], np.uint64)
    assert Layout.of(Info("out", 4, np.arange(4), odd, odd), 4).lengths.tolist() == [2, 4]


def test_a_differing_element_is_located_at_its_shape_after_shapes_without_elements():
    n = z3.BitVec("n", 64)
    at = _evaluator([0, 1, 2])
    init = [z3.BitVec(f"out[{i}]", 32) for i in range(2)]
    lengths = np.array([0, 4, 8], np.uint64)          # n elements at n
    out = Info("out", 4, np.array([e.get_id() for e in init]), lengths, lengths)
    ref = IndexedAccess("w", "out", (n - 1) * 4, 4, 4, n != 0, z3.BitVecVal(7, 32), 0, "w",
                        None)
    cand = IndexedAccess("w", "out", (n - 1) * 4, 4, 4, n != 0,
                         z3.If(n == 2, z3.BitVecVal(8, 32), z3.BitVecVal(7, 32)), 0, "w", None)
    cells, differs = compare(at, {"out": out}, {"out": 32}, {"out": out.ids},
                             {"reference": (ref,), "candidate": (cand,)})
    assert cells == 0 + 1 + 2
    assert differs is not None and differs.shape == 2 and "element 1 " in differs.why


def test_the_last_write_to_a_cell_stays_and_cells_no_write_reaches_keep_their_contents():
    # one thread writes element 0 twice (program order decides), element 1 .. n-1 are never
    # written (their initial terms stay); two threads writing one element is a clash
    n = z3.BitVec("n", 64)
    at = _evaluator([1, 2, 3])
    init = [z3.BitVec(f"out[{i}]", 32) for i in range(3)]
    lengths = np.array([4, 8, 12], np.uint64)
    out = Info("out", 4, np.array([e.get_id() for e in init]), lengths, lengths)

    def write(value: int, lane: int = 0) -> IndexedAccess:
        return IndexedAccess("w", "out", 0, 4, 4, True, z3.BitVecVal(value, 32), lane, "w",
                             None)

    def differs(ref: tuple, cand: tuple):
        cells, d = compare(at, {"out": out}, {"out": 32}, {"out": out.ids},
                           {"reference": ref, "candidate": cand})
        return d

    assert differs((write(7),), (write(9), write(7))) is None
    d = differs((write(7),), (write(7), write(9)))
    assert d is not None and d.shape == 0 and "element 0 " in d.why
    # the reference leaving element 1 alone, the candidate writing it: differs where it exists
    one = IndexedAccess("w", "out", 4, 4, 4, n != 1, z3.BitVecVal(7, 32), 0, "w", None)
    d = differs((write(7),), (write(7), one))
    assert d is not None and d.shape == 1 and "element 1 " in d.why
    d = differs((write(7),), (write(7, lane=0), write(7, lane=1)))
    assert d is not None and "two threads of the candidate" in d.why


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=4, unique=True),
       st.integers(-12, 12), st.sampled_from([1, 2, 4, 3]), st.sampled_from([1, 2, 4, 8, 12]),
       st.sampled_from([0, 1, 4, 1 << 62, (1 << 64) - 8]))
def test_bounds_by_evaluation_agree_with_the_byte_arithmetic(ns, base, scale, nbytes, far):
    # `_outside_at` reads `off > last` (no sum that could wrap) and tests alignment only
    # when some offset is misaligned: the same shape as `off >= 2^62 or off + nbytes > length
    # or off % align != 0` at every shape, for short buffers, negative and huge offsets
    from verifier.indexed.bounds import _outside_at
    ns = sorted(ns)
    n = z3.BitVec("n", 64)
    at = _evaluator(ns)
    lengths = np.array([(3 * v) % 37 for v in ns], np.uint64)        # 0 .. 36 bytes
    buf = Info("out", 4, np.arange(10), lengths, lengths)
    offset = n * scale + base + far
    a = IndexedAccess("r", "out", offset, nbytes, nbytes, True, 0, 0, "a", None)
    want = None
    for s, (v, length) in enumerate(zip(ns, lengths.tolist())):
        off = (v * scale + base + far) % (1 << 64)
        if off >= 1 << 62 or off + nbytes > length or off % nbytes:
            want = s
            break
    assert _outside_at(at, {"out": buf}, a) == want
