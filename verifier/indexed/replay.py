"""Replaying a kernel's write log over every shape at once: the code each live cell of an out
buffer is left holding, and which write left it (`replay_log`, `replay_logs`)."""

from __future__ import annotations

from typing import NamedTuple

from dataclasses import dataclass, replace

import numpy as np
import z3

from semantics.machine.indexed_buffers import IndexedAccess, where_holds
from verifier.indexed.cells import Differs, Layout, NotIndexable
from verifier.indexed.codes import Codes
from verifier.indexed_buffer import Evaluate, IndexedBuffer
from verifier.shape_space import ShapeValues
from verifier.verdict import InternalError

LANES = 1 << 32        # (a thread of one symbolic CTA: its CTA times this, plus its lane)

Replayed = tuple[np.ndarray, np.ndarray, "np.ndarray | None", list, "Differs | None"]


def _at(at_shapes: Evaluate, t, count: int, what: str) -> np.ndarray:
    if isinstance(t, (bool, np.bool_)):
        return np.full(count, bool(t))
    if isinstance(t, (int, np.integer)):
        return np.full(count, int(t) & 0xFFFF_FFFF_FFFF_FFFF, dtype=np.uint64)
    v = at_shapes(t)
    if v is None:
        raise NotIndexable(f"{what} depends on input data")
    return v


@dataclass(frozen=True)
class _Placed:
    """The cells every write of a log reaches, write after write in program order: the cell,
    the code it stores, which write (an index into `writes`), from which point (with
    `per_shape` > 1) and thread ((lane, number of cells) per write)."""

    writes: list
    cells: list
    codes: list
    which: list
    points: list
    threads: list


def _place(codes: Codes, at_shapes: Evaluate, b: IndexedBuffer, width: int,
           accesses: tuple[IndexedAccess, ...], layout: Layout, per_shape: int) -> _Placed:
    """Each write of `accesses` to `b` as the cells it reaches at the shapes where it
    happens (see `replay_log`)."""
    esz = np.uint64(b.elem_bytes)
    placed = _Placed([a for a in accesses if a.kind == "w" and a.buffer == b.name],
                     [], [], [], [], [])
    writes = placed.writes
    literals: dict = {}
    laid_out: dict = {}
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
        placed.cells.append(layout.starts[shapes // per_shape] + elems)
        placed.codes.append(codes.of(a.value, width, shapes))
        placed.threads.append((a.lane, shapes.size))
        placed.which.append(np.full(shapes.size, j, dtype=np.int32))
        placed.points.append(shapes.astype(np.int32) if per_shape > 1 else None)
    return placed


def replay_log(codes: Codes, at_shapes: Evaluate, b: IndexedBuffer, width: int,
               initial: np.ndarray, accesses: tuple[IndexedAccess, ...], role: str,
               layout: Layout, per_shape: int = 1) -> Replayed:
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
    placed = _place(codes, at_shapes, b, width, accesses, layout, per_shape)
    writes = placed.writes
    writer = np.full(layout.total, -1, dtype=np.int32)
    point = np.full(layout.total, -1, dtype=np.int32) if per_shape > 1 else None
    if not placed.cells:
        return initial[layout.elements()], writer, point, writes, None
    out = np.empty(layout.total, dtype=initial.dtype)
    values = np.concatenate(placed.codes)
    cell = np.concatenate(placed.cells)
    which_all = np.concatenate(placed.which)
    point_all = np.concatenate(placed.points) if point is not None else None

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
    last = _last_writes(cell, which_all, point_all, placed.threads, layout, per_shape)
    if isinstance(last, tuple):
        g_cell, j = last
        shape, elem = layout.at(g_cell)
        return out, writer, point, writes, Differs(
            shape, f"two threads of the {role} may write element {elem} of '{b.name}' "
                   f"({writes[j].what})")
    keep(last)
    return out, writer, point, writes, None


def _last_writes(cell: np.ndarray, which_all: np.ndarray, point_all: np.ndarray | None,
                 threads: list, layout: Layout, per_shape: int) -> np.ndarray | tuple[int, int]:
    """Among the cells written twice or more, the position of each one's last write in
    program order; or (a cell, its last write) where two threads write one cell."""
    number = np.arange(cell.size, dtype=np.int64 if cell.size >> 31 else np.int32)
    scratch = np.empty(layout.total, dtype=number.dtype)   # (only the written cells are read)
    scratch[cell] = number
    twice = scratch[cell] != number
    marked = np.zeros(layout.total, dtype=bool)
    marked[cell[twice]] = True
    pos = np.flatnonzero(marked[cell])
    order = pos[np.argsort(cell[pos], kind="stable")]      # program order within a cell
    sorted_cells = cell[order]
    thread = np.repeat(np.array([t[0] for t in threads], dtype=np.int64),
                       [t[1] for t in threads])
    if point_all is not None:
        thread += (point_all.astype(np.int64) % per_shape) * LANES
    thread = thread[order]
    starts = np.flatnonzero(np.r_[True, sorted_cells[1:] != sorted_cells[:-1]])
    ends = np.r_[starts[1:], sorted_cells.size] - 1
    clash = np.minimum.reduceat(thread, starts) != np.maximum.reduceat(thread, starts)
    if clash.any():
        g = int(np.argmax(clash))
        return int(sorted_cells[starts[g]]), int(which_all[order][ends[g]])
    return order[ends]


class BufferReplay(NamedTuple):
    """One out buffer's write logs replayed, per role: the codes of what each element holds
    at the end (`left`), which write put it there (`writer`), at which point, and the
    writes themselves."""
    name: str
    layout: "Layout"
    left: dict
    writer: dict
    point: dict
    writes: dict


def replay_logs(values: ShapeValues, buffers: dict[str, IndexedBuffer],
                widths: dict[str, int], initial: dict[str, np.ndarray],
                logs: dict[str, tuple[IndexedAccess, ...]], per_shape: int = 1,
                keep_errors: bool = False):
    """Each out buffer's write logs replayed (`replay_log`), in `compare`'s order: a
    `BufferReplay` per buffer, or the `Differs` of a clash, which ends them. Yielded one buffer at a time, as `compare` asks;
    with `keep_errors`, an exception is yielded instead of raised, and ends them: the
    replay can then run before the bounds are decided (`verifier.stages.bounds`, while a worker
    decides them), and what it raised is raised where `compare` would have met it, only
    once the bounds passed."""
    codes = Codes(values, buffers)
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
        yield BufferReplay(name, layout, left, writer, point, writes)


__all__ = ["LANES", "replay_log", "replay_logs"]
