"""What `keq verify` answers (DESIGN.md, "Verdicts"): the verdict, its stages and its
counterexample, as typed records (`verifier.run` holds the state of one verification)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from semantics.choices import Choices
from semantics.errors import KeqError


class VerdictKind(StrEnum):
    """The three answers (their values are what `--json` and certificates print)."""
    EQUIVALENT = "equivalent"
    NOT_EQUIVALENT = "not-equivalent"
    INCONCLUSIVE = "inconclusive"


EQUIVALENT, NOT_EQUIVALENT, INCONCLUSIVE = (VerdictKind.EQUIVALENT, VerdictKind.NOT_EQUIVALENT,
                                            VerdictKind.INCONCLUSIVE)


class StageStatus(StrEnum):
    """How a stage ended: its own outcome, or the solver answer that ended it."""
    OK = "ok"
    FAILED = "failed"
    INCONCLUSIVE = "inconclusive"
    SKIPPED = "skipped"
    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"
    TIMEOUT = "timeout"
    ERROR = "error"


class InternalError(KeqError):
    """keq contradicted itself (e.g. a solver model that does not replay): a keq bug."""


@dataclass(frozen=True)
class Stage:
    name: str
    status: StageStatus
    seconds: float
    detail: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", StageStatus(self.status))   # (a typo fails here)


PRINTED = "<printf>"     # what a side printed, among its final values (`verifier.printed`)


class Difference(NamedTuple):
    """One output element the kernels leave different: its bit patterns."""
    param: str
    index: int
    reference: int
    candidate: int


@dataclass(frozen=True)
class Counterexample:
    scalars: dict[str, int]
    inputs: dict[str, Any]                     # every param by spec name (replayable)
    reference: dict[str, Any]                  # final out/inout contents
    candidate: dict[str, Any]
    differences: tuple[Difference, ...]
    note: str = ""
    depends_on: tuple[str, ...] = ()           # the inputs the differing element depends on
    # The byte every CTA's shared memory held at launch in the replay (PTX leaves it
    # unspecified; 0 is the emulator's default, another value one more state the GPU may leave)
    shared_fill: int = 0
    # What the ISA leaves open, as the replay resolved it (fill, schedule, a model's values)
    choices: Choices | None = None
    # What each side printed (global thread id -> its calls' text), where the kernels print
    # and the claim compares it (`verifier.printed`)
    printed: dict[str, dict[int, tuple[str, ...]]] | None = None

    @classmethod
    def of(cls, scalars: dict, inputs: dict, reference: dict, candidate: dict,
           differences, **kw) -> "Counterexample":
        """A counterexample from each side's outputs, what it printed (under the key
        `PRINTED`) kept apart from its buffers."""
        printed = {role: outs.pop(PRINTED, {}) for role, outs in
                   (("reference", reference), ("candidate", candidate))}
        return cls(scalars, inputs, reference, candidate, tuple(differences),
                   printed=printed if any(printed.values()) else None, **kw)


@dataclass(frozen=True)
class Verdict:
    kind: VerdictKind
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", VerdictKind(self.kind))
