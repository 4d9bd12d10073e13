"""The effects stage: what the symbolic runs recorded besides their values, judged by
`verifier.effects` (approximations become stated assumptions; undefined behaviour and a
layout-dependent value stop the check, named)."""

from __future__ import annotations

from verifier.effects import judge_effects
from verifier.run import Run
from verifier.stages.base import Execution, Next, Undecided
from verifier.verdict import Verdict


class Effects:
    name = "effects"

    def check(self, run: Run, ex: Execution) -> Verdict | None:
        stop = judge_effects(run, ex.launches)
        if stop is not None:
            raise Undecided(stop, Next.NOTHING)
        return None


__all__ = ["Effects"]
