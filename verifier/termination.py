"""A symbolic loop that does not finish within the unroll bound: does it ever?

A loop whose exit depends on the inputs is unrolled up to `--unroll` iterations; past that
keq cannot prove anything about it. But a candidate that never stops for some input is not
equivalent to a reference that does: a solver looks for inputs that keep a lane in the loop
past the bound, and the emulator runs the candidate on them with its step budget
(`semantics.machine.termination`). A run that does not terminate there is the
counterexample; one that terminates leaves the claim undecided, as before.
"""

from __future__ import annotations

import z3

from semantics.machine import MemoryFault
from semantics.machine.executor import ExecutionError, NonTermination, UnrollLimit
from verifier.counterexample import faulted, model_inputs, replay_fault
from verifier.emulate import run_side
from verifier.solvers import Obligation
from verifier.verdict import Verdict


def never_ends(ctx, role: str, e: UnrollLimit, constraints: list, variables: dict,
               env: dict, seed: int) -> Verdict | None:
    """The verdict when inputs that keep a lane of `role` in the loop past the bound make
    it run forever on the emulator; None when there are none or it ends there."""
    conds = [c for c in (e.lanes or []) if not isinstance(c, bool) or c]
    if not conds:
        return None
    if any(c is True for c in conds):
        model: dict = {}
    else:
        ob = Obligation(z3.And(*constraints, z3.Or([c for c in conds])),
                        f"the {role} stays in the loop at {e.loc} past {e.bound} iterations")
        r = ctx.solve(ob, timeout_s=30.0)
        if r.answer != "sat":
            return None
        model = r.model or {}
    scalars, inputs = model_inputs(ctx, env, lambda v: int(model.get(str(v), 0)), variables,
                                   seed)
    try:
        run_side(ctx.spec.side(role), {k: (v.copy() if hasattr(v, "copy") else v)
                                       for k, v in inputs.items()}, scalars,
                 choices=ctx.choices, tag=role)
    except NonTermination as err:
        return faulted(role, scalars, inputs, err)
    except (MemoryFault, ExecutionError) as err:
        if role == "candidate":
            replay_fault(ctx, "reference", scalars, seed, inputs)   # (raises if it faults)
        return faulted(role, scalars, inputs, err)
    return None


__all__ = ["never_ends"]
