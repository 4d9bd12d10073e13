"""Fewer points for the term walk: the axes of the evaluation that no compared term mentions.

The indexed comparison walks pairs of stored terms over the points where they meet
(`verifier.same_at`): a 32^3 matmul's points are its shapes times its CTAs, 73,728 where a
pair meets, and every set the walk builds is a bit set over them. But a matmul's stored sums
mention `K`, `N` and the CTA, never `M` (the write's own condition, `row < M`, is taken out
where it holds: `indexed_buffers.where_holds`); points that differ in `M` alone give every
term the same value. Walked over the grid of the axes the terms mention (4,096 points
there), each point stands for all the points that lie on it.

Why it is exact: a term that mentions none of the dropped axes has one value along them, so
it is shown equal at a point of the smaller grid exactly where it is at each point lying on
it. The axes kept are those that a sample of the compared terms mentions (`mentions`: z3's
substitution of the axis's constant changes the term; asking every term costs a tenth of a
second on a matmul, for an answer the sample gives). Should a subterm mention a dropped axis
all the same, its evaluation there fails (the constant is unknown) and the walk reads it as
an opaque term, which can only leave a pair not shown: the caller then walks that pair over
every point. The sample decides the cost, never the answer.
"""

from __future__ import annotations

import numpy as np
import z3

from verifier.shape_space import ShapeValues

# Projected only when the grid of the kept axes has at most this share of the points.
WORTH = 0.5
SAMPLE = 16         # stored terms asked which axes they mention (spread over the writes)


def project(values: ShapeValues, terms: list) -> tuple[ShapeValues, np.ndarray] | None:
    """(the values over the grid of the axes some term in `terms` mentions, each point of
    `values.space`'s point there), or None when that grid is not much smaller."""
    space = values.space
    terms = [t for t in terms if z3.is_expr(t)]
    # Asked of a sample: the stored terms of a kernel's lanes are built alike, and a term
    # that mentions an axis the sample does not costs time only (see the module docstring).
    sample = terms[::max(1, len(terms) // SAMPLE)] + terms[-1:]
    keep = [j for j, name in enumerate(space.names)
            if any(mentions(t, name, values.widths[name]) for t in sample)]
    if len(keep) == len(space.names):
        return None
    smaller, on = space.project(keep)
    if smaller.count > WORTH * space.count:
        return None
    return ShapeValues(smaller, {n: values.widths[n] for n in smaller.names},
                       admit=values.admit), on


def mentions(t, name: str, width: int) -> bool:
    """Does term `t` mention the `width`-bit constant `name`? (z3's substitution, in C,
    rebuilds `t` exactly when it does.)"""
    if not z3.is_expr(t):
        return False
    c = z3.BitVec(name, width)
    return not z3.substitute(t, (c, z3.BitVec(f"keq!absent!{name}", width))).eq(t)
