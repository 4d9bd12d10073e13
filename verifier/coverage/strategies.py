"""The coverage strategies of a claim's launch shapes (`verifier.coverage.base.Coverage`):

- `SymbolicLaunch`: one symbolic maximal launch for every shape (`symbolic_launch`); where
  its output cells are many, the smallest shape is probed on its own first; where it proves
  all but one shape, that shape is checked on its own (`CheckAt`).
- `Enumeration`: each allowed shape on its own (`one_shape`), in worker processes when the
  run has several (`verifier.parallel`).
"""

from __future__ import annotations

import time

from verifier.counterexample import shape_text
from verifier.coverage.base import Covered, Scope
from verifier.coverage.one_shape import check_shape
from verifier.coverage.probes import probe, probe_shapes
from verifier.coverage.shape_tasks import check_shapes_on
from verifier.coverage.symbolic_launch import check_shapes
from verifier.parallel import check_shapes_in_parallel
from verifier.run import Run
from verifier.shape_plan import CheckAt, ShapeFallback, ShapePlan, plan
from verifier.spec import PairSpec
from verifier.verdict import INCONCLUSIVE, StageStatus

# A maximal launch whose outputs span more cells (shapes x elements of an out buffer) than this
# takes a minute or more (the 32^3 matmul claims: 32768 x 1024): the smallest shape, checked on
# its own in about a second, comes first there, as small scopes find most bugs.
EARLY_PROBE_CELLS = 1 << 24


def _costly(spec: PairSpec, sp: ShapePlan) -> int:
    """The output cells of the maximal launch when past EARLY_PROBE_CELLS, else 0."""
    cells = max((sp.count * sp.lengths[p.name] for p in spec.buffers if p.access == "out"),
                default=0)
    return cells if cells > EARLY_PROBE_CELLS else 0


class SymbolicLaunch:
    name = "symbolic launch shapes"

    def cover(self, run: Run, scope: Scope) -> Covered:
        t0 = time.perf_counter()
        try:
            return self._cover(run, scope)
        except CheckAt as e:
            # The maximal launch proved everything but this shape: its own check decides.
            run.stage("symbolic shapes", StageStatus.OK, t0,
                      f"{e.why} at {shape_text(e.env)}: that shape is checked on its own")
            v = check_shape(run, e.env, scope.seed)
            scope.checked.append(e.env)
            if v is not None and v.kind != INCONCLUSIVE:
                return Covered(v, 1, f"one symbolic maximal launch, then {shape_text(e.env)} "
                                     f"on its own")
            if v is not None:
                # (undecided there: another shape may still refute the claim)
                raise ShapeFallback(f"{e}, and that shape on its own is undecided: "
                                    f"{v.reasons[0] if v.reasons else ''}") from None
            raise ShapeFallback(f"{e}, yet that shape on its own is equivalent") from None
        except ShapeFallback as e:
            run.stage("symbolic shapes", StageStatus.SKIPPED, t0, str(e))
            raise

    def _cover(self, run: Run, scope: Scope) -> Covered:
        sp = scope.plan = plan(run.spec, scope.fixed)
        cells = _costly(run.spec, sp)
        if cells:
            v, scope.early = probe(run, probe_shapes(run, scope)[:1], scope.seed)
            if v is not None:
                return Covered(v, 1, f"{shape_text(scope.early[-1])} checked on its own, "
                                     f"before the symbolic launch ({cells} output cells over "
                                     f"{sp.count} shapes)")
            scope.checked += scope.early
        if scope.progress:
            scope.progress(0, 1, {n: "symbolic" for n in sp.names})
        v = check_shapes(run, sp, scope.fixed, scope.seed)
        coverage = (f"{sp.count} launch shape(s) in one symbolic maximal launch "
                    f"({', '.join(sp.names)} symbolic)")
        return Covered(v, sp.count, coverage, undecided=v is not None and v.kind == INCONCLUSIVE)

    def undecided_reason(self, why: str) -> str:
        return f"{self.name}: {why}"

    def also(self, why: str) -> str:
        return f"{self.name} do not apply: {why}"


class Enumeration:
    name = "enumerated launch shapes"

    def __init__(self, jobs: int = 1, executor=None) -> None:
        self.jobs = jobs
        self.executor = executor          # a campaign executor (a cluster), or None: forks

    def cover(self, run: Run, scope: Scope) -> Covered:
        shapes = scope.enumerated
        if not shapes:
            raise ShapeFallback(scope.why_not_enumerated
                                or "no launch shape satisfies the ranges and `assume`")
        coverage = f"{len(shapes)} launch shape(s), each checked on its own"
        if self.executor is not None and len(shapes) > 1:
            count, v = check_shapes_on(self.executor, run, shapes, scope.seed, scope.progress)
            coverage += f" (on {self.executor.name})"
            return Covered(v, count if v is not None else len(shapes), coverage)
        if self.jobs > 1 and len(shapes) > 1:
            count, v = check_shapes_in_parallel(run, shapes, scope.seed, self.jobs, check_shape,
                                                scope.progress)
            coverage += f" ({min(self.jobs, len(shapes))} processes)"
            return Covered(v, count if v is not None else len(shapes), coverage)
        undecided = None
        for n, env in enumerate(shapes):
            if scope.progress:
                scope.progress(n, len(shapes), env)
            v = check_shape(run, env, scope.seed)
            if v is not None and v.kind != INCONCLUSIVE:
                return Covered(v, n + 1, coverage)
            undecided = undecided or v       # (a later shape may still refute the claim)
        return Covered(undecided, len(shapes), coverage)

    def undecided_reason(self, why: str) -> str:
        return why

    def also(self, why: str) -> str:
        return f"{self.name} do not apply: {why}"


__all__ = ["EARLY_PROBE_CELLS", "Enumeration", "SymbolicLaunch"]
