"""Symbolic launch shapes: one maximal launch proves a claim for every launch shape it allows.

The scalars that shape the launch (they appear in a grid, a buffer length or an `assume`)
become solver variables, constrained to their declared ranges and to `assume`. Each kernel runs
once over the *maximal* launch (every CTA any allowed shape launches; buffers at their largest
length), where:
- CTA `c` exists only when `c < grid(scalars)` on every axis: its global-memory effects happen
  under that condition, and `%nctaid` is the symbolic grid;
- the kernel's own bounds checks (`if (i < n)`) are symbolic branches: both paths run, under
  complementary lane conditions (the executor's symbolic masks);
- an access past a buffer's symbolic length, or outside every buffer, under a symbolic condition
  becomes an *obligation* (its condition must be unsatisfiable); a model is a shape (and inputs)
  on which the kernel faults, replayed on the emulator before it is reported;
- races: every access counts as happening, so "no race found" holds for every shape and input;
  a race found this way is reproduced on the emulator at concrete shapes before it is reported,
  else the verdict is Inconclusive;
- output element `i` of a buffer exists when `i < length(scalars)`; only existing elements must
  be equal.
Loops bounded by a shape scalar unroll until the solver shows no lane can continue (the executor
prunes infeasible lanes on loop re-entry), up to `--unroll`.

What this mode refuses (the verifier then enumerates shapes when there are few enough, or says
Inconclusive): a block shape or dynamic shared size that depends on a scalar, a division by a
symbolic value in a launch expression, and addresses that depend on a symbolic value (e.g.
`row * cols + col` with symbolic `cols`): memory is addressed concretely.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
import z3

from semantics.errors import UnsupportedError
from semantics.machine import MemoryFault
from semantics.machine.executor import ExecutionError, UnrollLimit
from semantics.machine.symbolic_port import AddressBudget, LaunchShape
from semantics.machine.symbolic_run import SymbolicLaunch, run_symbolic
from verifier.claim import symbolic_inputs
from verifier.counterexample import (concrete_inputs, model_inputs, pretest, replay_fault,
                                     replay_race, shape_text, tested_difference)
from verifier.effects import judge_effects
from verifier.termination import never_ends
from verifier.emulate import prepare_side
from verifier.indexed import (NotIndexable, buffer_info, compare, compare_apart, first_outside,
                              indexed_params, inside_at, replay_logs, size_check,
                              two_dimensional, violation_of)
from verifier.outputs import output_terms, same_term, compare_outputs, random_testing
from verifier.parallel import FirstFailureBeside, each
from verifier.real_mode import ASSUMPTION as REAL_ASSUMPTION, NotReal, RealTranslator
from verifier.solvers import Obligation
from verifier.spec import type_bits
from verifier.feasibility import Feasibility
from verifier.shape_plan import CheckAt, ShapeFallback, ShapePlan
from verifier.symbolic_cta import CtaAxes, CtaMismatch, cta_axes, existence, shared
from verifier.run import Run
from verifier.verdict import INCONCLUSIVE, InternalError, StageStatus, Verdict

def _same_as_reals(feas: Feasibility, reals: RealTranslator, a, b, live, width: int) -> bool:
    """Do the real-arithmetic readings of `a` and `b` select the same term at every shape?"""
    try:
        ra, rb = reals.value(a, width), reals.value(b, width)
    except NotReal:
        return False
    if ra.eq(rb):
        return True
    ra, rb = z3.simplify(ra), z3.simplify(rb)      # normalizes sums: a*x + y == y + x*a
    return ra.eq(rb) or feas.same_everywhere(ra, rb, live)


def _widen(v, p) -> Any:
    """A scalar variable as the 64-bit value launch expressions compute with."""
    bits = type_bits(p.type)
    if bits >= 64:
        return v
    return z3.SignExt(64 - bits, v) if p.type.startswith("s") else z3.ZeroExt(64 - bits, v)


def _lt(i: int, bound) -> Any:
    return i < bound if isinstance(bound, int) else z3.BitVecVal(i, 64) < bound


def _launch(ctx: Run, sp: ShapePlan, role: str, values: dict, env64: dict,
            feas: Feasibility, indexed: bool, cta: CtaAxes | None = None) -> SymbolicLaunch:
    spec = ctx.spec
    side = spec.side(role)
    k = _prepared(ctx, role)
    gmax = sp.grids[role]
    terms = [e.to_z3(env64) for e in side.grid] + [1] * (3 - len(side.grid))
    if cta is not None:
        # one CTA, its %ctaid the shape scalars of `cta` (`verifier.symbolic_cta`)
        cond, special = existence(cta, values, terms)
        gmax = (1, 1, 1)
        exists = [True if cond is True or (cond is not False and feas.certain(cond)) else cond]
    else:
        exists = []
        for z in range(gmax[2]):
            for y in range(gmax[1]):
                for x in range(gmax[0]):
                    parts = [c for c in (_lt(x, terms[0]), _lt(y, terms[1]),
                                         _lt(z, terms[2])) if c is not True]
                    if any(c is False for c in parts):
                        exists.append(False)
                        continue
                    cond = z3.And(parts) if parts else True
                    exists.append(True if cond is True or feas.certain(cond) else cond)
        special = {f"%nctaid.{a}": z3.Extract(31, 0, t) for a, t in zip("xyz", terms)
                   if not isinstance(t, int)}
    limits = {}
    for name, kp in zip(side.arg_names, k.fn.params):
        p = spec.param(name)
        if p.is_buffer:
            n = p.length.to_z3(env64)
            limits[kp.name] = n * (type_bits(p.type) // 8) if isinstance(n, int) else \
                n * z3.BitVecVal(type_bits(p.type) // 8, 64)
    return run_symbolic(k, gmax, sp.blocks[role], side.kernel_args(values),
                        dynamic_shared=side.dynamic_shared, unroll=ctx.unroll,
                        shape=LaunchShape(tuple(exists), limits), special_terms=special,
                        detect_races=True, prune=feas.prune, resolver=feas.resolve,
                        settle=feas.settle, possible=feas.possible,
                        indexed=indexed_params(spec, role, k.fn.params) if indexed else None,
                        choices=ctx.choices, tag=role,
                        read_only=side.read_only_params(k.fn.params))


def _prepared(ctx: Run, role: str):
    k = ctx.prepared.get(role)
    if k is None:
        k = ctx.prepared[role] = prepare_side(ctx.spec.side(role))
    return k


def check_shapes(ctx: Run, sp: ShapePlan, fixed: dict[str, int], seed: int) -> Verdict | None:
    """None when the claim holds for every shape in `sp`; else the verdict it forces.
    Raises ShapeFallback when this mode cannot decide (the caller may enumerate).

    With its in/out buffers indexed, a claim is first run on one symbolic CTA standing for
    every CTA (`verifier.symbolic_cta`); what that run does not decide (a proof or a replayed
    refutation) is run again on the full maximal launch, as if it had not been tried."""
    spec = ctx.spec
    t0 = time.perf_counter()
    if sp.names:
        # On the emulator first: the smallest shape (the smallest counterexample), a random
        # one and the largest (it has every lane).
        picks = sorted({0, int(np.random.default_rng(seed).integers(sp.count)), sp.count - 1})
        tested = pretest(ctx, [dict(fixed, **sp.shapes[i]) for i in picks], seed)
        ctx.stage("random testing", StageStatus.FAILED if tested else StageStatus.OK, t0,
                  f"{len(picks)} launch shape(s) on the "
                  f"emulator, random inputs, races detected")
        if tested is not None:
            return tested
    indexed = two_dimensional(spec, sp.names)
    cta: dict[str, CtaAxes] | str | None = None
    if indexed and sp.names:
        try:
            cta = cta_axes(spec, sp.grids, {r: _prepared(ctx, r)
                                            for r in ("reference", "candidate")})
        except UnsupportedError as e:
            raise ShapeFallback(str(e)) from None
    if isinstance(cta, dict):
        t0 = time.perf_counter()
        mark = ctx.mark()
        try:
            v = _maximal(ctx, sp, fixed, seed, indexed, cta)
            if v is None or v.kind != INCONCLUSIVE:
                return v
            why = "; ".join(v.reasons)
        except (ShapeFallback, CtaMismatch) as e:
            why = str(e)
        # Not an answer: forget what the run added, and run the full launch.
        ctx.rewind(mark)
        ctx.stage("one symbolic CTA", StageStatus.SKIPPED, t0,
                  f"{why}; the full maximal launch decides")
    return _maximal(ctx, sp, fixed, seed, indexed, None)


def _maximal(ctx: Run, sp: ShapePlan, fixed: dict[str, int], seed: int, indexed: bool,
             ctas: dict[str, CtaAxes] | None) -> Verdict | None:
    """`check_shapes` on one maximal launch: every CTA, or one symbolic CTA per kernel
    (`ctas`, the same `CtaAxes` for both when they launch the same grid)."""
    spec = ctx.spec
    values, constraints, variables = symbolic_inputs(spec, fixed, sp.lengths)
    env64: dict[str, Any] = {n: v for n, v in fixed.items()}
    for n in sp.names:
        env64[n] = _widen(values[n], spec.param(n))
    for a in spec.assume:
        c = a.to_z3(env64)
        if c is False:
            raise ShapeFallback(f"assume {a.text!r} never holds")
        if c is not True:
            constraints.append(c)
    apart = ctas is not None and not shared(ctas)
    for cta in ([] if ctas is None else [ctas["reference"]] if not apart else ctas.values()):
        ids = cta.variables()
        values = dict(values, **ids)
        # (the axes' range, for the solver: a model is then a CTA of the largest grid)
        constraints += [z3.ULT(v, d) for v, d in zip(ids.values(), cta.dims)]
    # Each kernel's points: shapes (times its CTAs); one object when both share them.
    feass = {r: Feasibility(sp, values, constraints, cta=ctas[r] if ctas else None)
             for r in (("reference", "candidate") if apart else ("reference",))}
    if not apart:
        feass["candidate"] = feass["reference"]
    feas = feass["reference"]
    what = (f"{sp.count} launch shapes ({', '.join(sp.names)} symbolic)" if sp.names else
            f"{shape_text(fixed)}, every access logged")
    if ctas is not None and not apart:
        what += (f"; one symbolic CTA ({', '.join(ctas['reference'].names)}) for the "
                 f"{ctas['reference'].per_shape} CTAs of the largest grid")
    elif apart:
        what += ("; one symbolic CTA per kernel (" + ", ".join(
            f"{r}: {c.per_shape} CTA(s) of its largest grid" for r, c in ctas.items()) + ")")
    t0 = time.perf_counter()
    launches: dict[str, SymbolicLaunch] = {}
    if indexed:
        _indexed(size_check, spec, sp.count, sp.lengths)
        what += "; in/out buffers indexed (their lengths mention two shape scalars)"
    while len(launches) < 2:
        role = ("reference", "candidate")[len(launches)]
        try:
            launches[role] = _launch(ctx, sp, role, values, env64, feass[role], indexed,
                                     ctas[role] if ctas else None)
        except (MemoryFault, ExecutionError) as e:
            # On lanes that run for every shape: any shape shows it; the largest has them all.
            verdict = replay_fault(ctx, role, dict(fixed, **sp.shapes[-1]), seed)
            if verdict is not None:
                return verdict
            raise ShapeFallback(f"{role}: {e}") from None
        except AddressBudget as e:
            if indexed or not any(p.is_buffer and p.access in ("in", "out")
                                  for p in spec.params):
                raise ShapeFallback(f"{role}: {e}") from None
            # Both kernels again, their in and out buffers indexed (one representation).
            _indexed(size_check, spec, sp.count, sp.lengths)
            indexed = True
            launches.clear()
            what += f"; in/out buffers indexed ({role}: {e.message})"
        except UnrollLimit as e:
            ended = never_ends(ctx, role, e, constraints, variables, fixed, seed)
            if ended is not None:
                return ended
            raise ShapeFallback(f"{role}: {e}") from None
        except UnsupportedError as e:
            raise ShapeFallback(f"{role}: {e}") from None
    ctx.stage("symbolic execution", StageStatus.OK, t0, what)
    # bounds
    t0 = time.perf_counter()
    for role, launch in launches.items():
        if not launch.obligations:
            continue
        # Conditions about shapes alone are decided by evaluating them at every shape.
        own = feass[role]
        hit, terms = None, []
        for o in launch.obligations:
            decided, at = own.violated(o)
            if not decided:
                terms.append(o.violation)
            elif at is not None:
                hit = at
                break
        if hit is None:
            hit, rest = own.decide(terms)
        if hit is not None:
            verdict = replay_fault(ctx, role, dict(fixed, **own.shape_at(hit)), seed)
            if verdict is not None:
                return verdict
            if ctas is not None:      # (the point's CTA may not exist in the real launch)
                raise ShapeFallback(f"an invalid access by the {role} at "
                                    f"{shape_text(own.shape_at(hit))} did not fault")
            raise InternalError(f"an invalid access by the {role} at "
                                f"{shape_text(own.shape_at(hit))} did not fault on the emulator "
                                f"(keq bug)")
        if not rest:
            continue
        ob = Obligation(z3.And(*constraints, z3.Or(rest)), f"{role} stays inside its buffers")
        r = ctx.solve(ob)
        if r.answer == "sat":
            model = r.model or {}
            scalars, inputs = model_inputs(ctx, fixed, lambda v: int(model.get(str(v), 0)),
                                           variables, seed)
            verdict = replay_fault(ctx, role, scalars, seed, inputs)
            if verdict is not None:
                return verdict
            if indexed:       # the model may read an indexed buffer's array freely
                raise ShapeFallback(f"a solver model of an invalid access by the {role} did "
                                    f"not fault on the emulator at {shape_text(scalars)}")
            raise InternalError(f"a solver model of an invalid access by the {role} did not "
                                f"fault on the emulator (keq bug): {shape_text(scalars)}")
        if r.answer != "unsat":
            return ctx.inconclusive(f"bounds of the {role}: no solver answered "
                                      f"({r.answer}: {r.detail or r.solver})")
    # (each kernel's view of the buffers, over its own points)
    infos = {r: _indexed(buffer_info, spec, values, lambda p: p.length.to_z3(env64),
                         feass[r].values) if indexed else {}
             for r in ("reference", "candidate") if apart or r == "reference"}
    if not apart:
        infos["candidate"] = infos["reference"]
    info = infos["reference"]
    replayed, replay_s = None, 0.0
    if indexed:
        # With two processes or more, a worker starts on the bounds of the logged accesses
        # while this one replays the write logs (`indexed.replay_logs`: numpy over terms
        # that already exist), then joins it (`FirstFailureBeside`). What the replay raises
        # is kept, and raised where the comparison meets it, only once the bounds passed:
        # the sequential order.
        overlap = not apart and ctx.jobs > 1
        widths = {p.name: type_bits(p.type) for p in spec.buffers}
        initial = {p.name: info[p.name].ids for p in spec.buffers if p.access == "out"}
        logs = {r: launch.indexed for r, launch in launches.items()}
        if overlap:
            # Both kernels' accesses in one order (the reference's first): the first outside
            # is the reference's first, else the candidate's.
            roles = [(role, i) for role, launch in launches.items()
                     for i in range(len(launch.indexed))]
            with FirstFailureBeside(len(roles), lambda j: inside_at(
                    feass[roles[j][0]].values, infos[roles[j][0]],
                    launches[roles[j][0]].indexed[roles[j][1]]), ctx.jobs) as outside:
                t1 = time.perf_counter()
                replayed = list(replay_logs(feas.values, info, widths, initial, logs,
                                            feas.per_shape, keep_errors=True))
                replay_s = time.perf_counter() - t1
                j = outside.result()
            first = {role: None for role in launches}
            if j is not None:
                first[roles[j][0]] = roles[j][1]
        else:
            first = {role: first_outside(feass[role].values, infos[role], launch.indexed,
                                         ctx.jobs)
                     for role, launch in launches.items()}
        for role, launch in launches.items():
            hit = _indexed(violation_of, feass[role].values, infos[role], launch.indexed,
                           first[role])
            if hit is not None:
                at = dict(fixed, **feass[role].shape_at(hit[0]))
                verdict = replay_fault(ctx, role, at, seed)
                if verdict is not None:
                    return verdict
                raise ShapeFallback(f"{hit[1].what} may access '{hit[1].buffer}' out of "
                                    f"bounds at {shape_text(at)}, yet the emulator does not fault")
    count = sum(len(launch.obligations) + len(launch.indexed) for launch in launches.values())
    ctx.stage("bounds", StageStatus.OK, t0,
              f"{count} access obligation(s) over {what}" + (
              f"; the write logs replayed meanwhile ({replay_s:.2f} s)"
              if replayed is not None else ""))
    # effects
    stop = judge_effects(ctx, launches)
    if stop is not None:
        raise ShapeFallback(stop)
    # races
    t0 = time.perf_counter()
    checked = 0
    for role, launch in launches.items():
        if not launch.races:
            continue
        checked += len(launch.races)
        races = [r for r in launch.races if r.kind != "order"]
        verdict = _races(ctx, role, replace(launch, races=tuple(races)), sp, fixed,
                         constraints, variables, seed, feass[role]) if races else None
        if verdict is None:
            verdict = _orders(ctx, role, [r for r in launch.races if r.kind == "order"], sp,
                              fixed, constraints, seed, feass[role])
        if verdict is not None:
            return verdict
    logged = "every access logged" + (" (indexed buffers: two writers of one element are "
                                      "found with the outputs)" if indexed else "")
    ctx.stage("races", StageStatus.OK, t0,
              f"{logged}; {checked} conflicting pair(s) of instructions refuted"
              if checked else f"{logged}; no two conflict")
    # outputs
    t0 = time.perf_counter()
    ref = output_terms(spec, "reference", launches["reference"], ctx)
    cand = output_terms(spec, "candidate", launches["candidate"], ctx)
    # Random inputs at random allowed shapes first: a difference they show costs
    # milliseconds, while deciding selections shape by shape can cost seconds.
    tested = random_testing(ctx, fixed, seed, {
        (p.name, i): (a, b) for p in spec.params
        if p.is_buffer and p.access in ("out", "inout")
        for i, (a, b) in enumerate(zip(ref[p.name], cand[p.name])) if not same_term(a, b)})
    if tested is not None:
        return tested
    t0 = time.perf_counter()
    diffs = []
    by_shape = by_real = 0
    reals = RealTranslator(feas.shape_only)
    elements = []
    for p in spec.params:
        if not p.is_buffer or p.access not in ("out", "inout"):
            continue
        length = p.length.to_z3(env64)
        for i, (a, b) in enumerate(zip(ref[p.name], cand[p.name])):
            live = _lt(i, length)
            if live is False or same_term(a, b):
                continue
            if apart:       # (every buffer is indexed then: nothing is compared here)
                raise ShapeFallback(f"one symbolic CTA per kernel: '{p.name}' is not indexed")
            elements.append((p, i, a, b, live))
    # The exact checks without a solver, each element on its own: shared among processes
    # (a histogram's 256 bins are 262,144 guarded increments to walk; the sums as the ports
    # built them spare most of the walk).
    for launch in launches.values():
        feas.sums.update(launch.sums)
    shown = each(len(elements), lambda j: _same_at_every_shape(feas, *elements[j][2:]),
                 ctx.jobs) if feas.names else [False] * len(elements)
    for (p, i, a, b, live), quick in zip(elements, shown):
        if not feas.names:                # one fixed shape: no selection by shape
            diffs.append((p, i, a, b, live))
            continue
        if quick:
            by_shape += 1
            continue
        if spec.mode == "real" and p.is_float:
            # The real readings of both, compared shape by shape; what is left goes to the
            # real-arithmetic check whole (it reads shape-only selections exactly, and one
            # formula per element beats one per combination).
            if _same_as_reals(feas, reals, a, b, live, type_bits(p.type)):
                by_real += 1
            else:
                diffs.append((p, i, a, b, live))
            continue
        split = feas.specialize(a, b, live)
        if split is None:
            diffs.append((p, i, a, b, live))
            continue
        if not split:
            by_shape += 1
        diffs.extend((p, i, sa, sb, cond) for cond, sa, sb in split)
    if by_real:
        if reals.mixed_inputs():
            # a selection read a float input's bits: the comparisons above are not valid
            raise ShapeFallback("mode 'real': a selection reads the bits of a float input")
        by_shape += by_real
        ctx.assumptions.add(REAL_ASSUMPTION)
    if by_shape:
        ctx.stage("outputs by shape", StageStatus.OK, t0,
                  f"{by_shape} element(s) equal at every shape without a solver "
                  f"(the same selected term, or the same guarded sums)"
                  + (f"; {by_real} of them as real numbers" if by_real else ""))
        t0 = time.perf_counter()
    if indexed:
        t1 = time.perf_counter()
        if apart:
            n, differs = _indexed(compare_apart, {r: f.values for r, f in feass.items()},
                                  infos, widths, initial, logs,
                                  {r: f.per_shape for r, f in feass.items()})
        else:
            n, differs = _indexed(compare, feas.values, info, widths, initial, logs,
                                  feas.shape_only_ast, spec.mode == "real",
                                  feas.pinned.append, ctx.jobs, feas.per_shape, replayed)
        if differs is not None:
            raise CheckAt(dict(fixed, **sp.shapes[differs.shape]), differs.why)
        if spec.mode == "real":
            ctx.assumptions.add(REAL_ASSUMPTION)
        ctx.stage("indexed outputs", StageStatus.OK, t1,
                  f"{n} element(s) over all shapes: the same input element or "
                  f"term in both kernels, no solver" + (
                  " (as real numbers: an fma whose multiplicand is zero is "
                  "its addend)" if spec.mode == "real" else ""))
        if not any(p.access == "inout" for p in spec.buffers):
            return None           # every output is indexed: nothing is left to compare
    return compare_outputs(ctx, fixed, diffs, constraints, variables, seed, t0, test=False)


def _same_at_every_shape(feas: Feasibility, a, b, live) -> bool:
    return feas.same_everywhere(a, b, live) or feas.same_sums(a, b, live)


def _indexed(check, *args):
    try:
        return check(*args)
    except NotIndexable as e:
        raise ShapeFallback(f"indexed buffers: {e}") from None


def _races(ctx: Run, role: str, launch: SymbolicLaunch, sp: ShapePlan, fixed: dict,
           constraints: list, variables: dict, seed: int,
           feas: Feasibility) -> Verdict | None:
    """Conflicting accesses must never both happen; a model of both happening is replayed
    with the emulator's race detector before it is reported."""
    hit, rest = feas.decide([r.cond for r in launch.races])
    if hit is None and rest:
        # Testing before solving: random inputs at a few allowed shapes (the largest first:
        # it has every lane) often show the race at once, and the emulator's detector is the
        # replay anyway; the disjunction of every pair's condition can be huge (a histogram's
        # bins: one condition per thread and bin).
        rng = np.random.default_rng(seed)
        picks = [sp.count - 1] + rng.integers(0, sp.count, max(ctx.trials - 1, 0)).tolist()
        for trial, i in enumerate(picks[:max(ctx.trials, 0)]):
            scalars, inputs = concrete_inputs(ctx, dict(fixed, **sp.shapes[i]), seed + trial)
            verdict = replay_race(ctx, role, scalars, inputs)
            if verdict is not None:
                return verdict
    if hit is not None:
        # Both happen at this shape whatever the inputs: random inputs show it.
        attempts = [concrete_inputs(ctx, dict(fixed, **feas.shape_at(hit)), seed)]
        what = next((r.what for r in launch.races if r.cond is True), launch.races[0].what)
    elif not rest:
        return None
    else:
        ob = Obligation(z3.And(*constraints, z3.Or(rest)),
                        f"{role} is free of data races")
        r = ctx.solve(ob)
        if r.answer == "unsat":
            return None
        if r.answer != "sat":
            return ctx.inconclusive(f"race freedom of the {role}: no solver answered "
                                      f"({r.answer}: {r.detail or r.solver})")
        model = r.model or {}
        attempts = [model_inputs(ctx, fixed, lambda v: int(model.get(str(v), 0)), variables,
                                 seed)]
        what = next((p.what for p in launch.races
                     if z3.is_true(z3.simplify(z3.substitute(p.cond, *_subst(model,
                                                                               variables))))),
                    launch.races[0].what)
    for scalars, inputs in attempts:
        verdict = replay_race(ctx, role, scalars, inputs)
        if verdict is not None:
            return verdict
    return ctx.inconclusive(f"the {role} may race ({what}), but the emulator's race detector "
                              f"did not reproduce it at {shape_text(attempts[0][0])}")


def _orders(ctx: Run, role: str, pairs: list, sp: ShapePlan, fixed: dict,
            constraints: list, seed: int, feas: Feasibility) -> Verdict | None:
    """Morally strong accesses that conflict do not race, but the scheduler orders them:
    where they may both happen the outputs may depend on that order, which keq models only
    within one atomic instruction (`atomic_order`). Refuted when testing under other orders
    shows a difference; else the claim is undecided, named."""
    if not pairs:
        return None
    hit, rest = feas.decide([r.cond for r in pairs])
    what = next((r.what for r in pairs if r.cond is True), pairs[0].what)
    if hit is None and rest:
        ob = Obligation(z3.And(*constraints, z3.Or(rest)),
                        f"the {role}'s morally strong accesses never meet unordered")
        r = ctx.solve(ob)
        if r.answer == "unsat":
            return None
    elif hit is None:
        return None
    for i in sorted({sp.count - 1, 0}):
        tested = tested_difference(ctx, dict(fixed, **sp.shapes[i]), seed, ctx.trials,
                                      other_choices=True)
        if tested is not None:
            return tested
    return ctx.inconclusive(f"the outputs of the {role} may depend on the order the "
                              f"scheduler gives: {what}")


def _subst(model: dict, variables: dict) -> list:
    return [(var, z3.BitVecVal(int(model[name]), var.size()))
            for name, (_, _, var) in variables.items() if name in model]


__all__ = ["check_shapes"]
