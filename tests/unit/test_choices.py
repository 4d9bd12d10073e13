"""`semantics.choices`: one mechanism for what the PTX ISA leaves open, and what it gives
each domain: the emulator's fill policies and orders, the symbolic domain's constants."""

from __future__ import annotations

import numpy as np
import pytest
import z3

from semantics.choices import (Choices, KeySpace, LaneKeys, Target, chosen_values,
                               constant_name, describe_values, split_constant)
from semantics.domains.concrete import ConcreteDomain
from semantics.domains.symbolic import SymbolicDomain


def _keys(n=4, space=KeySpace.THREAD, symbolic_cta=False):
    ids = np.arange(n, dtype=np.int64)
    return LaneKeys(space, ids + 100, ids, symbolic_cta)


def test_fill_policies_give_zeros_the_pattern_or_seeded_values():
    keys = _keys()
    assert Choices().lanes("k/r", 32, keys).tolist() == [0] * 4
    assert Choices("pattern").lanes("k/r", 32, keys).tolist() == [0xA5A5A5A5] * 4
    assert Choices("pattern").lanes("k/p", 1, keys).tolist() == [1] * 4
    a = Choices("random:1").lanes("k/r", 32, keys)
    assert a.tolist() == Choices("random:1").lanes("k/r", 32, keys).tolist()   # replayable
    assert a.tolist() != Choices("random:2").lanes("k/r", 32, keys).tolist()
    assert len(set(a.tolist())) == 4 and all(v < 2 ** 32 for v in a.tolist())
    natural = np.array([7, 8, 9, 10])
    assert Choices().lanes("k/s", 32, keys, natural).tolist() == [7, 8, 9, 10]


def test_explicit_values_win_by_exact_key_then_by_key_in_any_cta():
    keys = _keys()
    c = Choices(values={"k/r!t101": 5, "k/r!t*2": 9, "other!t100": 1})
    assert c.lanes("k/r", 32, keys).tolist() == [0, 5, 9, 0]
    # one symbolic CTA stands for every CTA: its keys are those within the CTA
    sym = _keys(symbolic_cta=True)
    assert sym.symbolic_names() == ["t*0", "t*1", "t*2", "t*3"]
    assert Choices(values={"k/r!t*1": 3}).lanes("k/r", 32, sym).tolist() == [0, 3, 0, 0]


def test_a_fresh_read_carries_its_count_in_its_names_and_its_random_value():
    keys = _keys().counted(np.array([0, 0, 1, 2]))
    assert keys.symbolic_names() == ["t100#0", "t101#0", "t102#1", "t103#2"]
    first = _keys().counted(np.zeros(4, dtype=np.int64))
    second = _keys().counted(np.ones(4, dtype=np.int64))
    c = Choices("random:3")
    assert c.lanes("k/%clock@x", 32, first).tolist() != c.lanes("k/%clock@x", 32,
                                                                second).tolist()


def test_the_symbolic_domain_gives_one_constant_per_name_and_key():
    d = SymbolicDomain(4)
    v = d.unspecified("candidate/k/%r5", 32, _keys(), Choices())
    assert [str(t) for t in v] == [constant_name("candidate/k/%r5", f"t{i}")
                                   for i in range(100, 104)]
    again = d.unspecified("candidate/k/%r5", 32, _keys(), Choices(), only=np.array(
        [True, False, True, False]))
    assert again[0].eq(v[0]) and again[1] == 0 and again[2].eq(v[2])
    # and a model's values come back as Choices values
    model = {str(v[1]): 7, "x[0]": 3, "keq!aux!ieee!0": 1}
    assert chosen_values(model) == {"candidate/k/%r5!t101": 7}
    assert split_constant(str(v[1])) == ("candidate/k/%r5", "t101")
    assert split_constant("x[0]") is None


def test_a_function_of_the_inputs_is_the_same_term_for_the_same_inputs():
    d = SymbolicDomain(2)
    x, y = z3.BitVec("x", 32), z3.BitVec("y", 32)
    a = d.unspecified_fn("nan/add.f32", 32, [[x, y], [y, x]], None, Choices())
    b = d.unspecified_fn("nan/add.f32", 32, [[x, y], [y, x]], None, Choices())
    assert a[0].eq(b[0]) and not a[0].eq(a[1])
    c = ConcreteDomain(2)
    default = np.array([0x7FFFFFFF, 0x7FFFFFFF], dtype=np.uint64)
    args = [np.array([1, 2], np.uint64), np.array([3, 4], np.uint64)]
    assert c.unspecified_fn("nan/add.f32", 32, args, default, Choices()) is default
    r = c.unspecified_fn("nan/add.f32", 32, args, default, Choices("random:1"))
    assert r.tolist() != default.tolist()


def test_orders_by_schedule_and_by_a_models_keys():
    keys = _keys().counted(np.zeros(4, dtype=np.int64))
    lanes = np.arange(4)
    assert Choices().order("k/atom@x", keys, lanes).tolist() == [0, 0, 0, 0]
    rev = Choices(schedule="reverse").order("k/atom@x", keys, lanes)
    assert np.argsort(rev, kind="stable").tolist() == [3, 2, 1, 0]
    c = Choices(values={"k/atom@x!t102#0": 0, "k/atom@x!t100#0": 5, "k/atom@x!t101#0": 5,
                        "k/atom@x!t103#0": 9})
    order = c.order("k/atom@x", keys, lanes)
    assert np.lexsort((lanes, order)).tolist() == [2, 0, 1, 3]


def test_memory_fill_rows_and_explicit_bytes():
    exact, local = np.array([0, 1]), np.array([0, 0])
    assert Choices().memory("k/shared/", KeySpace.CTA, exact, local, 8) == 0
    assert Choices("pattern").memory("k/shared/", KeySpace.CTA, exact, local, 8) == 0xA5
    m = Choices(values={"k/shared/3!c1": 0x42, "k/shared/5!c*0": 7}).memory(
        "k/shared/", KeySpace.CTA, exact, local, 8)
    assert m.shape == (2, 8) and m[1, 3] == 0x42 and m[0, 3] == 0
    assert m[0, 5] == 7 and m[1, 5] == 7          # a symbolic CTA's byte: every CTA's


def test_policies_are_checked_and_described():
    with pytest.raises(ValueError, match="fill policy"):
        Choices("garbage")
    with pytest.raises(ValueError, match="seed"):
        Choices(schedule="random:x")
    assert Choices().describe() == "zero fill, lane-order schedule"
    assert Target.from_names(["f32-nan-canonical"]).canonical_nan == frozenset({"f32"})
    with pytest.raises(ValueError):
        Target.from_names(["nan-whatever"])


def test_chosen_values_read_as_words():
    words = describe_values({"candidate/atom@k.ptx:9:2!t1#0": 0,
                             "candidate/atom@k.ptx:9:2!t0#0": 3,
                             "candidate/k/%r5!t0": 1, "candidate/shared/12!c0": 0x80,
                             "candidate/%warpid@k.ptx:4:2!w32#1": 3})
    assert any("take effect in the order thread 1, thread 0" in w for w in words)
    assert any("register %r5 of the candidate (k), read before any write (thread 0): 0x1"
               in w for w in words)
    assert any("shared byte 12 of the candidate (CTA 0), never written: 0x80" in w
               for w in words)
    assert any("%warpid of the candidate at k.ptx:4:2 (the warp of thread 32 (read 2)): 3"
               in w for w in words)
