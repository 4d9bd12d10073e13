"""The term layer (`verifier.terms`): identity, memo pinning (of Python terms and of raw
ASTs), DAG walks."""

from __future__ import annotations

import gc

import z3

from verifier.terms import (ConjunctMemo, Pins, RawTermMemo, TermMemo, any_subterm,
                            free_constants, function_names, raw_id, raw_key, subterms, term_id)


def _doubling_chain(depth: int):
    """x + x, (x + x) + (x + x), ...: a DAG of depth+1 nodes and 2^depth paths."""
    t = z3.BitVec("x", 32)
    for _ in range(depth):
        t = t + t
    return t


def test_a_memo_keeps_its_terms_so_an_id_never_answers_for_another_term():
    memo: TermMemo[str] = TermMemo()
    for i in range(200):
        memo.put(z3.BitVec(f"gone{i}", 32) + 1, f"gone{i}")      # the only reference
    gc.collect()
    fresh = [z3.BitVec(f"new{i}", 32) * 3 for i in range(2000)]  # ids free to be reused
    assert not any(t in memo for t in fresh)
    assert memo.get(z3.BitVec("gone7", 32) + 1) == "gone7"       # (hash-consed: the same AST)
    assert len(memo) == 200


def test_walks_visit_each_distinct_subterm_once():
    t = _doubling_chain(60)
    assert len(list(subterms(t))) == 61
    assert [str(c) for c in free_constants(t)] == ["x"]


def test_any_subterm_is_a_dag_walk_and_remembers_what_is_free():
    deep = _doubling_chain(80)
    free: TermMemo[bool] = TermMemo()
    seen = []

    def pred(e):
        seen.append(e)
        return z3.is_fp(e)

    assert not any_subterm(pred, deep, free)
    assert len(seen) == 81 and len(free) == 81
    seen.clear()
    f = z3.FP("f", z3.Float32())
    mixed = z3.If(z3.fpIsNaN(f), deep, deep + 1)
    assert any_subterm(pred, mixed, free)
    assert all(not s.eq(deep) for s in seen)        # (the shared part is known free)


def test_function_names_are_the_applied_uninterpreted_functions():
    g = z3.Function("keq!f!nan", z3.BitVecSort(32), z3.BitVecSort(32))
    x = z3.BitVec("x", 32)
    assert function_names(g(x) + x, x) == {"keq!f!nan"}


# -- raw ASTs ---------------------------------------------------------------------------------

def test_a_raw_memo_keeps_its_asts_so_a_key_never_answers_for_another_term():
    # Each term's only reference is dropped right after `put`: without the memo's pins z3
    # frees it, and the next term built takes its address (and id), so the memo ends up
    # with a handful of keys that answer for the new terms.
    memo: RawTermMemo[int] = RawTermMemo()
    for i in range(300):
        memo.put((z3.BitVec(f"raw_gone{i}", 32) + 1).as_ast(), i)
    gc.collect()
    fresh = [(z3.BitVec(f"raw_new{i}", 32) * 3) for i in range(3000)]
    assert len(memo) == 300
    assert not any(t.as_ast() in memo for t in fresh)
    same = (z3.BitVec("raw_gone7", 32) + 1).as_ast()        # (hash-consed: the same AST)
    assert memo.get(same) == 7 and memo.by_key(raw_key(same)) == 7


def test_a_raw_memo_lets_its_asts_go_when_cleared():
    memo: RawTermMemo[str] = RawTermMemo()
    x = z3.BitVec("raw_x", 32)
    memo.put((x * 7).as_ast(), "seven")
    memo.put((x * 7).as_ast(), "again")
    assert len(memo) == 1 and memo.get((x * 7).as_ast()) == "again"
    memo.clear()
    assert len(memo) == 0 and (x * 7).as_ast() not in memo


def test_pins_hold_raw_asts_and_python_terms():
    pins = Pins()
    x = z3.BitVec("pinned_x", 32)
    pins.append(x + 2)
    pins.add((x + 3).as_ast())
    assert len(pins) == 2
    pins.clear()
    assert len(pins) == 0


def test_raw_id_is_the_term_id():
    t = z3.BitVec("raw_id_x", 32) * 5
    assert raw_id(z3.main_ctx().ref(), t.as_ast()) == term_id(t)


def test_conjunct_memo_reads_nested_conjunctions():
    a, b, c = z3.Bools("conj_a conj_b conj_c")
    memo = ConjunctMemo()
    cond = z3.And(z3.And(a, b), z3.Not(z3.Or(c, a)))
    parts = memo.conjuncts(cond.as_ast())
    ctx = z3.main_ctx()
    seen = [(str(z3.z3._to_expr_ref(r, ctx)), neg) for r, neg in parts]
    assert seen == [("conj_a", False), ("conj_b", False), ("conj_c", True), ("conj_a", True)]
    assert len(memo.literals(cond.as_ast())) == 4
