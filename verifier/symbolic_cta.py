"""One symbolic CTA standing for every CTA of a maximal launch.

A maximal launch (`verifier.coverage.symbolic_launch`) runs every CTA any allowed shape launches: the 32^3 matmul
claims run 4 CTAs of 256 threads per kernel, and each lane's loads, stores and float results
are terms. When the CTAs of a launch cannot observe one another, running *one* CTA whose
`%ctaid` is symbolic stands for all of them, at a quarter of the lanes. Its `%ctaid.x` (and
`.y`, `.z` where the grid has more than one CTA along that axis) becomes one more axis of the
grid of shapes (`ShapeSpace.times`): a point of the evaluation is a launch shape and a CTA
index, and "CTA `c` exists at shape `s`" (`c < grid(s)` on every axis) is the CTA's existence
condition, as in the maximal launch: its global effects happen only where it holds.

When CTAs cannot observe one another (checked before anything runs, `cta_axes`):
- every global buffer of the claim is indexed (`access = "in"` or `"out"`,
  `semantics.machine.indexed_buffers`): an `in` buffer is never written (a store to it is
  refused by name), an `out` buffer never read (a load from it is refused by name), so no CTA
  reads what another writes;
- neither kernel declares `.global` variables (memory shared by CTAs outside the buffers);
- shared memory is per CTA, and the one CTA has its own, as each CTA of the launch does.

Then the run is exact for every CTA at once:
- bounds: every access of the one CTA is decided at every point (shape, CTA) where it happens,
  which is every access of every CTA of every allowed shape;
- races within a CTA (shared memory, barrier intervals) likewise; races *between* CTAs can only
  be two writes to one element of an `out` buffer, and composing the CTAs' write logs into the
  buffer's final contents (`verifier.indexed.compare` with `per_shape`) finds every such pair,
  handed back as a shape to check on its own;
- outputs: per shape, each element's final value is the one the CTA that writes it leaves.
  Two kernels are compared element by element at the point (shape, CTA) that wrote it, which
  must be the same CTA in both kernels (`CtaMismatch` otherwise: the terms would stand for
  different CTAs, and the verifier falls back to the full maximal launch).

Kernels that launch different grids (a transpose's 8- and 32-row tiles, a kernel coarsened
to two elements per thread) each run one symbolic CTA of their own grid, with `%ctaid`
registers of their own: `%ctaid.x/reference` and `%ctaid.x/candidate`, axes of two different
grids of points (shapes times that kernel's CTAs), each kernel's bounds, races and barriers
decided over its own. Their write logs are composed into each shape's final contents and
compared shape by shape (`verifier.indexed.compare_apart`): equal codes are equal values even
when different CTAs wrote them, since a term that mentions one kernel's `%ctaid` can never be
the other's (it never sees that variable), and where codes differ the shape is handed back
(the walk compares two terms at one point, and here no point is both kernels'). Naming both
kernels' registers alike would be unsound: `%ctaid.y` stored by 16-row and by 32-row CTAs is
one term of two meanings (tests/data/copy2d/stamp_y_coarse.toml).

Anything this mode cannot decide (a fallback, a shape to check on its own, an Inconclusive
verdict) is not an answer: the verifier reruns the claim on the full maximal launch, so this
mode only ever shortens a proof or a replayed refutation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import z3

CTA_REGISTERS = ("%ctaid.x", "%ctaid.y", "%ctaid.z")


@dataclass(frozen=True)
class CtaAxes:
    """The `%ctaid` registers that vary over a maximal launch (`names`, each a 32-bit shape
    scalar of that name), along the grid axes `axes` (0 x, 1 y, 2 z), with `dims[j]` CTAs along
    each (the largest grid either kernel launches)."""

    names: tuple[str, ...]
    axes: tuple[int, ...]
    dims: tuple[int, ...]

    @property
    def per_shape(self) -> int:
        """Points (CTAs) per launch shape in the evaluation grid."""
        return int(np.prod(self.dims, dtype=np.int64))

    def variables(self) -> dict[str, Any]:
        return {n: z3.BitVec(n, 32) for n in self.names}


class CtaMismatch(Exception):
    """The two kernels write an output element from different CTAs at some shape: their terms
    stand for different CTAs and cannot be compared at one point (the message says where)."""


def cta_axes(spec, grids: dict[str, tuple[int, int, int]],
             kernels: dict) -> dict[str, CtaAxes] | str:
    """Each kernel's CTA axes of one symbolic CTA for this claim, or why it does not apply
    (the full maximal launch runs then). `grids`: each kernel's maximal grid; `kernels`:
    each kernel, prepared (`.global_vars`).

    Kernels that launch the same grid and block share one `CtaAxes` (the same object for
    both roles): their `%ctaid` registers are the same shape scalars, so the term walk can
    compare values that mention them at one point. Kernels that launch different grids (a
    transpose's tiles, a coarsened kernel) each get their own: `%ctaid.x/reference` and
    `%ctaid.x/candidate`, axes of two different grids of points, compared shape by shape
    (`verifier.indexed.compare_apart`)."""
    if any(p.is_buffer and p.access not in ("in", "out") for p in spec.params):
        return "a buffer is neither `in` nor `out`: CTAs may observe one another's writes"
    for role, k in kernels.items():
        if k.global_vars:
            return f"the {role} declares .global variables"
    sides = {r: spec.side(r) for r in ("reference", "candidate")}
    if [e.text for e in sides["reference"].grid] == [e.text for e in sides["candidate"].grid] \
            and tuple(sides["reference"].block) == tuple(sides["candidate"].block):
        dims = [max(g[a] for g in grids.values()) for a in range(3)]
        axes = tuple(a for a in range(3) if dims[a] > 1)
        if not axes:
            return "every allowed shape launches one CTA"
        shared = CtaAxes(tuple(CTA_REGISTERS[a] for a in axes), axes,
                         tuple(dims[a] for a in axes))
        return {"reference": shared, "candidate": shared}
    out = {}
    for role, grid in grids.items():
        axes = tuple(a for a in range(3) if grid[a] > 1)
        out[role] = CtaAxes(tuple(f"{CTA_REGISTERS[a]}/{role}" for a in axes), axes,
                            tuple(grid[a] for a in axes))
    if not any(c.axes for c in out.values()):
        return "every allowed shape launches one CTA"
    return out


def shared(ctas: dict[str, CtaAxes]) -> bool:
    """Do both kernels run the same symbolic CTA (one set of `%ctaid` shape scalars)?"""
    return ctas["reference"] is ctas["candidate"]


def existence(cta: CtaAxes, variables: dict[str, Any], grid_terms: list) -> tuple[Any, dict]:
    """(when the one CTA exists: a z3 Bool or True, the special registers' terms) for a kernel
    whose grid is `grid_terms` (64-bit terms or ints, one per axis)."""
    parts = []
    special: dict[str, Any] = {}
    ids = dict(zip(cta.axes, cta.names))
    for a, (c, t) in enumerate(zip("xyz", grid_terms)):
        special[f"%nctaid.{c}"] = z3.BitVecVal(t, 32) if isinstance(t, int) else \
            z3.Extract(31, 0, t)
        if a in ids:
            v = variables[ids[a]]
            special[f"%ctaid.{c}"] = v
            parts.append(z3.ZeroExt(32, v) < (z3.BitVecVal(t, 64) if isinstance(t, int) else t))
        elif isinstance(t, int):
            if t < 1:
                return False, special
        else:
            parts.append(z3.BitVecVal(0, 64) < t)
    return (z3.And(parts) if parts else True), special


__all__ = ["CTA_REGISTERS", "CtaAxes", "CtaMismatch", "cta_axes", "existence", "shared"]
