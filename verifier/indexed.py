"""Indexed buffers over symbolic launch shapes: bounds and outputs decided shape by shape.

When splitting symbolic addresses by value is too costly (a transpose's `y * cols + x` over
symbolic `rows` and `cols`), the maximal launch runs with the spec's `in` and `out` buffers
*indexed* (`semantics.machine.indexed_buffers`; chosen up front when a buffer's length
mentions two shape scalars, else after splitting ran out of budget): loads from an `in` buffer are
`Select(A, offset)`, stores to an `out` buffer go to a write log. This module decides, by
evaluating the logged terms at every allowed shape with numpy (exact: the plan lists every
shape):

- bounds: every logged access is inside its buffer's length and aligned wherever its
  condition holds (`violation`);
- outputs: replaying each kernel's write log gives, per shape and element, a *code* for the
  term the kernel leaves there: the id of the input element a `Select` reads at that shape
  (the same id as that element's own term, which loads at concrete addresses return), the
  id of any other term, or the id of the element's initial contents when no store writes it.
  Equal codes at every shape where the element exists prove the element (the same term
  denotes the same function of the inputs). Where codes differ, the two stored terms are
  walked at once over the shapes where that pair of writes meets (`SameAt`: congruence,
  with shape-only parts evaluated and shape-only selections split; in mode real also an
  fma with a zero multiplicand read as its addend). A shape where neither
  shows equality, or where two threads write one element, is handed back (`Differs`) to be
  checked on its own, which either refutes it with a replayed counterexample or names a
  race.

Nothing here is approximate (beyond mode real's own reading of floats as reals): the condition
or offset of a logged access that depends on input data cannot be evaluated and raises
`NotIndexable` (the caller then says Inconclusive); a selection at such an offset is an opaque
term, equal only to the very same term.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import z3

from semantics.domains.z3raw import read as _R
from semantics.machine.indexed_buffers import IndexedAccess, array_buffer
from verifier.real_mode import CANONICAL_NAN as _CANONICAL_NAN
from verifier.spec import type_bits


class NotIndexable(Exception):
    """The logged accesses cannot be decided by evaluation (the message says why)."""


@dataclass(frozen=True)
class Differs:
    """At shape `shape` (an index into the plan's shapes) the kernels may differ: `why`."""

    shape: int
    why: str


@dataclass(frozen=True)
class IndexedBuffer:
    """What the verifier knows of one indexed buffer: its element size, the ids of its
    elements' input terms (maximal length) and its length in bytes at every shape."""

    name: str
    elem_bytes: int
    ids: np.ndarray
    length_bytes: np.ndarray


Evaluate = Callable[[Any], "np.ndarray | None"]


def _at(at_shapes: Evaluate, t, count: int, what: str) -> np.ndarray:
    if isinstance(t, (bool, np.bool_)):
        return np.full(count, bool(t))
    if isinstance(t, (int, np.integer)):
        return np.full(count, int(t) & 0xFFFF_FFFF_FFFF_FFFF, dtype=np.uint64)
    v = at_shapes(t)
    if v is None:
        raise NotIndexable(f"{what} depends on input data")
    return v


def violation(at_shapes: Evaluate, count: int, buffers: dict[str, IndexedBuffer],
              accesses: tuple[IndexedAccess, ...]) -> tuple[int, IndexedAccess] | None:
    """(a shape, the access) where a logged access is out of its buffer or misaligned; None
    when every access is inside at every shape where it happens."""
    for a in accesses:
        cond = _at(at_shapes, a.cond, count, f"the condition of {a.what}")
        if not cond.any():
            continue
        off = _at(at_shapes, a.offset, count, f"the offset of {a.what}")
        length = buffers[a.buffer].length_bytes
        bad = cond & ((off >= np.uint64(1 << 62)) | (off + np.uint64(a.nbytes) > length)
                      | (off % np.uint64(a.align) != 0))
        if bad.any():
            return int(np.argmax(bad)), a
    return None


_UNSEEN = object()


class _Codes:
    """The code of the term a value selects at given shapes (see the module docstring).

    `assign(value, shapes, cells)` records the codes of `value` at `shapes` for the output
    cells `cells`; `Select`s are collected and resolved together in `resolve` (one numpy pass
    over every cell instead of a few calls per store)."""

    def __init__(self, at_shapes: Evaluate, count: int,
                 buffers: dict[str, IndexedBuffer]) -> None:
        self.at_shapes, self.count, self.buffers = at_shapes, count, buffers
        self.arrays: dict[int, tuple[str, int] | None] = {}
        self.pinned: list = []
        self.fixed: list[tuple[np.ndarray, np.ndarray]] = []      # (cells, codes)
        self.selects: dict[str, list] = {}      # buffer -> [(cells, byte offsets, own code)]

    def assign(self, t, width: int, shapes: np.ndarray, cells: np.ndarray) -> None:
        if isinstance(t, (int, np.integer)):
            t = z3.BitVecVal(int(t), width)      # hash-consed: one id per value and width
        self.pinned.append(t)
        stack = [(t, shapes, cells)]
        while stack:
            e, sh, ce = stack.pop()
            if not sh.size:
                continue
            if z3.is_app_of(e, z3.Z3_OP_ITE):
                c = self.at_shapes(e.arg(0))
                if c is not None:
                    pick = c[sh]
                    stack.append((e.arg(1), sh[pick], ce[pick]))
                    stack.append((e.arg(2), sh[~pick], ce[~pick]))
                    continue
            elif z3.is_select(e) and z3.is_const(e.arg(0)):
                found = self._selected(e)
                if found is not None:
                    name, off = found
                    self.selects.setdefault(name, []).append((ce, off[sh], -e.get_id()))
                    continue
            self.fixed.append((ce, np.full(ce.size, e.get_id(), dtype=np.int64)))

    def _selected(self, e) -> tuple[str, np.ndarray] | None:
        """(the input buffer, the byte offset at every shape) a `Select` reads; None when it
        is not one of ours, reads part of an element or at a data-dependent offset."""
        arr = e.arg(0)
        named = self.arrays.get(arr.get_id(), _UNSEEN)
        if named is _UNSEEN:
            named = self.arrays[arr.get_id()] = array_buffer(arr.decl().name())
            self.pinned.append(arr)
        if named is None or named[0] not in self.buffers:
            return None
        off = self.at_shapes(e.arg(1))
        if named[1] != self.buffers[named[0]].elem_bytes or off is None:
            return None
        return named[0], off

    def resolve(self, out: np.ndarray) -> None:
        """Write every recorded code into `out` (indexed by cell)."""
        for cells, codes in self.fixed:
            out[cells] = codes
        for name, parts in self.selects.items():
            b = self.buffers[name]
            cells = np.concatenate([p[0] for p in parts])
            off = np.concatenate([p[1] for p in parts])
            own = np.concatenate([np.full(p[0].size, p[2], dtype=np.int64) for p in parts])
            esz = np.uint64(b.elem_bytes)
            idx = off // esz
            ok = (off % esz == 0) & (idx < np.uint64(b.ids.size))
            # Where the offset is no element, the read is out of bounds (bounds refute it
            # where the access happens); elsewhere the value is never used: its own code.
            out[cells] = np.where(ok, b.ids[np.where(ok, idx, 0).astype(np.int64)], own)
        self.fixed, self.selects = [], {}


def replay_log(codes: _Codes, at_shapes: Evaluate, b: IndexedBuffer, width: int,
               initial: np.ndarray, accesses: tuple[IndexedAccess, ...], role: str
               ) -> tuple[np.ndarray, np.ndarray, list, Differs | None]:
    """The codes `role` leaves in `b` at every shape (shapes x elements), replaying its
    write log in program order, and which write left each (an index into the returned
    writes, -1 for the initial contents); with a `Differs` when two threads write one
    element.

    All writes at once: each becomes its (shape, element) cells, numbered shape-major; for
    cells written more than once, a stable sort by cell keeps program order within a cell,
    so the cell's last write is the one that stays, and a cell written by two lanes is a
    clash."""
    count, n = codes.count, initial.size
    esz = np.uint64(b.elem_bytes)
    cells, lanes, which = [], [], []
    writes = [a for a in accesses if a.kind == "w" and a.buffer == b.name]
    total = 0
    for j, a in enumerate(writes):
        cond = _at(at_shapes, a.cond, count, f"the condition of {a.what}")
        shapes = np.flatnonzero(cond)
        if not shapes.size:
            continue
        if a.nbytes != b.elem_bytes:
            raise NotIndexable(f"{a.what} writes part of an element of '{b.name}'")
        off = _at(at_shapes, a.offset, count, f"the offset of {a.what}")
        elems = (off[shapes] // esz).astype(np.int64)     # inside and aligned: bounds passed
        cells.append(shapes * n + elems)
        # the write's codes go to positions total.. of the concatenated cells
        codes.assign(a.value, width, shapes, np.arange(total, total + shapes.size))
        total += shapes.size
        lanes.append(np.full(shapes.size, a.lane, dtype=np.int64))
        which.append(np.full(shapes.size, j, dtype=np.int64))
    out = np.broadcast_to(initial, (count, n)).copy()
    writer = np.full((count, n), -1, dtype=np.int32)
    if not cells:
        return out, writer, writes, None
    values = np.empty(total, dtype=np.int64)
    codes.resolve(values)
    cell = np.concatenate(cells)
    flat = out.reshape(-1)
    # Most cells are written once: those are assigned directly; only the others are sorted.
    again = np.bincount(cell, minlength=flat.size)[cell] > 1
    once = ~again
    flat[cell[once]] = values[once]
    which_all = np.concatenate(which)
    writer.reshape(-1)[cell[once]] = which_all[once]
    if not again.any():
        return out, writer, writes, None
    pos = np.flatnonzero(again)
    order = pos[np.argsort(cell[pos], kind="stable")]      # program order within a cell
    cell = cell[order]
    lane = np.concatenate(lanes)[order]
    starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]])
    ends = np.r_[starts[1:], cell.size] - 1
    clash = np.minimum.reduceat(lane, starts) != np.maximum.reduceat(lane, starts)
    if clash.any():
        g = int(np.argmax(clash))
        shape, elem = divmod(int(cell[starts[g]]), n)
        a = writes[int(which_all[order][ends[g]])]
        return out, writer, writes, Differs(shape, f"two threads of the {role} may write "
                                                   f"element {elem} of '{b.name}' ({a.what})")
    flat[cell[ends]] = values[order][ends]
    writer.reshape(-1)[cell[ends]] = which_all[order][ends]
    return out, writer, writes, None


def compare(at_shapes: Evaluate, count: int, buffers: dict[str, IndexedBuffer],
            widths: dict[str, int], initial: dict[str, np.ndarray],
            logs: dict[str, tuple[IndexedAccess, ...]],
            shape_only: Callable[[Any], bool] | None = None,
            real: bool = False) -> tuple[int, Differs | None]:
    """(elements compared, the first shape where the kernels may differ or None). `real`:
    the terms are compared as real numbers where they differ as floats (`SameAt`)."""
    codes = _Codes(at_shapes, count, buffers)
    compared = 0
    for name, init in initial.items():
        b = buffers[name]
        left, writer, writes = {}, {}, {}
        for role, log in logs.items():
            left[role], writer[role], writes[role], clash = replay_log(
                codes, at_shapes, b, widths[name], init, log, role)
            if clash is not None:
                return compared, clash
        live = np.arange(init.size, dtype=np.uint64)[None, :] * np.uint64(b.elem_bytes) \
            < b.length_bytes[:, None]
        differ = (left["reference"] != left["candidate"]) & live
        compared += int(live.sum())
        if differ.any():
            same = SameAt(at_shapes, buffers, shape_only, real)
            at = _second_look(same, count, differ, writer, writes)
            if at is not None:
                s, e = at
                return compared, Differs(s, f"element {e} of '{name}' is not shown to be the "
                                            f"same term in both kernels")
    return compared, None


def _second_look(same: "SameAt", count: int, differ: np.ndarray,
                 writer: dict[str, np.ndarray], writes: dict[str, list]
                 ) -> tuple[int, int] | None:
    """Cells whose codes differ may still hold equal terms: the values two writes store
    can be built alike around shape-dependent parts (a matmul's `fma(A[row*K + k], ...)`,
    its padding `If(k < K, a, 0)`). Per pair of writes (reference, candidate), over the
    shapes where that pair meets, `SameAt` compares their values. Returns the first
    (shape, element) not shown equal this way, or None."""
    shapes, elems = np.nonzero(differ)
    wr, wc = writer["reference"][differ], writer["candidate"][differ]
    pair = wr.astype(np.int64) * (1 << 32) + wc.astype(np.int64)
    keys, first = np.unique(pair, return_index=True)
    for key, i in zip(keys.tolist(), first.tolist()):
        jr, jc = int(wr[i]), int(wc[i])
        if jr < 0 or jc < 0:
            return int(shapes[i]), int(elems[i])          # an element one kernel never wrote
        where = np.zeros(count, dtype=bool)
        where[shapes[pair == key]] = True
        if not same(writes["reference"][jr].value, writes["candidate"][jc].value, where):
            return int(shapes[i]), int(elems[i])
    return None


# Operations whose first two floating-point operands commute exactly (IEEE add and multiply;
# fma's multiplicands): keq's semantics build them in a canonical order of their terms, so
# one side's order may be swapped where the other's terms differ.
_COMMUTING = {z3.Z3_OP_FPA_ADD: 1, z3.Z3_OP_FPA_MUL: 1, z3.Z3_OP_FPA_FMA: 1}
# Floating-point terms never evaluate at shapes (the evaluator reads bit-vectors and Booleans).
_NEVER_SHAPE_ONLY = {z3.Z3_OP_FPA_ADD, z3.Z3_OP_FPA_MUL, z3.Z3_OP_FPA_FMA, z3.Z3_OP_FPA_TO_FP,
                     z3.Z3_OP_FPA_TO_IEEE_BV, z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN}


def _same_element(ex: tuple, ey: tuple, w: np.ndarray) -> bool | None:
    """Do two element loads read the same element at every shape of `w`? None when one of
    them is no element at some shape there (the walk then compares them as terms)."""
    if (ex[2] is not None and not ex[2][w].all()) or (ey[2] is not None and not ey[2][w].all()):
        return None
    if ex[0] != ey[0]:
        return False
    ix = ex[1][w] if isinstance(ex[1], np.ndarray) else ex[1]
    iy = ey[1][w] if isinstance(ey[1], np.ndarray) else ey[1]
    return bool(np.all(ix == iy))


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

    def __init__(self, at_shapes: Evaluate, buffers: dict[str, IndexedBuffer],
                 shape_only: Callable[[Any], bool] | None = None, real: bool = False) -> None:
        self.at_shapes = at_shapes
        self.real = real
        self.zeros: dict[int, np.ndarray] = {}     # see `_zero`
        self.count = 0                              # shapes (set by each call)
        self.shape_only = shape_only
        self.buffers = buffers
        self.element_of_id = {int(i): (name, k) for name, b in buffers.items()
                              for k, i in enumerate(b.ids.tolist())}
        self.proven: dict[tuple[int, int], np.ndarray] = {}
        self.nodes: dict[int, tuple] = {}          # see `_node`
        self.arrays: dict[int, tuple[str, int] | None] = {}
        self.pinned: list = []
        self.ctx = z3.main_ctx()
        self.ref = self.ctx.ref()

    DEPTH = 20_000      # Python frames for the walk (a 64-step fma chain needs about 800)

    def __call__(self, a, b, where: np.ndarray) -> bool:
        self.count = where.size
        self.pinned += [t for t in (a, b) if z3.is_expr(t)]
        raw = [t if isinstance(t, (int, np.integer)) else t.as_ast() for t in (a, b)]
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, self.DEPTH))
        try:
            return self._eq(raw[0], raw[1], where)
        except RecursionError:
            return False            # deeper than DEPTH: not shown (never "different")
        finally:
            sys.setrecursionlimit(limit)

    def _eq(self, x, y, w: np.ndarray) -> bool:
        if not w.any():
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
            w = w & ~done
            if not w.any():
                return True
        if not self._walk(self._node(x, ix), self._node(y, iy), w):
            return False
        self.proven[key] = w if done is None else (done | w)
        return True

    def _walk(self, nx: tuple, ny: tuple, w: np.ndarray) -> bool:
        kx, vx, ex, dx, xs, cx, x = nx
        ky, vy, ey, dy, ys, cy, y = ny
        if vx is not None and vy is not None:
            return bool(np.array_equal(vx[w], vy[w]))
        if cx is not None:
            return self._eq(xs[1], y, w & cx) and self._eq(xs[2], y, w & ~cx)
        if cy is not None:
            return self._eq(x, ys[1], w & cy) and self._eq(x, ys[2], w & ~cy)
        if self.real:
            hit = self._addend(nx, w)
            if hit is not None:
                if not self._eq(hit[1], y, hit[0]):
                    return False
                return self._walk(nx, ny, w & ~hit[0])
            hit = self._addend(ny, w)
            if hit is not None:
                if not self._eq(x, hit[1], hit[0]):
                    return False
                return self._walk(nx, ny, w & ~hit[0])
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

    def _all(self, xs: list, ys: list, w: np.ndarray) -> bool:
        # (a loop, not `all(...)`: Python-to-Python calls only, so the walk's depth costs no
        # C stack)
        for cx, cy in zip(xs, ys):
            if not self._eq(cx, cy, w):
                return False
        return True

    def _node(self, raw, nid: int) -> tuple:
        """What the walk needs of a term, once per term: (kind, its values at every shape or
        None, the input element it loads or None, declaration, arguments, the condition at
        every shape of a shape-only selection or None; and the raw term itself last)."""
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
                cond = None if c is None else np.asarray(c, dtype=bool)
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
        value = _CANONICAL_NAN.get(_R.bv_size(ref, sort))
        return value is not None and _R.numeral(ref, raw) == str(value).encode()

    def _addend(self, node: tuple, w: np.ndarray) -> tuple[np.ndarray, Any] | None:
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
        return (z, addend) if z.any() else None

    def _zero(self, raw) -> np.ndarray:
        """The shapes where a float, or the bits of one, is certainly +0 or -0: a constant, a
        value of the shape alone, or a selection on the shape between such terms."""
        nid = _R.ast_id(self.ref, raw)
        hit = self.zeros.get(nid)
        if hit is not None:
            return hit
        kind, vals, _, _, args, cond, raw = self._node(raw, nid)
        count = self.count
        if vals is not None:
            width = _R.bv_size(self.ref, _R.sort(self.ref, raw))
            out = (np.asarray(vals).astype(np.uint64) &
                   np.uint64((1 << (width - 1)) - 1)) == 0
        elif kind in (z3.Z3_OP_FPA_PLUS_ZERO, z3.Z3_OP_FPA_MINUS_ZERO):
            out = np.ones(count, dtype=bool)
        elif kind == z3.Z3_OP_FPA_TO_FP and len(args) == 1:
            out = self._zero(args[0])
        elif cond is not None:
            out = (cond & self._zero(args[1])) | (~cond & self._zero(args[2]))
        else:
            out = np.zeros(count, dtype=bool)
        self.zeros[nid] = out
        return out

    def _at(self, raw) -> np.ndarray | None:
        if self.shape_only is not None and not self.shape_only(raw):
            return None
        return self.at_shapes(z3.z3._to_expr_ref(raw, self.ctx))

    def _element(self, nid: int, kind, args: list) -> tuple | None:
        """(buffer, element index, where that index is an element or None for everywhere)
        when the term loads a whole input element: its own term, or a `Select` on an indexed
        buffer's array at an offset of the shape alone."""
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
        return named[0], idx.astype(np.int64), ok

    def _values(self, t, w: np.ndarray) -> np.ndarray | None:
        if isinstance(t, (int, np.integer)):
            return np.full(int(w.sum()), int(t) & 0xFFFF_FFFF_FFFF_FFFF, dtype=np.uint64)
        v = self._at(t)
        return None if v is None else v[w].astype(np.uint64)


def indexed_params(spec, role: str, ptx_params) -> dict[str, tuple[str, str]]:
    """PTX parameter -> (access, spec name) for the `role`'s `in` and `out` buffers."""
    side = spec.side(role)
    out = {}
    for name, kp in zip(side.arg_names, ptx_params):
        p = spec.param(name)
        if p.is_buffer and p.access in ("in", "out"):
            out[kp.name] = (p.access, p.name)
    return out


def buffer_info(spec, values: dict, length_term: Callable[[Any], Any], at_shapes: Evaluate,
                count: int) -> dict[str, IndexedBuffer]:
    """The verifier's view of every `in` and `out` buffer: `values[name].values` are its
    elements' terms, `length_term(param)` its length in elements (an int or a term)."""
    out = {}
    for p in spec.params:
        if p.is_buffer and p.access in ("in", "out"):
            esz = type_bits(p.type) // 8
            ids = np.array([t.get_id() for t in values[p.name].values], dtype=np.int64)
            n = length_term(p)
            length = np.full(count, n, dtype=np.uint64) if isinstance(n, int) else at_shapes(n)
            if length is None:
                raise NotIndexable(f"the length of '{p.name}' depends on more than the shape")
            out[p.name] = IndexedBuffer(p.name, esz, ids, length.astype(np.uint64) * np.uint64(esz))
    return out


def two_dimensional(spec, names) -> bool:
    """Index the in/out buffers from the start when one is two-dimensional (`rows * cols`):
    its offsets take a value per shape, too many to split (splitting only finds that out
    after running the launch up to the first such access). Either mode is exact."""
    return any(p.is_buffer and p.access in ("in", "out") and len(p.length.names & set(names)) >= 2
               for p in spec.params)


CELLS = 1 << 24     # shapes x elements of one out buffer compared as codes (int64)


def size_check(spec, count: int, lengths: dict[str, int]) -> None:
    """Indexed outputs are compared as a shapes x elements table per out buffer: refused by
    name past CELLS (128 MiB a table), before anything runs."""
    for p in spec.buffers:
        if p.access == "out" and count * lengths[p.name] > CELLS:
            raise NotIndexable(f"{count} shapes x {lengths[p.name]} elements of '{p.name}' to "
                               f"compare, more than {CELLS}")
