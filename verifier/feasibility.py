"""Lane conditions of a maximal launch decided under the claim (`verifier.coverage.symbolic_launch`).

`Feasibility` answers "may this lane condition hold?", "does it hold at every allowed shape?"
and "which values may this address offset take?": conditions of the shape scalars alone by
evaluating them at every allowed shape over the grid of shapes (`verifier.shape_space`:
exact, as the plan lists every shape), the rest with a solver and the claim's constraints.
With one symbolic CTA (`verifier.symbolic_cta`) the points evaluated are shapes times CTAs.
It also compares output terms shape by shape (`same_everywhere`, `same_sums`, `specialize`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import z3

from semantics.domains import z3raw
from semantics.machine.pending_sums import SumParts
from verifier.address_values import offset_values
from verifier.guarded_sums import SumsMemo, same_sums
from verifier.outputs import concrete_value
from verifier.shape_plan import ShapePlan
from verifier.shape_space import ShapeOnly, ShapeSpace, ShapeValues
from verifier.symbolic_cta import CtaAxes
from verifier.terms import RawTermMemo, TermMemo, raw_key

RESOLVE_LIMIT = 4096             # values one symbolic address may take


_UNSEEN = object()


class Feasibility:
    """Is a lane condition possible / certain under the claim? Conditions about shape scalars
    alone are evaluated at every allowed shape (exact: the plan lists them all); others go to
    a solver with the claim's constraints (memoized per term). Also lists the values a
    symbolic address offset takes (`resolve`)."""

    def __init__(self, sp: ShapePlan, variables: dict[str, Any], constraints: list,
                 timeout_s: float = 2.0, cta: CtaAxes | None = None,
                 ranges: dict[str, tuple[int, int]] | None = None) -> None:
        """`cta`: one symbolic CTA stands for all (`verifier.symbolic_cta`): its `%ctaid`
        registers are more axes of the grid, and a point is a shape and a CTA. `ranges`:
        input elements with a declared range (name -> widest (lo, hi) over the shapes),
        which `resolve` enumerates instead of their every bit pattern."""
        self.ranges = ranges or {}
        extra = cta.names if cta is not None else ()
        self.vars = {n: variables[n] for n in sp.names + extra}
        self.names = set(self.vars)
        self.space = ShapeSpace(sp.names, sp.axes, sp.shapes)
        if cta is not None:
            self.space = self.space.times(cta.names, cta.dims)
        self.per_shape = cta.per_shape if cta is not None else 1
        self.shapes = sp.shapes
        widths = {n: v.size() for n, v in self.vars.items()}
        # Not bound methods of this object: the values below hold it, and a cycle through a
        # bound method would leave every term of the launch to Python's rare full collection
        # (z3 slows down with each term alive, for the rest of a process that checks more).
        only = ShapeOnly(self.names)
        self.shape_only, self.shape_only_ast = only, only.ast
        # terms of the shape alone over the grid of shapes (`shape_only` pins what it admits)
        self.values = ShapeValues(self.space, widths, admit=only)
        self.points = self.space.points(widths)         # each scalar at every shape
        self.count = self.space.count
        self.solver = z3.Solver()
        self.solver.set("timeout", int(timeout_s * 1000))
        self.solver.add(*constraints)
        # Memos shared by every call (`verifier.terms`: each keeps its terms alive).
        self.memo: TermMemo[bool] = TermMemo()
        self.settle_memo: TermMemo[bool | None] = TermMemo()
        self.sums_memo = SumsMemo()
        self.select_memo: RawTermMemo[tuple[int, ...]] = RawTermMemo()   # see `_selections`
        # sums as the symbolic ports built them (`pending_sums`), for `same_sums`
        self.sums: dict[int, SumParts] = {}
        self.select_conds: RawTermMemo[Any] = RawTermMemo()   # condition -> its raw AST

    def shape_at(self, point: int) -> dict[str, int]:
        """The launch shape of a point of the evaluation (an index into `space`)."""
        return self.shapes[point // self.per_shape]

    def grid_at(self, t) -> np.ndarray | None:
        """`t` over the grid of shapes (compact: `verifier.shape_space`), or None when it
        depends on more than the shape scalars."""
        return self.values.grid(t)

    def at_shapes(self, t) -> np.ndarray | None:
        """`t` at every shape, or None when it depends on more than the shape scalars."""
        return self.values.full(t)

    def possible(self, cond) -> bool:
        if isinstance(cond, (bool, np.bool_)):
            return bool(cond)
        hit = self.memo.get(cond)
        if hit is None:
            grouped = self.values.grouped(cond)
            if grouped is not None:
                hit = grouped.possible
            else:
                self.solver.push()
                self.solver.add(cond)
                hit = self.solver.check() != z3.unsat        # unknown keeps the lane: sound
                self.solver.pop()
            self.memo.put(cond, hit)
        return hit

    def certain(self, cond) -> bool:
        if isinstance(cond, (bool, np.bool_)):
            return bool(cond)
        return not self.possible(z3.Not(cond))

    def prune(self, mask):
        return [m if isinstance(m, (bool, np.bool_)) or self.possible(m) else False
                for m in mask]

    def settle(self, mask):
        """Each lane condition that mentions only shape scalars and holds at every allowed
        shape becomes True, at none False (exact: the claim is those shapes); others stay."""
        if not self.names:
            return mask           # one fixed shape: nothing is about shapes alone
        out = []
        memo = self.settle_memo
        for m in mask:
            if isinstance(m, (bool, np.bool_)):
                out.append(m)
                continue
            hit = memo.get(m, _UNSEEN)
            if hit is _UNSEEN:
                grouped = self.values.grouped(m)
                hit = None if grouped is None else \
                    (True if self.values.everywhere(m) else
                     False if not grouped.possible else None)
                memo.put(m, hit)
            out.append(m if hit is None else hit)
        return out

    def violated(self, ob) -> tuple[bool, int | None]:
        """(decided, the first shape where a bounds obligation kept in parts is violated or
        None); not decided when it has no parts or a part depends on more than the shape
        scalars. Each part, `a lane condition and the length short of its end`, is decided
        over the grid of shapes, its conjuncts kept apart (`ShapeSpace.any_of`)."""
        if ob.length is None:
            return False, None
        length = self.grid_at(ob.length)
        if length is None:
            return False, None
        hit = None
        for conds, end in ob.reaches:
            short = length < np.uint64(end)
            if not self.space.any(short):
                continue
            for c in conds:
                factors = self.values.factors(c)
                if factors is None:
                    return False, None
                if hit is None and self.space.any_of(factors + [short]):
                    hit = self.space.first_of(factors + [short])
        return True, hit

    def decide(self, conds: list) -> tuple[int | None, list]:
        """(index of a shape where one of `conds` holds, or None; the conditions that
        depend on more than the shape scalars, left for a solver)."""
        rest, evaluable = [], []
        for c in conds:
            if isinstance(c, (bool, np.bool_)):
                if c:
                    return 0, []
                continue
            (evaluable if self.shape_only(c) else rest).append(c)
        if evaluable:
            vals = self.grid_at(z3.Or(evaluable)) if len(evaluable) > 1 else \
                self.grid_at(evaluable[0])
            if vals is None:
                rest.extend(evaluable)
            elif self.space.any(vals):
                return self.space.first(vals), []
        return None, rest

    def leaves(self, t) -> np.ndarray | None:
        """Per shape, the term `t` selects (its `raw_key`): selections (`If`) on shape-only
        conditions are resolved at every shape; anything else is a leaf. None when `t` is
        concrete."""
        if isinstance(t, (int, np.integer)):
            return None
        out = self._leaves(t.as_ast(), RawTermMemo(), self.values.ctx)
        return np.full(self.count, out, dtype=np.int64) if isinstance(out, int) else out

    def _leaves(self, e, memo: RawTermMemo, ctx) -> np.ndarray | int:
        """`leaves` of the raw AST `e`: a leaf is its `raw_key`, a selection an array over
        shapes. (A method, not a recursive closure: that would be a reference cycle holding
        the memo and this object until Python's next full collection.)"""
        R = z3raw.read
        hit = memo.get(e)
        if hit is not None:
            return hit
        out = raw_key(e)
        if R.ast_kind(ctx, e) == z3.Z3_APP_AST and \
                R.decl_kind(ctx, R.app_decl(ctx, e)) == z3.Z3_OP_ITE:
            c = R.app_arg(ctx, e, 0)
            if self.shape_only_ast(c):
                v = self.values.grid_raw(c)
                if v is not None:
                    then = self._leaves(R.app_arg(ctx, e, 1), memo, ctx)
                    other = self._leaves(R.app_arg(ctx, e, 2), memo, ctx)
                    out = np.where(self.space.full(v), then, other)
        return memo.put(e, out)

    def same_everywhere(self, a, b, live) -> bool:
        """Do `a` and `b` select the same term at every shape where the element exists?
        (Then they are equal for every input: exact, no solver.)"""
        la, lb = self.leaves(a), self.leaves(b)
        if la is None or lb is None:
            return False
        where = np.ones(self.count, bool) if live is True else self.at_shapes(live)
        if where is None:
            return False
        return bool((la[where] == lb[where]).all())

    def same_sums(self, a, b, live) -> bool:
        """Do `a` and `b` add the same guarded terms at every shape where the element exists?
        (`verifier.guarded_sums`: exact, no solver.)"""
        where = np.ones(self.count, bool) if live is True else self.at_shapes(live)
        if where is None:
            return False
        return same_sums(a, b, where, self.at_shapes, self.count, self.sums_memo,
                         self.shape_only_ast, self.sums)

    def specialize(self, a, b, live) -> list | None:
        """Split the element by the values of the shape-only selections inside its terms:
        for each combination that occurs at an allowed shape where the element exists, both
        terms with those selections decided and simplified (z3 normalizes sums, so equal
        sums in another order become identical). Returns the combinations whose terms still
        differ, as (condition, reference term, candidate term) — [] proves the element;
        None when the terms contain no shape-only selection."""
        terms = [t for t in (a, b) if not isinstance(t, (int, np.integer))]
        ctx = z3.main_ctx()
        # (b's selections first, then a's: the order the conditions are listed in)
        ids = dict.fromkeys(c for t in reversed(terms) for c in self._selections(t.as_ast()))
        if not ids:
            return None
        cs = [z3.z3._to_expr_ref(self.select_conds.by_key(c), ctx) for c in ids]
        rows = [self.at_shapes(c) for c in cs]
        where = np.ones(self.count, bool) if live is True else self.at_shapes(live)
        if where is None or any(r is None for r in rows):
            return None
        out = []
        for col in _combinations(np.stack(rows)[:, where]):
            subst = [(c, z3.BoolVal(bool(v))) for c, v in zip(cs, col)]
            sa = a if isinstance(a, (int, np.integer)) else z3.simplify(z3.substitute(a, *subst))
            sb = b if isinstance(b, (int, np.integer)) else z3.simplify(z3.substitute(b, *subst))
            if _equal_terms(sa, sb):
                continue
            pattern = z3.And([c if v else z3.Not(c) for c, v in zip(cs, col)])
            out.append((pattern if live is True else z3.And(pattern, live), concrete_value(sa),
                        concrete_value(sb)))
        return out

    def _selections(self, root) -> tuple[int, ...]:
        """The keys (`raw_key`) of the shape-only conditions of the selections (`If(c, x, y)`)
        in the raw term `root`, in the order of a depth-first walk that visits
        a node's arguments last to first (for a selection: its two branches; its condition is
        about shapes alone, so nothing in it is a selection to decide). Memoized per subterm
        across calls: the elements of an output share most of their terms (a saxpy's 2048
        elements, each walked whole, cost seconds)."""
        R, ctx, memo, only = z3raw.read, self.values.ctx, self.select_memo, self.shape_only_ast
        known = memo.by_key
        stack: list = [(root, raw_key(root), None)]
        while stack:
            e, key, kids = stack.pop()
            if kids is not None:          # every argument done: join theirs, in walk order
                head, parts = kids
                nonempty = [known(k) for k in parts if known(k)]
                if head is None and len(nonempty) <= 1:
                    memo.put(e, nonempty[0] if nonempty else ())    # (shared, not copied)
                else:
                    memo.put(e, tuple(dict.fromkeys(
                        [*(head or ()), *(c for part in nonempty for c in part)])))
                continue
            if known(key) is not None:
                continue
            if R.ast_kind(ctx, e) != z3.Z3_APP_AST:
                memo.put(e, ())
                continue
            args = [R.app_arg(ctx, e, j) for j in range(R.num_args(ctx, e))]
            head = None
            if R.decl_kind(ctx, R.app_decl(ctx, e)) == z3.Z3_OP_ITE and only(args[0]):
                cid = raw_key(args[0])
                if self.select_conds.by_key(cid) is None:
                    self.select_conds.put(args[0], args[0])
                head, args = (cid,), args[1:]
            walk = [(x, raw_key(x)) for x in reversed(args)]
            stack.append((e, key, (head, [k for _, k in walk])))
            stack.extend((x, k, None) for x, k in walk if known(k) is None)
        return known(raw_key(root))

    def resolve(self, off, cond) -> set[int] | None:
        """The values a symbolic address offset takes where `cond` may hold, over every
        allowed shape (and every value of the few input bits it may mention, see
        `verifier.address_values`); None when it depends on too many input bits or takes more
        than RESOLVE_LIMIT values."""
        if not self.possible(cond):
            return set()
        vals = self.at_shapes(off)
        if vals is None:
            return offset_values(off, cond, self.points, self.count, RESOLVE_LIMIT,
                                 self.ranges)
        keep = None if isinstance(cond, (bool, np.bool_)) else self.at_shapes(cond)
        if keep is not None:
            vals = vals[keep]
        out = set(np.unique(vals).tolist())
        return out if len(out) <= RESOLVE_LIMIT else None



def _combinations(table: np.ndarray) -> np.ndarray:
    """The distinct columns of the Boolean `table` (conditions x points), in the order
    `np.unique(table, axis=1)` gives them (lexicographic, the first row most significant),
    as rows; each column packed into one integer first (`np.unique` over columns compares
    them element by element)."""
    k = table.shape[0]
    if k > 62:
        return np.unique(table, axis=1).T
    weights = np.left_shift(np.int64(1), np.arange(k - 1, -1, -1, dtype=np.int64))
    codes = np.unique(weights @ table.astype(np.int64))
    return (codes[:, None] & weights[None, :]) != 0


def _equal_terms(a, b) -> bool:
    a, b = concrete_value(a), concrete_value(b)
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int) and a == b
    return a.eq(b)


__all__ = ["Feasibility", "RESOLVE_LIMIT"]
