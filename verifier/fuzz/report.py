"""The records a fuzz run returns: the report (`FuzzReport`), the difference it found
(`Difference`, with one `Mismatch` per differing buffer), the coverage of each kernel
(`KernelCoverage`) and, with an auto tolerance, the operation counts (`OpsStats`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from semantics.choices import Choices
from verifier.fuzz.backends import SideRun
from verifier.fuzz.compare import OpsContext, Tolerance
from verifier.spec import PairSpec

ROLES = ("reference", "candidate")


@dataclass
class Mismatch:
    param: str
    count: int                          # differing elements
    length: int
    first: list[tuple[int, Any, Any]]   # (index, reference element, candidate element)


@dataclass
class Difference:
    kind: str                           # "mismatch" | "fault" | "race" | "printf"
    summary: str
    values: dict[str, Any]              # the inputs (every param by name, initial contents)
    scalars: dict[str, Any]
    reference: SideRun
    candidate: SideRun
    mismatches: list[Mismatch] = field(default_factory=list)
    races: list[str] = field(default_factory=list)
    approximations: list[str] = field(default_factory=list)
    ops: OpsContext | None = None       # the n and M an auto tolerance used on this example
    # The choices the candidate ran under in the run that shows the difference (the reference
    # ran under the defaults, or under the same choices for a random fill:
    # `shares_fixed_values`); None where the backend makes its own (the GPU)
    choices: Choices | None = None


@dataclass
class KernelCoverage:
    kernel: str
    blocks_seen: int = 0
    blocks_total: int = 0
    branches_seen: int = 0
    branches_total: int = 0
    measured: bool = False


@dataclass
class OpsStats:
    """How an auto tolerance's n was counted ("emulator" per thread, or "static"), and the
    largest n per kernel, M and S_n over the examples that ran."""
    how: dict[str, str] = field(default_factory=dict)          # role -> emulator | static
    ops_max: dict[str, int] = field(default_factory=dict)      # role -> largest n
    magnitude_max: float = 0.0
    scale_max: float = 0.0


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
    ops: OpsStats | None = None         # with an auto tolerance: the n and M the examples had
    # How the candidate's choices were set: the given ones (`fill`/`schedule`), or None with
    # `varied` True (defaults, then others where the run read something open), or neither
    # (a backend that makes its own)
    choices: Choices | None = None
    varied: bool = False
    varied_examples: int = 0            # examples whose candidate ran under other choices too

    @property
    def examples_per_second(self) -> float:
        return self.examples / self.seconds if self.seconds > 0 else 0.0
