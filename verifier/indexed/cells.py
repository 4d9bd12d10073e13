"""The cells the indexed comparison keeps (`Layout`: the live elements of a buffer at every
shape), and what it answers besides a verdict: a shape to check on its own (`Differs`), or
that the logged accesses cannot be decided by evaluation (`NotIndexable`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifier.indexed_buffer import IndexedBuffer


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


__all__ = ["Differs", "Layout", "NotIndexable"]
