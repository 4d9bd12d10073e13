"""The differential runner both backends share: draw an example, run reference and candidate,
compare under the pair's mode, and let hypothesis shrink any difference to a minimal example.

A *difference* is any of:
- an out/inout element that differs under the mode (bitexact: bit patterns; real: within the
  tolerance, `compare.differing`);
- a fault of the candidate (memory fault, barrier divergence, CUDA error) where the reference
  ran clean;
- a data race in the candidate (a "race" effect: both accesses are named).
A fault or race in the *reference* is an error of the spec or the reference kernel:
`ReferenceError_` (exit 3), reported with the shrunk example that shows it.

Fuzzing is bounded testing, not a proof: a clean run says what was covered (examples, the
scalar values tried, and the fraction of each kernel's basic blocks and branch directions that
ran), never "equivalent".
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

from semantics.errors import KeqError
from verifier.fuzz.backends import Backend, SideRun
from verifier.fuzz.compare import DEFAULT_REAL_TOLERANCE, Tolerance, differing, parse_tolerance
from verifier.fuzz.strategies import from_spec
from verifier.spec import PairSpec, draw_scalars

DEFAULT_EXAMPLES = 100
SHOWN_PER_BUFFER = 8
ROLES = ("reference", "candidate")


class ReferenceError_(KeqError):
    """The reference faulted or raced on an allowed input: the spec or the reference is wrong."""


@dataclass
class Mismatch:
    param: str
    count: int                          # differing elements
    length: int
    first: list[tuple[int, Any, Any]]   # (index, reference element, candidate element)


@dataclass
class Difference:
    kind: str                           # "mismatch" | "fault" | "race"
    summary: str
    values: dict[str, Any]              # the inputs (every param by name, initial contents)
    scalars: dict[str, Any]
    reference: SideRun
    candidate: SideRun
    mismatches: list[Mismatch] = field(default_factory=list)
    races: list[str] = field(default_factory=list)
    approximations: list[str] = field(default_factory=list)


@dataclass
class KernelCoverage:
    kernel: str
    blocks_seen: int = 0
    blocks_total: int = 0
    branches_seen: int = 0
    branches_total: int = 0
    measured: bool = False


@dataclass
class FuzzReport:
    spec: PairSpec
    backend: str
    mode: str
    tolerance: Tolerance | None
    seed: int
    examples_requested: int
    examples: int = 0                    # examples run before the first difference (or all)
    shrink_runs: int = 0
    seconds: float = 0.0                 # generation phase (examples) only
    shrink_seconds: float = 0.0
    stopped_by: str = "examples"         # examples | time budget | difference
    difference: Difference | None = None
    coverage: dict[str, KernelCoverage] = field(default_factory=dict)
    scalar_values: dict[str, set] = field(default_factory=dict)
    repro: str | None = None

    @property
    def examples_per_second(self) -> float:
        return self.examples / self.seconds if self.seconds > 0 else 0.0


class _Found(Exception):
    def __init__(self, diff: Difference) -> None:
        super().__init__(diff.summary)
        self.diff = diff


class _RefBad(Exception):
    def __init__(self, message: str, values, scalars) -> None:
        super().__init__(message)
        self.message, self.values, self.scalars = message, values, scalars


def resolve_tolerance(spec: PairSpec, text: str | None) -> Tolerance | None:
    if spec.mode == "bitexact":
        if text is not None:
            raise KeqError(f"--tolerance {text}: {spec.name} is a bitexact pair (bit patterns "
                           f"are compared); a tolerance applies to mode = \"real\" pairs only")
        return None
    return parse_tolerance(text if text is not None else DEFAULT_REAL_TOLERANCE)


def _races(run: SideRun) -> list[str]:
    return [f"{e.what} ({e.loc})" for e in run.effects if e.kind == "race"]


def _approx(run: SideRun) -> list[str]:
    return sorted({f"{e.what} at {e.loc}" for e in run.effects if e.kind == "approximation"})


def _elem(p, a: np.ndarray, i: int):
    return a[i].item() if a.dtype != np.float16 else float(a[i])


def compare_runs(spec: PairSpec, values: dict, scalars: dict, ref: SideRun, cand: SideRun,
                 tol: Tolerance | None) -> Difference | None:
    """The difference between two clean-or-faulting side runs, or None."""
    approx = sorted(set(_approx(ref)) | set(_approx(cand)))
    if cand.fault is not None:
        return Difference("fault", f"the candidate faulted: {cand.fault.render()}", values,
                          scalars, ref, cand, approximations=approx)
    mism = []
    for p in spec.buffers:
        if p.access not in ("out", "inout"):
            continue
        r, c = ref.final[p.name], cand.final[p.name]
        idx = differing(p, r, c, spec.mode, tol)
        if idx.size:
            first = [(int(i), _elem(p, r, int(i)), _elem(p, c, int(i)))
                     for i in idx[:SHOWN_PER_BUFFER]]
            mism.append(Mismatch(p.name, int(idx.size), int(r.size), first))
    races = _races(cand)
    if races:
        extra = f"; outputs also differ in {', '.join(m.param for m in mism)}" if mism else ""
        return Difference("race", f"the candidate has {len(races)} data race(s){extra}", values,
                          scalars, ref, cand, mism, races, approx)
    if mism:
        m = mism[0]
        return Difference("mismatch", f"{m.param} differs in {m.count} of {m.length} "
                          f"element(s)", values, scalars, ref, cand, mism, [], approx)
    return None


def _fmt_scalars(scalars: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in scalars.items())


def fuzz(spec: PairSpec, backend: Backend, *, examples: int = DEFAULT_EXAMPLES,
         seed_: int = 0, time_budget: float | None = None, tolerance: str | None = None,
         finite: bool = False, fixed: dict | None = None,
         progress: Callable[[int, int, float], None] | None = None) -> FuzzReport:
    """Fuzz one pair. Raises KeqError for bad input and `ReferenceError_` when the reference
    faults or races; returns the report otherwise (`report.difference` set when one was found).
    """
    if examples < 1:
        raise KeqError(f"--examples {examples}: must be at least 1")
    if time_budget is not None and not time_budget > 0:
        raise KeqError(f"--time-budget {time_budget}: must be a positive number of seconds")
    tol = resolve_tolerance(spec, tolerance)
    draw_scalars(spec, np.random.default_rng(seed_), fixed=fixed)   # satisfiable? (else exit 3)
    runners = backend.prepare(spec)
    strategy = from_spec(spec, finite=finite, fixed=fixed)
    rep = FuzzReport(spec, backend.describe(), spec.mode, tol, seed_, examples)
    rep.coverage = {r: KernelCoverage(runners[r].kernel) for r in ROLES}
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
        ref = runners["reference"].run(values, scalars)
        if ref.fault is not None:
            raise _RefBad(f"the reference faulted on an input the spec allows: "
                          f"{ref.fault.render()}", values, scalars)
        rr = _races(ref)
        if rr:
            raise _RefBad(f"the reference has a data race on an input the spec allows: {rr[0]}",
                          values, scalars)
        cand = runners["candidate"].run(values, scalars)
        for role, run in (("reference", ref), ("candidate", cand)):
            if run.coverage is not None:
                prev = cov_union.get(role)
                cov_union[role] = run.coverage if prev is None else _merge(prev, run.coverage)
        diff = compare_runs(spec, values, scalars, ref, cand, tol)
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
