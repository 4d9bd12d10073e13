"""The allowed launch shapes of a claim as a grid: values that vary along few axes stay small.

A claim over `M, N, K` in `[1, 32]` has 32768 launch shapes, but almost every term the
verifier evaluates at them mentions one or two of the scalars: a bounds check `row < M`, an
offset `4 * (row * K + k)`, a tile test `k < K`. Evaluated over the list of shapes, each such
term costs 32768 values; evaluated over the *grid* of the scalars' values, with numpy
broadcasting, `row < M` is 32 values along the `M` axis and `4 * (row * K + k)` 32 along `K`.
Combining them (`row < M and k < K`) broadcasts to the 32 x 32 they really vary over.

`ShapeSpace` is that grid: one axis per symbolic scalar, in the plan's order (the first name
varies slowest, as `itertools.product` lists them), each axis the scalar's allowed values
after the `assume`s that mention it alone; and, when other `assume`s exclude points of the
grid, which points are shapes. Values over the grid ("compact") broadcast to its dimensions;
this module turns them into what the rest of the verifier reads: a value per allowed shape in
the plan's order (`full`), whether a condition holds at some or every allowed shape (`any`,
`all`), and the set of allowed shapes where it holds as a bit set (`bits`, bit i: shape i).

Why it is exact: a compact value is the term evaluated at every grid point (broadcasting only
repeats values along axes the term does not mention), and every answer here reads it at the
allowed points alone; a point the `assume`s exclude never reaches a verdict.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np
import z3

from semantics.domains import z3raw
from verifier.term_eval import NotEvaluable, evaluate_grid_raw

_R = z3raw.read


class ShapeSpace:
    """Every allowed shape of a claim, as the points of a grid that are allowed."""

    def __init__(self, names: Sequence[str], axes: Sequence[Sequence[int]],
                 shapes: Sequence[Mapping[str, int]]) -> None:
        """`axes[j]`: the distinct values of `names[j]` in the plan's order; `shapes`: the
        allowed shapes in the plan's order (a subsequence of the grid in C order)."""
        self.names = tuple(names)
        self.dims = tuple(len(a) for a in axes)
        self.size = int(np.prod(self.dims, dtype=np.int64))
        self.count = len(shapes)
        self._axes = [np.asarray(a, dtype=np.int64) for a in axes]
        if self.count == self.size:
            self.index = None                   # every grid point is a shape
        else:
            pos = np.zeros(self.count, dtype=np.int64)
            for j, (n, axis) in enumerate(zip(self.names, axes)):
                at = {v: i for i, v in enumerate(axis)}
                pos = pos * self.dims[j] + np.array([at[s[n]] for s in shapes], dtype=np.int64)
            self.index = pos
        self.ones = (1 << self.count) - 1       # the bit set of every shape

    def times(self, names: Sequence[str], dims: Sequence[int]) -> "ShapeSpace":
        """This space times a whole grid of more axes (`names[j]` takes the values
        0 .. dims[j] - 1), the new axes last: point `p` of the product is shape
        `p // prod(dims)` of this space, the new axes varying fastest. (One symbolic CTA
        stands for every CTA of a launch this way: `verifier.symbolic_cta`.)"""
        per = int(np.prod(dims, dtype=np.int64))
        out = ShapeSpace.__new__(ShapeSpace)
        out.names = self.names + tuple(names)
        out.dims = self.dims + tuple(dims)
        out.size = self.size * per
        out.count = self.count * per
        out._axes = self._axes + [np.arange(d, dtype=np.int64) for d in dims]
        out.index = None if self.index is None else \
            (self.index[:, None] * per + np.arange(per, dtype=np.int64)).reshape(-1)
        out.ones = (1 << out.count) - 1
        return out

    def project(self, keep: Sequence[int]) -> tuple["ShapeSpace", np.ndarray]:
        """The whole grid of the axes `keep` (indices, ascending), and the point of it each
        allowed shape lies on (its coordinates along those axes)."""
        out = ShapeSpace.__new__(ShapeSpace)
        out.names = tuple(self.names[j] for j in keep)
        out.dims = tuple(self.dims[j] for j in keep)
        out.size = out.count = int(np.prod(out.dims, dtype=np.int64))
        out._axes = [self._axes[j] for j in keep]
        out.index = None
        out.ones = (1 << out.count) - 1
        flat = np.arange(self.count, dtype=np.int64) if self.index is None else self.index
        coords = np.unravel_index(flat, self.dims)
        on = np.ravel_multi_index([coords[j] for j in keep], out.dims) if keep else \
            np.zeros(self.count, dtype=np.int64)
        return out, np.asarray(on, dtype=np.int64)

    def env(self, widths: Mapping[str, int]) -> dict[str, np.ndarray]:
        """Each scalar's values along its own axis (broadcastable to the grid), as the
        unsigned `widths[name]`-bit values a term over it reads."""
        out = {}
        for j, (n, axis) in enumerate(zip(self.names, self._axes)):
            shape = [1] * len(self.dims)
            shape[j] = self.dims[j]
            out[n] = (axis.astype(np.uint64) & np.uint64((1 << widths[n]) - 1)
                      if widths[n] < 64 else axis.astype(np.uint64)).reshape(shape)
        return out

    def points(self, widths: Mapping[str, int]) -> dict[str, np.ndarray]:
        """Each scalar's value at every allowed shape (the plan's order)."""
        return {n: self.full(v) for n, v in self.env(widths).items()}

    # -- reading compact values at the allowed shapes ----------------------------------------

    def full(self, v) -> np.ndarray:
        """A compact value (a numpy scalar or an array broadcastable to the grid) at every
        allowed shape, in the plan's order."""
        v = np.asarray(v)
        if v.ndim == 0:
            return np.full(self.count, v[()])
        grid = v if v.shape == self.dims else np.broadcast_to(v, self.dims)
        flat = grid.reshape(-1)         # (a copy where `v` is broadcast)
        return flat if self.index is None else flat[self.index]

    def any(self, v) -> bool:
        """Does a compact condition hold at some allowed shape?"""
        if self.index is None:
            return bool(np.any(v))         # broadcasting repeats values: same answer
        if not np.any(v):
            return False
        return bool(self.full(v).any())

    def all(self, v) -> bool:
        """Does a compact condition hold at every allowed shape?"""
        if np.all(v):
            return True
        return False if self.index is None else bool(self.full(v).all())

    def first(self, v) -> int | None:
        """The first allowed shape (an index into the plan) where a compact condition holds."""
        if not self.any(v):
            return None
        return int(np.argmax(self.full(v)))

    def any_of(self, factors: Sequence) -> bool:
        """Does the conjunction of compact conditions hold at some allowed shape?

        On a whole grid (every point a shape) the factors are grouped by the axes they vary
        along, joined where they share one (`group`): groups over disjoint axes can be
        satisfied independently, so the conjunction holds somewhere exactly when each
        group's does. A thread's `exists and row < M and col < N and k < K` against an end
        `4 * M * K` costs 32 + 32 x 32 values instead of 32^3."""
        if self.index is not None:
            return self.any(functools.reduce(operator.and_, factors, np.True_))
        if len(factors) == 1:
            return bool(np.any(factors[0]))
        return self.group(factors).possible

    def group(self, factors: Sequence, start: "Grouped | None" = None) -> "Grouped":
        """The factors of a conjunction ANDed per group of shared axes (see `any_of`).
        `start`: the grouping of the conjunction's earlier factors, which `factors` join (a
        lane's condition is the one before it and a conjunct more): only the groups they
        change are looked at again, as the others hold somewhere already."""
        if start is not None and not start.possible:
            return start
        if self.index is not None:
            v = functools.reduce(operator.and_, factors,
                                 np.True_ if start is None else start.parts[0][1])
            return Grouped(self.any(v), ((_ALL_AXES, v),))
        # [axes as a bit mask, value, made or changed here]
        groups: list[list] = [] if start is None else [[m, v, False] for m, v in start.parts]
        for f in factors:
            m = _axes(f)
            if not m:
                if not bool(f):
                    return Grouped(False, ())
                continue
            joined = [g for g in groups if g[0] & m]
            for g in joined:
                groups.remove(g)
                m |= g[0]
                f = f & g[1]
            groups.append([m, f, True])
        return Grouped(all(np.any(v) for _, v, changed in groups if changed),
                       tuple((m, v) for m, v, _ in groups))

    def any_with(self, grouped: "Grouped", extra) -> bool:
        """`any_of` of a grouped conjunction and one more compact condition."""
        if not grouped.possible:
            return False
        if self.index is not None:
            return self.any(grouped.parts[0][1] & extra if grouped.parts else extra)
        m, acc = _axes(extra), extra
        rest = list(grouped.parts)
        changed = True
        while changed:                 # (a merged group may now share an axis with another)
            changed = False
            for g in list(rest):
                if g[0] & m:
                    rest.remove(g)
                    m |= g[0]
                    acc = acc & g[1]
                    changed = True
        return bool(np.any(acc))

    def first_of(self, factors: Sequence) -> int | None:
        """The first allowed shape where the conjunction of compact conditions holds."""
        if not self.any_of(factors):
            return None
        return self.first(functools.reduce(operator.and_, factors, np.True_))

    def bits(self, v) -> int:
        """The allowed shapes where a compact condition holds, as a bit set (bit i: shape i)."""
        if np.ndim(v) == 0:
            return self.ones if bool(v) else 0
        if np.all(v):
            return self.ones
        if not np.any(v):
            return 0
        return bits_of(self.full(v))


class PointSet:
    """Some allowed shapes of a space (`points`: indices into the plan, ascending; None: all
    of them) as the universe of bit sets: bit i is `points[i]`. The term walk's sets
    (`verifier.same_at`) are over the shapes where the pairs it compares meet; with one
    symbolic CTA (`verifier.symbolic_cta`) that leaves out the points where no CTA exists,
    almost half of a 32^3 matmul claim's, and every set operation is over fewer bits."""

    def __init__(self, space: ShapeSpace, points: np.ndarray | None = None) -> None:
        self.space, self.points = space, points
        self.count = space.count if points is None else int(points.size)
        self.ones = space.ones if points is None else (1 << self.count) - 1
        self.known: dict[tuple, int] = {}       # see `bits`

    SMALL = 4096      # compact values of at most this many entries are remembered by content

    def bits(self, v) -> int:
        """The points where a compact condition holds, as a bit set. A small compact value
        (up to SMALL entries) is remembered by its contents: distinct terms often take the
        same few values (a loop's exit tests `k < K`, one per lane and kernel), and a bit set
        costs a pass over every point."""
        v = np.asarray(v)
        if v.ndim == 0:
            return self.ones if bool(v) else 0
        key = (v.shape, v.dtype.str, v.tobytes()) if v.size <= self.SMALL else None
        hit = None if key is None else self.known.get(key)
        if hit is None:
            if np.all(v):              # (over the whole grid: then at every point too)
                hit = self.ones
            elif not np.any(v):
                hit = 0
            elif self.points is None:
                hit = self.space.bits(v)
            else:
                hit = bits_of(self.space.full(v)[self.points])
            if key is not None:
                self.known[key] = hit
        return hit


class Grouped(NamedTuple):
    """A conjunction of compact conditions, ANDed per group of shared axes: whether it holds
    at some shape, and each group's (axes bit mask, value)."""
    possible: bool
    parts: tuple


_ALL_AXES = -1


def _axes(v) -> int:
    """The axes a compact value varies along, as a bit mask."""
    m = 0
    for j, d in enumerate(np.shape(v)):
        if d > 1:
            m |= 1 << j
    return m


class ShapeOnly:
    """Does a term mention no constant but the shape scalars `names`? Memoized by term id;
    keeps the terms it is given alive for as long as it lives (z3 reuses freed ids)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.memo: dict[int, bool] = {}
        self.pinned: list = []
        self.ctx = z3.main_ctx().ref()

    def __call__(self, t) -> bool:
        """Does `t` mention no constant but the shape scalars? (Memoized; keeps `t` alive.)"""
        hit = self.memo.get(t.get_id())
        if hit is not None:
            return hit
        self.pinned.append(t)           # keeps every subterm (and so every memo key) alive
        return self.ast(t.as_ast())

    def ast(self, root) -> bool:
        """`shape_only` of a raw AST that the caller keeps alive (a subterm of a pinned or
        walked term). A memoized depth-first walk on raw ASTs (no Python wrapper per node:
        this walk runs over every condition) that stops at the first other constant: every
        term on the path to it mentions it too, so a mask over a large data-dependent count is
        answered after a few nodes."""
        memo = self.memo
        ctx = self.ctx
        R = z3raw.read
        key = R.ast_id(ctx, root)
        hit = memo.get(key)
        if hit is not None:
            return hit
        v = self._leaf(root)
        if v is not None:
            memo[key] = v
            return v
        # (path entries: [id, term, next argument, number of arguments]; arguments are
        # fetched one at a time, as a walk that stops early needs only the first few)
        path = [[key, root, 0, R.num_args(ctx, root)]]
        while path:
            top = path[-1]
            if top[2] == top[3]:
                memo[top[0]] = True
                path.pop()
                continue
            x = R.app_arg(ctx, top[1], top[2])
            top[2] += 1
            xkey = R.ast_id(ctx, x)
            v = memo.get(xkey)
            if v is None:
                v = self._leaf(x)
                if v is None:
                    path.append([xkey, x, 0, R.num_args(ctx, x)])
                    continue
                memo[xkey] = v
            if not v:
                for node in path:        # each mentions x, so each mentions that constant
                    memo[node[0]] = False
                return False
        return memo[key]

    def _leaf(self, x) -> bool | None:
        """A leaf's `shape_only` answer; None for an application with arguments."""
        ctx = self.ctx
        R = z3raw.read
        kind = R.ast_kind(ctx, x)
        if kind != z3.Z3_APP_AST:
            return kind == z3.Z3_NUMERAL_AST
        if R.num_args(ctx, x):
            return None
        d = R.app_decl(ctx, x)
        return (R.decl_kind(ctx, d) != z3.Z3_OP_UNINTERPRETED or
                z3.z3core.Z3_get_symbol_string(ctx, z3.z3core.Z3_get_decl_name(ctx, d))
                in self.names)


class ShapeValues:
    """Terms of the shape scalars alone, evaluated over a `ShapeSpace`'s grid (compact) with
    `verifier.term_eval`, memoized by term id. `admit(t)` (optional) is asked first: False
    means "not a term of the shape alone" (its answer is None). The memos key by id and z3
    reuses the id of a freed term, so every term given to `grid` or `factors` is kept alive
    for as long as this object lives; raw ASTs (`grid_raw`) are the caller's to keep alive."""

    MEMO_BYTES = 1 << 31     # compact values kept, up to about 2 GiB
    MEMO_LOOK = 50_000       # terms evaluated between two looks at the memo's size

    def __init__(self, space: ShapeSpace, widths: Mapping[str, int],
                 admit: Callable[[Any], bool] | None = None) -> None:
        self.space = space
        self.widths = dict(widths)
        self.env = space.env(widths)
        self.admit = admit
        self.memo: dict[int, Any] = {}
        self._factors: dict[int, list | None] = {}
        self._fixed: dict[int, tuple] = {}     # the literals a term's factors fix (see there)
        self._booleans: dict[int, frozenset] = {}  # see `_boolean_ids`
        self._conj: dict[int, list] = {}       # `z3raw.conjuncts` of pinned terms
        self._grouped: dict[int, Grouped | None] = {}
        self._extends: dict[int, tuple[int, int]] = {}   # see `_factors_of`
        self._everywhere: dict[int, bool] = {}           # see `everywhere`
        self._vars: dict[int, frozenset] = {}
        self._seen = 0
        self.pinned: list = []
        self.ctx = z3.main_ctx().ref()

    def grid(self, t):
        """`t` over the grid (compact), or None when it is not a term of the shape alone."""
        if self.admit is not None and not self.admit(t):
            return None
        self.pinned.append(t)
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
        """`grid` of a raw AST that is a subterm of a term in `pinned` (kept alive as long
        as the memos), asking `admit` on the raw AST where it can (`ShapeOnly.ast`)."""
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
        self.pinned.append(t)
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
        key = R.ast_id(ctx, root)
        if key in memo:
            return memo[key]
        out: list | None = []
        fixed: list = []
        fixed_ids: set = set()          # (the ids of `fixed`'s terms)
        rest = root
        # A lane's condition is mostly the one before it and one more conjunct, `And(before,
        # c)`, whose conjuncts are `before`'s, then `c`'s (`z3raw.conjuncts`): it goes on
        # from where `before` ended (its factors, and the literals they fixed), instead of
        # evaluating every conjunct again (a loop's lane adds one per iteration).
        if R.ast_kind(ctx, root) == z3.Z3_APP_AST and R.num_args(ctx, root) == 2 and \
                R.decl_kind(ctx, R.app_decl(ctx, root)) == z3.Z3_OP_AND:
            before = R.ast_id(ctx, R.app_arg(ctx, root, 0))
            if before in self._fixed:
                out = list(memo[before])
                self._extends[key] = (before, len(out))       # (for `grouped`, `everywhere`)
                fixed, fixed_ids = (list(self._fixed[before][0]), set(self._fixed[before][1]))
                rest = R.app_arg(ctx, root, 1)
            elif before in memo and memo[before] is None:
                out = None        # (a conjunct of `before` is not of the shape alone)
        if out is not None:
            for raw, negated in z3raw.conjuncts(rest, self._conj):
                v = self._under(raw, fixed, fixed_ids)
                if v is None:
                    out = None
                    break
                out.append(~v if negated else v)
                more = [(raw, _FALSE.as_ast())] if negated else z3raw.literals(raw, self._conj)
                fixed.extend(more)
                fixed_ids.update(R.ast_id(ctx, t) for t, _ in more)
        memo[key] = out
        if out is not None:
            self._fixed[key] = (fixed, fixed_ids)
        return out

    def grouped(self, t) -> Grouped | None:
        """`ShapeSpace.group` of `factors(t)` (memoized per term): decides "does `t` hold
        somewhere, and with this other condition?" without regrouping its conjuncts."""
        if isinstance(t, (bool, np.bool_)):
            return self.space.group([np.bool_(t)])
        key = t.get_id()
        hit = self._grouped.get(key)
        if hit is None:
            factors = self.factors(t)
            if factors is not None:
                # (a condition one conjunct longer than one grouped before: the new ones join)
                before = self._extends.get(key)
                start = None if before is None else self._grouped.get(before[0])
                hit = self.space.group(factors) if start is None else \
                    self.space.group(factors[before[1]:], start)
            self._grouped[key] = hit
        return hit

    def everywhere(self, t) -> bool | None:
        """Does condition `t` hold at every allowed shape (each of its factors does)? None
        when it is not a term of the shape alone. Memoized per term, and a condition one
        conjunct longer than one asked before looks at its new factors alone."""
        key = t.get_id()
        hit = self._everywhere.get(key)
        if hit is None:
            factors = self.factors(t)
            if factors is None:
                return None
            before = self._extends.get(key)
            known = None if before is None else self._everywhere.get(before[0])
            if known is False:
                hit = False
            else:
                new = factors if known is None else factors[before[1]:]
                hit = all(self.space.all(v) for v in new)
            self._everywhere[key] = hit
        return hit

    def _under(self, raw, fixed: list, fixed_ids: set):
        """The value of `raw` where the literals `fixed` (pairs of raw term and truth value;
        `fixed_ids` their terms' ids) hold: substituted when `raw` mentions two shape scalars
        or more (others vary along one axis at most, and substituting would only cost) and
        one of those terms occurs in it (else the substitution is `raw` itself: a CTA's
        existence, a conjunct of every access's condition, mentions no lane's literal)."""
        if fixed and len(self.variables(raw)) > 1 and \
                not fixed_ids.isdisjoint(self._boolean_ids(raw)):
            sub = z3raw.substitute(raw, fixed)
            if _R.ast_id(self.ctx, sub.as_ast()) != _R.ast_id(self.ctx, raw):
                self.pinned.append(sub)
                return self.grid_raw(sub.as_ast())
        return self.grid_raw(raw)

    def _boolean_ids(self, raw) -> frozenset:
        """The ids of the Boolean subterms of a raw term, itself included (memoized per
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

    def _gathered(self, raw, memo: dict, own: Callable[[Any, int, bool], frozenset]
                  ) -> frozenset:
        """The union over a raw term's applications (itself included) of `own(node, its id,
        whether it is a leaf)`, memoized per node in `memo`: a post-order walk on raw ASTs
        (no Python wrapper per node)."""
        R, ctx = _R, self.ctx
        key = R.ast_id(ctx, raw)
        hit = memo.get(key)
        if hit is not None:
            return hit
        stack = [(raw, key, False)]
        while stack:
            x, xid, ready = stack.pop()
            if xid in memo:
                continue
            if R.ast_kind(ctx, x) != z3.Z3_APP_AST:
                memo[xid] = _NONE
                continue
            n = R.num_args(ctx, x)
            if n == 0:
                memo[xid] = own(x, xid, True)
                continue
            args = [R.app_arg(ctx, x, j) for j in range(n)]
            ids = [R.ast_id(ctx, a) for a in args]
            if ready:
                out = own(x, xid, False)
                for i in ids:
                    out = out | memo[i] if memo[i] else out
                memo[xid] = out
                continue
            stack.append((x, xid, True))
            stack.extend((a, i, False) for a, i in zip(args, ids) if i not in memo)
        return memo[key]

_NONE: frozenset = frozenset()
_FALSE = z3.BoolVal(False)


def bits_of(mask: np.ndarray) -> int:
    """A boolean array as a bit set (bit i: element i)."""
    return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")


def mask_of(bits: int, count: int) -> np.ndarray:
    """A bit set as a boolean array of `count` elements."""
    raw = np.frombuffer(bits.to_bytes((count + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, count=count, bitorder="little").astype(bool)


__all__ = ["Grouped", "PointSet", "ShapeSpace", "ShapeValues", "bits_of", "mask_of"]
