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
from verifier.fuzz.compare import OpsContext, Tolerance, resolve_tolerance
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
    campaign = _Campaign(spec, backend, base, given_choices, tol, examples=examples,
                         seed_=seed_, finite=finite, fixed=fixed, progress=progress)
    return campaign.run(time_budget)


class _Campaign:
    """One fuzz run of a pair: the backend's runners, the choices the candidate runs under,
    the operation counting of an auto tolerance, the counters of examples and shrink runs, and
    the report they fill. `one` runs one example (hypothesis calls it, while generating and
    while shrinking); `run` drives hypothesis and returns the report."""

    def __init__(self, spec: PairSpec, backend: Backend, base: Choices,
                 given_choices: Choices | None, tol: Tolerance | None, *, examples: int,
                 seed_: int, finite: bool, fixed: dict | None,
                 progress: Callable[[int, int, float], None] | None) -> None:
        self.spec, self.base, self.given, self.tol = spec, base, given_choices, tol
        self.examples, self.seed, self.progress = examples, seed_, progress
        self.runners = backend.prepare(spec)
        self.honours = all(getattr(self.runners[r], "supports_choices", False) for r in ROLES)
        if given_choices is not None and not self.honours:
            raise KeqError(f"--fill/--schedule: the {getattr(backend, 'name', 'given')} "
                           f"backend runs the kernels where the hardware makes these choices "
                           f"itself; they apply to the emulator backend")
        self.strategy = from_spec(spec, finite=finite, fixed=fixed)
        rep = self.report = FuzzReport(spec, backend.describe(), spec.mode, tol, seed_, examples)
        rep.choices = given_choices
        rep.varied = given_choices is None and self.honours
        self.cand_choices = given_choices if given_choices is not None else base
        rep.coverage = {r: KernelCoverage(self.runners[r].kernel) for r in ROLES}
        self.counting = OpsCounting(spec, self.runners) if tol is not None and tol.derived \
            else None
        if self.counting is not None:
            rep.ops = OpsStats(dict(self.counting.how), {r: 0 for r in ROLES})
        rep.scalar_values = {p.name: set() for p in spec.scalars}
        self.coverage_union: dict[str, Any] = {}
        self.calls = 0                  # examples run while generating
        self.shrink_calls = 0           # runs while shrinking a difference
        self.found = False
        self.found_at = 0
        self.t0 = time.perf_counter()
        self.t_found = 0.0
        self.last_progress = 0.0

    # -- driving hypothesis ------------------------------------------------------------------

    def run(self, time_budget: float | None) -> FuzzReport:
        found: Difference | None = None
        try:
            self._drive(time_budget)
        except _Found as e:
            found = e.diff
        except _RefBad as e:
            raise ReferenceError_(f"{self.spec.name}: {e.message}\n  given (shrunk): "
                                  f"{_fmt_scalars(e.scalars)}") from None
        return self._finish(found, time.perf_counter())

    def _drive(self, time_budget: float | None) -> None:
        """All examples in one hypothesis run; with a time budget, in chunks of at most 25
        (each with a seed of its own) until the examples or the budget run out."""
        if time_budget is None:
            self._hypothesis_run(self.examples, self.seed)
            return
        chunk, i = max(1, min(25, self.examples)), 0
        while self.calls < self.examples:
            if time.perf_counter() - self.t0 >= time_budget:
                self.report.stopped_by = "time budget"
                break
            self._hypothesis_run(min(chunk, self.examples - self.calls),
                                 self.seed * 1_000_003 + i)
            i += 1

    def _hypothesis_run(self, n: int, s: int) -> None:
        @settings(max_examples=n, database=None, deadline=None, derandomize=False,
                  phases=(Phase.explicit, Phase.generate, Phase.shrink),
                  verbosity=Verbosity.quiet, report_multiple_bugs=False,
                  suppress_health_check=list(HealthCheck), print_blob=False)
        @seed(s)
        @given(self.strategy)
        def prop(values):
            self.one(values)
        prop()

    def _finish(self, found: Difference | None, end: float) -> FuzzReport:
        rep = self.report
        if found is not None:
            rep.difference = found
            rep.stopped_by = "difference"
            rep.examples = self.found_at
            rep.seconds = self.t_found - self.t0
            rep.shrink_seconds = end - self.t_found
            rep.shrink_runs = self.shrink_calls
        else:
            rep.examples = self.calls
            rep.seconds = end - self.t0
        for role in ROLES:
            kc = rep.coverage[role]
            c = self.coverage_union.get(role)
            if c is not None:
                kc.measured = True
                kc.blocks_seen, kc.blocks_total = len(c.blocks_seen), c.blocks_total
                kc.branches_seen, kc.branches_total = len(c.branches_seen), c.branches_total
        return rep

    # -- one example ---------------------------------------------------------------------------

    def one(self, values: dict) -> None:
        """Run one example; raise `_Found` with the difference, or `_RefBad`."""
        scalars = self._tally(values)
        ref, n_ref = self._run_reference(values, scalars)
        cand, n_cand = self._run_candidate(values, scalars)
        ctx = self._ops_context(values, n_ref, n_cand)
        self._merge_coverage(ref, cand)
        refs = _ReferenceRuns(self, values, scalars, ref)
        self._check_reference(refs, ctx)
        diff = self._difference(refs, cand, ctx)
        self._show_progress()
        if diff is not None:
            if not self.found:
                self.found = True
                self.t_found = time.perf_counter()
                self.found_at = self.calls
            raise _Found(diff)

    def run_as(self, role: str, values: dict, scalars: dict, choices: Choices) -> SideRun:
        if self.honours:
            return self.runners[role].run(values, scalars, choices)
        return self.runners[role].run(values, scalars)

    def _tally(self, values: dict) -> dict:
        """The example's scalars; counts the run (an example, or a shrink run after a
        difference was found) and the scalar values tried."""
        scalars = {p.name: values[p.name] for p in self.spec.scalars}
        if not self.found:
            self.calls += 1
            for k, v in scalars.items():
                self.report.scalar_values[k].add(v)
        else:
            self.shrink_calls += 1
        return scalars

    def _run_reference(self, values: dict, scalars: dict) -> tuple[SideRun, int | None]:
        """The reference's run under the defaults (`_RefBad` where it faults or races), and
        its n where the tolerance is derived."""
        if self.counting is not None:
            self.counting.before("reference")
        ref = self.run_as("reference", values, scalars, self.base)
        if ref.fault is not None:
            raise _RefBad(f"the reference faulted on an input the spec allows: "
                          f"{ref.fault.render()}", values, scalars)
        rr = races(ref)
        if rr:
            raise _RefBad(f"the reference has a data race on an input the spec allows: {rr[0]}",
                          values, scalars)
        return ref, self._count("reference", scalars, values)

    def _run_candidate(self, values: dict, scalars: dict) -> tuple[SideRun, int | None]:
        if self.counting is not None:
            self.counting.before("candidate")
        cand = self.run_as("candidate", values, scalars, self.cand_choices)
        return cand, self._count("candidate", scalars, values)

    def _count(self, role: str, scalars: dict, values: dict) -> int | None:
        return None if self.counting is None else self.counting.count(role, scalars, values)

    def _ops_context(self, values: dict, n_ref: int | None,
                     n_cand: int | None) -> OpsContext | None:
        """n, M and S_n of the example for an auto tolerance (None for any other), added to
        the report's statistics while generating."""
        if self.counting is None:
            return None
        n = max(n_ref, n_cand)
        ctx = OpsContext(n, *input_scale(self.spec, values, n))
        if not self.found:
            ops = self.report.ops
            ops.ops_max["reference"] = max(ops.ops_max["reference"], n_ref)
            ops.ops_max["candidate"] = max(ops.ops_max["candidate"], n_cand)
            ops.magnitude_max = max(ops.magnitude_max, ctx.magnitude)
            ops.scale_max = max(ops.scale_max, ctx.scale or 0.0)
        return ctx

    def _merge_coverage(self, ref: SideRun, cand: SideRun) -> None:
        for role, run in (("reference", ref), ("candidate", cand)):
            if run.coverage is not None:
                prev = self.coverage_union.get(role)
                self.coverage_union[role] = run.coverage if prev is None \
                    else _merge(prev, run.coverage)

    def _check_reference(self, refs: _ReferenceRuns, ctx: OpsContext | None) -> None:
        """Where the reference's run read something open, run it under the candidate's
        other choices too (the given ones, or every alternative when varied): `_RefBad` if
        its outputs change."""
        if not consulted(refs.default):
            return
        if self.given is not None:
            others = [self.given]
        elif self.report.varied:
            others = alternatives(self.base, example_seed(self.seed, refs.values),
                                  refs.default.effects)
        else:
            others = []
        for c in others:
            if c != self.base:
                self._reference_depends(refs, refs.under(c), c, ctx)

    def _reference_depends(self, refs: _ReferenceRuns, again: SideRun, choices: Choices,
                           ctx: OpsContext | None) -> None:
        how = reference_changes(self.spec, refs.default, again, self.tol, ctx,
                                shares_fixed_values(choices))
        if how is not None:
            raise _RefBad(f"the reference's outputs depend on what the PTX ISA leaves open "
                          f"(its run met {open_reads(refs.default)}): under "
                          f"{choices.describe()} {how}, unlike its run under the defaults "
                          f"({self.base.describe()}); the claim is about a deterministic "
                          f"reference: fix the reference or the spec", refs.values, refs.scalars)

    def _difference(self, refs: _ReferenceRuns, cand: SideRun,
                    ctx: OpsContext | None) -> Difference | None:
        """The difference of the candidate's run from the reference's, or, where none and
        the choices are varied and the candidate read something open, of its first run under
        other choices that shows one."""
        diff = compare_runs(self.spec, refs.values, refs.scalars,
                            refs.to_compare_with(self.cand_choices), cand, self.tol, ctx,
                            shares_fixed_values(self.cand_choices))
        if diff is not None and self.honours:
            diff.choices = self.cand_choices
        if diff is None and self.report.varied and consulted(cand):
            if not self.found:
                self.report.varied_examples += 1
            seed_ = example_seed(self.seed, refs.values)
            for alt in alternatives(self.base, seed_, cand.effects):
                diff = compare_runs(self.spec, refs.values, refs.scalars,
                                    refs.to_compare_with(alt),
                                    self.run_as("candidate", refs.values, refs.scalars, alt),
                                    self.tol, ctx, shares_fixed_values(alt))
                if diff is not None:
                    diff.choices = alt
                    break
        return diff

    def _show_progress(self) -> None:
        if self.progress is not None and not self.found:
            now = time.perf_counter()
            if now - self.last_progress > 0.2:
                self.last_progress = now
                self.progress(self.calls, self.examples, now - self.t0)


class _ReferenceRuns:
    """The reference's runs on one example: `default`, its run under the defaults, and its
    runs under other choices, each made once."""

    def __init__(self, campaign: _Campaign, values: dict, scalars: dict,
                 default: SideRun) -> None:
        self.campaign, self.values, self.scalars, self.default = \
            campaign, values, scalars, default
        self.runs: dict[tuple, SideRun] = {}

    def under(self, c: Choices) -> SideRun:
        key = choices_key(c)
        if key not in self.runs:
            self.runs[key] = self.campaign.run_as("reference", self.values, self.scalars, c)
        return self.runs[key]

    def to_compare_with(self, c: Choices) -> SideRun:
        """The reference's run to compare a candidate run under `c` with: its default
        run, or its run under `c` where `c` changes what both kernels share."""
        if not shares_fixed_values(c):
            return self.default
        key = choices_key(c)
        if key not in self.runs:
            run = self.under(c)
            if run.fault is not None:
                raise _RefBad(f"the reference faulted under {c.describe()}: "
                              f"{run.fault.render()}", self.values, self.scalars)
        return self.runs[key]


def _fmt_scalars(scalars: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in scalars.items())


def _merge(a, b):
    if hasattr(a, "merge"):
        return a.merge(b)
    return type(a)(a.blocks_total, a.blocks_seen | b.blocks_seen, a.branches_total,
                   a.branches_seen | b.branches_seen)
