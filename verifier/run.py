"""The state of one verification (`Run`): the claim's spec and options, the kernels as
prepared, and the evidence gathered so far (stages, solver obligations, assumptions, the
differing terms a model split). Every stage receives the run and records into it through
its methods, so what a certificate or a report reads is recorded in one way:

- `run.solve(obligation)` asks the run's solvers and keeps the answer as evidence;
- `run.stage(name, status, since, detail)` records a finished stage (the progress display
  hears of it at once);
- `run.inconclusive(reason)` is the verdict of a stage that cannot decide;
- `run.mark()` / `run.rewind(mark)` forget what an attempt added when it did not decide
  (the one-symbolic-CTA attempt before the full launch).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from semantics.choices import Choices
from semantics.machine.kernel import PreparedKernel
from verifier.emulate import prepare_side
from verifier.solvers import DEFAULT_SOLVERS, Cache, Obligation, SolveResult, solve
from verifier.spec import PairSpec
from verifier.verdict import INCONCLUSIVE, Stage, StageStatus, Verdict


class StageLog(list):
    """The stages of one verification, as they finish; `on_stage(stage)` (optional) hears of
    each at once (a progress display for long runs)."""

    def __init__(self, on_stage: Callable[[Stage], None] | None = None) -> None:
        super().__init__()
        self.on_stage = on_stage

    def append(self, stage: Stage) -> None:
        super().append(stage)
        if self.on_stage is not None:
            self.on_stage(stage)


@dataclass(frozen=True)
class RunMark:
    """How far a run's evidence went (`Run.mark`)."""
    stages: int
    obligations: int
    assumptions: frozenset[str]
    witness: tuple | None


@dataclass
class Run:
    spec: PairSpec
    timeout_s: float
    unroll: int
    prepared: dict[str, PreparedKernel] = field(default_factory=dict)
    stages: list[Stage] = field(default_factory=StageLog)
    assumptions: set[str] = field(default_factory=set)
    witness: tuple | None = None          # the differing pair of terms the solver split
    witness_of: str = ""                  # ... and the output they are (`ElementPair.param`)
    solvers: tuple[str, ...] = DEFAULT_SOLVERS
    dump_dir: str | None = None
    cache: Cache = field(default_factory=Cache)
    obligations: list[SolveResult] = field(default_factory=list)   # for certificates
    trials: int = 8
    jobs: int = 1                         # worker processes (`verifier.parallel`)
    # Launch shapes where testing saw outputs far apart in real mode: checked on their own
    # first when the whole claim stays undecided (`verifier.equiv`).
    suspects: list = field(default_factory=list)
    # How the emulator resolves what the ISA leaves open, and the target assumptions the
    # claim names (both domains): `semantics.choices`
    choices: Choices = field(default_factory=Choices)

    def kernel(self, role: str) -> PreparedKernel:
        """The prepared kernel of side `role` (prepared once per run)."""
        k = self.prepared.get(role)
        if k is None:
            k = self.prepared[role] = prepare_side(self.spec.side(role))
        return k

    def solve(self, obligation: Obligation, timeout_s: float | None = None,
              validate: bool = True) -> SolveResult:
        """The run's solver portfolio on `obligation` (at most `timeout_s`, default the
        run's), its answer kept as evidence (`validate`: see `verifier.solvers.solve`)."""
        limit = self.timeout_s if timeout_s is None else min(self.timeout_s, timeout_s)
        r = solve(obligation, solvers=self.solvers, timeout_s=limit, cache=self.cache,
                  dump_dir=self.dump_dir, validate=validate)
        self.obligations.append(r)
        return r

    def stage(self, name: str, status: StageStatus | str, since: float,
              detail: str = "") -> None:
        """Record the stage `name`, begun at `since` (`time.perf_counter()`), as ended."""
        self.stages.append(Stage(name, status, time.perf_counter() - since, detail))

    @staticmethod
    def inconclusive(reason: str) -> Verdict:
        return Verdict(INCONCLUSIVE, "", (reason,))

    def mark(self) -> RunMark:
        return RunMark(len(self.stages), len(self.obligations), frozenset(self.assumptions),
                       self.witness)

    def rewind(self, mark: RunMark) -> None:
        """Forget the evidence added since `mark` (an attempt that did not decide)."""
        del self.stages[mark.stages:], self.obligations[mark.obligations:]
        self.assumptions.intersection_update(mark.assumptions)
        self.witness = mark.witness
