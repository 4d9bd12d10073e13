"""Equivalence checking of a kernel pair (DESIGN.md, "Verdicts"): the staged check behind
`keq verify`.

How the claim is covered:
- Integer scalars that shape the launch (they appear in a grid, block, length or `assume`
  expression) are covered by one *symbolic maximal launch* (`verifier.shapes`, design in
  docs/launch-shapes.md) when there are more than a few shapes; when that mode cannot decide
  (addresses that take too many values, a block shape that depends on a scalar, ...), or
  when there are few shapes, they are *enumerated* (`check_assignment` per shape, at most
  `max_shapes`); beyond that the verdict is Inconclusive, naming both reasons. The verdict's
  `coverage` says which method covered the claim.
- Before the symbolic launch, both kernels run on the emulator (race detector on) at three
  of its shapes with random inputs (`verifier.counterexample.pretest`): a fault, race or
  difference seen there is the verdict, concrete and replayable; nothing seen proves nothing.
- The other scalars (floats, and integers only the kernel reads) stay *symbolic*, constrained
  to their declared ranges, so one check covers all their values.
- Buffer contents are symbolic: the same fresh bit-vector per element for both kernels
  (in/inout contents and the initial contents of out buffers), so every bit pattern is covered.
Per enumerated shape the stages are (Alive2 style, each with its own message):
  1. bounds: both kernels run on the symbolic domain; an access outside every buffer or
     misaligned is a memory fault (in the reference: an error about the spec; in the candidate:
     not equivalent). A data-dependent address is refused by name (Inconclusive).
  2. races: when no branch depends on data, the set of accesses is the same for every input, so
     one emulator run with the race detector decides race freedom for the shape; otherwise
     Inconclusive.
  3. effects: undefined behaviour, uninitialized shared reads and nondeterminism make the
     verdict Inconclusive; approximate functions (uninterpreted) become a stated assumption.
  4. outputs (`verifier.outputs`): every out/inout element must be equal: identical terms need
     no solver, random testing first, integer outputs in one combined query, floats with
     their floating-point subterms abstracted first, then per element. A model becomes
     concrete inputs, both kernels are replayed on the emulator, and only a reproduced
     difference is reported (`verifier.counterexample`); a model that does not reproduce is an
     internal error (or Inconclusive when approximations are involved).
`mode = "real"` translates float outputs to real arithmetic (`verifier.real_mode`).
"""

from __future__ import annotations

import time

from semantics.errors import KeqError, ShapeMachineryNeeded, UnsupportedError
from semantics.machine import MemoryFault
from semantics.machine.executor import ExecutionError, UnrollLimit
from semantics.machine.symbolic_run import SymbolicLaunch, run_symbolic
from verifier.claim import assignments, claim_text, symbolic_inputs
from verifier.counterexample import (ORDERED, fault_counterexample, race_check, shape_text,
                                     tested_difference)
from verifier.effects import judge_effects
from verifier.emulate import choices_of, prepare_side
from verifier.termination import never_ends
from verifier.outputs import compare_outputs, output_terms, same_term
from verifier.parallel import check_shapes_in_parallel
from verifier.shape_plan import CheckAt, ShapeFallback, plan, plan_at
from verifier.shapes import check_shapes
from verifier.solvers import DEFAULT_SOLVERS
from verifier.spec import PairSpec
from verifier.run import Run, StageLog
from verifier.verdict import (EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, Counterexample,
                              InternalError, Stage, StageStatus, Verdict, VerdictKind)

__all__ = ["EQUIVALENT", "INCONCLUSIVE", "NOT_EQUIVALENT", "Counterexample", "InternalError",
           "Stage", "StageStatus", "Verdict", "VerdictKind", "verify", "claim_text",
           "assignments"]


# -- one assignment ---------------------------------------------------------------------------


def _run_side_symbolic(ctx: Run, role: str, values: dict, env: dict) -> SymbolicLaunch:
    side = ctx.spec.side(role)
    k = ctx.prepared.get(role)
    if k is None:
        k = ctx.prepared[role] = prepare_side(side)
    grid, block = side.launch(env)
    return run_symbolic(k, grid, block, side.kernel_args(values),
                        dynamic_shared=side.dynamic_shared, unroll=ctx.unroll,
                        choices=ctx.choices, tag=role,
                        read_only=side.read_only_params(k.fn.params))


def check_assignment(ctx: Run, env: dict[str, int], seed: int) -> Verdict | None:
    """None when the assignment is proved; else the verdict it forces."""
    spec = ctx.spec
    values, constraints, variables = symbolic_inputs(spec, env)
    t0 = time.perf_counter()
    launches = {}
    for role in ("reference", "candidate"):
        try:
            launches[role] = _run_side_symbolic(ctx, role, values, env)
        except MemoryFault as e:
            if role == "reference":
                raise KeqError(f"the reference kernel faults at {shape_text(env)}: {e.render()}")
            return fault_counterexample(ctx, env, e, seed)
        except ExecutionError as e:
            if role == "reference":
                raise KeqError(f"the reference kernel fails at {shape_text(env)}: {e.render()}")
            return fault_counterexample(ctx, env, e, seed)
        except ShapeMachineryNeeded as e:
            return _as_one_shape(ctx, env, seed, f"{role} at {shape_text(env)}: {e}")
        except UnsupportedError as e:
            return _tested_or_inconclusive(ctx, env, seed, f"{role} at {shape_text(env)}: {e}")
        except UnrollLimit as e:
            ended = never_ends(ctx, role, e, constraints, variables, env, seed)
            if ended is not None:
                return ended
            return _tested_or_inconclusive(ctx, env, seed, f"{role} at {shape_text(env)}: {e}")
    ctx.stage("symbolic execution", StageStatus.OK, t0, shape_text(env))
    stop = judge_effects(ctx, launches)
    if stop is not None:
        return ctx.inconclusive(stop)
    # races
    t0 = time.perf_counter()
    if any(launch.symbolic_control for launch in launches.values()):
        # The emulator's race detector sees one input; the symbolic race log sees them all.
        return _as_one_shape(ctx, env, seed, f"control flow depends on input data at "
                                             f"{shape_text(env)}")
    race = race_check(ctx, env, seed)
    if race == ORDERED:
        return _as_one_shape(ctx, env, seed, f"morally strong accesses meet at {shape_text(env)}")
    ctx.stage("races", StageStatus.OK if race is None else StageStatus.FAILED, t0, shape_text(env))
    if race is not None:
        return race
    # outputs
    t0 = time.perf_counter()
    ref = output_terms(spec, "reference", launches["reference"], ctx)
    cand = output_terms(spec, "candidate", launches["candidate"], ctx)
    diffs = []
    for p in spec.params:
        if not p.is_buffer or p.access not in ("out", "inout"):
            continue
        for i, (a, b) in enumerate(zip(ref[p.name], cand[p.name])):
            if not same_term(a, b):
                diffs.append((p, i, a, b, True))
    return compare_outputs(ctx, env, diffs, constraints, variables, seed, t0)


def _tested_or_inconclusive(ctx: Run, env: dict, seed: int, why: str) -> Verdict:
    """What cannot be proved here may still be refuted by testing on the emulator, under
    other choices of what the ISA leaves open too (`verifier.testing`); else Inconclusive,
    named."""
    t0 = time.perf_counter()
    tested = tested_difference(ctx, env, seed, ctx.trials)
    if tested is not None:
        ctx.stage("random testing", StageStatus.FAILED, t0, tested.reasons[0])
        return tested
    return ctx.inconclusive(why)


def _as_one_shape(ctx: Run, env: dict[str, int], seed: int, why: str) -> Verdict | None:
    """Check the shape `env` with the symbolic launch's machinery (`verifier.shapes.plan_at`):
    every access logged with its condition (races for every input, not one), addresses that
    depend on a few input bits split by value. None when proved."""
    try:
        return check_shapes(ctx, plan_at(ctx.spec, env), env, seed)
    except ShapeFallback as e:
        return ctx.inconclusive(f"{why}; the symbolic launch cannot decide it either: {e}")


# -- counterexamples ---------------------------------------------------------------------------


# -- the whole claim -----------------------------------------------------------------------------


SHAPE_MODES = ("auto", "symbolic", "enumerate")
FEW_SHAPES = 4        # auto: this many shapes or fewer are enumerated (each run is cheap)
PROBES = 2            # shapes checked on their own when the whole claim stays undecided
# A maximal launch whose outputs span more cells (shapes x elements of an out buffer) than this
# takes a minute or more (the 32^3 matmul claims: 32768 x 1024): the smallest shape, checked on
# its own in about a second, comes first there, as small scopes find most bugs.
EARLY_PROBE_CELLS = 1 << 24


def _costly(spec: PairSpec, sp) -> int:
    """The output cells of the maximal launch when past EARLY_PROBE_CELLS, else 0."""
    cells = max((sp.count * sp.lengths[p.name] for p in spec.buffers if p.access == "out"),
                default=0)
    return cells if cells > EARLY_PROBE_CELLS else 0


def _probe_shapes(ctx: Run, sp, fixed: dict[str, int], checked: list[dict]) -> list[dict]:
    """Where to look for a counterexample when the whole claim is undecided: the smallest
    allowed shape (small scopes find most bugs, and small shapes are cheap to check), then
    the smallest shape where testing saw real-mode outputs far apart."""
    if sp is None or not sp.shapes:
        return []
    picks = [dict(fixed, **sp.shapes[0])]
    picks += sorted(ctx.suspects, key=lambda e: (sum(e.values()), sorted(e.items())))
    out: list[dict] = []
    for env in picks:
        if env not in out and env not in checked and len(out) < PROBES:
            out.append(env)
    return out


def _probe(ctx: Run, envs: list[dict], seed: int) -> tuple[Verdict | None, list[dict]]:
    """Check each shape in `envs` on its own; the first that is not equivalent is the verdict
    (sound: that shape is in the claim). Returns it (or None) and the shapes checked."""
    probed: list[dict] = []
    for env in envs:
        t0 = time.perf_counter()
        probed.append(env)
        v = check_assignment(ctx, env, seed)
        status = "ok" if v is None else ("failed" if v.kind == NOT_EQUIVALENT else "inconclusive")
        ctx.stage("shape probe", status, t0, f"{shape_text(env)} on its own")
        if v is not None and v.kind == NOT_EQUIVALENT:
            return v, probed
        if v is not None:
            probed.pop()      # undecided there: it shows nothing
    return None, probed


def verify(spec: PairSpec, *, fixed: dict[str, int] | None = None, timeout_s: float = 60.0,
           unroll: int = 64, max_shapes: int = 16, seed: int = 0, progress=None,
           solvers: tuple[str, ...] = DEFAULT_SOLVERS, dump_smt: str | None = None,
           trials: int = 8, shapes: str = "auto", jobs: int = 1) -> Verdict:
    """Check the claim of `spec` (with the scalars in `fixed` pinned).

    `shapes` says how the launch shapes the claim allows are covered: "symbolic" (one maximal
    launch with symbolic shape scalars, `verifier.shapes`), "enumerate" (each shape on its own,
    at most `max_shapes`), or "auto": symbolic when there are more than a few shapes, falling
    back to enumeration when the symbolic mode cannot decide and the shapes are few enough.
    `jobs` > 1 checks enumerated shapes in that many processes (`verifier.parallel`)."""
    if shapes not in SHAPE_MODES:
        raise KeqError(f"shapes must be one of {', '.join(SHAPE_MODES)}, not {shapes!r}")
    fixed = dict(fixed or {})
    start = time.perf_counter()
    ctx = Run(spec, timeout_s, unroll, solvers=tuple(solvers), dump_dir=dump_smt,
               trials=trials, jobs=jobs, choices=choices_of(spec))
    ctx.stages = StageLog(getattr(progress, "stage", None))
    claim = claim_text(spec, fixed)
    # A scalar the claim allows one value is that constant (for address analysis and the
    # solvers alike), as if given with --set; the claim says it the spec's way.
    for p in spec.scalars:
        only = p.only_value()
        if only is not None and p.name not in fixed:
            fixed[p.name] = only

    def done(kind, reasons=(), count=0, cex=None, coverage=""):
        return Verdict(kind, claim, tuple(reasons), tuple(sorted(ctx.assumptions)),
                       tuple(ctx.stages), count, cex, time.perf_counter() - start,
                       tuple(ctx.obligations), coverage)

    enumerated, why = assignments(spec, fixed, max_shapes)
    symbolic_why = ""
    sp = None
    checked: list[dict] = []          # shapes already decided on their own
    early: list[dict] = []            # of those, shapes probed before the maximal launch

    def undecided(*reasons: str, count: int = 0, coverage: str = "") -> Verdict:
        # The whole claim is undecided: a few small shapes on their own can still refute it.
        v, probed = _probe(ctx, _probe_shapes(ctx, sp, fixed, checked), seed)
        if v is not None:
            return done(v.kind, v.reasons, 1, v.counterexample,
                        f"{shape_text(probed[-1])} checked on its own (the whole claim is "
                        f"undecided: {reasons[0]})")
        probed = early + probed
        if probed:
            reasons += ("checked on their own, these shapes are equivalent: "
                        + ", ".join(shape_text(e) for e in probed),)
        return done(INCONCLUSIVE, reasons, count, coverage=coverage)

    if shapes == "symbolic" or (shapes == "auto" and len(enumerated) != 1
                                and (not enumerated or len(enumerated) > FEW_SHAPES)):
        t0 = time.perf_counter()
        try:
            sp = plan(spec, fixed)
            cells = _costly(spec, sp)
            if cells:
                v, early = _probe(ctx, _probe_shapes(ctx, sp, fixed, checked)[:1], seed)
                if v is not None:
                    return done(v.kind, v.reasons, 1, v.counterexample,
                                f"{shape_text(early[-1])} checked on its own, before the symbolic "
                                f"launch ({cells} output cells over {sp.count} shapes)")
                checked += early
            if progress:
                progress(0, 1, {n: "symbolic" for n in sp.names})
            v = check_shapes(ctx, sp, fixed, seed)
        except CheckAt as e:
            # The maximal launch proved everything but this shape: its own check decides.
            ctx.stage("symbolic shapes", StageStatus.OK, t0,
                      f"{e.why} at {shape_text(e.env)}: that shape is checked on its "
                      f"own")
            v = check_assignment(ctx, e.env, seed)
            checked.append(e.env)
            if v is not None:
                return done(v.kind, v.reasons, 1, v.counterexample,
                            f"one symbolic maximal launch, then {shape_text(e.env)} on its own")
            symbolic_why = f"{e}, yet that shape on its own is equivalent"
        except ShapeFallback as e:
            symbolic_why = str(e)
            ctx.stage("symbolic shapes", StageStatus.SKIPPED, t0, symbolic_why)
        else:
            coverage = (f"{sp.count} launch shape(s) in one symbolic maximal launch "
                        f"({', '.join(sp.names)} symbolic)")
            if v is None:
                return done(EQUIVALENT, (), sp.count, coverage=coverage)
            if v.kind == INCONCLUSIVE:
                return undecided(*v.reasons, count=sp.count, coverage=coverage)
            return done(v.kind, v.reasons, sp.count, v.counterexample, coverage)
        if shapes == "symbolic":
            return undecided(f"symbolic launch shapes: {symbolic_why}")
    if not enumerated:
        reason = why or "no launch shape satisfies the ranges and `assume`"
        if symbolic_why:
            reason += f"; symbolic launch shapes do not apply: {symbolic_why}"
        return undecided(reason)
    coverage = f"{len(enumerated)} launch shape(s), each checked on its own"
    if jobs > 1 and len(enumerated) > 1:
        count, v = check_shapes_in_parallel(ctx, enumerated, seed, jobs, check_assignment,
                                            progress)
        coverage += f" ({min(jobs, len(enumerated))} processes)"
        if v is not None:
            return done(v.kind, v.reasons, count, v.counterexample, coverage)
        return done(EQUIVALENT, (), len(enumerated), coverage=coverage)
    for n, env in enumerate(enumerated):
        if progress:
            progress(n, len(enumerated), env)
        v = check_assignment(ctx, env, seed)
        if v is not None:
            return done(v.kind, v.reasons, n + 1, v.counterexample, coverage)
    return done(EQUIVALENT, (), len(enumerated), coverage=coverage)
