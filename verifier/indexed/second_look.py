"""A second look at cells whose codes differ: the two stored terms walked at once over the
points where that pair of writes meets (`SameAt`), first over the axes they mention
(`verifier.projection`), then over every point (`second_look`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from verifier.indexed.cells import Layout
from verifier.indexed.real_look import RealLook
from verifier.indexed_buffer import IndexedBuffer
from verifier.parallel import first_failure
from verifier.projection import project
from verifier.same_at import SameAt
from verifier.shape_space import ShapeValues


@dataclass(frozen=True)
class _Pairs:
    """Cells grouped by pair of writes (reference, candidate): group `g` is the pair
    `present[g]` (both writes' indices plus one, in base `width`), its cells
    `order[starts[g]:ends[g]]` (positions among the cells that differ)."""

    present: np.ndarray
    width: int
    order: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    @staticmethod
    def of(wr: np.ndarray, wc: np.ndarray) -> "_Pairs":
        # in the order of (reference write, candidate write): dense group numbers from a
        # table, then a stable sort of small integers (radix)
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
        return _Pairs(present, width, order, ends - sizes, ends)

    def writes(self, g: int) -> tuple[int, int]:
        """The pair's (reference write, candidate write); -1 for a kernel's initial
        contents."""
        jr, jc = (int(j) - 1 for j in divmod(int(self.present[g]), self.width))
        return jr, jc

    def cells(self, g: int) -> np.ndarray:
        return self.order[self.starts[g]:self.ends[g]]


def _universe(vals: ShapeValues, on: np.ndarray | None, at: np.ndarray, walked: np.ndarray,
              buffers: dict[str, IndexedBuffer], shape_only, real: bool
              ) -> tuple[SameAt, np.ndarray, int, RealLook | None]:
    """The walk over `vals`' points (where each point of the evaluation lies `on`), and each
    cell's point there (`at`: its point of the evaluation). Its sets are over the points
    where some pair meets (`PointSet`, `walked`: the cells walked), numbered anew. In mode
    real, also the look at real readings (`RealLook`) over the same points."""
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
    same = SameAt(vals.grid_raw, vals.space, buffers, shape_only, real, points=points)
    return same, at_u, count, (RealLook(same, vals.space.dims) if real else None)


def second_look(values: ShapeValues, buffers: dict[str, IndexedBuffer],
                shape_only: Callable[[Any], bool] | None, real: bool, layout: Layout,
                differ: np.ndarray, writer: dict[str, np.ndarray], writes: dict[str, list],
                jobs: int = 1, point: np.ndarray | None = None, width: int = 0,
                notes: set[str] | None = None) -> tuple[int, int] | None:
    """Cells whose codes differ may still hold equal terms: the values two writes store
    can be built alike around shape-dependent parts (a matmul's `fma(A[row*K + k], ...)`,
    its padding `If(k < K, a, 0)`). Per pair of writes (reference, candidate), over the
    points where that pair meets (`point`: each cell's point of the evaluation, where it is
    not its shape), `SameAt` compares their values. Returns the first (shape, element) not
    shown equal this way, or None. The walk runs first over the grid of the axes the stored
    terms mention (`verifier.projection`: a matmul's sums never mention `M`), and a pair not
    shown there over every point. The pairs are independent: `jobs` processes share them
    (`verifier.parallel.first_failure`, the same answer). In mode real (`real`, a float
    buffer of `width` bits) a pair is also shown by equal real readings (`RealLook`), in
    this process (the readings share a memo across pairs), and the assumptions the readings
    used are added to `notes`."""
    cells = np.flatnonzero(differ)
    wr, wc = writer["reference"][differ], writer["candidate"][differ]
    # (`point` holds the reference's writer; a cell one kernel never wrote is never walked)
    at = np.searchsorted(layout.starts + layout.lengths, cells, side="right") \
        if point is None else point[differ]               # (a cell's shape, or its point)
    walked = (wr >= 0) & (wc >= 0)
    # First over the axes the stored terms mention (`verifier.projection`); a pair not shown
    # there is walked again over every point (made when first needed, in each process).
    stored = [w.value for role in ("reference", "candidate") for w in writes[role]]
    projected = project(values, stored)
    universes = ([projected] if projected is not None else []) + [(values, None)]
    walks: list = []
    pairs = _Pairs.of(wr, wc)

    def shown(g: int) -> bool:
        jr, jc = pairs.writes(g)
        if jr < 0 or jc < 0:
            return False                                  # an element one kernel never wrote
        for k, (vals, on) in enumerate(universes):
            if k == len(walks):
                walks.append(_universe(vals, on, at, walked, buffers, shape_only, real))
            same, at_u, count, reals = walks[k]
            where = np.zeros(count, dtype=bool)
            where[at_u[pairs.cells(g)]] = True
            a, b = writes["reference"][jr].value, writes["candidate"][jc].value
            if same(a, b, where) or (reals is not None and width and reals(a, b, width)):
                return True
        return False

    g = first_failure(len(pairs.present), shown, 1 if real and width else jobs)
    if notes is not None:
        notes.update(n for walk in walks if walk[3] is not None for n in walk[3].tr.notes)
    if g is None:
        return None
    return layout.at(int(cells[pairs.cells(g)[0]]))       # the pair's first cell


__all__ = ["second_look"]
