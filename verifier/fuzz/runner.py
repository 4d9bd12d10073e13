"""The differential runner both backends share: draw an example, run reference and candidate,
compare under the pair's mode, and let hypothesis shrink any difference to a minimal example.

What counts as a difference (an output that differs under the mode, a fault or a data race of
the candidate) is `verifier.fuzz.differences`. A fault or race in the *reference* is an error
of the spec or the reference kernel: `ReferenceError_` (exit 3), reported with the shrunk
example that shows it.

Real-mode floats are compared within a tolerance (`compare.differing`); the default one,
``auto:4``, is derived per example from n, the float operations on the path to an element,
and S_n, the sum of the n largest input magnitudes (`compare.auto_bound`). How n is counted
(per thread on the emulator, in a counting emulator run of its own for the GPU, or
statically) is `verifier.fuzz.op_counting`.

What the PTX ISA leaves open (never-written registers and memory, the order of contending
atomics: `semantics.choices`) is resolved by a `Choices`. The reference always runs under the
pair's defaults (zero fill, lane order). With `fill`/`schedule` given, the candidate runs under
them, and a reference whose run read something open runs again under them too: if its outputs
change, the claim (about a deterministic reference) is wrong, `ReferenceError_`. Without them
the choices are varied: the candidate runs under the defaults, and when that run read
something open (an effect of kind "uninitialized" or "nondeterministic") once more under each
of pattern fill, reverse schedule and random:SEED fill and schedule (SEED derived from the
example, so shrinking sees the same choices for the same example), until one differs; that
difference is reported with its choices (`Difference.choices`). A reference whose run read
something open runs under the same other choices (every one of them, or the given ones).
A random fill also changes what the hardware fixes for both kernels alike (the NaN an
operation returns, a function of its inputs): under it the candidate is compared with the
reference's run under the same choices, and an element NaN in both runs is no difference (a
random function is not the hardware's, so payloads alone are no evidence). Only the emulator
backend honours choices (`supports_choices`); the GPU makes its own. The helpers for all this
are `verifier.fuzz.choice_variation`.

Fuzzing is bounded testing, not a proof: a clean run says what was covered (examples, the
scalar values tried, and the fraction of each kernel's basic blocks and branch directions that
ran), never "equivalent".
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

from semantics.choices import Choices
from semantics.errors import KeqError
from verifier.emulate import choices_of
from verifier.fuzz.backends import Backend, SideRun
from verifier.fuzz.choice_variation import (alternatives, choices_key, consulted, example_seed,
                                            open_reads, shares_fixed_values)
from verifier.fuzz.compare import OpsContext, resolve_tolerance
from verifier.fuzz.differences import compare_runs, races, reference_changes
from verifier.fuzz.op_counting import OpsCounting, input_scale
from verifier.fuzz.report import ROLES, Difference, FuzzReport, KernelCoverage, OpsStats
from verifier.fuzz.strategies import from_spec
from verifier.spec import PairSpec, draw_scalars

DEFAULT_EXAMPLES = 100


class ReferenceError_(KeqError):
    """The reference faulted or raced on an allowed input: the spec or the reference is wrong."""


class _Found(Exception):
    def __init__(self, diff: Difference) -> None:
        super().__init__(diff.summary)
        self.diff = diff


class _RefBad(Exception):
    def __init__(self, message: str, values, scalars) -> None:
        super().__init__(message)
        self.message, self.values, self.scalars = message, values, scalars


def _fmt_scalars(scalars: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in scalars.items())


def fuzz(spec: PairSpec, backend: Backend, *, examples: int = DEFAULT_EXAMPLES,
         seed_: int = 0, time_budget: float | None = None, tolerance: str | None = None,
         finite: bool = False, fixed: dict | None = None,
         progress: Callable[[int, int, float], None] | None = None,
         fill: str | None = None, schedule: str | None = None) -> FuzzReport:
    """Fuzz one pair. Raises KeqError for bad input and `ReferenceError_` when the reference
    faults or races, or its outputs depend on the choices (module docstring); returns the
    report otherwise (`report.difference` set when one was found). `fill`/`schedule`: the
    candidate's choices (`semantics.choices` policies); neither: vary them.
    """
    if examples < 1:
        raise KeqError(f"--examples {examples}: must be at least 1")
    if time_budget is not None and not time_budget > 0:
        raise KeqError(f"--time-budget {time_budget}: must be a positive number of seconds")
    tol = resolve_tolerance(spec, tolerance)
    draw_scalars(spec, np.random.default_rng(seed_), fixed=fixed)   # satisfiable? (else exit 3)
    base = choices_of(spec)
    given_choices = None
    if fill is not None or schedule is not None:
        try:
            given_choices = Choices(fill or "zero", schedule or "lane", {}, base.target)
        except ValueError as e:
            raise KeqError(str(e)) from None
    runners = backend.prepare(spec)
    honours = all(getattr(runners[r], "supports_choices", False) for r in ROLES)
    if given_choices is not None and not honours:
        raise KeqError(f"--fill/--schedule: the {getattr(backend, 'name', 'given')} backend "
                       f"runs the kernels where the hardware makes these choices itself; "
                       f"they apply to the emulator backend")
    strategy = from_spec(spec, finite=finite, fixed=fixed)
    rep = FuzzReport(spec, backend.describe(), spec.mode, tol, seed_, examples)
    rep.choices = given_choices
    rep.varied = given_choices is None and honours
    cand_choices = given_choices if given_choices is not None else base

    def run_as(role: str, values: dict, scalars: dict, choices: Choices) -> SideRun:
        if honours:
            return runners[role].run(values, scalars, choices)
        return runners[role].run(values, scalars)

    def reference_depends(values, scalars, ref, again: SideRun, choices: Choices, ctx) -> None:
        how = reference_changes(spec, ref, again, tol, ctx, shares_fixed_values(choices))
        if how is not None:
            raise _RefBad(f"the reference's outputs depend on what the PTX ISA leaves open "
                          f"(its run met {open_reads(ref)}): under {choices.describe()} "
                          f"{how}, unlike its run under the defaults ({base.describe()}); "
                          f"the claim is about a deterministic reference: fix the reference "
                          f"or the spec", values, scalars)
    rep.coverage = {r: KernelCoverage(runners[r].kernel) for r in ROLES}
    counting = OpsCounting(spec, runners) if tol is not None and tol.derived else None
    if counting is not None:
        rep.ops = OpsStats(dict(counting.how), {r: 0 for r in ROLES})
    rep.scalar_values = {p.name: set() for p in spec.scalars}
    cov_union: dict[str, Any] = {}
    state = {"calls": 0, "shrink_calls": 0, "found": False, "t0": time.perf_counter(), "t_found": None,
             "last_progress": 0.0}

    def one(values: dict) -> None:
        scalars = {p.name: values[p.name] for p in spec.scalars}
        if not state["found"]:
            state["calls"] += 1
            for k, v in scalars.items():
                rep.scalar_values[k].add(v)
        else:
            state["shrink_calls"] += 1
        if counting is not None:
            counting.before("reference")
        ref = run_as("reference", values, scalars, base)
        if ref.fault is not None:
            raise _RefBad(f"the reference faulted on an input the spec allows: "
                          f"{ref.fault.render()}", values, scalars)
        rr = races(ref)
        if rr:
            raise _RefBad(f"the reference has a data race on an input the spec allows: {rr[0]}",
                          values, scalars)
        ctx = None
        if counting is not None:
            n_ref = counting.count("reference", scalars, values)
            counting.before("candidate")
        cand = run_as("candidate", values, scalars, cand_choices)
        if counting is not None:
            n_cand = counting.count("candidate", scalars, values)
            n = max(n_ref, n_cand)
            ctx = OpsContext(n, *input_scale(spec, values, n))
            if not state["found"]:
                rep.ops.ops_max["reference"] = max(rep.ops.ops_max["reference"], n_ref)
                rep.ops.ops_max["candidate"] = max(rep.ops.ops_max["candidate"], n_cand)
                rep.ops.magnitude_max = max(rep.ops.magnitude_max, ctx.magnitude)
                rep.ops.scale_max = max(rep.ops.scale_max, ctx.scale or 0.0)
        for role, run in (("reference", ref), ("candidate", cand)):
            if run.coverage is not None:
                prev = cov_union.get(role)
                cov_union[role] = run.coverage if prev is None else _merge(prev, run.coverage)
        refs: dict[tuple, SideRun] = {}

        def ref_under(c: Choices) -> SideRun:
            """The reference's run to compare a candidate run under `c` with: its default
            run, or its run under `c` where `c` changes what both kernels share."""
            if not shares_fixed_values(c):
                return ref
            key = choices_key(c)
            if key not in refs:
                refs[key] = run_as("reference", values, scalars, c)
                if refs[key].fault is not None:
                    raise _RefBad(f"the reference faulted under {c.describe()}: "
                                  f"{refs[key].fault.render()}", values, scalars)
            return refs[key]

        if consulted(ref):
            others = [given_choices] if given_choices is not None else \
                alternatives(base, example_seed(seed_, values), ref.effects) \
                if rep.varied else []
            for c in others:
                if c != base:
                    if choices_key(c) not in refs:
                        refs[choices_key(c)] = run_as("reference", values, scalars, c)
                    again = refs[choices_key(c)]
                    reference_depends(values, scalars, ref, again, c, ctx)
        diff = compare_runs(spec, values, scalars, ref_under(cand_choices), cand, tol, ctx,
                            shares_fixed_values(cand_choices))
        if diff is not None and honours:
            diff.choices = cand_choices
        if diff is None and rep.varied and consulted(cand):
            if not state["found"]:
                rep.varied_examples += 1
            for alt in alternatives(base, example_seed(seed_, values), cand.effects):
                diff = compare_runs(spec, values, scalars, ref_under(alt),
                                    run_as("candidate", values, scalars, alt), tol, ctx,
                                    shares_fixed_values(alt))
                if diff is not None:
                    diff.choices = alt
                    break
        if progress is not None and not state["found"]:
            now = time.perf_counter()
            if now - state["last_progress"] > 0.2:
                state["last_progress"] = now
                progress(state["calls"], examples, now - state["t0"])
        if diff is not None:
            if not state["found"]:
                state["found"] = True
                state["t_found"] = time.perf_counter()
                state["found_at"] = state["calls"]
            raise _Found(diff)

    def hypothesis_run(n: int, s: int) -> None:
        @settings(max_examples=n, database=None, deadline=None, derandomize=False,
                  phases=(Phase.explicit, Phase.generate, Phase.shrink),
                  verbosity=Verbosity.quiet, report_multiple_bugs=False,
                  suppress_health_check=list(HealthCheck), print_blob=False)
        @seed(s)
        @given(strategy)
        def prop(values):
            one(values)
        prop()

    found: Difference | None = None
    try:
        if time_budget is None:
            hypothesis_run(examples, seed_)
        else:
            chunk, i = max(1, min(25, examples)), 0
            while state["calls"] < examples:
                if time.perf_counter() - state["t0"] >= time_budget:
                    rep.stopped_by = "time budget"
                    break
                hypothesis_run(min(chunk, examples - state["calls"]), seed_ * 1_000_003 + i)
                i += 1
    except _Found as e:
        found = e.diff
    except _RefBad as e:
        raise ReferenceError_(f"{spec.name}: {e.message}\n  given (shrunk): "
                              f"{_fmt_scalars(e.scalars)}") from None
    end = time.perf_counter()
    if found is not None:
        rep.difference = found
        rep.stopped_by = "difference"
        rep.examples = state["found_at"]
        rep.seconds = state["t_found"] - state["t0"]
        rep.shrink_seconds = end - state["t_found"]
        rep.shrink_runs = state["shrink_calls"]
    else:
        rep.examples = state["calls"]
        rep.seconds = end - state["t0"]
    for role in ROLES:
        kc = rep.coverage[role]
        c = cov_union.get(role)
        if c is not None:
            kc.measured = True
            kc.blocks_seen, kc.blocks_total = len(c.blocks_seen), c.blocks_total
            kc.branches_seen, kc.branches_total = len(c.branches_seen), c.branches_total
    return rep


def _merge(a, b):
    if hasattr(a, "merge"):
        return a.merge(b)
    return type(a)(a.blocks_total, a.blocks_seen | b.blocks_seen, a.branches_total,
                   a.branches_seen | b.branches_seen)
