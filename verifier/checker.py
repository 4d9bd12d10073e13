"""A warm checker for the loop of a kernel optimizer: one reference and its claim, judged
against many candidates, each verdict the one `keq verify` gives for that pair.

    from verifier.checker import Checker

    checker = Checker("kernels/vector_add/vec4.toml", timeout_s=30)
    v = checker.check(Path("candidate.ptx"))            # a file, PTX text, or a parsed module
    v = checker.check(ptx_text, kernel="my_kernel", budget_s=20)
    for judged in checker.check_many(candidates, jobs=2, budget_s=20):
        print(judged.label, judged.verdict.kind)        # as each candidate finishes

What is done once: the pair spec, the reference kernel prepared, and the solver cache (keyed
by the canonical form of each obligation, `verifier.solvers.canonical`: a candidate that asks
an earlier question up to renaming gets its answer at once). What comes first for each
candidate: the inputs that refuted earlier candidates, replayed on the emulator (most
candidates of a search are wrong, and often wrong in the same way: a replayed difference is a
counterexample as it stands); then the whole check (`verifier.equiv.verify`, random testing
first). `budget_s` bounds a candidate's whole check: past it the verdict is Inconclusive,
never a pass. `check_many` runs candidates as campaign tasks (`verifier.campaign`): in `jobs`
forked processes, which inherit this checker warm, or on a Ray cluster (`cluster=`), whose
workers each build the checker once from its recipe (the pair, the claim, the options);
either way every worker's solver cache is one directory (on a cluster: one path, shared
where the nodes share a file system). The task function is the same either way, so the
verdicts are the same.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Iterator

from semantics.errors import KeqError
from semantics.ir.nodes import Module
from semantics.ptx import parse_ptx
from verifier.campaign import Executor, LocalExecutor, Retry, Task, executor_for
from verifier.claim import claim_text
from verifier.counterexample import replayed_difference
from verifier.emulate import choices_of, prepare_side
from verifier.equiv import verify
from verifier.run import Run
from verifier.solvers import Cache
from verifier.spec import PairSpec, load_spec
from verifier.time_limit import TimeLimitReached, time_limit
from verifier.verdict import INCONCLUSIVE, NOT_EQUIVALENT, Stage, StageStatus, Verdict

OPTIONS = ("timeout_s", "unroll", "max_shapes", "seed", "solvers", "trials", "shapes")
Candidate = Path | str | Module


@dataclass(frozen=True)
class Judged:
    """A candidate's verdict, as `check_many` streams it."""
    label: str
    verdict: Verdict


class Checker:
    def __init__(self, pair: PairSpec | str | Path, *, fixed: dict[str, int] | None = None,
                 cache_dir: str | Path | None = None, **options: Any) -> None:
        unknown = set(options) - set(OPTIONS)
        if unknown:
            raise KeqError(f"Checker: unknown option(s) {', '.join(sorted(unknown))} "
                           f"(verify's options: {', '.join(OPTIONS)})")
        self.pair = pair if isinstance(pair, PairSpec) else load_spec(pair)
        self.fixed = dict(fixed or {})
        self.options = options
        self.cache = Cache(cache_dir)
        self.prepared = {"reference": prepare_side(self.pair.reference)}
        self.refuting: list[tuple[dict, dict]] = []      # (scalars, inputs) that refuted
        self.retries: list[Retry] = []                   # of the last check_many

    def pair_with(self, candidate: Candidate, kernel: str | None = None) -> PairSpec:
        """The pair with `candidate` as its candidate side: a PTX file (Path), PTX text (str)
        or a parsed module, and its kernel (default: the pair's candidate kernel's name)."""
        if isinstance(candidate, Module):
            module, path = candidate, Path(candidate.path or "<candidate>")
        elif isinstance(candidate, Path):
            try:
                text = candidate.read_text()
            except OSError as e:
                raise KeqError(f"{candidate}: cannot read the candidate: {e.strerror or e}") \
                    from None
            module, path = parse_ptx(text, str(candidate)), candidate
        else:
            module, path = parse_ptx(candidate, "<candidate>"), Path("<candidate>")
        side = self.pair.candidate
        name = kernel or side.kernel
        fn = module.entries.get(name)
        if fn is None:
            raise KeqError(f"{path}: no .entry '{name}' in the candidate")
        if len(fn.params) != len(side.arg_names):
            raise KeqError(f"{path}: .entry '{name}' has {len(fn.params)} parameter(s), the "
                           f"pair's candidate {len(side.arg_names)}")
        return replace(self.pair, candidate=replace(side, ptx=path, kernel=name, module=module,
                                                    isa="ptx", sass=None, param_types=()))

    def check(self, candidate: Candidate, kernel: str | None = None, *,
              budget_s: float | None = None) -> Verdict:
        """The verdict `keq verify` gives for the pair with this candidate (within
        `budget_s` seconds, else Inconclusive)."""
        spec = self.pair_with(candidate, kernel)
        try:
            with time_limit(budget_s):
                v = self._earlier_counterexamples(spec)
                if v is None:
                    v = verify(spec, fixed=self.fixed, cache=self.cache,
                               prepared=self.prepared, **self.options)
        except TimeLimitReached:
            v = Verdict(INCONCLUSIVE, claim_text(spec, self.fixed),
                        (f"the budget of {budget_s:g} s for this candidate was reached",),
                        seconds=budget_s or 0.0)
        cex = v.counterexample
        if v.kind == NOT_EQUIVALENT and cex is not None and cex.differences:
            self.refuting.append((cex.scalars, cex.inputs))
        return v

    def _earlier_counterexamples(self, spec: PairSpec) -> Verdict | None:
        """The inputs that refuted earlier candidates, on the emulator."""
        if not self.refuting or spec.mode == "real":
            return None
        t0 = time.perf_counter()
        run = Run(spec, 60.0, 64, choices=choices_of(spec), cache=self.cache,
                  prepared=dict(self.prepared))
        for n, (scalars, inputs) in enumerate(self.refuting):
            v = replayed_difference(run, scalars, inputs, self.options.get("seed", 0),
                                    note="an earlier candidate's counterexample, replayed",
                                    faults=True)
            if v is not None:
                seconds = time.perf_counter() - t0
                stage = Stage("earlier counterexamples", StageStatus.FAILED, seconds,
                              f"the inputs that refuted earlier candidates ({n + 1} tried)")
                return replace(v, claim=claim_text(spec, self.fixed), stages=(stage,),
                               assignments=1, seconds=seconds,
                               coverage="an earlier candidate's counterexample, replayed")
        return None

    def check_many(self, candidates: Iterable[Candidate | tuple[str, Candidate, str | None]],
                   *, jobs: int = 1, budget_s: float | None = None,
                   cluster: str | Executor | None = None) -> Iterator[Judged]:
        """Each candidate's verdict as it finishes: in `jobs` local processes, or on the
        Ray cluster at `cluster` (an address, or an executor of `verifier.campaign`). A
        candidate is given as `check` takes it, or as (label, candidate, kernel). The
        candidates run again because their worker died are in `self.retries` after."""
        items = [c if isinstance(c, tuple) else (_label(c), c, None) for c in candidates]
        if cluster is None and (jobs <= 1 or len(items) <= 1):
            for label, cand, kernel in items:
                yield Judged(label, self.check(cand, kernel, budget_s=budget_s))
            return
        executor = cluster if cluster is not None and not isinstance(cluster, str) else \
            executor_for(cluster, jobs) if cluster else LocalExecutor(jobs)
        with tempfile.TemporaryDirectory(prefix="keq-cache-") as shared:
            own, self.cache = self.cache, _shared(self.cache, shared)
            recipe = Recipe(uuid.uuid4().hex, self.pair, tuple(sorted(self.fixed.items())),
                            tuple(sorted(self.options.items())), str(self.cache.directory))
            WARM[recipe.token] = self            # (forked workers inherit it warm)
            tasks = [Task(label, judge, (recipe, cand, kernel, budget_s))
                     for label, cand, kernel in items]
            try:
                for done in executor.run(tasks):
                    v = done.value
                    cex = v.counterexample
                    if v.kind == NOT_EQUIVALENT and cex is not None and cex.differences:
                        self.refuting.append((cex.scalars, cex.inputs))
                    yield Judged(done.key, v)
            finally:
                self.retries = list(executor.retries)
                WARM.pop(recipe.token, None)
                self.cache = own
                if executor is not cluster:
                    executor.close()


@dataclass(frozen=True)
class Recipe:
    """What a worker needs to build the checker (plain data: it travels to Ray workers).
    `token` names one `check_many` call's checker in each worker (`WARM`)."""
    token: str
    pair: PairSpec
    fixed: tuple
    options: tuple
    cache_dir: str


# Each worker's checkers, built once per recipe (a forked worker finds its parent's here).
WARM: dict[str, Checker] = {}


def judge(recipe: Recipe, candidate: Candidate, kernel: str | None,
          budget_s: float | None) -> Verdict:
    """One candidate's verdict (a campaign task)."""
    checker = WARM.get(recipe.token)
    if checker is None:
        checker = WARM[recipe.token] = Checker(recipe.pair, fixed=dict(recipe.fixed),
                                         cache_dir=recipe.cache_dir, **dict(recipe.options))
    return checker.check(candidate, kernel, budget_s=budget_s)


def _shared(cache: Cache, directory: str) -> Cache:
    """A cache on disk in `directory` (the workers' common one), holding `cache`'s answers."""
    out = Cache(directory)
    for sha, entry in cache.memory.items():
        out.memory[sha] = entry
    return out


def _label(candidate: Candidate) -> str:
    if isinstance(candidate, Path):
        return str(candidate)
    if isinstance(candidate, Module):
        return candidate.path or "<module>"
    return f"<ptx text, {len(candidate)} characters>"


__all__ = ["Checker", "Judged", "OPTIONS"]
