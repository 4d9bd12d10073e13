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

import functools
import operator
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import z3

from semantics.domains import z3raw
from semantics.machine.indexed_buffers import IndexedAccess, array_buffer, where_holds
from verifier.indexed_buffer import Evaluate, IndexedBuffer
from verifier.parallel import first_failure
from verifier.projection import project
from verifier.same_at import SameAt  # (re-exported: the walk lives in its own module)
from verifier.shape_space import ShapeValues
from verifier.symbolic_cta import CtaMismatch
from verifier.verdict import InternalError
from verifier.spec import type_bits


class NotIndexable(Exception):
    """The logged accesses cannot be decided by evaluation (the message says why)."""


@dataclass(frozen=True)
class Differs:
    """At shape `shape` (an index into the plan's shapes) the kernels may differ: `why`."""

    shape: int
    why: str




@dataclass(frozen=True)
class Layout:
    """The live cells of one buffer at every shape, numbered shape-major: at shape `s` the
    buffer has `lengths[s]` elements, cells `starts[s]` .. `starts[s] + lengths[s] - 1`.
    A code table holds the live cells alone: a 32^3 matmul's 32768 shapes x 1024 elements are
    33.5M cells, of which 8.9M exist (element `e` exists at `M * N > e`), and replaying,
    comparing and sorting them cost memory traffic in proportion."""

    starts: np.ndarray       # (int64, per shape)
    lengths: np.ndarray      # (int64, per shape)
    total: int

    @staticmethod
    def of(b: "IndexedBuffer", n: int, per_shape: int = 1) -> "Layout":
        """`b`'s live elements (of `n` at most) at every shape (every `per_shape`-th point
        of its length)."""
        nbytes = b.length_bytes[::per_shape].astype(np.uint64)
        esz = np.uint64(b.elem_bytes)
        lengths = np.minimum((nbytes + esz - np.uint64(1)) // esz, np.uint64(n)).astype(np.int64)
        ends = np.cumsum(lengths)
        return Layout(ends - lengths, lengths, int(ends[-1]) if ends.size else 0)

    def elements(self) -> np.ndarray:
        """The element each cell is."""
        return np.arange(self.total, dtype=np.int64) - np.repeat(self.starts, self.lengths)

    def at(self, cell: int) -> tuple[int, int]:
        """(shape, element) of a cell."""
        # (the first shape whose cells end past it: shapes without cells end where they start)
        s = int(np.searchsorted(self.starts + self.lengths, cell, side="right"))
        return s, cell - int(self.starts[s])


def violation(values: ShapeValues, buffers: dict[str, IndexedBuffer],
              accesses: tuple[IndexedAccess, ...], jobs: int = 1
              ) -> tuple[int, IndexedAccess] | None:
    """(a shape, the access) where a logged access is out of its buffer or misaligned; None
    when every access is inside at every shape where it happens. The accesses are
    independent: `jobs` processes share them (`first_outside`), and the first that fails (or
    cannot be evaluated) is looked at again here, so the answer, or the `NotIndexable`
    raised, is the one a loop in order gives."""
    return violation_of(values, buffers, accesses,
                        first_outside(values, buffers, accesses, jobs))


def first_outside(values: ShapeValues, buffers: dict[str, IndexedBuffer],
                  accesses: tuple[IndexedAccess, ...], jobs: int = 1) -> int | None:
    """The index of the first logged access that may be out of its buffer or misaligned, or
    whose condition or offset cannot be evaluated (`violation_of` tells which); None when
    there is none (in `jobs` processes, `verifier.parallel.first_failure`: plain data, so
    it can also come back from a `Background` worker)."""
    return first_failure(len(accesses), lambda i: inside_at(values, buffers, accesses[i]),
                         jobs)


def inside_at(values: ShapeValues, buffers: dict[str, IndexedBuffer],
              a: IndexedAccess) -> bool:
    """Is access `a` inside its buffer and aligned wherever it happens? False also when its
    condition or offset cannot be evaluated (`violation_of` tells which)."""
    try:
        return _outside_at(values, buffers, a) is None
    except NotIndexable:
        return False


def violation_of(values: ShapeValues, buffers: dict[str, IndexedBuffer],
                 accesses: tuple[IndexedAccess, ...], i: int | None
                 ) -> tuple[int, IndexedAccess] | None:
    """`violation` given `first_outside`'s answer `i`, decided again in this process."""
    if i is None:
        return None
    at = _outside_at(values, buffers, accesses[i])
    if at is None:
        raise InternalError(f"{accesses[i].what}: bounds decided differently in a worker "
                            f"(keq bug)")
    return at, accesses[i]


def _outside_at(values: ShapeValues, buffers: dict[str, IndexedBuffer],
                a: IndexedAccess) -> int | None:
    """A shape where access `a` is out of its buffer or misaligned, or None. Decided over
    the grid of shapes, the condition's conjuncts kept apart (`ShapeSpace.any_of`): a
    thread's `row < M and k < K` against an offset `4 * (row * K + k)` past `4 * M * K`
    costs the 32 x 32 values they vary over, not one per shape."""
    space = values.space
    grouped = values.grouped(a.cond)
    if grouped is None:
        raise NotIndexable(f"the condition of {a.what} depends on input data")
    if not grouped.possible:
        return None
    # (the port logs the offset where the access happens, `where_holds`: a loop counter
    # merged on the lane's own condition varies along K alone there)
    off = np.uint64(int(a.offset) & 0xFFFF_FFFF_FFFF_FFFF) \
        if isinstance(a.offset, (int, np.integer)) else values.grid(a.offset)
    if off is None:
        raise NotIndexable(f"the offset of {a.what} depends on input data")
    last, none = _last_offset(buffers[a.buffer], a.nbytes)
    # past the last offset an access of `nbytes` may start at (no sum: nothing wraps)
    bad = off > last
    if none is not None:
        bad = bad | none
    if a.align & (a.align - 1):
        bad = bad | (off % np.uint64(a.align) != 0)
    elif a.align > 1 and int(np.bitwise_or.reduce(off, axis=None)) & (a.align - 1):
        bad = bad | (off & np.uint64(a.align - 1) != 0)        # (some offset is misaligned)
    if space.any_with(grouped, bad):
        return space.first(functools.reduce(operator.and_, values.factors(a.cond), bad))
    return None


_LAST: dict[tuple[str, int, int], tuple] = {}


def _last_offset(b: IndexedBuffer, nbytes: int) -> tuple[Any, Any]:
    """(the last byte offset an access of `nbytes` may start at in `b` over the grid of
    shapes, and below 2^62: an offset past it is negative; where `b` is shorter than
    `nbytes`, or None when it never is) for `_outside_at`, once per buffer and width (`b` is
    kept with them: the key holds its id)."""
    key = (b.name, nbytes, id(b))
    hit = _LAST.get(key)
    if hit is None:
        if len(_LAST) > 64:
            _LAST.clear()
        length = np.asarray(b.length_grid, dtype=np.uint64)
        short = length < np.uint64(nbytes)
        last = np.minimum(np.where(short, np.uint64(0), length - np.uint64(nbytes)),
                          np.uint64((1 << 62) - 1))
        hit = _LAST[key] = (last, short if short.any() else None, b)
    return hit[0], hit[1]


def _at(at_shapes: Evaluate, t, count: int, what: str) -> np.ndarray:
    if isinstance(t, (bool, np.bool_)):
        return np.full(count, bool(t))
    if isinstance(t, (int, np.integer)):
        return np.full(count, int(t) & 0xFFFF_FFFF_FFFF_FFFF, dtype=np.uint64)
    v = at_shapes(t)
    if v is None:
        raise NotIndexable(f"{what} depends on input data")
    return v


_UNSEEN = object()


class _Codes:
    """The code of the term a value selects at given shapes (see the module docstring).

    `of(value, width, shapes)` is the codes of `value` at `shapes`. They are found over the
    grid of shapes first (`verifier.shape_space`), each node of the value once: a selection
    on a condition of the shape alone is `np.where` of its branches' codes, a `Select` on an
    input buffer at an offset of the shape alone the ids of the elements it reads, any other
    term its own id. A loop's exits `If(k < K, ..)` vary along K alone, so a matmul lane's
    32 nested selections are 32 small arrays, where splitting each write's shapes at every
    selection cost a pass over them per level; the codes at the shapes are then one gather."""

    def __init__(self, values: ShapeValues, buffers: dict[str, IndexedBuffer]) -> None:
        # (terms over the grid of shapes: a value's subterms are evaluated where they occur)
        self.at_grid, self.space, self.buffers = values.subterm_grid, values.space, buffers
        self.values = values
        self.ctx = z3.main_ctx().ref()
        self.count = values.space.count
        self.arrays: dict[int, tuple[str, int] | None] = {}
        self.pinned: list = []
        self.compact: dict[int, Any] = {}       # node id -> its codes over the grid

    def of(self, t, width: int, shapes: np.ndarray) -> np.ndarray:
        if isinstance(t, (int, np.integer)):
            t = z3.BitVecVal(int(t), width)      # hash-consed: one id per value and width
        # Kept alive as long as the shape values' memos (by id) that its subterms enter,
        # and so as long as `compact`'s keys.
        self.values.pinned.append(t)
        code = self._grid_codes(t.as_ast())
        if np.ndim(code) == 0:
            return np.full(shapes.size, code, dtype=np.int64)
        return self.space.full(code)[shapes]

    def _grid_codes(self, root):
        """The codes of a raw term over the grid (compact int64), post-order on raw ASTs
        (a matmul's 512 writes hold thousands of selections)."""
        ref, R, memo = self.ctx, z3raw.read, self.compact
        conds: dict[int, Any] = {}              # a selection's condition, while its branches wait
        stack = [root]
        while stack:
            e = stack[-1]
            eid = R.ast_id(ref, e)
            if eid in memo:
                stack.pop()
                continue
            code: Any = np.int64(eid)
            kind = R.decl_kind(ref, R.app_decl(ref, e)) \
                if R.ast_kind(ref, e) == z3.Z3_APP_AST else None
            if kind == z3.Z3_OP_ITE:
                c = conds.pop(eid) if eid in conds else self.at_grid(R.app_arg(ref, e, 0))
                if c is not None:
                    branches = [R.app_arg(ref, e, 1), R.app_arg(ref, e, 2)]
                    ids = [R.ast_id(ref, b) for b in branches]
                    todo = [b for b, i in zip(branches, ids) if i not in memo]
                    if todo:
                        conds[eid] = c
                        stack.extend(todo)
                        continue
                    code = np.where(c, memo[ids[0]], memo[ids[1]])
            elif kind == z3.Z3_OP_SELECT:
                code = self._select_codes(z3.z3._to_expr_ref(e, z3.main_ctx()), code)
            memo[eid] = code
            stack.pop()
        return memo[R.ast_id(ref, root)]

    def _select_codes(self, e, own):
        """The ids of the input elements a `Select` reads over the grid; `own` (its own
        code) when it is not one of ours, reads part of an element or at a data-dependent
        offset, and where its offset is no element (the read is out of bounds there, which
        bounds refute where the access happens; elsewhere the value is never used)."""
        arr = e.arg(0)
        if not z3.is_const(arr):
            return own
        named = self.arrays.get(arr.get_id(), _UNSEEN)
        if named is _UNSEEN:
            named = self.arrays[arr.get_id()] = array_buffer(arr.decl().name())
            self.pinned.append(arr)
        if named is None or named[0] not in self.buffers:
            return own
        b = self.buffers[named[0]]
        off = self.values.grid(e.arg(1))
        if named[1] != b.elem_bytes or off is None:
            return own
        off = np.asarray(off).astype(np.uint64)
        esz = np.uint64(b.elem_bytes)
        idx = off // esz
        ok = (off % esz == 0) & (idx < np.uint64(b.ids.size))
        return np.where(ok, b.ids[np.where(ok, idx, 0).astype(np.int64)], own)


def replay_log(codes: _Codes, at_shapes: Evaluate, b: IndexedBuffer, width: int,
               initial: np.ndarray, accesses: tuple[IndexedAccess, ...], role: str,
               layout: Layout, per_shape: int = 1
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, list, Differs | None]:
    """The codes `role` leaves in `b` in every live cell of `layout` (every shape's elements
    that exist), replaying its write log in program order; which write left each (an index
    into the returned writes,
    -1 for the initial contents; each write's value is the one where it happens) and, with
    `per_shape` > 1, from which point of the evaluation (None otherwise: the point is the
    shape); with a `Differs` when two threads write one element.

    `per_shape`: the points of the evaluation are shapes times this many CTAs (one symbolic
    CTA stands for all of them, `verifier.symbolic_cta`): point `p` is CTA `p % per_shape`
    of shape `p // per_shape`, and a thread is a CTA and a lane.

    All writes at once: each becomes its (shape, element) cells; for cells written more than
    once, a stable sort by cell keeps program order within a cell, so the cell's last write
    is the one that stays, and a cell written by two threads is a clash. (Every write is
    inside its buffer where it happens, bounds having passed: checked, a cell past a shape's
    elements would be another shape's.)"""
    esz = np.uint64(b.elem_bytes)
    cells, found, threads, which, points = [], [], [], [], []
    writes = [a for a in accesses if a.kind == "w" and a.buffer == b.name]
    literals: dict = {}
    laid_out: dict = {}
    total = 0
    for j, a in enumerate(writes):
        cond = _at(at_shapes, a.cond, codes.count, f"the condition of {a.what}")
        shapes = np.flatnonzero(cond)
        if not shapes.size:
            continue
        if a.nbytes != b.elem_bytes:
            raise NotIndexable(f"{a.what} writes part of an element of '{b.name}'")
        off = _at(at_shapes, a.offset, codes.count, f"the offset of {a.what}")
        elems = (off[shapes] // esz).astype(np.int64)     # inside and aligned: bounds passed
        if (elems >= layout.lengths[shapes // per_shape]).any():
            raise InternalError(f"{a.what}: a write past '{b.name}' that bounds did not refute "
                                f"(keq bug)")
        if z3.is_expr(a.value) and z3.is_expr(a.cond):
            # The value where the write happens (`where_holds`), the only shapes it is read
            # at, here and by the term walk: a loop's exit merges `If(lane and k < K, ..)`
            # become `If(k < K, ..)`, values along K alone instead of every point.
            a = writes[j] = replace(a, value=where_holds(a.value, a.cond, literals, laid_out))
        cells.append(layout.starts[shapes // per_shape] + elems)
        found.append(codes.of(a.value, width, shapes))
        total += shapes.size
        threads.append((a.lane, shapes.size))
        which.append(np.full(shapes.size, j, dtype=np.int32))
        points.append(shapes.astype(np.int32) if per_shape > 1 else None)
    writer = np.full(layout.total, -1, dtype=np.int32)
    point = np.full(layout.total, -1, dtype=np.int32) if per_shape > 1 else None
    if not cells:
        return initial[layout.elements()], writer, point, writes, None
    out = np.empty(layout.total, dtype=initial.dtype)
    values = np.concatenate(found)
    cell = np.concatenate(cells)
    which_all = np.concatenate(which)
    point_all = np.concatenate(points) if point is not None else None

    def keep(at=None) -> None:          # cells `cell[at]` take the writes `at` (None: all)
        to = cell if at is None else cell[at]
        out[to] = values if at is None else values[at]
        writer[to] = which_all if at is None else which_all[at]
        if point is not None:
            point[to] = point_all if at is None else point_all[at]

    # Every write into its cell at once (a cell written twice holds one of its writes, to be
    # set right below); the cells no write reaches keep their initial contents. When there
    # are as many writes as cells written, each of those was written once (a matmul's every
    # cell): nothing is left to sort, and no pass over the cells is needed to tell.
    keep()
    unwritten = writer < 0
    blank = int(np.count_nonzero(unwritten))
    if blank:
        out[unwritten] = initial[layout.elements()[unwritten]]
    if cell.size == layout.total - blank:
        return out, writer, point, writes, None
    # The cells written twice or more, and their writes in program order.
    number = np.arange(cell.size, dtype=np.int64 if cell.size >> 31 else np.int32)
    scratch = np.empty(out.size, dtype=number.dtype)       # (only the written cells are read)
    scratch[cell] = number
    twice = scratch[cell] != number
    marked = np.zeros(out.size, dtype=bool)
    marked[cell[twice]] = True
    pos = np.flatnonzero(marked[cell])
    order = pos[np.argsort(cell[pos], kind="stable")]      # program order within a cell
    sorted_cells = cell[order]
    thread = np.repeat(np.array([t[0] for t in threads], dtype=np.int64),
                       [t[1] for t in threads])
    if point_all is not None:
        thread += (point_all.astype(np.int64) % per_shape) * _LANES
    thread = thread[order]
    starts = np.flatnonzero(np.r_[True, sorted_cells[1:] != sorted_cells[:-1]])
    ends = np.r_[starts[1:], sorted_cells.size] - 1
    clash = np.minimum.reduceat(thread, starts) != np.maximum.reduceat(thread, starts)
    if clash.any():
        g = int(np.argmax(clash))
        shape, elem = layout.at(int(sorted_cells[starts[g]]))
        a = writes[int(which_all[order][ends[g]])]
        return out, writer, point, writes, Differs(
            shape, f"two threads of the {role} may write element {elem} of '{b.name}' "
                   f"({a.what})")
    keep(order[ends])
    return out, writer, point, writes, None


_LANES = 1 << 32        # (a thread of one symbolic CTA: its CTA times this, plus its lane)


def compare(values: ShapeValues, buffers: dict[str, IndexedBuffer],
            widths: dict[str, int], initial: dict[str, np.ndarray],
            logs: dict[str, tuple[IndexedAccess, ...]],
            shape_only: Callable[[Any], bool] | None = None,
            real: bool = False,
            pin: Callable[[Any], None] | None = None,
            jobs: int = 1, per_shape: int = 1,
            replayed: list | None = None) -> tuple[int, Differs | None]:
    """(elements compared, the first shape where the kernels may differ or None). `real`:
    the terms are compared as real numbers where they differ as floats (`SameAt`, which
    keeps the terms it walks alive with `pin` for as long as `values` lives, in `jobs`
    processes). `per_shape` > 1: the evaluation's points are shapes times CTAs (see
    `replay_log`); an element both kernels write must be written by the same CTA in both,
    else `CtaMismatch`. `replayed`: `replay_logs`' entries, when computed beforehand (and
    listed: `replay_logs(..., keep_errors=True)`)."""
    compared = 0
    for entry in (replay_logs(values, buffers, widths, initial, logs, per_shape)
                  if replayed is None else replayed):
        if isinstance(entry, BaseException):
            raise entry
        if isinstance(entry, Differs):
            return compared, entry
        name, layout, left, writer, point, writes = entry
        if per_shape > 1:
            # Equal codes are equal values only at one point: a term may mention %ctaid.
            apart = (writer["reference"] >= 0) & (writer["candidate"] >= 0) \
                & (point["reference"] != point["candidate"])
            if apart.any():
                s, e = layout.at(int(np.argmax(apart)))
                raise CtaMismatch(f"element {e} of '{name}' is written by different CTAs of "
                                  f"the two kernels (shape {s} of the plan)")
        differ = left["reference"] != left["candidate"]
        compared += layout.total
        if differ.any():
            at = _second_look(values, buffers, shape_only, real, pin, layout, differ, writer,
                              writes, jobs, point["reference"])
            if at is not None:
                s, e = at
                return compared, Differs(s, f"element {e} of '{name}' is not shown to be the "
                                            f"same term in both kernels")
    return compared, None


def replay_logs(values: ShapeValues, buffers: dict[str, IndexedBuffer],
                widths: dict[str, int], initial: dict[str, np.ndarray],
                logs: dict[str, tuple[IndexedAccess, ...]], per_shape: int = 1,
                keep_errors: bool = False):
    """Each out buffer's write logs replayed (`replay_log`), in `compare`'s order: per
    buffer (name, layout, then per role the codes, writers, points and writes), or the
    `Differs` of a clash, which ends them. Yielded one buffer at a time, as `compare` asks;
    with `keep_errors`, an exception is yielded instead of raised, and ends them: the
    replay can then run before the bounds are decided (`verifier.shapes`, while a worker
    decides them), and what it raised is raised where `compare` would have met it, only
    once the bounds passed."""
    codes = _Codes(values, buffers)
    for name, init in initial.items():
        try:
            b = buffers[name]
            layout = Layout.of(b, init.size, per_shape)
            left, writer, point, writes = {}, {}, {}, {}
            for role, log in logs.items():
                left[role], writer[role], point[role], writes[role], clash = replay_log(
                    codes, values.full, b, widths[name], init, log, role, layout, per_shape)
                if clash is not None:
                    yield clash
                    return
        except Exception as e:
            if not keep_errors:
                raise
            yield e
            return
        yield name, layout, left, writer, point, writes


def compare_apart(values: dict[str, ShapeValues], buffers: dict[str, dict[str, IndexedBuffer]],
                  widths: dict[str, int], initial: dict[str, np.ndarray],
                  logs: dict[str, tuple[IndexedAccess, ...]],
                  per_shape: dict[str, int]) -> tuple[int, Differs | None]:
    """`compare` for kernels that each run one symbolic CTA of their own grid
    (`verifier.symbolic_cta`: `%ctaid.x/reference` and `%ctaid.x/candidate`), so their
    points are different grids: `values[role]`, `buffers[role]` and `per_shape[role]` are
    each kernel's. Each write log is replayed over its own points and composed into each
    shape's final contents; the two are then compared shape by shape.

    Equal codes are equal values at a shape even when written from different CTAs: a code
    is an input element, an element's initial contents, or a term; a term that mentions one
    kernel's `%ctaid` cannot be the other's (it never sees that variable), so an identical
    term mentions neither and has one value at the shape. Codes that differ are not walked
    (`SameAt` compares two terms at one point, and here a point is one kernel's CTA): that
    shape is handed back (`Differs`), and the caller falls back to the full launch."""
    compared = 0
    for name, init in initial.items():
        # (both kernels' buffers have one length at each shape: the spec's)
        layout = Layout.of(buffers["reference"][name], init.size, per_shape["reference"])
        left = {}
        for role, log in logs.items():
            b = buffers[role][name]
            codes = _Codes(values[role], buffers[role])
            left[role], _, _, _, clash = replay_log(codes, values[role].full, b, widths[name],
                                                    init, log, role, layout, per_shape[role])
            if clash is not None:
                return compared, clash
        compared += layout.total
        differ = left["reference"] != left["candidate"]
        if differ.any():
            s, e = layout.at(int(np.argmax(differ)))
            return compared, Differs(s, f"element {e} of '{name}' is not the same term in "
                                        f"both kernels (with one symbolic CTA per kernel, "
                                        f"values that differ are not walked)")
    return compared, None


def _second_look(values: ShapeValues, buffers: dict[str, IndexedBuffer], shape_only, real,
                 pin, layout: Layout, differ: np.ndarray, writer: dict[str, np.ndarray],
                 writes: dict[str, list], jobs: int = 1,
                 point: np.ndarray | None = None) -> tuple[int, int] | None:
    """Cells whose codes differ may still hold equal terms: the values two writes store
    can be built alike around shape-dependent parts (a matmul's `fma(A[row*K + k], ...)`,
    its padding `If(k < K, a, 0)`). Per pair of writes (reference, candidate), over the
    points where that pair meets (`point`: each cell's point of the evaluation, where it is
    not its shape), `SameAt` compares their values. Returns the first (shape, element) not
    shown equal this way, or None. The walk runs first over the grid of the axes the stored
    terms mention (`verifier.projection`: a matmul's sums never mention `M`), and a pair not
    shown there over every point. The pairs are independent: `jobs` processes share them
    (`verifier.parallel.first_failure`, the same answer)."""
    cells = np.flatnonzero(differ)
    wr, wc = writer["reference"][differ], writer["candidate"][differ]
    # (`point` holds the reference's writer; a cell one kernel never wrote is never walked)
    at = np.searchsorted(layout.starts + layout.lengths, cells, side="right") \
        if point is None else point[differ]               # (a cell's shape, or its point)
    walked = (wr >= 0) & (wc >= 0)

    def universe(vals: ShapeValues, on: np.ndarray | None) -> tuple[SameAt, np.ndarray, int]:
        # The walk's sets are over the points where some pair meets (`PointSet`), numbered
        # anew: points of `vals.space`, where each point of the evaluation lies `on`.
        at_u = at if on is None else on[at]
        count = vals.space.count
        met = np.zeros(count, dtype=bool)
        met[at_u[walked]] = True
        points = np.flatnonzero(met)
        if points.size < count:
            number = np.zeros(count, dtype=np.int64)
            number[points] = np.arange(points.size)
            at_u, count = number[at_u], points.size
        else:
            points = None
        return SameAt(vals.grid_raw, vals.space, buffers, shape_only, real, pin, points), \
            at_u, count

    # First over the axes the stored terms mention (`verifier.projection`); a pair not shown
    # there is walked again over every point (made when first needed, in each process).
    stored = [w.value for role in ("reference", "candidate") for w in writes[role]]
    projected = project(values, stored)
    universes = ([projected] if projected is not None else []) + [(values, None)]
    walks: list = []
    # cells grouped by pair of writes, in the order of (reference write, candidate write):
    # dense group numbers from a table, then a stable sort of small integers (radix)
    width = int(wc.max()) + 2
    key = (wr.astype(np.int64) + 1) * width + (wc.astype(np.int64) + 1)
    if width * width <= 1 << 26:
        sizes = np.bincount(key)
        present = np.flatnonzero(sizes)
        number = np.zeros(sizes.size, dtype=np.int64)
        number[present] = np.arange(present.size)
        group, sizes = number[key], sizes[present]
    else:                                   # (a table that large: sort the keys instead)
        present, group, sizes = np.unique(key, return_inverse=True, return_counts=True)
    order = np.argsort(group.astype(np.uint16) if present.size <= 1 << 16 else group,
                       kind="stable")
    ends = np.cumsum(sizes)
    starts = ends - sizes

    def shown(g: int) -> bool:
        jr, jc = (int(j) - 1 for j in divmod(int(present[g]), width))
        if jr < 0 or jc < 0:
            return False                                  # an element one kernel never wrote
        for k, (vals, on) in enumerate(universes):
            if k == len(walks):
                walks.append(universe(vals, on))
            same, at_u, count = walks[k]
            where = np.zeros(count, dtype=bool)
            where[at_u[order[starts[g]:ends[g]]]] = True
            if same(writes["reference"][jr].value, writes["candidate"][jc].value, where):
                return True
        return False

    g = first_failure(len(present), shown, jobs)
    if g is None:
        return None
    return layout.at(int(cells[order[starts[g]]]))         # the pair's first cell


def indexed_params(spec, role: str, ptx_params) -> dict[str, tuple[str, str]]:
    """PTX parameter -> (access, spec name) for the `role`'s `in` and `out` buffers."""
    side = spec.side(role)
    out = {}
    for name, kp in zip(side.arg_names, ptx_params):
        p = spec.param(name)
        if p.is_buffer and p.access in ("in", "out"):
            out[kp.name] = (p.access, p.name)
    return out


def buffer_info(spec, values: dict, length_term: Callable[[Any], Any],
                shape_values: ShapeValues) -> dict[str, IndexedBuffer]:
    """The verifier's view of every `in` and `out` buffer: `values[name].values` are its
    elements' terms, `length_term(param)` its length in elements (an int or a term)."""
    out = {}
    for p in spec.params:
        if p.is_buffer and p.access in ("in", "out"):
            esz = type_bits(p.type) // 8
            ids = np.array([t.get_id() for t in values[p.name].values], dtype=np.int64)
            n = length_term(p)
            length = np.uint64(n) if isinstance(n, int) else shape_values.grid(n)
            if length is None:
                raise NotIndexable(f"the length of '{p.name}' depends on more than the shape")
            grid = np.asarray(length).astype(np.uint64) * np.uint64(esz)
            out[p.name] = IndexedBuffer(p.name, esz, ids, shape_values.space.full(grid), grid)
    return out


def two_dimensional(spec, names) -> bool:
    """Index the in/out buffers from the start when one is two-dimensional (`rows * cols`):
    its offsets take a value per shape, too many to split (splitting only finds that out
    after running the launch up to the first such access). Either mode is exact."""
    return any(p.is_buffer and p.access in ("in", "out") and len(p.length.names & set(names)) >= 2
               for p in spec.params)


# Shapes x elements of one out buffer compared as codes (int64): 2^25 is the 32^3 matmul claim
# (32768 shapes x 1024 elements), which peaks at about 8 GB in all (the tables, and the values
# of every term the term walk evaluates at every shape). Past it the mode refuses up front.
CELLS = 1 << 25


def size_check(spec, count: int, lengths: dict[str, int]) -> None:
    """Indexed outputs are compared as a shapes x elements table per out buffer: refused by
    name past CELLS (256 MiB a table), before anything runs."""
    for p in spec.buffers:
        if p.access == "out" and count * lengths[p.name] > CELLS:
            raise NotIndexable(f"{count} shapes x {lengths[p.name]} elements of '{p.name}' to "
                               f"compare, more than {CELLS}")
