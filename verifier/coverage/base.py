"""The interface of a coverage strategy: how the launch shapes a claim allows are covered.

A strategy (`Coverage`) is asked to cover the claim (`Scope`) and answers with `Covered`:
the verdict it forces (None when the claim is proved for the `count` shapes it covered) and
a sentence saying how it covered them. One that does not apply to the claim, or cannot decide
it, raises `ShapeFallback` with the reason, and the claim driver (`verifier.equiv`) asks the
next. A strategy that covered the whole claim without deciding it says so (`undecided`), and
the driver then checks a few small shapes on their own (`verifier.coverage.probes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from verifier.run import Run
from verifier.shape_plan import ShapePlan
from verifier.verdict import Verdict


@dataclass
class Scope:
    """The launch shapes of one claim, and what the strategies learned about them so far."""
    fixed: dict[str, int]                 # the scalars pinned (--set, or one allowed value)
    seed: int
    enumerated: list[dict[str, int]]      # every allowed shape, when few enough
    why_not_enumerated: str               # else why not
    progress: Callable | None = None
    plan: ShapePlan | None = None         # the symbolic maximal launch, once planned
    checked: list[dict[str, int]] = field(default_factory=list)  # shapes decided on their own
    early: list[dict[str, int]] = field(default_factory=list)    # of those, probed first


@dataclass(frozen=True)
class Covered:
    verdict: Verdict | None       # None: proved for the `count` shapes covered
    count: int
    coverage: str
    undecided: bool = False       # the whole claim was covered, yet not decided


class Coverage(Protocol):
    def cover(self, run: Run, scope: Scope) -> Covered:
        """Cover `scope`'s shapes; raises `ShapeFallback` when this strategy cannot."""
        ...

    def undecided_reason(self, why: str) -> str:
        """The verdict's reason when this strategy was the last and did not apply."""
        ...

    def also(self, why: str) -> str:
        """How the reason says that this strategy, tried earlier, did not apply."""
        ...


__all__ = ["Coverage", "Covered", "Scope"]
