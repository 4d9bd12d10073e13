"""Two stored terms equal at every shape of a set, for every input: `SameAt`, a walk over both.

The indexed comparison (`verifier.indexed`) hands over pairs of writes whose terms differ at
some cells: a tiled matmul's `fma(If(k < K, A[row*K + k], 0), ...)` against the naive one's
`fma(A[row*K + k], ...)`. Where the codes of the two terms differ, the terms may still denote
the same function of the inputs at the shapes where they meet; `SameAt` shows that by walking
both at once, or answers "not shown" (never "different").

Sets of shapes are Python integers used as bit sets (bit i: shape i of the plan, or of the
shapes the walk is asked about, `shape_space.PointSet`). A walk
visits hundreds of thousands of pairs of subterms, each intersecting and testing a set; on
integers that is a machine-word loop in C, where numpy's per-call overhead on arrays of a few
thousand booleans was most of the walk's time. Values of the shape alone (offsets, conditions)
stay numpy arrays over the grid of shapes (`verifier.shape_space`: an offset `4 * (row * K +
k)` varies along `K` only), evaluated once per term; they become bit sets only where a
comparison is not already true (or false) at every point. A difference of sets is written
`a ^ (a & b)` and "`a` within `b`" `a & b == a`, never with `~b`: that is a negative integer,
and CPython's `&` on one copies both operands into two's complement (3.3 us against 0.2 us
for 32768 shapes, where a walk does a million set operations).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np
import z3

from semantics.domains.nan_wrappers import is_nan_pattern
from semantics.domains.z3raw import read as _R
from semantics.machine.indexed_buffers import array_buffer
from verifier.indexed_buffer import Evaluate, IndexedBuffer
from verifier.real_mode import CANONICAL_NAN
from verifier.shape_space import PointSet, ShapeSpace, bits_of, mask_of
from verifier.terms import RawTermMemo, raw_id

# Operations whose first two floating-point operands commute exactly (IEEE add and multiply;
# fma's multiplicands): keq's semantics build them in a canonical order of their terms, so
# one side's order may be swapped where the other's terms differ.
_COMMUTING = {z3.Z3_OP_FPA_ADD: 1, z3.Z3_OP_FPA_MUL: 1, z3.Z3_OP_FPA_FMA: 1}
# Floating-point terms never evaluate at shapes (the evaluator reads bit-vectors and Booleans).
_NEVER_SHAPE_ONLY = {z3.Z3_OP_FPA_ADD, z3.Z3_OP_FPA_MUL, z3.Z3_OP_FPA_FMA, z3.Z3_OP_FPA_TO_FP,
                     z3.Z3_OP_FPA_TO_IEEE_BV, z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN}
# The kinds `_addend` reads (an fma, or the bits of one): for any other, it is None.
_ADDEND_KINDS = {z3.Z3_OP_FPA_FMA, z3.Z3_OP_FPA_TO_IEEE_BV}
_UNSEEN = object()
_CANONICAL = -1        # the kind of a canonical-NaN wrapper, walked as one operation (`_node`)


class _NanTest:
    """The semantics' NaN test of one float format (`semantics.ops.common.is_nan`, through the
    symbolic domain: the one definition) built around a placeholder. `c` is the test of `b`
    when the placeholder replaced by `b` is `c` itself: z3 hash-conses terms, so that is one
    substitution in C and a pointer comparison, where reading `c`'s seven nodes took some 40
    calls of z3's C API per float result."""

    def __init__(self, fmt: str) -> None:
        from semantics.domains.base import FP_FORMATS
        from semantics.domains.symbolic import SymbolicDomain
        from semantics.ops.common import is_nan
        self.width = sum(FP_FORMATS[fmt])
        self.placeholder = z3.BitVec(f"keq!nan_test!{fmt}", self.width)
        self.test = is_nan(SymbolicDomain(1), fmt, [self.placeholder], self.width)[0]
        self.id = self.test.get_id()
        self.src, self.dst = (z3.Ast * 1)(), (z3.Ast * 1)()
        self.src[0] = self.placeholder.as_ast()

    def is_test_of(self, ref, c, b) -> bool:
        self.dst[0] = b
        t = _SUBSTITUTE(ref, self.test.as_ast(), 1, self.src, self.dst)
        if t.value == c.value:
            return True
        # Not `c`. If the substitution built a new term, nothing holds it (z3 counts
        # references: it starts at zero) and this frees it; an existing one keeps its count.
        _INC_REF(ref, t)
        _DEC_REF(ref, t)
        return False


class _NanTests:
    """One `_NanTest` per float format, by width, built on first use."""

    def __init__(self) -> None:
        self.by_width: dict[int, list[_NanTest]] | None = None

    def of_width(self, width: int) -> list[_NanTest]:
        if self.by_width is None:
            from semantics.ops.common import EXP_MASK
            self.by_width = {}
            for fmt in EXP_MASK:
                t = _NanTest(fmt)
                self.by_width.setdefault(t.width, []).append(t)
        return self.by_width.get(width, [])


_NAN_TESTS = _NanTests()
_SUBSTITUTE = z3.z3core.Z3_substitute          # (checked: it builds terms)
_INC_REF, _DEC_REF = z3.z3core.Z3_inc_ref, z3.z3core.Z3_dec_ref


class SameAt:
    """Are two terms equal at every shape in a set, for every input? Shown by walking both
    at once (`__call__`): the same term; terms of the shape alone that evaluate equal there;
    loads of the same input element at every such shape (a `Select` on an indexed buffer's
    array, or the element's own term); a selection on a condition of the shape alone, split
    by it; else the same operation on arguments equal there (congruence), the operands of
    IEEE add, multiply and fma's multiplicands in either order (they commute exactly).
    With `real` (mode real, finite values assumed) also: the canonical-NaN wrapper around a
    result is the result, and an fma with a multiplicand that is zero at a shape is its
    addend there (`_addend`). False means only "not shown".

    The walk reads raw ASTs (`z3raw.read`: no Python wrapper per node) of the terms it is
    given; `at_grid` is a raw AST's value over `space`'s grid (or None), `shape_only(raw)`
    (optional) says whether a term is worth evaluating. Its memos are `RawTermMemo`s
    (`verifier.terms`), which keep every term walked alive as long as this object."""

    def __init__(self, at_grid: Evaluate, space: ShapeSpace, buffers: dict[str, IndexedBuffer],
                 shape_only: Callable[[Any], bool] | None = None, real: bool = False,
                 points: np.ndarray | None = None) -> None:
        """`points` (optional): the shapes the walk is ever asked about (indices into the
        plan, ascending); its sets, and `where` in each call, are then over those alone."""
        self.at_grid = at_grid
        self.space = PointSet(space, points)
        self.real = real
        self.shape_only = shape_only
        self.buffers = buffers
        self.element_of_id = {int(i): (name, k) for name, b in buffers.items()
                              for k, i in enumerate(b.ids.tolist())}
        self.count = self.space.count
        self.ones = self.space.ones
        # (by pair of `nodes`' keys, which `nodes` keeps alive: see `_eq`)
        self.proven: dict[tuple[int, int], tuple[int, int]] = {}
        self.addends: dict[int, tuple[int, Any] | None] = {}     # see `_addend` (by id(node))
        self.nodes: RawTermMemo[tuple] = RawTermMemo()           # see `_node`
        self.node_at = self.nodes.by_key
        self.zeros: RawTermMemo[int] = RawTermMemo()             # see `_zero`
        self.nan_constants: RawTermMemo[bool] = RawTermMemo()    # see `_canonical_nan`
        self.decl_kinds: RawTermMemo[int] = RawTermMemo()        # declaration -> its kind
        self.arrays: RawTermMemo[tuple[str, int] | None] = RawTermMemo()
        self.ctx = z3.main_ctx()
        self.ref = self.ctx.ref()

    DEPTH = 20_000      # Python frames for the walk (a 64-step fma chain needs about 800)

    def __call__(self, a, b, where: np.ndarray) -> bool:
        if where.size != self.count:
            raise ValueError(f"{where.size} shapes, not {self.count}")
        raw = [t if isinstance(t, (int, np.integer)) else t.as_ast() for t in (a, b)]
        w = bits_of(where)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, self.DEPTH))
        try:
            return w & self._eq(raw[0], raw[1], w) == w
        except RecursionError:
            return False            # deeper than DEPTH: not shown (never "different")
        finally:
            sys.setrecursionlimit(limit)

    # The walk computes *sets* of shapes. `_eq(x, y, w)` returns a set T of shapes where `x`
    # and `y` are shown equal, with two guarantees: T is sound everywhere (every shape in T is
    # shown), and exact within `w` (every shape of `w` the walk can show is in T). `w` only
    # says where to look: a selection's branch, an fma's padding or a second operand order
    # is explored only where `w` needs it. What a leaf shows it shows at every shape (two
    # offsets equal as values, two loads of one element), so T is often wider than `w`, and
    # the memo answers later visits at other shapes without walking again: a tiled matmul's
    # partial sums after k steps are the naive ones' for every K > k, shown once, not once
    # per K.

    def _eq(self, x, y, w: int) -> int:
        if not w:
            return 0
        if isinstance(x, (int, np.integer)) or isinstance(y, (int, np.integer)):
            vx, vy = self._value(x), self._value(y)
            return 0 if vx is None or vy is None else self.space.bits(vx == vy)
        # (terms by `raw_key`, their address: hash-consed, so one term is one address while
        # it lives; reading it is no call into libz3, and a walk makes a million)
        ix, iy = x.value, y.value
        if ix == iy:
            return self.ones
        key = (ix, iy)
        done = self.proven.get(key)
        # (shapes shown, when every shape explored was shown; else (explored, shown): a set
        # of 32768 shapes is a 4 KiB integer, and most pairs are shown wherever looked at)
        if done is None:
            explored = shown = 0
        else:
            explored, shown = (done, done) if isinstance(done, int) else done
            if w & shown == w:
                return shown
            w ^= w & explored
            if not w:
                return shown                  # exact within what was explored
        node_at = self.node_at
        nx = node_at(ix) or self._node(x)
        ny = node_at(iy) or self._node(y)
        shown |= self._walk(nx, ny, w)
        explored |= w
        self.proven[key] = shown if explored & shown == explored else (explored, shown)
        return shown

    def _walk(self, nx: tuple, ny: tuple, w: int) -> int:
        if not w:
            return 0
        kx, vx, ex, dx, xs, cx, x = nx
        ky, vy, ey, dy, ys, cy, y = ny
        if vx is not None and vy is not None:
            return self.space.bits(vx == vy)
        if cx is not None:
            then = cx & self._eq(xs[1], y, w & cx)
            other = self._eq(xs[2], y, w ^ (w & cx))
            return then | (other ^ (other & cx))
        if cy is not None:
            then = cy & self._eq(x, ys[1], w & cy)
            other = self._eq(x, ys[2], w ^ (w & cy))
            return then | (other ^ (other & cy))
        if self.real and (kx in _ADDEND_KINDS or ky in _ADDEND_KINDS):
            for node in (nx, ny):
                hit = self._addend(node)
                if hit is not None and w & hit[0]:
                    z, addend = hit
                    part = self._eq(addend, y, w & z) if node is nx else \
                        self._eq(x, addend, w & z)
                    return (z & part) | self._walk(nx, ny, w ^ (w & z))
        if ex is not None and ey is not None:
            valid = (self.ones if ex[2] is None else ex[2]) & \
                (self.ones if ey[2] is None else ey[2])
            same = 0 if ex[0] != ey[0] else valid & self.space.bits(ex[1] == ey[1])
            if w & valid == w:
                return same
            # where one of them is no element (an offset past its buffer, where the load
            # does not happen), they are compared as terms
            return same | self._congruent(nx, ny, w ^ (w & valid))
        return self._congruent(nx, ny, w)

    def _congruent(self, nx: tuple, ny: tuple, w: int) -> int:
        """The same operation on arguments shown equal; for IEEE add, multiply and fma's
        multiplicands also in the other order, where the first does not show it."""
        kx, xs, dx = nx[0], nx[4], nx[3]
        ky, ys, dy = ny[0], ny[4], ny[3]
        # declarations are hash-consed: the same one is the same pointer
        if kx is None or kx != ky or dx != dy or not xs or len(xs) != len(ys):
            return 0
        shown = self._all(xs, ys, w)
        first = _COMMUTING.get(kx)
        if first is None or w & shown == w:
            return shown
        ys = list(ys)
        ys[first], ys[first + 1] = ys[first + 1], ys[first]
        return shown | self._all(xs, ys, w ^ (w & shown))

    def _all(self, xs: list, ys: list, w: int) -> int:
        # Each argument is looked at only where the ones before it were shown equal. (A
        # loop, not `all(...)`: Python-to-Python calls only, so the walk's depth costs no
        # C stack.)
        shown = self.ones
        for cx, cy in zip(xs, ys):
            shown &= self._eq(cx, cy, w & shown)
            if not w & shown:
                break
        return shown

    def _node(self, raw) -> tuple:
        """What the walk needs of a term, once per term (by address): (kind, its values at
        every shape or None, the input element it loads or None, declaration, arguments, the
        shapes where the condition of a shape-only selection holds (a bit set) or None; and
        the raw term itself last)."""
        hit = self.node_at(raw.value)
        if hit is not None:
            return hit
        ref = self.ref
        kind = decl = cond = elem = None
        args: list = []
        if _R.ast_kind(ref, raw) == z3.Z3_APP_AST:
            d = _R.app_decl(ref, raw)
            decl = d.value
            kind = self.decl_kinds.by_key(decl)
            if kind is None:        # (a few declarations serve every node: fma, to_fp, ...)
                kind = self.decl_kinds.put(d, _R.decl_kind(ref, d))
            args = [_R.app_arg(ref, raw, i) for i in range(_R.num_args(ref, raw))]
            if kind == z3.Z3_OP_ITE and self._canonical_nan(args[1]):
                if self.real:
                    # Mode real: `ite(c, NaN, b)` (the canonicalizing wrapper around a
                    # result) is `b` for finite values, the claim's assumption (as
                    # `verifier.real_mode` reads it).
                    return self.nodes.put(raw, self._node(args[2]))
                test = self._nan_test(args[0], args[2])
                if test is not None:
                    # `canonicalize(b)`: one function of `b` (its signature: the test's
                    # format and the NaN), so two are equal where their `b`s are
                    # (congruence, in one step instead of seven)
                    if _R.ast_kind(ref, args[1]) == z3.Z3_NUMERAL_AST:
                        hit = (_CANONICAL, None, None, test + (args[1].value,), [args[2]],
                               None, raw)
                    else:
                        # an unspecified NaN, a function of the operation's inputs: equal
                        # where those are, so it is walked as an argument
                        hit = (_CANONICAL, None, None, test + (None,), [args[2], args[1]],
                               None, raw)
                    return self.nodes.put(raw, hit)
        vals = None if kind in _NEVER_SHAPE_ONLY else self._at(raw)
        if vals is None:
            if kind == z3.Z3_OP_ITE:
                c = self._at(args[0])
                cond = None if c is None else self.space.bits(c)
            # (an input element's own term is a constant; any other load a `Select`)
            if kind == z3.Z3_OP_SELECT or (kind == z3.Z3_OP_UNINTERPRETED and not args):
                elem = self.element(raw, kind, args)
        return self.nodes.put(raw, (kind, vals, elem, decl, args, cond, raw))

    def _nan_test(self, c, b) -> tuple | None:
        """(the id of the test's template,) when `c` is the NaN test the semantics build
        around `b` (`semantics.ops.common.is_nan`), else None (`_NAN_TESTS`)."""
        ref = self.ref
        width = _R.bv_size(ref, _R.sort(ref, b))
        for template in _NAN_TESTS.of_width(width):
            if template.is_test_of(ref, c, b):
                return (template.id,)
        return None

    # -- mode real: an fma whose multiplicand is zero is its addend ---------------------------

    def _canonical_nan(self, raw) -> bool:
        """Is `raw` the canonical NaN's bits (of its width)? Asked of every selection's first
        branch; the few constants there recur, so by address."""
        ref = self.ref
        hit = self.nan_constants.by_key(raw.value)       # (`raw_key`: asked of every If)
        if hit is None:
            hit = False
            if _R.ast_kind(ref, raw) == z3.Z3_NUMERAL_AST:
                sort = _R.sort(ref, raw)
                if _R.sort_kind(ref, sort) == z3.Z3_BV_SORT:
                    value = CANONICAL_NAN.get(_R.bv_size(ref, sort))
                    hit = value is not None and _R.numeral(ref, raw) == str(value).encode()
            elif _R.ast_kind(ref, raw) == z3.Z3_APP_AST:
                # an unspecified NaN (`semantics.ops.nan_results`): a NaN too, the same one
                # where its inputs are
                sort = _R.sort(ref, raw)
                hit = _R.sort_kind(ref, sort) == z3.Z3_BV_SORT and \
                    is_nan_pattern(raw, _R.bv_size(ref, sort))
            self.nan_constants.put(raw, hit)
        return hit

    def _addend(self, node: tuple) -> tuple[int, Any] | None:
        """Mode real: (the shapes where `node` reads as its addend, that addend) when `node`
        is an fma, or the bits of one whose addend is a float made of bits, with a
        multiplicand that is zero there: `0 * b + c` is `c` as real numbers (for finite `b`,
        the claim's assumption). A tiled kernel's padding adds `fma(0, 0, acc)`. Once per
        node (keyed by the node tuple's identity rather than a read of the term's id: every
        step of a walk asks, for both sides; `nodes` keeps each tuple, so none is reused)."""
        key = id(node)
        hit = self.addends.get(key, _UNSEEN)
        if hit is _UNSEEN:
            hit = self.addends[key] = self._find_addend(node)
        return hit

    def _find_addend(self, node: tuple) -> tuple[int, Any] | None:
        kind, args = node[0], node[4]
        bits = kind == z3.Z3_OP_FPA_TO_IEEE_BV
        if bits:
            f = self._node(args[0])
            kind, args = f[0], f[4]
        if kind != z3.Z3_OP_FPA_FMA:
            return None
        addend = args[3]
        if bits:
            c = self._node(addend)
            if c[0] != z3.Z3_OP_FPA_TO_FP or len(c[4]) != 1:
                return None            # (its bits would be a new term)
            addend = c[4][0]
        z = self._zero(args[1]) | self._zero(args[2])
        return (z, addend) if z else None

    def _zero(self, raw) -> int:
        """The shapes where a float, or the bits of one, is certainly +0 or -0: a constant, a
        value of the shape alone, or a selection on the shape between such terms."""
        hit = self.zeros.by_key(raw.value)               # (`raw_key`)
        if hit is not None:
            return hit
        kind, vals, _, _, args, cond, raw = self._node(raw)
        if vals is not None:
            width = _R.bv_size(self.ref, _R.sort(self.ref, raw))
            out = self.space.bits((np.asarray(vals).astype(np.uint64) &
                                   np.uint64((1 << (width - 1)) - 1)) == 0)
        elif kind in (z3.Z3_OP_FPA_PLUS_ZERO, z3.Z3_OP_FPA_MINUS_ZERO):
            out = self.space.ones
        elif kind == z3.Z3_OP_FPA_TO_FP and len(args) == 1:
            out = self._zero(args[0])
        elif cond is not None:
            then, other = self._zero(args[1]), self._zero(args[2])
            out = (cond & then) | (other ^ (other & cond))
        else:
            out = 0
        return self.zeros.put(raw, out)

    def _at(self, raw) -> np.ndarray | None:
        if self.shape_only is not None and not self.shape_only(raw):
            return None
        return self.at_grid(raw)

    def element(self, raw, kind, args: list) -> tuple | None:
        """(buffer, element index, the shapes where that index is an element (a bit set) or
        None for everywhere) when the term loads a whole input element: its own term, or a
        `Select` on an indexed buffer's array at an offset of the shape alone."""
        hit = self.element_of_id.get(raw_id(self.ref, raw))     # (`IndexedBuffer.ids`)
        if hit is not None:
            return hit[0], hit[1], None
        if kind != z3.Z3_OP_SELECT:
            return None
        ref = self.ref
        arr = args[0]
        if _R.ast_kind(ref, arr) != z3.Z3_APP_AST or _R.num_args(ref, arr):
            return None
        named = self.arrays.get(arr, _UNSEEN)
        if named is _UNSEEN:
            d = _R.app_decl(ref, arr)
            named = None
            if _R.decl_kind(ref, d) == z3.Z3_OP_UNINTERPRETED:
                named = array_buffer(_R.symbol(ref, _R.decl_name(ref, d)).decode())
            self.arrays.put(arr, named)
        if named is None or named[0] not in self.buffers:
            return None
        b = self.buffers[named[0]]
        off = self._at(args[1])
        if named[1] != b.elem_bytes or off is None:
            return None
        off = np.asarray(off).astype(np.uint64)
        esz = np.uint64(b.elem_bytes)
        idx = off // esz
        ok = self.space.bits((off % esz == 0) & (idx < np.uint64(b.ids.size)))
        return named[0], idx.astype(np.int64), None if ok == self.space.ones else ok

    def _value(self, t) -> np.ndarray | None:
        """A walked leaf's compact value: a concrete int, or a term of the shape alone."""
        if isinstance(t, (int, np.integer)):
            return np.uint64(int(t) & 0xFFFF_FFFF_FFFF_FFFF)
        v = self._at(t)
        return None if v is None else np.asarray(v).astype(np.uint64)


__all__ = ["SameAt", "bits_of", "mask_of"]
