"""Equal sums over launch shapes, without a solver: counts that two kernels add up differently.

A histogram's bin is `init + [d0 == k] + [d1 == k] + ...`; a privatized histogram adds the same
increments per block first and merges each block's count into the bin only if the block exists.
Over a symbolic launch shape both are sums whose terms are switched on by conditions about the
shape (`i < n`, "block 1 exists"), so the two sums are built differently and z3's simplifier
cannot tell them equal without deciding those conditions shape by shape (hundreds of simplify
calls on terms of thousands of nodes).

Here each side becomes a multiset of *guarded atoms*: a bit-vector sum is taken apart, a
selection `If(g, x, y)` on a shape-only condition `g` puts `g` on `x`'s terms and `not g` on
`y`'s, and an `If(g and r, v, e)` whose condition has shape-only conjuncts `g` is the atom
`If(r, v, e)` under `g` (and `e` under `not g`); so is `If(r, If(g, v, 0), 0)` with `e = 0`
(how the symbolic port builds a split atomic's increment: `If(c, delta, 0)` once per lane).
Conjunctions in an atom are compared as sets of conjuncts. Everything else is an atom, compared by
identity (z3 terms are hash-consed). Evaluating each guard at every allowed shape (numpy) gives,
per atom, how many times it is added at each shape.

Why this is exact: at a shape s, each side's value is the sum over atoms of (times added at s) x
(atom's value). If every atom is added equally often on both sides at every shape where the
element exists, the sums are equal there for every input. Anything else (an atom counted
differently, a term that is not a sum of such pieces, too large a term) answers "not shown",
and the caller goes on with its other checks: this never decides "different".
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import z3

from semantics.domains.z3raw import read as _R
from semantics.machine.pending_sums import SumParts
from semantics.machine.pending_sums import key as parts_key
from verifier.terms import RawTermMemo, raw_key

VISIT_LIMIT = 200_000      # term nodes walked per side (a tree walk: shared subterms recount)
_UNSEEN = object()


class SumsMemo:
    """What `same_sums` remembers across calls with one `at_shapes` (every bin of a
    histogram joins the same lane guards and tests the same zeros). Terms are told apart by
    `raw_key` (`verifier.terms`); the memos of terms are `RawTermMemo`s, which keep each term
    they answer for alive, and so every key they hand out (each of a subterm of it): the
    guards and joins below are made of those keys alone."""

    def __init__(self) -> None:
        self.vectors: RawTermMemo[np.ndarray | None] = RawTermMemo()  # condition -> shapes
        self.splits: RawTermMemo[tuple] = RawTermMemo()         # see `_Walker.split`
        self.guarded: RawTermMemo[tuple | None] = RawTermMemo()  # see `_Walker.guarded_if`
        self.nested: RawTermMemo[tuple | None] = RawTermMemo()   # see `_Walker.nested_if`
        self.inner: RawTermMemo[tuple | None] = RawTermMemo()    # see `_Walker.inner_if`
        self.zeros: RawTermMemo[bool] = RawTermMemo()
        self.sums: RawTermMemo[list] = RawTermMemo()            # see `_Walker.addends`
        self.guards: dict[frozenset, np.ndarray] = {}            # see `_vector`
        self.joins: dict = {}                                     # see `_Walker.joined`
        # by Python identity of the recorded parts' terms (`SumParts`, kept by the caller)
        self.tests: dict[int, tuple] = {}
        self.steps: dict[int, Any] = {}
        self.others: dict[int, tuple] = {}


class _Walker:
    """Raw z3 ASTs (the C API, no Python wrapper per node: these walks cover every output
    element's whole term), with each condition's shape vector looked up once."""

    def __init__(self, t, at_shapes: Callable[[Any], np.ndarray | None], memo: SumsMemo,
                 shape_only: Callable[[Any], bool] | None,
                 sums: Mapping[int, SumParts]) -> None:
        self.ctx = t.ctx
        self.sums = sums
        self.ref = t.ctx_ref()
        self.at_shapes = at_shapes
        self.memo = memo
        self.shape_only = shape_only
        self.vector = memo.vectors.by_key      # the shapes where a condition (by key) holds

    # The getters (`_R`) call libz3 directly, without z3core's per-call error check: they
    # only read terms that exist (children of a live term), which cannot fail.
    def about_shapes(self, x) -> bool:
        """Is condition `x` about shapes alone (and evaluable)? Its vector is then kept for
        `vector(raw_key(x))`."""
        vectors = self.memo.vectors
        hit = vectors.get(x, _UNSEEN)
        if hit is not _UNSEEN:
            return hit is not None
        if self.shape_only is not None and not self.shape_only(x):
            vectors.put(x, None)
            return False
        return vectors.put(x, self.at_shapes(z3.z3._to_expr_ref(x, self.ctx))) is not None

    def split(self, x) -> tuple[tuple, tuple]:
        """The conjunction `x` taken apart, nested conjunctions too: (keys of its conjuncts
        about shapes alone, keys of the others), each in order. Memoized by the term: a
        lane's own condition is a conjunct of every test it makes (one per value its index
        may take)."""
        hit = self.memo.splits.get(x)
        if hit is not None:
            return hit
        ref = self.ref
        shape: list[int] = []
        rest: list[int] = []
        for i in range(_R.num_args(ref, x)):
            c = _R.app_arg(ref, x, i)
            if self.op(c) == z3.Z3_OP_AND:
                s, r = self.split(c)
                shape += s
                rest += r
            elif self.about_shapes(c):
                shape.append(raw_key(c))
            else:
                rest.append(raw_key(c))
        return self.memo.splits.put(x, (tuple(shape), tuple(rest)))

    def op(self, x) -> int | None:
        """The declaration kind of an application (None for anything else)."""
        ref = self.ref
        if _R.ast_kind(ref, x) != z3.Z3_APP_AST:
            return None
        return _R.decl_kind(ref, _R.app_decl(ref, x))

    def guarded_if(self, e, cond, then, other) -> tuple | None:
        """`If(g and r, then, other)` (the term `e`) with shape-only conjuncts `g`: (atom
        key, g's keys, whether `other` is zero); None when no conjunct is about shapes.
        Memoized by the term: the two sides of an element share most such terms."""
        hit = self.memo.guarded.get(e, _UNSEEN)
        if hit is not _UNSEEN:
            return hit
        shape, rest = self.split(cond)
        hit = None
        if shape:
            hit = (("if", tuple(sorted(rest)), raw_key(then), raw_key(other)),
                   shape, self.is_zero(other))
        return self.memo.guarded.put(e, hit)

    def nested_if(self, e, test, then, other) -> tuple | None:
        """`If(r, If(g, v, 0), 0)` (the term `e`) with `g` about shapes or a conjunction with
        conjuncts about shapes: the guarded `If(r and rest of g, v, 0)`, as `guarded_if`
        gives it for `If(g and r, v, 0)` (the same key: a split access's increment, built
        either way, is the same atom). None otherwise. Memoized by the term."""
        hit = self.memo.nested.get(e, _UNSEEN)
        if hit is not _UNSEEN:
            return hit
        hit = None
        inner = self.inner_if(then) if self.is_zero(other) else None
        if inner is not None:
            shape, rest, value = inner
            hit = (("if", tuple(sorted(rest + (raw_key(test),))), value, raw_key(other)),
                   shape, True)
        return self.memo.nested.put(e, hit)

    def inner_if(self, then) -> tuple | None:
        """`If(g, v, 0)` with conjuncts of `g` about shapes: (their keys, the other
        conjuncts' keys, v's key); else None. Memoized by the term: a lane's split increment
        shares it across every value its index may take."""
        hit = self.memo.inner.get(then, _UNSEEN)
        if hit is not _UNSEEN:
            return hit
        ref = self.ref
        hit = None
        if self.op(then) == z3.Z3_OP_ITE and self.is_zero(_R.app_arg(ref, then, 2)):
            g = _R.app_arg(ref, then, 0)
            if self.op(g) == z3.Z3_OP_AND:
                shape, rest = self.split(g)
            else:
                shape, rest = ((raw_key(g),), ()) if self.about_shapes(g) else ((), ())
            if shape:
                hit = (shape, rest, raw_key(_R.app_arg(ref, then, 1)))
        return self.memo.inner.put(then, hit)

    def is_zero(self, x) -> bool:
        zeros = self.memo.zeros
        hit = zeros.get(x)
        if hit is None:
            hit = zeros.put(x, _R.ast_kind(self.ref, x) == z3.Z3_NUMERAL_AST and
                            _R.numeral(self.ref, x) == b"0")
        return hit

    def joined(self, guard: frozenset, shape: tuple) -> frozenset:
        """`guard` and every condition in `shape` (memoized: atoms repeat few guards)."""
        key = (guard, shape)
        joins = self.memo.joins
        hit = joins.get(key)
        if hit is None:
            hit = joins[key] = guard | {(c, True) for c in shape}
        return hit

    def addends(self, parts: SumParts) -> list:
        """Each addend of a sum as its port built it (`semantics.machine.pending_sums`): (atom
        key, its shape conditions) when it is the guarded atom `If(test, If(g, v, 0), 0)`
        that `nested_if` finds in the term, else (None, its raw AST) to walk. The same
        answers as the walk, from the recorded parts: the tests, steps and zeros are few
        terms shared by many addends (a lane's step by all 256 bins, a test by both
        kernels), each classified once, by Python identity (`parts` keep them alive).
        Memoized by the sum."""
        node = parts.node.as_ast()
        hit = self.memo.sums.get(node)
        if hit is not None:
            return hit
        tests, steps, others = self.memo.tests, self.memo.steps, self.memo.others
        out = []
        for addend, test, step, other in zip(parts.addends, parts.tests, parts.steps,
                                             parts.others):
            if test is None:
                out.append((None, addend.as_ast()))
                continue
            t = tests.get(id(test))
            if t is None:
                t = tests[id(test)] = self._test(test)
            s = steps.get(id(step), _UNSEEN)
            if s is _UNSEEN:
                s = steps[id(step)] = self.inner_if(step.as_ast())
            o = others.get(id(other))
            if o is None:
                raw = other.as_ast()
                o = others[id(other)] = (raw_key(raw), self.is_zero(raw))
            (tid, plain), (oid, zero) = t, o
            if not plain or s is None or not zero:
                out.append((None, addend.as_ast()))     # (the walk answers it)
                continue
            shape, rest, value = s
            out.append((("if", tuple(sorted(rest + (tid,))), value, oid), shape))
        return self.memo.sums.put(node, out)

    def _test(self, test) -> tuple[int, bool]:
        """(key, whether `If(test, ..)` can be a guarded atom: the walk sends a conjunction
        to `guarded_if` and splits on a test about shapes alone)."""
        raw = test.as_ast()
        return raw_key(raw), self.op(raw) != z3.Z3_OP_AND and not self.about_shapes(raw)


def _counts(t, w: _Walker) -> dict | None:
    """atom key -> {guard: how many times the atom is added under it}; a guard is a frozenset
    of factors, each `(condition key, polarity)` or `("nand", condition keys)`, all of them
    about shapes alone (their vectors are computed once, in `_vector`); terms are told apart by
    `raw_key`. None when `t` cannot be taken apart this way."""
    out: dict[Any, dict] = {}
    stack: list[tuple[Any, frozenset]] = [(t.as_ast(), frozenset())]
    visits = 0
    # (the getters bound once: this loop runs once per addend of every output's sum)
    ref, ast_kind, app_arg = w.ref, _R.ast_kind, _R.app_arg
    decl_kind, app_decl, num_args = _R.decl_kind, _R.app_decl, _R.num_args
    APP, NUMERAL = z3.Z3_APP_AST, z3.Z3_NUMERAL_AST
    BADD, ITE, AND = z3.Z3_OP_BADD, z3.Z3_OP_ITE, z3.Z3_OP_AND

    def add(key, guard: frozenset) -> None:
        per = out.setdefault(key, {})
        per[guard] = per.get(guard, 0) + 1

    sums = w.sums
    while stack:
        e, guard = stack.pop()
        visits += 1
        if visits > VISIT_LIMIT:
            return None
        parts = sums.get(parts_key(e)) if sums else None
        if parts is not None:
            stack.append((parts.base.as_ast(), guard))
            addends = w.addends(parts)
            visits += len(addends)
            for key, rest in addends:
                if key is None:
                    stack.append((rest, guard))
                else:
                    add(key, w.joined(guard, rest))
            continue
        form = ast_kind(ref, e)
        if form == NUMERAL:
            value = int(_R.numeral(ref, e))
            if value:
                add(("value", value), guard)
            continue
        kind = decl_kind(ref, app_decl(ref, e)) if form == APP else None
        if kind == BADD:
            stack.extend((app_arg(ref, e, i), guard) for i in range(num_args(ref, e)))
            continue
        if kind == ITE:
            cond, then, other = app_arg(ref, e, 0), app_arg(ref, e, 1), app_arg(ref, e, 2)
            # (a conjunction is taken apart below: its shape-only conjuncts are the guard)
            conjunction = w.op(cond) == AND
            if not conjunction and w.about_shapes(cond):
                c = raw_key(cond)
                stack.append((then, guard | {(c, True)}))
                stack.append((other, guard | {(c, False)}))
                continue
            hit = w.guarded_if(e, cond, then, other) if conjunction else \
                w.nested_if(e, cond, then, other)
            if hit is not None:
                key, shape, zero = hit
                add(key, w.joined(guard, shape))
                if not zero:                      # (adds nothing: the common `If(c, x, 0)`)
                    stack.append((other, guard | {("nand", frozenset(shape))}))
                continue
            add(raw_key(e), guard)
            continue
        add(raw_key(e), guard)
    return out


def _vector(guard: frozenset, w: _Walker, count: int) -> np.ndarray | None:
    """The shapes where every factor of `guard` holds (memoized by the guard)."""
    guards = w.memo.guards
    hit = guards.get(guard)
    if hit is not None:
        return hit
    out = np.ones(count, dtype=bool)
    for f in guard:
        if f[0] == "nand":
            both = np.ones(count, dtype=bool)
            for c in f[1]:
                v = w.vector(c)
                if v is None:
                    return None
                both &= v
            out &= ~both
        else:
            v = w.vector(f[0])
            if v is None:
                return None
            out &= v if f[1] else ~v
    guards[guard] = out
    return out


def _times(per: dict, w: _Walker, count: int) -> np.ndarray | None:
    total = np.zeros(count, dtype=np.int64)
    for guard, k in per.items():
        v = _vector(guard, w, count)
        if v is None:
            return None
        total += k * v
    return total


def same_sums(a, b, live: np.ndarray, at_shapes: Callable[[Any], np.ndarray | None],
              count: int, memo: SumsMemo | None = None,
              shape_only: Callable[[Any], bool] | None = None,
              sums: Mapping[int, SumParts] | None = None) -> bool:
    """Do `a` and `b` add every guarded atom equally often at every shape where `live`?
    (Then they are equal there for every input.) False means only "not shown this way".
    `memo` may be kept across calls with the same `at_shapes` (it keeps every term it
    remembers alive); `shape_only(raw AST)` says whether a condition is about shapes
    alone (else `at_shapes` is tried); `sums`: sums as the symbolic ports built them, by
    node (`semantics.machine.pending_sums`), read instead of walked."""
    if isinstance(a, (int, np.integer)) or isinstance(b, (int, np.integer)):
        return False
    w = _Walker(a, at_shapes, SumsMemo() if memo is None else memo, shape_only, sums or {})
    ca = _counts(a, w)
    if ca is None:
        return False
    cb = _counts(b, w)
    if cb is None:
        return False
    for key in ca.keys() | cb.keys():
        pa, pb = ca.get(key, {}), cb.get(key, {})
        if pa == pb:
            continue              # added under the same guards alike: equal at every shape
        ta, tb = _times(pa, w, count), _times(pb, w, count)
        if ta is None or tb is None or not np.array_equal(ta[live], tb[live]):
            return False
    return True


__all__ = ["SumsMemo", "same_sums"]
