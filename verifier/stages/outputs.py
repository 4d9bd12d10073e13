"""The outputs stage: every out/inout element of the candidate equals the reference's.

Identical terms need no solver. At one launch shape every other pair goes to
`verifier.outputs.compare_outputs` (random testing, then the solvers; a model is replayed on
the emulator). Over a maximal launch, random testing at random allowed shapes comes first;
then each element is tried without a solver, shape by shape (the same selected term, or the
same guarded sums: `verifier.feasibility`), as real numbers in mode "real", or split by the
shapes where its terms differ; indexed buffers are compared element by element over all
shapes (`verifier.indexed`); what is left goes to the solvers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from verifier import printed
from verifier.indexed import RealReadings, compare, compare_apart
from verifier.outputs import (ElementPair, compare_outputs, output_terms, random_testing,
                              same_term)
from verifier.parallel import each
from verifier.real_mode import ASSUMPTION as REAL_ASSUMPTION, NotReal, RealTranslator
from verifier.run import Run
from verifier.shape_plan import CheckAt
from verifier.spec import type_bits
from verifier.stages.base import Execution, Maximal, Next, Undecided, below
from verifier.stages.execute import indexable
from verifier.verdict import StageStatus, Verdict


class Outputs:
    name = "outputs"

    def check(self, run: Run, ex: Execution) -> Verdict | None:
        t0 = time.perf_counter()
        pairs = _output_pairs(run, ex)
        if ex.maximal is None:
            diffs = [ElementPair(p, i, a, b, True) for p, i, a, b in pairs
                     if not same_term(a, b)]
            diffs += _printed_pairs(run, ex)
            return compare_outputs(run, ex.env, diffs, ex.constraints, ex.variables, ex.seed,
                                   t0)
        if _prints(run, ex) and (ex.maximal.feas.names or ex.maximal.apart):
            raise Undecided("what the kernels print is compared one launch shape at a time")
        return _over_the_maximal_launch(run, ex, ex.maximal, pairs)


def _output_pairs(run: Run, ex: Execution) -> list[tuple]:
    """(param, index, reference term, candidate term) for every out/inout element."""
    spec = run.spec
    ref = output_terms(spec, "reference", ex.launches["reference"], run)
    cand = output_terms(spec, "candidate", ex.launches["candidate"], run)
    return [(p, i, a, b) for p in spec.params if p.is_buffer and p.access in ("out", "inout")
            for i, (a, b) in enumerate(zip(ref[p.name], cand[p.name]))]


def _prints(run: Run, ex: Execution) -> tuple[tuple, tuple]:
    """What each kernel's printf calls print, where the claim compares it; else ()."""
    if not printed.compared(run.spec):
        return ()
    got = tuple(ex.launches[role].prints for role in ("reference", "candidate"))
    return got if any(got) else ()


def _printed_pairs(run: Run, ex: Execution) -> list[ElementPair]:
    """The comparisons of what the two kernels print (`verifier.printed`)."""
    prints = _prints(run, ex)
    if not prints:
        return []
    pairs = printed.element_pairs(*prints, ElementPair)
    if pairs is None:
        raise Undecided(f"the kernels make too many printf calls under data-dependent "
                        f"conditions to compare (over {printed.MAX_PAIRS} pairs of calls)",
                        Next.TESTING)
    run.assumptions.add(printed.ASSUMPTION)
    return [p for p in pairs if not same_term(p.ref, p.cand)]


def _over_the_maximal_launch(run: Run, ex: Execution, m: Maximal,
                             pairs: list[tuple]) -> Verdict | None:
    # Random inputs at random allowed shapes first: a difference they show costs
    # milliseconds, while deciding selections shape by shape can cost seconds.
    tested = random_testing(run, ex.env, ex.seed, {
        (p.name, i): (a, b) for p, i, a, b in pairs if not same_term(a, b)})
    if tested is not None:
        return tested
    t0 = time.perf_counter()
    diffs = _without_a_solver(run, ex, m, _live_elements(ex, m, pairs), t0)
    t0 = time.perf_counter() if diffs.shown else t0
    diffs.left += _printed_pairs(run, ex)      # (one fixed shape: see `check`)
    if m.indexed:
        _indexed_outputs(run, ex, m)
        if not any(p.access == "inout" for p in run.spec.buffers):
            diffs.left = [d for d in diffs.left if isinstance(d.param, printed.PrintedOutput)]
            if not diffs.left:
                return None       # every output is indexed: nothing is left to compare
    return compare_outputs(run, ex.env, diffs.left, ex.constraints, ex.variables, ex.seed, t0,
                           test=False)


def _live_elements(ex: Execution, m: Maximal, pairs: list[tuple]) -> list[ElementPair]:
    """The elements that may differ at some shape: element i exists where i < the
    buffer's length."""
    out = []
    lengths: dict[str, object] = {}
    for p, i, a, b in pairs:
        if p.name not in lengths:
            lengths[p.name] = p.length.to_z3(m.env64)
        live = below(i, lengths[p.name])
        if live is False or same_term(a, b):
            continue
        if m.apart:       # (every buffer is indexed then: nothing is compared here)
            raise Undecided(f"one symbolic CTA per kernel: '{p.name}' is not indexed")
        out.append(ElementPair(p, i, a, b, live))
    return out


@dataclass
class _Left:
    """What the checks without a solver left (`left`), and whether they showed any equal."""
    left: list[ElementPair] = field(default_factory=list)
    shown: bool = False


def _without_a_solver(run: Run, ex: Execution, m: Maximal, elements: list[ElementPair],
                      t0: float) -> _Left:
    out = _Left()
    feas = m.feas
    # The exact checks without a solver, each element on its own: shared among processes
    # (a histogram's 256 bins are 262,144 guarded increments to walk; the sums as the ports
    # built them spare most of the walk).
    for launch in ex.launches.values():
        feas.sums.update(launch.sums)
    shown = each(len(elements), lambda j: _same_at_every_shape(feas, *elements[j][2:]),
                 run.jobs) if feas.names else [False] * len(elements)
    by_shape = by_real = 0
    reals = RealTranslator(feas.shape_only)
    for (p, i, a, b, live), quick in zip(elements, shown):
        if not feas.names:                # one fixed shape: no selection by shape
            out.left.append(ElementPair(p, i, a, b, live))
        elif quick:
            by_shape += 1
        elif run.spec.mode == "real" and p.is_float:
            # The real readings of both, compared shape by shape; what is left goes to the
            # real-arithmetic check whole (it reads shape-only selections exactly, and one
            # formula per element beats one per combination).
            if _same_as_reals(feas, reals, a, b, live, type_bits(p.type)):
                by_real += 1
            else:
                out.left.append(ElementPair(p, i, a, b, live))
        else:
            split = feas.specialize(a, b, live)
            if split is None:
                out.left.append(ElementPair(p, i, a, b, live))
                continue
            by_shape += not split
            out.left.extend(ElementPair(p, i, sa, sb, cond) for cond, sa, sb in split)
    if by_real:
        if reals.mixed_inputs():
            # a selection read a float input's bits: the comparisons above are not valid
            raise Undecided("mode 'real': a selection reads the bits of a float input")
        by_shape += by_real
        run.assumptions.add(REAL_ASSUMPTION)
        run.assumptions.update(reals.notes)
    if by_shape:
        run.stage("outputs by shape", StageStatus.OK, t0,
                  f"{by_shape} element(s) equal at every shape without a solver "
                  f"(the same selected term, or the same guarded sums)"
                  + (f"; {by_real} of them as real numbers" if by_real else ""))
        out.shown = True
    return out


def _same_at_every_shape(feas, a, b, live) -> bool:
    return feas.same_everywhere(a, b, live) or feas.same_sums(a, b, live)


def _same_as_reals(feas, reals: RealTranslator, a, b, live, width: int) -> bool:
    """Do the real-arithmetic readings of `a` and `b` select the same term at every shape?"""
    try:
        ra, rb = reals.value(a, width), reals.value(b, width)
    except NotReal:
        return False
    if ra.eq(rb):
        return True
    ra, rb = z3.simplify(ra), z3.simplify(rb)      # normalizes sums: a*x + y == y + x*a
    return ra.eq(rb) or feas.same_everywhere(ra, rb, live)


def _indexed_outputs(run: Run, ex: Execution, m: Maximal) -> None:
    """Every element of the indexed buffers is the same input element or term in both
    kernels at every shape; where not, that shape is checked on its own (`CheckAt`)."""
    spec = run.spec
    t1 = time.perf_counter()
    widths = {p.name: type_bits(p.type) for p in spec.buffers}
    initial = {p.name: m.infos["reference"][p.name].ids for p in spec.buffers
               if p.access == "out"}
    if m.apart:
        n, differs = indexable(compare_apart, {r: f.values for r, f in m.feass.items()},
                               m.infos, widths, initial, m.logs,
                               {r: f.per_shape for r, f in m.feass.items()})
    else:
        feas = m.feas
        reals = RealReadings({p.name: widths[p.name] for p in spec.buffers if p.is_float}) \
            if spec.mode == "real" else None
        n, differs = indexable(compare, feas.values, m.infos["reference"], widths, initial,
                               m.logs, feas.shape_only_ast, spec.mode == "real",
                               run.jobs, feas.per_shape, m.replayed, reals)
    if differs is not None:
        raise CheckAt(dict(ex.env, **m.plan.shapes[differs.shape]), differs.why)
    if spec.mode == "real":
        run.assumptions.add(REAL_ASSUMPTION)
        if not m.apart:
            run.assumptions.update(reals.notes)
    run.stage("indexed outputs", StageStatus.OK, t1,
              f"{n} element(s) over all shapes: the same input element or "
              f"term in both kernels, no solver" + (
                  " (as real numbers: an fma whose multiplicand is zero is its addend; "
                  "terms whose real readings are one term)" if spec.mode == "real" else ""))


__all__ = ["Outputs"]
