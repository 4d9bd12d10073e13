"""The emulator backend: keq's concrete SIMT emulator, with race detection and coverage.

Lockstep execution hides missing barriers, so races are found by `detect_races=True` (a
"race" effect names both accesses); each kernel is prepared once and reused for every example.
`run(values, scalars, choices)` resolves what the PTX ISA leaves open with `choices`
(`semantics.choices`, under the side's role: its names start with "reference/" or
"candidate/"); `supports_choices` tells the runner that this backend honours them (the GPU
makes its own).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from semantics.choices import Choices
from semantics.machine import ExecutionError, MemoryFault, run_kernel
from semantics.machine.kernel import PreparedKernel
from verifier.emulate import prepare_side, run_side
from verifier.fuzz.backends.base import SideRun
from verifier.spec import PairSpec, Side

_PARAMS = set(inspect.signature(run_kernel).parameters)


@dataclass
class EmulatorSide:
    side: Side
    prepared: PreparedKernel
    detect_races: bool
    coverage: bool
    supports_choices = True

    @property
    def role(self) -> str:
        return self.side.role

    @property
    def kernel(self) -> str:
        return self.side.kernel

    def run(self, values: dict, scalars: dict, choices: Choices | None = None) -> SideRun:
        kw: dict = {"choices": choices, "tag": self.side.role} if choices is not None else {}
        if self.detect_races and "detect_races" in _PARAMS:
            kw["detect_races"] = True
        if self.coverage and "coverage" in _PARAMS:
            kw["coverage"] = True
        try:
            final, result = run_side(self.side, values, scalars, prepared=self.prepared, **kw)
        except (MemoryFault, ExecutionError) as e:
            return SideRun(None, e)
        return SideRun(final, None, tuple(result.effects), getattr(result, "coverage", None))


class EmulatorBackend:
    name = "emulator"

    def __init__(self, *, detect_races: bool = True, coverage: bool = True) -> None:
        self.detect_races = detect_races
        self.coverage = coverage
        self.measures_coverage = coverage and "coverage" in _PARAMS
        self.races_supported = "detect_races" in _PARAMS

    def describe(self) -> str:
        races = ("on" if self.races_supported else "unavailable in this build") \
            if self.detect_races else "off"
        return f"emulator (keq's CPU SIMT emulator; race detection {races})"

    def prepare(self, spec: PairSpec) -> dict[str, EmulatorSide]:
        return {s.role: EmulatorSide(s, prepare_side(s), self.detect_races, self.coverage)
                for s in (spec.reference, spec.candidate)}
