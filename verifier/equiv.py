"""Equivalence checking of a kernel pair (DESIGN.md, "Verdicts"): the claim driver behind
`keq verify`. The architecture, with where a new stage or strategy goes, is in
docs/architecture.md.

How the claim is covered (`verifier.coverage`):
- Integer scalars that shape the launch (they appear in a grid, block, length or `assume`
  expression) are covered by one *symbolic maximal launch* (docs/launch-shapes.md) when there
  are more than a few shapes; when that mode cannot decide (addresses that take too many
  values, a block shape that depends on a scalar, ...), or when there are few shapes, they
  are *enumerated* (each shape on its own, at most `max_shapes`); beyond that the verdict is
  Inconclusive, naming both reasons, after a few small shapes were probed on their own. The
  verdict's `coverage` says which method covered the claim.
- The other scalars (floats, and integers only the kernel reads) stay *symbolic*, constrained
  to their declared ranges, so one check covers all their values.
- Buffer contents are symbolic: the same fresh bit-vector per element for both kernels
  (in/inout contents and the initial contents of out buffers), so every bit pattern is covered.
Either way the same stages run (`verifier.stages`, Alive2 style, each with its own message):
symbolic execution, bounds, effects, races, outputs. Every refutation is replayed on the
emulator before it is reported (`verifier.counterexample`).
"""

from __future__ import annotations

import time

from semantics.errors import KeqError
from semantics.machine.kernel import ONE_WARP_IN_SASS
from semantics.machine.termination import Unscheduled
from verifier.claim import assignments, claim_text
from verifier.coverage.base import Coverage, Covered, Scope
from verifier.coverage.probes import when_undecided
from verifier.coverage.split_launch import SplitLaunch
from verifier.coverage.strategies import Enumeration, SymbolicLaunch
from verifier.emulate import choices_of
from verifier.run import Run, StageLog
from verifier.shape_plan import ShapeFallback
from verifier.solvers import DEFAULT_SOLVERS, Cache
from verifier.spec import PairSpec
from verifier.verdict import (EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, Counterexample,
                              InternalError, Stage, StageStatus, Verdict, VerdictKind)

__all__ = ["EQUIVALENT", "INCONCLUSIVE", "NOT_EQUIVALENT", "Counterexample", "InternalError",
           "SHAPE_MODES", "Stage", "StageStatus", "Verdict", "VerdictKind", "assignments",
           "claim_text", "strategies", "verify"]

SHAPE_MODES = ("auto", "symbolic", "split", "enumerate")
FEW_SHAPES = 4        # auto: this many shapes or fewer are enumerated (each run is cheap)


def strategies(shapes: str, enumerated: list[dict], jobs: int,
               executor=None) -> list[Coverage]:
    """The coverage strategies to try, in order, for the `shapes` mode: "symbolic" (one
    maximal launch), "split" (one maximal launch per value of the scalars outside the grid),
    "enumerate" (each shape on its own), or "auto": symbolic when there are more than a few
    shapes, then split launches when the shapes are too many to enumerate, then enumeration."""
    out: list[Coverage] = []
    if shapes == "symbolic" or (shapes == "auto" and len(enumerated) != 1
                                and (not enumerated or len(enumerated) > FEW_SHAPES)):
        out.append(SymbolicLaunch())
    if shapes == "split" or (shapes == "auto" and not enumerated):
        out.append(SplitLaunch(jobs))
    if shapes in ("auto", "enumerate"):
        out.append(Enumeration(jobs, executor))
    return out


def verify(spec: PairSpec, *, fixed: dict[str, int] | None = None, timeout_s: float = 60.0,
           unroll: int = 64, max_shapes: int = 16, seed: int = 0, progress=None,
           solvers: tuple[str, ...] = DEFAULT_SOLVERS, dump_smt: str | None = None,
           trials: int = 8, shapes: str = "auto", jobs: int = 1,
           cache: Cache | None = None, prepared: dict | None = None,
           executor=None) -> Verdict:
    """Check the claim of `spec` (with the scalars in `fixed` pinned).

    `shapes` says how the launch shapes the claim allows are covered (`strategies`); `jobs`
    > 1 checks enumerated shapes in that many processes (`verifier.parallel`), `executor`
    (`verifier.campaign`, a cluster) as its tasks instead. A warm caller
    (`verifier.checker`) passes the solver `cache` and the `prepared` kernels (by role) it
    keeps between pairs."""
    if shapes not in SHAPE_MODES:
        raise KeqError(f"shapes must be one of {', '.join(SHAPE_MODES)}, not {shapes!r}")
    fixed = dict(fixed or {})
    start = time.perf_counter()
    run = Run(spec, timeout_s, unroll, solvers=tuple(solvers), dump_dir=dump_smt,
              trials=trials, jobs=jobs, choices=choices_of(spec),
              cache=cache if cache is not None else Cache(), prepared=dict(prepared or {}))
    run.stages = StageLog(getattr(progress, "stage", None))
    claim = claim_text(spec, fixed)
    # A scalar the claim allows one value is that constant (for address analysis and the
    # solvers alike), as if given with --set; the claim says it the spec's way.
    for p in spec.scalars:
        only = p.only_value()
        if only is not None and p.name not in fixed:
            fixed[p.name] = only
    enumerated, why = assignments(spec, fixed, max_shapes)
    scope = Scope(fixed, seed, enumerated, why, progress)
    try:
        covered = _cover(run, scope, strategies(shapes, enumerated, jobs, executor))
    except Unscheduled as e:
        # (the emulator, or a symbolic run, met a wait it cannot schedule: nothing decided)
        covered = Covered(Verdict(INCONCLUSIVE, claim, (e.message,)), 0,
                          "no launch shape decided")
    v = covered.verdict
    if v is None:
        kind, reasons, cex = EQUIVALENT, (), None
    else:
        kind, reasons, cex = v.kind, v.reasons, v.counterexample
    if kind == NOT_EQUIVALENT and any(ONE_WARP_IN_SASS in r for r in reasons):
        kind, cex = INCONCLUSIVE, None
        reasons = tuple(reasons) + (
            "a race between two lanes of one warp in SASS is no refutation: a converged "
            "warp issues its lanes' accesses in order (ptxas deletes a converged warp's "
            "bar.warp.sync), and keq could not show this warp converged there "
            "(docs/sass.md)",)
    return Verdict(kind, claim, tuple(reasons), tuple(sorted(run.assumptions)),
                   tuple(run.stages), covered.count, cex, time.perf_counter() - start,
                   tuple(run.obligations), covered.coverage)


def _cover(run: Run, scope: Scope, order: list[Coverage]) -> Covered:
    """The first strategy in `order` that applies and decides covers the claim. One that
    covers the whole claim without deciding it leaves the next a try (enumerating a few
    shapes decides what one maximal launch over them could not, e.g. copies in flight
    under data-dependent masks); when none decides, shape probes may still refute it."""
    fell: list[tuple[Coverage, str]] = []
    undecided: Covered | None = None
    for strategy in order:
        try:
            covered = strategy.cover(run, scope)
        except ShapeFallback as e:
            fell.append((strategy, str(e)))
            continue
        if covered.undecided:
            undecided = undecided or covered
            continue
        if undecided is not None and covered.verdict is not None and \
                covered.verdict.kind == INCONCLUSIVE:
            break                       # (the first undecided one's reasons stand)
        return covered
    if undecided is not None:
        return when_undecided(run, scope, undecided.verdict.reasons, undecided.count,
                              undecided.coverage)
    (last, why), earlier = fell[-1], fell[:-1]
    return when_undecided(run, scope, (last.undecided_reason(why)
                                       + "".join("; " + s.also(w) for s, w in earlier),))
