"""The allowed launch shapes of a claim as a grid (`ShapeSpace`), the universe of the term
walk's bit sets (`PointSet`), and conjunctions grouped by the axes they vary along
(`Grouped`). Why a grid, and why it is exact: the package's docstring."""

from __future__ import annotations

import functools
import operator
from typing import Mapping, NamedTuple, Sequence

import numpy as np


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


def bits_of(mask: np.ndarray) -> int:
    """A boolean array as a bit set (bit i: element i)."""
    return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")


def mask_of(bits: int, count: int) -> np.ndarray:
    """A bit set as a boolean array of `count` elements."""
    raw = np.frombuffer(bits.to_bytes((count + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, count=count, bitorder="little").astype(bool)


__all__ = ["Grouped", "PointSet", "ShapeSpace", "bits_of", "mask_of"]
