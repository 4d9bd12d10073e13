"""Terms of the shape scalars alone over the grid of shapes (`ShapeValues`): evaluated once
each (`verifier.term_eval`), conditions kept as factors grouped by axis (`ShapeSpace.group`).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import z3

from semantics.domains import z3raw
from verifier.shape_space.grid import Grouped, ShapeSpace
from verifier.term_eval import NotEvaluable, evaluate_grid_raw
from verifier.terms import ConjunctMemo, RawTermMemo, raw_key

_R = z3raw.read


class ShapeValues:
    """Terms of the shape scalars alone, evaluated over a `ShapeSpace`'s grid (compact) with
    `verifier.term_eval`, memoized per term. `admit(t)` (optional) is asked first: False
    means "not a term of the shape alone" (its answer is None). Every memo here is a
    `verifier.terms.RawTermMemo`, which keeps the terms it answers for alive."""

    MEMO_BYTES = 1 << 31     # compact values kept, up to about 2 GiB
    MEMO_LOOK = 50_000       # terms evaluated between two looks at the memo's size

    def __init__(self, space: ShapeSpace, widths: Mapping[str, int],
                 admit: Callable[[Any], bool] | None = None) -> None:
        self.space = space
        self.widths = dict(widths)
        self.env = space.env(widths)
        self.admit = admit
        self.memo: RawTermMemo[Any] = RawTermMemo()
        self._factors: RawTermMemo[list | None] = RawTermMemo()
        self._fixed: RawTermMemo[tuple] = RawTermMemo()  # the literals its factors fix (see there)
        self._booleans: RawTermMemo[frozenset] = RawTermMemo()  # see `_boolean_keys`
        self._conj = ConjunctMemo()
        self._grouped: RawTermMemo[Grouped | None] = RawTermMemo()
        self._extends: RawTermMemo[tuple[int, int]] = RawTermMemo()   # see `_factors_of`
        self._everywhere: RawTermMemo[bool] = RawTermMemo()           # see `everywhere`
        self._vars: RawTermMemo[frozenset] = RawTermMemo()
        self._seen = 0
        self.ctx = z3.main_ctx().ref()

    def grid(self, t):
        """`t` over the grid (compact), or None when it is not a term of the shape alone."""
        if self.admit is not None and not self.admit(t):
            return None
        return self.grid_raw(t.as_ast())

    def grid_raw(self, raw):
        """`grid` of a raw AST, without `admit`."""
        memo = self.memo
        if len(memo) - self._seen > self.MEMO_LOOK:
            if sum(np.asarray(v).nbytes for v in memo.values()) > self.MEMO_BYTES:
                memo.clear()
            self._seen = len(memo)
        try:
            return evaluate_grid_raw(raw, self.env, memo)
        except NotEvaluable:
            return None

    def subterm_grid(self, raw):
        """`grid` of a raw AST, asking `admit` on the raw AST where it can
        (`ShapeOnly.ast`)."""
        if self.admit is not None:
            only = getattr(self.admit, "ast", None)
            if not (only(raw) if only is not None else
                    self.admit(z3.z3._to_expr_ref(raw, z3.main_ctx()))):
                return None
        return self.grid_raw(raw)

    def full(self, t) -> np.ndarray | None:
        """`t` at every allowed shape (the plan's order), or None."""
        v = self.grid(t)
        return None if v is None else self.space.full(v)

    # Below this many grid points one numpy call over the whole grid is cheaper than keeping
    # conjuncts apart (`factors`).
    SMALL = 8192

    def factors(self, t) -> list | None:
        """A condition as compact factors whose conjunction it is, for `ShapeSpace.any_of`:
        on a large grid the values of its conjuncts (`And`s flattened, `Not(Or(..))` read as
        the conjunction of the negations), on a small one its own value; None when it is not
        a term of the shape alone."""
        if isinstance(t, (bool, np.bool_)):
            return [np.bool_(t)]
        if self.admit is not None and not self.admit(t):
            return None
        if self.space.size <= self.SMALL:
            v = self.grid_raw(t.as_ast())
            return None if v is None else [v]
        return self._factors_of(t.as_ast())

    def _factors_of(self, root) -> list | None:
        # Each conjunct is evaluated where the ones before it hold: their literals are
        # substituted into it (`_under`), which is exact because the conjunction is false
        # wherever one of them is not. A lane's condition `exists and not (exists and K % 4
        # == 0)` spans M, N and K as written, K alone after `exists := True`.
        R, ctx, memo = _R, self.ctx, self._factors
        hit = memo.get(root, _UNSEEN)
        if hit is not _UNSEEN:
            return hit
        out: list | None = []
        fixed: list = []
        fixed_keys: set = set()         # (the `raw_key`s of `fixed`'s terms)
        rest = root
        # A lane's condition is mostly the one before it and one more conjunct, `And(before,
        # c)`, whose conjuncts are `before`'s, then `c`'s (`z3raw.conjuncts`): it goes on
        # from where `before` ended (its factors, and the literals they fixed), instead of
        # evaluating every conjunct again (a loop's lane adds one per iteration).
        if R.ast_kind(ctx, root) == z3.Z3_APP_AST and R.num_args(ctx, root) == 2 and \
                R.decl_kind(ctx, R.app_decl(ctx, root)) == z3.Z3_OP_AND:
            before = R.app_arg(ctx, root, 0)
            was = self._fixed.get(before)
            if was is not None:
                out = list(memo.get(before))
                # (for `grouped`, `everywhere`: `before` is a subterm, alive while `root` is)
                self._extends.put(root, (raw_key(before), len(out)))
                fixed, fixed_keys = list(was[0]), set(was[1])
                rest = R.app_arg(ctx, root, 1)
            elif before in memo and memo.get(before) is None:
                out = None        # (a conjunct of `before` is not of the shape alone)
        if out is not None:
            for raw, negated in self._conj.conjuncts(rest):
                v = self._under(raw, fixed, fixed_keys)
                if v is None:
                    out = None
                    break
                out.append(~v if negated else v)
                more = [(raw, _FALSE.as_ast())] if negated else self._conj.literals(raw)
                fixed.extend(more)
                fixed_keys.update(raw_key(t) for t, _ in more)
        memo.put(root, out)
        if out is not None:
            self._fixed.put(root, (fixed, fixed_keys))
        return out

    def grouped(self, t) -> Grouped | None:
        """`ShapeSpace.group` of `factors(t)` (memoized per term): decides "does `t` hold
        somewhere, and with this other condition?" without regrouping its conjuncts."""
        if isinstance(t, (bool, np.bool_)):
            return self.space.group([np.bool_(t)])
        raw = t.as_ast()
        hit = self._grouped.get(raw)
        if hit is None:
            factors = self.factors(t)
            if factors is not None:
                # (a condition one conjunct longer than one grouped before: the new ones join)
                before = self._extends.get(raw)
                start = None if before is None else self._grouped.by_key(before[0])
                hit = self.space.group(factors) if start is None else \
                    self.space.group(factors[before[1]:], start)
            self._grouped.put(raw, hit)
        return hit

    def everywhere(self, t) -> bool | None:
        """Does condition `t` hold at every allowed shape (each of its factors does)? None
        when it is not a term of the shape alone. Memoized per term, and a condition one
        conjunct longer than one asked before looks at its new factors alone."""
        raw = t.as_ast()
        hit = self._everywhere.get(raw)
        if hit is None:
            factors = self.factors(t)
            if factors is None:
                return None
            before = self._extends.get(raw)
            known = None if before is None else self._everywhere.by_key(before[0])
            if known is False:
                hit = False
            else:
                new = factors if known is None else factors[before[1]:]
                hit = all(self.space.all(v) for v in new)
            self._everywhere.put(raw, hit)
        return hit

    def _under(self, raw, fixed: list, fixed_keys: set):
        """The value of `raw` where the literals `fixed` (pairs of raw term and truth value;
        `fixed_keys` their terms' `raw_key`s) hold: substituted when `raw` mentions two shape scalars
        or more (others vary along one axis at most, and substituting would only cost) and
        one of those terms occurs in it (else the substitution is `raw` itself: a CTA's
        existence, a conjunct of every access's condition, mentions no lane's literal)."""
        if fixed and len(self.variables(raw)) > 1 and \
                not fixed_keys.isdisjoint(self._boolean_keys(raw)):
            sub = z3raw.substitute(raw, fixed)
            if raw_key(sub.as_ast()) != raw_key(raw):
                return self.grid_raw(sub.as_ast())     # (`memo` keeps `sub` alive)
        return self.grid_raw(raw)

    def _boolean_keys(self, raw) -> frozenset:
        """The `raw_key`s of the Boolean subterms of a raw term, itself included (memoized per
        node): the terms a substitution of literals may replace in it."""
        def own(x, xid: int, leaf: bool) -> frozenset:
            is_bool = _R.sort_kind(self.ctx, _R.sort(self.ctx, x)) == z3.Z3_BOOL_SORT
            return frozenset((xid,)) if is_bool else _NONE
        return self._gathered(raw, self._booleans, own)

    def variables(self, raw) -> frozenset:
        """The shape scalars a raw term mentions (memoized per node)."""
        def own(x, xid: int, leaf: bool) -> frozenset:
            if not leaf:
                return _NONE
            R, ctx = _R, self.ctx
            d = R.app_decl(ctx, x)
            name = R.symbol(ctx, R.decl_name(ctx, d)).decode() \
                if R.decl_kind(ctx, d) == z3.Z3_OP_UNINTERPRETED else None
            return frozenset((name,)) if name in self.env else _NONE
        return self._gathered(raw, self._vars, own)

    def _gathered(self, raw, memo: RawTermMemo[frozenset],
                  own: Callable[[Any, int, bool], frozenset]) -> frozenset:
        """The union over a raw term's applications (itself included) of `own(node, its
        raw_key, whether it is a leaf)`, memoized per node in `memo`: a post-order walk on
        raw ASTs (no Python wrapper per node)."""
        R, ctx, known = _R, self.ctx, memo.by_key
        key = raw_key(raw)
        hit = known(key)
        if hit is not None:
            return hit
        stack = [(raw, key, False)]
        while stack:
            x, xid, ready = stack.pop()
            if known(xid) is not None:
                continue
            if R.ast_kind(ctx, x) != z3.Z3_APP_AST:
                memo.put(x, _NONE)
                continue
            n = R.num_args(ctx, x)
            if n == 0:
                memo.put(x, own(x, xid, True))
                continue
            args = [R.app_arg(ctx, x, j) for j in range(n)]
            keys = [raw_key(a) for a in args]
            if ready:
                out = own(x, xid, False)
                for k in keys:
                    part = known(k)
                    out = out | part if part else out
                memo.put(x, out)
                continue
            stack.append((x, xid, True))
            stack.extend((a, k, False) for a, k in zip(args, keys) if known(k) is None)
        return known(key)


_NONE: frozenset = frozenset()
_UNSEEN = object()
_FALSE = z3.BoolVal(False)

__all__ = ["ShapeValues"]
