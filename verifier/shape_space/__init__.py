"""The allowed launch shapes of a claim as a grid: values that vary along few axes stay small.

A claim over `M, N, K` in `[1, 32]` has 32768 launch shapes, but almost every term the
verifier evaluates at them mentions one or two of the scalars: a bounds check `row < M`, an
offset `4 * (row * K + k)`, a tile test `k < K`. Evaluated over the list of shapes, each such
term costs 32768 values; evaluated over the *grid* of the scalars' values, with numpy
broadcasting, `row < M` is 32 values along the `M` axis and `4 * (row * K + k)` 32 along `K`.
Combining them (`row < M and k < K`) broadcasts to the 32 x 32 they really vary over.

`ShapeSpace` (`grid`) is that grid: one axis per symbolic scalar, in the plan's order (the first name
varies slowest, as `itertools.product` lists them), each axis the scalar's allowed values
after the `assume`s that mention it alone; and, when other `assume`s exclude points of the
grid, which points are shapes. Values over the grid ("compact") broadcast to its dimensions;
this module turns them into what the rest of the verifier reads: a value per allowed shape in
the plan's order (`full`), whether a condition holds at some or every allowed shape (`any`,
`all`), and the set of allowed shapes where it holds as a bit set (`bits`, bit i: shape i).

Why it is exact: a compact value is the term evaluated at every grid point (broadcasting only
repeats values along axes the term does not mention), and every answer here reads it at the
allowed points alone; a point the `assume`s exclude never reaches a verdict.

Terms are evaluated over it by `ShapeValues` (`values`), after `ShapeOnly` (`shape_only`)
said they mention the shape scalars alone.
"""

from verifier.shape_space.grid import Grouped, PointSet, ShapeSpace, bits_of, mask_of
from verifier.shape_space.shape_only import ShapeOnly
from verifier.shape_space.values import ShapeValues

__all__ = ["Grouped", "PointSet", "ShapeOnly", "ShapeSpace", "ShapeValues", "bits_of",
           "mask_of"]
