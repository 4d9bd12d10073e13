"""Coverage of one launch shape: the stages (`verifier.stages`) over one concrete launch.

What one concrete launch cannot decide goes where the stage that met it says
(`verifier.stages.Next`): to the symbolic launch's machinery at this one shape (every access
logged with its condition: races for every input, not one; addresses that depend on a few
input bits split by value), to testing on the emulator (which may still refute what nothing
here proves), or straight to Inconclusive, named.
"""

from __future__ import annotations

import time

from verifier.claim import symbolic_inputs
from verifier.counterexample import tested_difference
from verifier.coverage.symbolic_launch import check_shapes
from verifier.run import Run
from verifier.shape_plan import ShapeFallback, plan_at
from verifier.stages import PIPELINE, Execution, Next, Undecided, run_stages
from verifier.verdict import StageStatus, Verdict


def check_shape(run: Run, env: dict[str, int], seed: int) -> Verdict | None:
    """None when the claim holds at the launch shape `env`; else the verdict it forces."""
    values, constraints, variables = symbolic_inputs(run.spec, env)
    try:
        return run_stages(run, Execution(env, seed, values, constraints, variables), PIPELINE)
    except Undecided as u:
        if u.next is Next.LOGGED:
            return _logged(run, env, seed, u.reason)
        if u.next is Next.TESTING:
            return _tested_or_inconclusive(run, env, seed, u.reason)
        return run.inconclusive(u.reason)


def _logged(run: Run, env: dict[str, int], seed: int, why: str) -> Verdict | None:
    """The shape `env` with the symbolic launch's machinery (`plan_at`). None when proved."""
    try:
        return check_shapes(run, plan_at(run.spec, env), env, seed)
    except ShapeFallback as e:
        return run.inconclusive(f"{why}; the symbolic launch cannot decide it either: {e}")


def _tested_or_inconclusive(run: Run, env: dict, seed: int, why: str) -> Verdict:
    """What cannot be proved here may still be refuted by testing on the emulator, under
    other choices of what the ISA leaves open too (`verifier.testing`); else Inconclusive,
    named."""
    t0 = time.perf_counter()
    tested = tested_difference(run, env, seed, run.trials)
    if tested is not None:
        run.stage("random testing", StageStatus.FAILED, t0, tested.reasons[0])
        return tested
    return run.inconclusive(why)


__all__ = ["check_shape"]
