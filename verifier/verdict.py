"""What `keq verify` answers (DESIGN.md, "Verdicts"): verdicts, stages, counterexamples, and
the state one verification carries through its stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from semantics.choices import Choices
from semantics.errors import KeqError
from semantics.machine.kernel import PreparedKernel
from verifier.solvers import DEFAULT_SOLVERS, Cache
from verifier.spec import PairSpec

EQUIVALENT, NOT_EQUIVALENT, INCONCLUSIVE = "equivalent", "not-equivalent", "inconclusive"


class InternalError(KeqError):
    """keq contradicted itself (e.g. a solver model that does not replay): a keq bug."""


@dataclass(frozen=True)
class Stage:
    name: str
    status: str          # ok | failed | inconclusive | skipped
    seconds: float
    detail: str = ""


@dataclass(frozen=True)
class Counterexample:
    scalars: dict[str, int]
    inputs: dict[str, Any]                     # every param by spec name (replayable)
    reference: dict[str, Any]                  # final out/inout contents
    candidate: dict[str, Any]
    differences: tuple[tuple[str, int, int, int], ...]   # (param, index, ref bits, cand bits)
    note: str = ""
    depends_on: tuple[str, ...] = ()           # the inputs the differing element depends on
    # The byte every CTA's shared memory held at launch in the replay (PTX leaves it
    # unspecified; 0 is the emulator's default, another value one more state the GPU may leave)
    shared_fill: int = 0
    # What the ISA leaves open, as the replay resolved it (fill, schedule, a model's values)
    choices: Choices | None = None


@dataclass(frozen=True)
class Verdict:
    kind: str
    claim: str
    reasons: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    stages: tuple[Stage, ...] = ()
    assignments: int = 0
    counterexample: Counterexample | None = None
    seconds: float = 0.0
    # Every obligation sent to a solver (canonical SMT-LIB2 hash, solver, answer), in order:
    # the evidence a certificate records (verifier.certs).
    obligations: tuple = ()
    # How the claim's launch shapes were covered ("one symbolic launch shape for 2048
    # shapes", "3 shapes enumerated"): part of what the verdict means.
    coverage: str = ""


class StageLog(list):
    """The stages of one verification, as they finish; `on_stage(stage)` (optional) hears of
    each at once (a progress display for long runs)."""

    def __init__(self, on_stage=None) -> None:
        super().__init__()
        self.on_stage = on_stage

    def append(self, stage: Stage) -> None:
        super().append(stage)
        if self.on_stage is not None:
            self.on_stage(stage)


@dataclass
class _Ctx:
    spec: PairSpec
    timeout_s: float
    unroll: int
    prepared: dict[str, PreparedKernel] = field(default_factory=dict)
    stages: list[Stage] = field(default_factory=StageLog)
    assumptions: set[str] = field(default_factory=set)
    witness: tuple | None = None          # the differing pair of terms the solver split
    solvers: tuple[str, ...] = DEFAULT_SOLVERS
    dump_dir: str | None = None
    cache: Cache = field(default_factory=Cache)
    obligations: list = field(default_factory=list)   # every SolveResult, for certificates
    trials: int = 8
    jobs: int = 1                         # worker processes (`verifier.parallel`)
    # Launch shapes where testing saw outputs far apart in real mode: checked on their own
    # first when the whole claim stays undecided (`verifier.equiv`).
    suspects: list = field(default_factory=list)
    # How the emulator resolves what the ISA leaves open, and the target assumptions the
    # claim names (both domains): `semantics.choices`
    choices: Choices = field(default_factory=Choices)
