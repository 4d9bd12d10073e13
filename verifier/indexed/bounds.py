"""Bounds of the logged accesses over the grid of shapes: every access inside its buffer and
aligned wherever its condition holds (`violation`), decided by evaluation (exact: the plan
lists every shape), in `jobs` processes where asked."""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from semantics.machine.indexed_buffers import IndexedAccess
from verifier.indexed.cells import NotIndexable
from verifier.indexed_buffer import IndexedBuffer
from verifier.parallel import first_failure
from verifier.shape_space import ShapeValues
from verifier.verdict import InternalError


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


__all__ = ["first_outside", "inside_at", "violation", "violation_of"]
