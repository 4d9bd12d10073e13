"""Two stored terms equal at every shape of a set, for every input: `SameAt`, a walk over both.

The indexed comparison (`verifier.indexed`) hands over pairs of writes whose terms differ at
some cells: a tiled matmul's `fma(If(k < K, A[row*K + k], 0), ...)` against the naive one's
`fma(A[row*K + k], ...)`. Where the codes of the two terms differ, the terms may still denote
the same function of the inputs at the shapes where they meet; `SameAt` shows that by walking
both at once, or answers "not shown" (never "different").

Sets of shapes are Python integers used as bit sets (bit i: shape i of the plan). A walk
visits hundreds of thousands of pairs of subterms, each intersecting and testing a set; on
integers that is a machine-word loop in C, where numpy's per-call overhead on arrays of a few
thousand booleans was most of the walk's time. Values at every shape (offsets, conditions)
stay numpy arrays, evaluated once per term.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import z3

from semantics.domains.z3raw import read as _R
from semantics.machine.indexed_buffers import array_buffer
from verifier.real_mode import CANONICAL_NAN

if TYPE_CHECKING:
    from verifier.indexed import IndexedBuffer

Evaluate = Callable[[Any], "np.ndarray | None"]

# Operations whose first two floating-point operands commute exactly (IEEE add and multiply;
# fma's multiplicands): keq's semantics build them in a canonical order of their terms, so
# one side's order may be swapped where the other's terms differ.
_COMMUTING = {z3.Z3_OP_FPA_ADD: 1, z3.Z3_OP_FPA_MUL: 1, z3.Z3_OP_FPA_FMA: 1}
# Floating-point terms never evaluate at shapes (the evaluator reads bit-vectors and Booleans).
_NEVER_SHAPE_ONLY = {z3.Z3_OP_FPA_ADD, z3.Z3_OP_FPA_MUL, z3.Z3_OP_FPA_FMA, z3.Z3_OP_FPA_TO_FP,
                     z3.Z3_OP_FPA_TO_IEEE_BV, z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN}
_UNSEEN = object()


def bits_of(mask: np.ndarray) -> int:
    """A boolean array as a bit set (bit i: element i)."""
    return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")


def mask_of(bits: int, count: int) -> np.ndarray:
    """A bit set as a boolean array of `count` elements."""
    raw = np.frombuffer(bits.to_bytes((count + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, count=count, bitorder="little").astype(bool)


def _same_element(ex: tuple, ey: tuple, w: int) -> bool | None:
    """Do two element loads read the same element at every shape of `w`? None when one of
    them is no element at some shape there (the walk then compares them as terms)."""
    if (ex[2] is not None and w & ~ex[2]) or (ey[2] is not None and w & ~ey[2]):
        return None
    if ex[0] != ey[0]:
        return False
    ix, iy = ex[1], ey[1]
    if not isinstance(ix, np.ndarray) and not isinstance(iy, np.ndarray):
        return ix == iy
    return not w & ~bits_of(np.asarray(ix == iy))


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

    The walk reads raw ASTs (`z3raw.read`: no Python wrapper per node) of terms the caller
    keeps alive; `at_shapes` must keep the terms it evaluates alive, and `shape_only(raw)`
    (optional) says cheaply whether a term is worth evaluating."""

    def __init__(self, at_shapes: Evaluate, buffers: dict[str, "IndexedBuffer"],
                 shape_only: Callable[[Any], bool] | None = None, real: bool = False) -> None:
        self.at_shapes = at_shapes
        self.real = real
        self.shape_only = shape_only
        self.buffers = buffers
        self.element_of_id = {int(i): (name, k) for name, b in buffers.items()
                              for k, i in enumerate(b.ids.tolist())}
        self.count = 0                              # shapes (set by each call)
        self.proven: dict[tuple[int, int], int] = {}   # pair of term ids -> shapes shown
        self.nodes: dict[int, tuple] = {}          # see `_node`
        self.zeros: dict[int, int] = {}            # see `_zero`
        self.arrays: dict[int, tuple[str, int] | None] = {}
        self.pinned: list = []
        self.ctx = z3.main_ctx()
        self.ref = self.ctx.ref()

    DEPTH = 20_000      # Python frames for the walk (a 64-step fma chain needs about 800)

    def __call__(self, a, b, where: np.ndarray) -> bool:
        if self.count and where.size != self.count:
            raise ValueError(f"{where.size} shapes, after {self.count}")
        self.count = where.size
        self.pinned += [t for t in (a, b) if z3.is_expr(t)]
        raw = [t if isinstance(t, (int, np.integer)) else t.as_ast() for t in (a, b)]
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, self.DEPTH))
        try:
            return self._eq(raw[0], raw[1], bits_of(where))
        except RecursionError:
            return False            # deeper than DEPTH: not shown (never "different")
        finally:
            sys.setrecursionlimit(limit)

    def _eq(self, x, y, w: int) -> bool:
        if not w:
            return True
        if isinstance(x, (int, np.integer)) or isinstance(y, (int, np.integer)):
            vx, vy = self._values(x, w), self._values(y, w)
            return vx is not None and vy is not None and np.array_equal(vx, vy)
        ix, iy = _R.ast_id(self.ref, x), _R.ast_id(self.ref, y)
        if ix == iy:
            return True
        key = (ix, iy)
        done = self.proven.get(key)
        if done is not None:
            w &= ~done
            if not w:
                return True
        if not self._walk(self._node(x, ix), self._node(y, iy), w):
            return False
        self.proven[key] = w if done is None else (done | w)
        return True

    def _walk(self, nx: tuple, ny: tuple, w: int) -> bool:
        kx, vx, ex, dx, xs, cx, x = nx
        ky, vy, ey, dy, ys, cy, y = ny
        if vx is not None and vy is not None:
            return not w & ~bits_of(vx == vy)
        if cx is not None:
            return self._eq(xs[1], y, w & cx) and self._eq(xs[2], y, w & ~cx)
        if cy is not None:
            return self._eq(x, ys[1], w & cy) and self._eq(x, ys[2], w & ~cy)
        if self.real:
            for node in (nx, ny):
                hit = self._addend(node, w)
                if hit is not None:
                    z, addend = hit
                    if not (self._eq(addend, y, z) if node is nx else self._eq(x, addend, z)):
                        return False
                    return self._walk(nx, ny, w & ~z)
        if ex is not None and ey is not None:
            same = _same_element(ex, ey, w)
            if same is not None:
                return same
        # declarations are hash-consed: the same one is the same pointer
        if kx is None or kx != ky or dx != dy or not xs or len(xs) != len(ys):
            return False
        if self._all(xs, ys, w):
            return True
        first = _COMMUTING.get(kx)
        if first is None:
            return False
        ys = list(ys)
        ys[first], ys[first + 1] = ys[first + 1], ys[first]
        return self._all(xs, ys, w)

    def _all(self, xs: list, ys: list, w: int) -> bool:
        # (a loop, not `all(...)`: Python-to-Python calls only, so the walk's depth costs no
        # C stack)
        for cx, cy in zip(xs, ys):
            if not self._eq(cx, cy, w):
                return False
        return True

    def _node(self, raw, nid: int) -> tuple:
        """What the walk needs of a term, once per term: (kind, its values at every shape or
        None, the input element it loads or None, declaration, arguments, the shapes where
        the condition of a shape-only selection holds (a bit set) or None; and the raw term
        itself last)."""
        hit = self.nodes.get(nid)
        if hit is not None:
            return hit
        ref = self.ref
        kind = decl = cond = elem = None
        args: list = []
        if _R.ast_kind(ref, raw) == z3.Z3_APP_AST:
            d = _R.app_decl(ref, raw)
            kind, decl = _R.decl_kind(ref, d), d.value
            args = [_R.app_arg(ref, raw, i) for i in range(_R.num_args(ref, raw))]
            if self.real and kind == z3.Z3_OP_ITE and self._canonical_nan(args[1]):
                # Mode real: `ite(c, NaN, b)` (the canonicalizing wrapper around a result)
                # is `b` for finite values, the claim's assumption (as `verifier.real_mode`
                # reads it).
                hit = self.nodes[nid] = self._node(args[2], _R.ast_id(ref, args[2]))
                return hit
        vals = None if kind in _NEVER_SHAPE_ONLY else self._at(raw)
        if vals is None:
            if kind == z3.Z3_OP_ITE:
                c = self._at(args[0])
                cond = None if c is None else bits_of(np.asarray(c, dtype=bool))
            elem = self._element(nid, kind, args)
        hit = self.nodes[nid] = (kind, vals, elem, decl, args, cond, raw)
        return hit

    # -- mode real: an fma whose multiplicand is zero is its addend ---------------------------

    def _canonical_nan(self, raw) -> bool:
        ref = self.ref
        if _R.ast_kind(ref, raw) != z3.Z3_NUMERAL_AST:
            return False
        sort = _R.sort(ref, raw)
        if _R.sort_kind(ref, sort) != z3.Z3_BV_SORT:
            return False
        value = CANONICAL_NAN.get(_R.bv_size(ref, sort))
        return value is not None and _R.numeral(ref, raw) == str(value).encode()

    def _addend(self, node: tuple, w: int) -> tuple[int, Any] | None:
        """Mode real: (the shapes of `w` where `node` reads as its addend, that addend) when
        `node` is an fma, or the bits of one whose addend is a float made of bits, with a
        multiplicand that is zero there: `0 * b + c` is `c` as real numbers (for finite `b`,
        the claim's assumption). A tiled kernel's padding adds `fma(0, 0, acc)`."""
        kind, args = node[0], node[4]
        bits = kind == z3.Z3_OP_FPA_TO_IEEE_BV
        if bits:
            f = self._node(args[0], _R.ast_id(self.ref, args[0]))
            kind, args = f[0], f[4]
        if kind != z3.Z3_OP_FPA_FMA:
            return None
        addend = args[3]
        if bits:
            c = self._node(addend, _R.ast_id(self.ref, addend))
            if c[0] != z3.Z3_OP_FPA_TO_FP or len(c[4]) != 1:
                return None            # (its bits would be a new term)
            addend = c[4][0]
        z = (self._zero(args[1]) | self._zero(args[2])) & w
        return (z, addend) if z else None

    def _zero(self, raw) -> int:
        """The shapes where a float, or the bits of one, is certainly +0 or -0: a constant, a
        value of the shape alone, or a selection on the shape between such terms."""
        nid = _R.ast_id(self.ref, raw)
        hit = self.zeros.get(nid)
        if hit is not None:
            return hit
        kind, vals, _, _, args, cond, raw = self._node(raw, nid)
        if vals is not None:
            width = _R.bv_size(self.ref, _R.sort(self.ref, raw))
            out = bits_of((np.asarray(vals).astype(np.uint64) &
                           np.uint64((1 << (width - 1)) - 1)) == 0)
        elif kind in (z3.Z3_OP_FPA_PLUS_ZERO, z3.Z3_OP_FPA_MINUS_ZERO):
            out = (1 << self.count) - 1
        elif kind == z3.Z3_OP_FPA_TO_FP and len(args) == 1:
            out = self._zero(args[0])
        elif cond is not None:
            out = (cond & self._zero(args[1])) | (~cond & self._zero(args[2]))
        else:
            out = 0
        self.zeros[nid] = out
        return out

    def _at(self, raw) -> np.ndarray | None:
        if self.shape_only is not None and not self.shape_only(raw):
            return None
        return self.at_shapes(z3.z3._to_expr_ref(raw, self.ctx))

    def _element(self, nid: int, kind, args: list) -> tuple | None:
        """(buffer, element index, the shapes where that index is an element (a bit set) or
        None for everywhere) when the term loads a whole input element: its own term, or a
        `Select` on an indexed buffer's array at an offset of the shape alone."""
        hit = self.element_of_id.get(nid)
        if hit is not None:
            return hit[0], hit[1], None
        if kind != z3.Z3_OP_SELECT:
            return None
        ref = self.ref
        arr = args[0]
        if _R.ast_kind(ref, arr) != z3.Z3_APP_AST or _R.num_args(ref, arr):
            return None
        aid = _R.ast_id(ref, arr)
        named = self.arrays.get(aid, _UNSEEN)
        if named is _UNSEEN:
            d = _R.app_decl(ref, arr)
            named = None
            if _R.decl_kind(ref, d) == z3.Z3_OP_UNINTERPRETED:
                named = array_buffer(_R.symbol(ref, _R.decl_name(ref, d)).decode())
            self.arrays[aid] = named
        if named is None or named[0] not in self.buffers:
            return None
        b = self.buffers[named[0]]
        off = self._at(args[1])
        if named[1] != b.elem_bytes or off is None:
            return None
        off = off.astype(np.uint64)
        esz = np.uint64(b.elem_bytes)
        idx = off // esz
        ok = (off % esz == 0) & (idx < np.uint64(b.ids.size))
        return named[0], idx.astype(np.int64), bits_of(ok)

    def _values(self, t, w: int) -> np.ndarray | None:
        where = mask_of(w, self.count)
        if isinstance(t, (int, np.integer)):
            return np.full(int(where.sum()), int(t) & 0xFFFF_FFFF_FFFF_FFFF, dtype=np.uint64)
        v = self._at(t)
        return None if v is None else v[where].astype(np.uint64)


__all__ = ["SameAt", "bits_of", "mask_of"]
