"""The interface every stage of a verification has, and what the stages share.

A stage is an object with a `name` and `check(run, ex)`: it reads what the stages before it
left in the `Execution` `ex` (the symbolic inputs, the launches, ...), records its evidence
into the `Run` (`run.stage`, `run.solve`, `run.assumptions`), and returns a verdict that ends
the check (a replayed counterexample, or Inconclusive) or None to go on. A stage that cannot
decide what it is asked raises `Undecided`, naming what could decide it instead; the
coverage strategy that ran the stages (`verifier.coverage`) turns that into its next step.

One pipeline serves both kinds of launch: one concrete launch shape (`ex.maximal` is None)
and the symbolic maximal launch that stands for every shape of a claim (`ex.maximal` holds
its plan, its feasibility oracles and its indexed buffers). Each stage handles both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import z3
from semantics.machine.symbolic_run import SymbolicLaunch
from verifier.feasibility import Feasibility
from verifier.run import Run
from verifier.shape_plan import ShapePlan
from verifier.symbolic_cta import CtaAxes
from verifier.verdict import Verdict


class Next(StrEnum):
    """What may decide a question a stage cannot."""
    LOGGED = "logged"      # the symbolic launch's machinery: every access logged with its condition
    TESTING = "testing"    # nothing proves it; testing on the emulator may still refute it
    NOTHING = "nothing"    # no strategy decides it: Inconclusive, named


class Undecided(Exception):
    """A stage cannot decide: `reason` says why, `next` what could."""

    def __init__(self, reason: str, next: Next = Next.LOGGED) -> None:
        super().__init__(reason)
        self.reason = reason
        self.next = next


@dataclass
class Maximal:
    """What a symbolic maximal launch adds to an execution (`verifier.coverage.symbolic_launch`).

    `feass` holds each kernel's feasibility oracle over its points (shapes, times its CTAs when
    `ctas` stands one symbolic CTA for all of them); both kernels share one object unless they
    launch different grids (`apart`). The bounds stage fills in the indexed buffers' views
    (`infos`, `logs`, `replayed`) for the outputs stage."""
    plan: ShapePlan
    env64: dict[str, Any]
    feass: dict[str, Feasibility]
    ctas: dict[str, CtaAxes] | None
    indexed: bool
    what: str
    infos: dict[str, dict] = field(default_factory=dict)
    logs: dict[str, tuple] = field(default_factory=dict)
    replayed: list | None = None

    @property
    def apart(self) -> bool:
        return self.feass["reference"] is not self.feass["candidate"]

    @property
    def feas(self) -> Feasibility:
        return self.feass["reference"]


@dataclass
class Execution:
    """One check of the claim at the scalars `env` (one shape, or the fixed scalars of a
    maximal launch), filled in stage by stage."""
    env: dict[str, int]
    seed: int
    values: dict[str, Any]
    constraints: list
    variables: dict
    maximal: Maximal | None = None
    launches: dict[str, SymbolicLaunch] = field(default_factory=dict)


def below(i: int, bound) -> Any:
    """`i < bound` for a launch expression's value: a Python bool when `bound` is concrete,
    else a 64-bit term."""
    return i < bound if isinstance(bound, int) else z3.BitVecVal(i, 64) < bound


class Stage(Protocol):
    name: str

    def check(self, run: Run, ex: Execution) -> Verdict | None:
        """The verdict this stage forces, or None to go on; raises `Undecided`."""
        ...


def run_stages(run: Run, ex: Execution, stages: tuple[Stage, ...]) -> Verdict | None:
    """Run `stages` in order over `ex`: the first verdict ends the check; None when every
    stage passed (the claim holds for what `ex` covers)."""
    for stage in stages:
        verdict = stage.check(run, ex)
        if verdict is not None:
            return verdict
    return None


__all__ = ["Execution", "Maximal", "Next", "Stage", "Undecided", "below", "run_stages"]
