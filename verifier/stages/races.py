"""The races stage: no two conflicting accesses are unordered (PTX memory model: weak
accesses race; morally strong ones do not, but the scheduler orders them).

At one launch shape whose control flow does not depend on input data the set of accesses is
the same for every input, so one emulator run with the race detector decides it. Over a
maximal launch (and wherever data steers control flow) the symbolic race log has every access
with its condition: a conflicting pair must never both happen, which the solvers decide, and a
race they find is replayed with the emulator's detector before it is reported.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import z3

from verifier.counterexample import (ORDERED, concrete_inputs, model_inputs, race_check,
                                     replay_race, shape_text, tested_difference)
from verifier.run import Run
from verifier.solvers import Obligation
from verifier.stages.base import Execution, Maximal, Next, Undecided
from verifier.verdict import StageStatus, Verdict


# Pairs that are no race but whose outcome the scheduler chooses: morally strong accesses in
# either order ("order"), and spin waits that may end on more than one store ("spin",
# `semantics.machine.symbolic_spins`).
_SCHEDULED = ("order", "spin")


class Races:
    name = "races"

    def check(self, run: Run, ex: Execution) -> Verdict | None:
        if ex.maximal is None:
            return _at_one_shape(run, ex)
        return _logged(run, ex, ex.maximal)


def _at_one_shape(run: Run, ex: Execution) -> Verdict | None:
    t0 = time.perf_counter()
    at = shape_text(ex.env)
    if any(launch.symbolic_control for launch in ex.launches.values()):
        # The emulator's race detector sees one input; the symbolic race log sees them all.
        raise Undecided(f"control flow depends on input data at {at}", Next.LOGGED)
    race = race_check(run, ex.env, ex.seed)
    if race == ORDERED:
        raise Undecided(f"morally strong accesses meet at {at}", Next.LOGGED)
    run.stage("races", StageStatus.OK if race is None else StageStatus.FAILED, t0, at)
    return race


def _logged(run: Run, ex: Execution, m: Maximal) -> Verdict | None:
    t0 = time.perf_counter()
    checked = 0
    for role, launch in ex.launches.items():
        if not launch.races:
            continue
        checked += len(launch.races)
        races = [r for r in launch.races if r.kind not in _SCHEDULED]
        verdict = _conflicts(run, ex, m, role, replace(launch, races=tuple(races))) \
            if races else None
        if verdict is None:
            verdict = _orders(run, ex, m, role,
                              [r for r in launch.races if r.kind in _SCHEDULED])
        if verdict is not None:
            return verdict
    logged = "every access logged" + (" (indexed buffers: two writers of one element are "
                                      "found with the outputs)" if m.indexed else "")
    run.stage("races", StageStatus.OK, t0,
              f"{logged}; {checked} conflicting pair(s) of instructions refuted"
              if checked else f"{logged}; no two conflict")
    return None


def _conflicts(run: Run, ex: Execution, m: Maximal, role: str, launch) -> Verdict | None:
    """Conflicting accesses must never both happen; a model of both happening is replayed
    with the emulator's race detector before it is reported."""
    feas, sp = m.feass[role], m.plan
    hit, rest = feas.decide([r.cond for r in launch.races])
    if hit is None and rest:
        # Testing before solving: random inputs at a few allowed shapes (the largest first:
        # it has every lane) often show the race at once, and the emulator's detector is the
        # replay anyway; the disjunction of every pair's condition can be huge (a histogram's
        # bins: one condition per thread and bin).
        rng = np.random.default_rng(ex.seed)
        picks = [sp.count - 1] + rng.integers(0, sp.count, max(run.trials - 1, 0)).tolist()
        for trial, i in enumerate(picks[:max(run.trials, 0)]):
            scalars, inputs = concrete_inputs(run, dict(ex.env, **sp.shapes[i]), ex.seed + trial)
            verdict = replay_race(run, role, scalars, inputs)
            if verdict is not None:
                return verdict
    if hit is not None:
        # Both happen at this shape whatever the inputs: random inputs show it.
        attempts = [concrete_inputs(run, dict(ex.env, **feas.shape_at(hit)), ex.seed)]
        what = next((r.what for r in launch.races if r.cond is True), launch.races[0].what)
    elif not rest:
        return None
    else:
        r = run.solve(Obligation(z3.And(*ex.constraints, z3.Or(rest)),
                                 f"{role} is free of data races"))
        if r.answer == "unsat":
            return None
        if r.answer != "sat":
            return run.inconclusive(f"race freedom of the {role}: no solver answered "
                                    f"({r.answer}: {r.detail or r.solver})")
        model = r.model or {}
        attempts = [model_inputs(run, ex.env, lambda v: int(model.get(str(v), 0)),
                                 ex.variables, ex.seed)]
        what = next((p.what for p in launch.races
                     if z3.is_true(z3.simplify(z3.substitute(p.cond,
                                                             *_subst(model, ex.variables))))),
                    launch.races[0].what)
    for scalars, inputs in attempts:
        verdict = replay_race(run, role, scalars, inputs)
        if verdict is not None:
            return verdict
    return run.inconclusive(f"the {role} may race ({what}), but the emulator's race detector "
                            f"did not reproduce it at {shape_text(attempts[0][0])}")


def _orders(run: Run, ex: Execution, m: Maximal, role: str, pairs: list) -> Verdict | None:
    """Morally strong accesses that conflict do not race, but the scheduler orders them:
    where they may both happen the outputs may depend on that order, which keq models only
    within one atomic instruction (`atomic_order`). Refuted when testing under other orders
    shows a difference; else the claim is undecided, named."""
    if not pairs:
        return None
    hit, rest = m.feass[role].decide([r.cond for r in pairs])
    what = next((r.what for r in pairs if r.cond is True), pairs[0].what)
    if hit is None and rest:
        r = run.solve(Obligation(z3.And(*ex.constraints, z3.Or(rest)),
                                 f"the {role}'s morally strong accesses never meet unordered"))
        if r.answer == "unsat":
            return None
    elif hit is None:
        return None
    for i in sorted({m.plan.count - 1, 0}):
        tested = tested_difference(run, dict(ex.env, **m.plan.shapes[i]), ex.seed, run.trials,
                                   other_choices=True)
        if tested is not None:
            return tested
    return run.inconclusive(f"the outputs of the {role} may depend on the order the "
                            f"scheduler gives: {what}")


def _subst(model: dict, variables: dict) -> list:
    return [(var, z3.BitVecVal(int(model[name]), var.size()))
            for name, (_, _, var) in variables.items() if name in model]


__all__ = ["Races"]
