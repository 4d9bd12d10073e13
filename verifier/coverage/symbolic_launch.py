"""Coverage of every launch shape of a claim by one symbolic maximal launch (design in
docs/launch-shapes.md; the plan in `verifier.shape_plan`).

The scalars that shape the launch become solver variables, constrained to their ranges and
to `assume`; each kernel runs once over the maximal launch (every CTA any allowed shape
launches, buffers at their largest length), where a CTA exists under a shape condition and
the kernel's own bounds checks are symbolic branches. The stages (`verifier.stages`) then
run over it as over one shape. Before that, both kernels run on the emulator at three
allowed shapes (a fault, race or difference seen there is the verdict).

With its in/out buffers indexed, a claim is first run on one symbolic CTA standing for every
CTA (`verifier.symbolic_cta`); what that run does not decide (a proof or a replayed
refutation) is run again on the full maximal launch, as if it had not been tried.

What this mode cannot decide raises `ShapeFallback` (the claim driver may then enumerate
shapes); `CheckAt` when all but one shape is proved and that one is checked on its own.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import z3

from semantics.errors import UnsupportedError
from verifier.claim import symbolic_inputs, widened
from verifier.counterexample import pretest, shape_text
from verifier.feasibility import Feasibility
from verifier.indexed import two_dimensional
from verifier.run import Run
from verifier.shape_plan import ShapeFallback, ShapePlan
from verifier.stages import PIPELINE, Execution, Maximal, Undecided, run_stages
from verifier.symbolic_cta import CtaAxes, CtaMismatch, cta_axes, shared
from verifier.verdict import INCONCLUSIVE, StageStatus, Verdict


def check_shapes(run: Run, sp: ShapePlan, fixed: dict[str, int], seed: int,
                 index: bool = False) -> Verdict | None:
    """None when the claim holds for every shape in `sp`; else the verdict it forces.
    Raises ShapeFallback when this mode cannot decide. `index`: index the in/out buffers
    (and try one symbolic CTA) even when no buffer is two-dimensional over `sp`'s scalars."""
    spec = run.spec
    t0 = time.perf_counter()
    if sp.names:
        # On the emulator first: the smallest shape (the smallest counterexample), a random
        # one and the largest (it has every lane).
        picks = sorted({0, int(np.random.default_rng(seed).integers(sp.count)), sp.count - 1})
        tested = pretest(run, [dict(fixed, **sp.shapes[i]) for i in picks], seed)
        run.stage("random testing", StageStatus.FAILED if tested else StageStatus.OK, t0,
                  f"{len(picks)} launch shape(s) on the "
                  f"emulator, random inputs, races detected")
        if tested is not None:
            return tested
    indexed = bool(sp.names) and (index or two_dimensional(spec, sp.names))
    cta: dict[str, CtaAxes] | None = None
    if indexed and sp.names:
        try:
            cta = cta_axes(spec, sp.grids, {r: run.kernel(r) for r in ("reference", "candidate")})
        except UnsupportedError as e:
            raise ShapeFallback(str(e)) from None
    if isinstance(cta, dict):
        t0 = time.perf_counter()
        mark = run.mark()
        try:
            v = _maximal(run, sp, fixed, seed, indexed, cta)
            if v is None or v.kind != INCONCLUSIVE:
                return v
            why = "; ".join(v.reasons)
        except (ShapeFallback, CtaMismatch) as e:
            why = str(e)
        # Not an answer: forget what the run added, and run the full launch.
        run.rewind(mark)
        run.stage("one symbolic CTA", StageStatus.SKIPPED, t0,
                  f"{why}; the full maximal launch decides")
    return _maximal(run, sp, fixed, seed, indexed, None)


def _maximal(run: Run, sp: ShapePlan, fixed: dict[str, int], seed: int, indexed: bool,
             ctas: dict[str, CtaAxes] | None) -> Verdict | None:
    """`check_shapes` on one maximal launch: every CTA, or one symbolic CTA per kernel
    (`ctas`, the same `CtaAxes` for both when they launch the same grid)."""
    ex = _execution(run, sp, fixed, seed, indexed, ctas)
    try:
        return run_stages(run, ex, PIPELINE)
    except Undecided as u:
        raise ShapeFallback(u.reason) from None


def _execution(run: Run, sp: ShapePlan, fixed: dict[str, int], seed: int, indexed: bool,
               ctas: dict[str, CtaAxes] | None) -> Execution:
    """The symbolic inputs of the maximal launch, its constraints (ranges, `assume`, the CTA
    axes), and each kernel's feasibility oracle over its points."""
    spec = run.spec
    values, constraints, variables = symbolic_inputs(spec, fixed, sp.lengths)
    env64: dict[str, Any] = {n: v for n, v in fixed.items()}
    for n in sp.names:
        env64[n] = widened(values[n], spec.param(n))
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
    ranges = element_ranges(spec, fixed, sp.shapes, variables)
    feass = {r: Feasibility(sp, values, constraints, cta=ctas[r] if ctas else None,
                            ranges=ranges)
             for r in (("reference", "candidate") if apart else ("reference",))}
    if not apart:
        feass["candidate"] = feass["reference"]
    m = Maximal(sp, env64, feass, ctas, indexed, _described(sp, fixed, ctas, apart))
    return Execution(fixed, seed, values, constraints, variables, m)


def element_ranges(spec, fixed: dict[str, int], shapes, variables: dict
                   ) -> dict[str, tuple[int, int]]:
    """Each input element with a declared range: its widest (lo, hi) over the allowed
    shapes (each shape's range checked: an empty one is a located error)."""
    widest: dict[str, tuple[int, int]] = {}
    for p in spec.buffers:
        if p.elements is None:
            continue
        ends = [p.element_bounds(dict(fixed, **shape)) for shape in shapes]
        widest[p.name] = (min(lo for lo, _ in ends), max(hi for _, hi in ends))
    return {name: widest[pname] for name, (pname, idx, _) in variables.items()
            if idx is not None and pname in widest}


def _described(sp: ShapePlan, fixed: dict[str, int], ctas: dict[str, CtaAxes] | None,
               apart: bool) -> str:
    what = (f"{sp.count} launch shapes ({', '.join(sp.names)} symbolic"
            + (f"; {shape_text(fixed)}" if fixed else "") + ")" if sp.names else
            f"{shape_text(fixed)}, every access logged")
    if ctas is not None and not apart:
        what += (f"; one symbolic CTA ({', '.join(ctas['reference'].names)}) for the "
                 f"{ctas['reference'].per_shape} CTAs of the largest grid")
    elif apart:
        what += ("; one symbolic CTA per kernel (" + ", ".join(
            f"{r}: {c.per_shape} CTA(s) of its largest grid" for r, c in ctas.items()) + ")")
    return what


__all__ = ["check_shapes"]
