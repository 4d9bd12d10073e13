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
`If(r, v, e)` under `g` (and `e` under `not g`). Everything else is an atom, compared by
identity (z3 terms are hash-consed). Evaluating each guard at every allowed shape (numpy) gives,
per atom, how many times it is added at each shape.

Why this is exact: at a shape s, each side's value is the sum over atoms of (times added at s) x
(atom's value). If every atom is added equally often on both sides at every shape where the
element exists, the sums are equal there for every input. Anything else (an atom counted
differently, a term that is not a sum of such pieces, too large a term) answers "not shown",
and the caller goes on with its other checks: this never decides "different".
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import z3

VISIT_LIMIT = 200_000      # term nodes walked per side (a tree walk: shared subterms recount)


class _Walker:
    """Raw z3 ASTs (the C API, no Python wrapper per node: these walks cover every output
    element's whole term), with each condition's shape vector looked up once."""

    def __init__(self, t, at_shapes: Callable[[Any], np.ndarray | None],
                 memo: dict[int, np.ndarray | None],
                 shape_only: Callable[[Any], bool] | None) -> None:
        self.ctx = t.ctx
        self.ref = t.ctx_ref()
        self.at_shapes = at_shapes
        self.memo = memo          # by term id: `at_shapes` keeps the terms (and so ids) alive
        self.shape_only = shape_only

    def id(self, x) -> int:
        return C.Z3_get_ast_id(self.ref, x)

    def kind(self, x) -> int | None:
        """The declaration kind of an application (None for anything else)."""
        if C.Z3_get_ast_kind(self.ref, x) != z3.Z3_APP_AST:
            return None
        return C.Z3_get_decl_kind(self.ref, C.Z3_get_app_decl(self.ref, C.Z3_to_app(self.ref, x)))

    def args(self, x) -> list:
        app = C.Z3_to_app(self.ref, x)
        return [C.Z3_get_app_arg(self.ref, app, i)
                for i in range(C.Z3_get_app_num_args(self.ref, app))]

    def shape(self, x) -> np.ndarray | None:
        """The condition `x` at every shape; None when it is not about shapes alone."""
        key = self.id(x)
        if key in self.memo:
            return self.memo[key]
        if self.shape_only is not None and not self.shape_only(x):
            return None           # not memoized: only `at_shapes` pins terms
        out = self.memo[key] = self.at_shapes(z3.z3._to_expr_ref(x, self.ctx))
        return out

    def conjuncts(self, x) -> list:
        out, stack = [], [x]
        while stack:
            t = stack.pop()
            if self.kind(t) == z3.Z3_OP_AND:
                stack.extend(reversed(self.args(t)))
            else:
                out.append(t)
        return out


C = z3.z3core


def _counts(t, w: _Walker, count: int) -> dict | None:
    """atom key -> how many times it is added at each shape (int64 array); None when `t`
    cannot be taken apart this way."""
    out: dict[Any, np.ndarray] = {}
    every = np.ones(count, dtype=bool)
    stack: list[tuple[Any, np.ndarray]] = [(t.as_ast(), every)]
    visits = 0

    def add(key, guard: np.ndarray) -> None:
        hit = out.get(key)
        g = guard.astype(np.int64)
        out[key] = g if hit is None else hit + g

    while stack:
        e, guard = stack.pop()
        visits += 1
        if visits > VISIT_LIMIT:
            return None
        if not guard.any():
            continue
        if C.Z3_get_ast_kind(w.ref, e) == z3.Z3_NUMERAL_AST:
            value = int(C.Z3_get_numeral_string(w.ref, e))
            if value:
                add(("value", value), guard)
            continue
        kind = w.kind(e)
        if kind == z3.Z3_OP_BADD:
            stack.extend((c, guard) for c in w.args(e))
            continue
        if kind == z3.Z3_OP_ITE:
            cond, then, other = w.args(e)
            # (a conjunction is taken apart below: its shape-only conjuncts are the guard)
            g = w.shape(cond) if w.kind(cond) != z3.Z3_OP_AND else None
            if g is not None:
                stack.append((then, guard & g))
                stack.append((other, guard & ~g))
                continue
            parts = w.conjuncts(cond)
            vecs = [w.shape(c) for c in parts]
            if any(v is not None for v in vecs):
                g = np.logical_and.reduce([v for v in vecs if v is not None])
                rest = tuple(w.id(c) for c, v in zip(parts, vecs) if v is None)
                add(("if", rest, w.id(then), w.id(other)), guard & g)
                stack.append((other, guard & ~g))
                continue
        add(w.id(e), guard)
    return out


def same_sums(a, b, live: np.ndarray, at_shapes: Callable[[Any], np.ndarray | None],
              count: int, memo: dict | None = None,
              shape_only: Callable[[Any], bool] | None = None) -> bool:
    """Do `a` and `b` add every guarded atom equally often at every shape where `live`?
    (Then they are equal there for every input.) False means only "not shown this way".
    `memo` (term id -> `at_shapes` of it) may be kept across calls with the same
    `at_shapes`, which must keep every term it is given alive; `shape_only(raw AST)` is a
    cheap first test of whether a condition is about shapes alone."""
    if isinstance(a, (int, np.integer)) or isinstance(b, (int, np.integer)):
        return False
    w = _Walker(a, at_shapes, {} if memo is None else memo, shape_only)
    ca = _counts(a, w, count)
    if ca is None:
        return False
    cb = _counts(b, w, count)
    if cb is None:
        return False
    zero = np.zeros(count, dtype=np.int64)
    for key in ca.keys() | cb.keys():
        if not np.array_equal(ca.get(key, zero)[live], cb.get(key, zero)[live]):
            return False
    return True


__all__ = ["same_sums"]
