"""The term layer (`verifier.terms`): identity, memo pinning, DAG walks."""

from __future__ import annotations

import gc

import z3

from verifier.terms import TermMemo, any_subterm, free_constants, function_names, subterms


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
