"""Coverage by one symbolic maximal launch per value of the scalars that do not shape the grid.

One maximal launch over every shape scalar decides most claims (docs/launch-shapes.md), but
not those whose outputs are different functions at every shape: in mode real a row's length
changes every sum and maximum a softmax's outputs read, so the terms of one element differ
shape by shape and no selection by shape makes them meet. Enumerating every shape is exact
but costs one run per shape (online softmax's rows <= 4, cols <= 256: 1,024 runs).

A split launch keeps symbolic the *grid scalars*, those a grid expression mentions (`rows`,
a GEMM's M and N): they mostly decide which CTAs exist, which the maximal launch handles
exactly, CTA by CTA. The other shape scalars (a row length, a K) are enumerated: one maximal
launch per combination of their values (a *slice*), the grid scalars symbolic in it, under the
claim's ranges and `assume` as always. The slices partition the allowed shapes, so the claim
holds when every slice does, and a refutation in a slice (replayed, as everywhere) refutes it.

A slice its own maximal launch does not decide is enumerated shape by shape when it has at
most SLICE_SHAPES shapes, else it stays undecided (Inconclusive, named, unless another slice
refutes the claim). The slices run in `jobs` processes (`verifier.parallel`).
"""

from __future__ import annotations

from verifier.counterexample import shape_text
from verifier.coverage.base import Covered, Scope
from verifier.coverage.one_shape import check_shape
from verifier.coverage.symbolic_launch import check_shapes
from verifier.parallel import check_shapes_in_parallel
from verifier.run import Run
from verifier.shape_plan import CheckAt, ShapeFallback, plan
from verifier.verdict import INCONCLUSIVE, NOT_EQUIVALENT, Verdict

MAX_SLICES = 4096        # maximal launches one claim may be split into
SLICE_SHAPES = 16        # a slice its launch does not decide is enumerated up to this many


def grid_scalars(spec) -> set[str]:
    """The scalars some launch's grid expression mentions."""
    names: set[str] = set()
    for side in spec.reference.launches + spec.candidate.launches:
        for e in side.grid:
            names |= e.names
    return names


class SplitLaunch:
    name = "split symbolic launches"

    def __init__(self, jobs: int = 1) -> None:
        self.jobs = jobs

    def cover(self, run: Run, scope: Scope) -> Covered:
        sp = scope.plan or plan(run.spec, scope.fixed)
        kept = [n for n in sp.names if n in grid_scalars(run.spec)]
        split = [n for n in sp.names if n not in kept]
        if not kept or not split:
            raise ShapeFallback(f"no split: {', '.join(sp.names)} "
                                f"{'all shape' if kept else 'none shapes'} the grid")
        slices = list({tuple(s[n] for n in split): None for s in sp.shapes})
        if len(slices) > MAX_SLICES:
            raise ShapeFallback(f"{len(slices)} slices ({', '.join(split)}), at most "
                                f"{MAX_SLICES}")
        envs = [dict(scope.fixed, **dict(zip(split, values))) for values in slices]
        coverage = (f"{sp.count} launch shape(s) in {len(envs)} symbolic maximal launch(es), "
                    f"one per value of {', '.join(split)} ({', '.join(kept)} symbolic)")
        if self.jobs > 1 and len(envs) > 1:
            count, v = check_shapes_in_parallel(run, envs, scope.seed, self.jobs, check_slice,
                                                scope.progress)
            undecided = v is not None and v.kind == INCONCLUSIVE
            return Covered(v, sp.count if v is None or undecided else count, coverage,
                           undecided=undecided)
        undecided = None
        for n, env in enumerate(envs):
            if scope.progress:
                scope.progress(n, len(envs), env)
            v = check_slice(run, env, scope.seed)
            if v is not None and v.kind != INCONCLUSIVE:
                return Covered(v, n + 1, coverage)
            undecided = undecided or v      # (a later slice may still refute the claim)
        return Covered(undecided, sp.count, coverage, undecided=undecided is not None)

    def undecided_reason(self, why: str) -> str:
        return f"{self.name}: {why}"

    def also(self, why: str) -> str:
        return f"{self.name} do not apply: {why}"


def check_slice(run: Run, env: dict[str, int], seed: int) -> Verdict | None:
    """None when the claim holds on every shape of the slice `env` (the split scalars fixed,
    the grid scalars free); else the verdict it forces."""
    sp = plan(run.spec, env)
    try:
        # (indexed buffers, and one symbolic CTA where the CTAs cannot observe one another: a
        # slice's rows are its CTAs, and one stands for all of them)
        return check_shapes(run, sp, env, seed, index=True)
    except CheckAt as e:
        v = check_shape(run, e.env, seed)
        if v is not None and v.kind == NOT_EQUIVALENT:
            return v
        why = f"{e}, and on its own that shape is {'undecided' if v else 'equivalent'}"
    except ShapeFallback as e:
        why = str(e)
    if sp.count > SLICE_SHAPES:
        return run.inconclusive(f"a slice of {sp.count} shapes at {shape_text(env)}: {why}")
    undecided = None
    for shape in sp.shapes:
        v = check_shape(run, dict(env, **shape), seed)
        if v is not None and v.kind != INCONCLUSIVE:
            return v
        undecided = undecided or v
    return undecided


__all__ = ["MAX_SLICES", "SplitLaunch", "check_slice", "grid_scalars"]
