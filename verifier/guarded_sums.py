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

VISIT_LIMIT = 200_000      # term nodes walked per side (a tree walk: shared subterms recount)
_UNSEEN = object()


class _Walker:
    """Raw z3 ASTs (the C API, no Python wrapper per node: these walks cover every output
    element's whole term), with each condition's shape vector looked up once."""

    def __init__(self, t, at_shapes: Callable[[Any], np.ndarray | None],
                 memo: dict[int, np.ndarray | None],
                 shape_only: Callable[[Any], bool] | None,
                 sums: Mapping[int, SumParts]) -> None:
        self.ctx = t.ctx
        self.sums = sums
        self.ref = t.ctx_ref()
        self.at_shapes = at_shapes
        self.memo = memo          # by term id: `at_shapes` keeps the terms (and so ids) alive
        self.shape_only = shape_only
        # Kept in `memo` too, across calls: every bin of a histogram joins the same lane
        # guards and tests the same zeros.
        self.joins: dict = memo.setdefault(("joins",), {})
        self.zeros: dict[int, bool] = memo.setdefault(("zeros",), {})    # by term id

    # The getters (`_R`) call libz3 directly, without z3core's per-call error check: they
    # only read terms that exist (children of a live term), which cannot fail.
    def about_shapes(self, x, key: int) -> bool:
        """Is condition `x` (of id `key`) about shapes alone (and evaluable)? Its vector is
        then kept for `vector(key)`."""
        if key in self.memo:
            return self.memo[key] is not None
        if self.shape_only is not None and not self.shape_only(x):
            self.memo[key] = None    # (a subterm of a term the caller keeps alive)
            return False
        self.memo[key] = self.at_shapes(z3.z3._to_expr_ref(x, self.ctx))
        return self.memo[key] is not None

    def split(self, x, key: int) -> tuple[tuple, tuple]:
        """The conjunction `x` (of id `key`) taken apart, nested conjunctions too: (ids of
        its conjuncts about shapes alone, ids of the others), each in order. Memoized by the
        term: a lane's own condition is a conjunct of every test it makes (one per value its
        index may take)."""
        memo_key = ("and", key)
        hit = self.memo.get(memo_key)
        if hit is not None:
            return hit
        ref = self.ref
        shape: list[int] = []
        rest: list[int] = []
        for i in range(_R.num_args(ref, x)):
            c = _R.app_arg(ref, x, i)
            cid = _R.ast_id(ref, c)
            if self.op(c) == z3.Z3_OP_AND:
                s, r = self.split(c, cid)
                shape += s
                rest += r
            elif self.about_shapes(c, cid):
                shape.append(cid)
            else:
                rest.append(cid)
        hit = self.memo[memo_key] = (tuple(shape), tuple(rest))
        return hit

    def op(self, x) -> int | None:
        """The declaration kind of an application (None for anything else)."""
        ref = self.ref
        if _R.ast_kind(ref, x) != z3.Z3_APP_AST:
            return None
        return _R.decl_kind(ref, _R.app_decl(ref, x))

    def guarded_if(self, e, eid: int, cond, then, other) -> tuple | None:
        """`If(g and r, then, other)` (of id `eid`) with shape-only conjuncts `g`: (atom key,
        g's ids, whether `other` is zero); None when no conjunct is about shapes. Memoized by
        the term: the two sides of an element share most such terms."""
        key = ("if?", eid)
        if key in self.memo:
            return self.memo[key]
        ref = self.ref
        shape, rest = self.split(cond, _R.ast_id(ref, cond))
        hit = None
        if shape:
            hit = (("if", tuple(sorted(rest)), _R.ast_id(ref, then), _R.ast_id(ref, other)),
                   shape, self.is_zero(other))
        self.memo[key] = hit
        return hit

    def nested_if(self, e, eid: int, test, then, other) -> tuple | None:
        """`If(r, If(g, v, 0), 0)` (of id `eid`) with `g` about shapes or a conjunction with
        conjuncts about shapes: the guarded `If(r and rest of g, v, 0)`, as `guarded_if`
        gives it for `If(g and r, v, 0)` (the same key: a split access's increment, built
        either way, is the same atom). None otherwise. Memoized by the term."""
        key = ("nested?", eid)
        if key in self.memo:
            return self.memo[key]
        hit = None
        inner = self.inner_if(then) if self.is_zero(other) else None
        if inner is not None:
            shape, rest, value = inner
            ref = self.ref
            hit = (("if", tuple(sorted(rest + (_R.ast_id(ref, test),))), value,
                    _R.ast_id(ref, other)), shape, True)
        self.memo[key] = hit
        return hit

    def inner_if(self, then) -> tuple | None:
        """`If(g, v, 0)` with conjuncts of `g` about shapes: (their ids, the other conjuncts'
        ids, v's id); else None. Memoized by the term: a lane's split increment shares it
        across every value its index may take."""
        ref = self.ref
        key = ("inner?", _R.ast_id(ref, then))
        if key in self.memo:
            return self.memo[key]
        hit = None
        if self.op(then) == z3.Z3_OP_ITE and self.is_zero(_R.app_arg(ref, then, 2)):
            g = _R.app_arg(ref, then, 0)
            gid = _R.ast_id(ref, g)
            if self.op(g) == z3.Z3_OP_AND:
                shape, rest = self.split(g, gid)
            else:
                shape, rest = ((gid,), ()) if self.about_shapes(g, gid) else ((), ())
            if shape:
                hit = (shape, rest, _R.ast_id(ref, _R.app_arg(ref, then, 1)))
        self.memo[key] = hit
        return hit

    def is_zero(self, x) -> bool:
        key = _R.ast_id(self.ref, x)
        hit = self.zeros.get(key)
        if hit is None:
            hit = self.zeros[key] = _R.ast_kind(self.ref, x) == z3.Z3_NUMERAL_AST and \
                _R.numeral(self.ref, x) == b"0"
        return hit

    def joined(self, guard: frozenset, shape: tuple) -> frozenset:
        """`guard` and every condition in `shape` (memoized: atoms repeat few guards)."""
        key = (guard, shape)
        hit = self.joins.get(key)
        if hit is None:
            hit = self.joins[key] = guard | {(c, True) for c in shape}
        return hit

    def vector(self, key: int) -> np.ndarray | None:
        return self.memo.get(key)

    def addends(self, parts: SumParts) -> list:
        """Each addend of a sum as its port built it (`semantics.machine.pending_sums`): (atom
        key, its shape conditions) when it is the guarded atom `If(test, If(g, v, 0), 0)`
        that `nested_if` finds in the term, else (None, its raw AST) to walk. The same
        answers as the walk, from the recorded parts: the tests, steps and zeros are few
        terms shared by many addends (a lane's step by all 256 bins, a test by both
        kernels), each classified once, by Python identity (`parts` keep them alive).
        Memoized by the sum."""
        key = ("sum", parts_key(parts.node.as_ast()))
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        tests, steps, others = (self.memo.setdefault((name,), {})
                                for name in ("tests", "steps", "others"))
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
                o = others[id(other)] = (_R.ast_id(self.ref, raw), self.is_zero(raw))
            (tid, plain), (oid, zero) = t, o
            if not plain or s is None or not zero:
                out.append((None, addend.as_ast()))     # (the walk answers it)
                continue
            shape, rest, value = s
            out.append((("if", tuple(sorted(rest + (tid,))), value, oid), shape))
        self.memo[key] = out
        return out

    def _test(self, test) -> tuple[int, bool]:
        """(id, whether `If(test, ..)` can be a guarded atom: the walk sends a conjunction to
        `guarded_if` and splits on a test about shapes alone)."""
        raw = test.as_ast()
        tid = _R.ast_id(self.ref, raw)
        return tid, self.op(raw) != z3.Z3_OP_AND and not self.about_shapes(raw, tid)


def _counts(t, w: _Walker) -> dict | None:
    """atom key -> {guard: how many times the atom is added under it}; a guard is a frozenset
    of factors, each `(condition id, polarity)` or `("nand", condition ids)`, all of them about
    shapes alone (their vectors are computed once, in `_vector`). None when `t` cannot be taken
    apart this way."""
    out: dict[Any, dict] = {}
    stack: list[tuple[Any, frozenset]] = [(t.as_ast(), frozenset())]
    visits = 0
    # (the getters bound once: this loop runs once per addend of every output's sum)
    ref, ast_kind, ast_id, app_arg = w.ref, _R.ast_kind, _R.ast_id, _R.app_arg
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
            if not conjunction:
                c = ast_id(ref, cond)
                if w.about_shapes(cond, c):
                    stack.append((then, guard | {(c, True)}))
                    stack.append((other, guard | {(c, False)}))
                    continue
            eid = ast_id(ref, e)
            hit = w.guarded_if(e, eid, cond, then, other) if conjunction else \
                w.nested_if(e, eid, cond, then, other)
            if hit is not None:
                key, shape, zero = hit
                add(key, w.joined(guard, shape))
                if not zero:                      # (adds nothing: the common `If(c, x, 0)`)
                    stack.append((other, guard | {("nand", frozenset(shape))}))
                continue
            add(eid, guard)
            continue
        add(ast_id(ref, e), guard)
    return out


def _vector(guard: frozenset, w: _Walker, count: int) -> np.ndarray | None:
    """The shapes where every factor of `guard` holds (memoized by the guard)."""
    hit = w.memo.get(guard)
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
    w.memo[guard] = out
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
              count: int, memo: dict | None = None,
              shape_only: Callable[[Any], bool] | None = None,
              sums: Mapping[int, SumParts] | None = None) -> bool:
    """Do `a` and `b` add every guarded atom equally often at every shape where `live`?
    (Then they are equal there for every input.) False means only "not shown this way".
    `memo` (guards and term ids -> shape vectors) may be kept across calls with the same
    `at_shapes`, which must keep every term it is given alive, and with `a` and `b` kept
    alive by the caller; `shape_only(raw AST)` says whether a condition is about shapes
    alone (else `at_shapes` is tried); `sums`: sums as the symbolic ports built them, by
    node (`semantics.machine.pending_sums`), read instead of walked."""
    if isinstance(a, (int, np.integer)) or isinstance(b, (int, np.integer)):
        return False
    w = _Walker(a, at_shapes, {} if memo is None else memo, shape_only, sums or {})
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


__all__ = ["same_sums"]
