"""The bounds stage: every access of both kernels stays inside its buffer.

At one launch shape there is nothing left to do: memory is addressed concretely there, and
an access outside every buffer already faulted during symbolic execution. Over a maximal
launch each access past a symbolic length is an obligation (its condition must be
unsatisfiable under the claim): conditions about shapes alone are evaluated at every shape,
the rest go to the solvers in one query; indexed buffers check their logged accesses shape
by shape. A violation is replayed on the emulator before it is reported.
"""

from __future__ import annotations

import time

import z3

from verifier.counterexample import model_inputs, replay_fault, shape_text
from verifier.indexed import (buffer_info, first_outside, inside_at, replay_logs,
                              violation_of)
from verifier.parallel import FirstFailureBeside
from verifier.run import Run
from verifier.solvers import Obligation
from verifier.spec import type_bits
from verifier.stages.base import Execution, Maximal, Undecided
from verifier.stages.execute import indexable
from verifier.verdict import InternalError, StageStatus, Verdict


class Bounds:
    name = "bounds"

    def check(self, run: Run, ex: Execution) -> Verdict | None:
        m = ex.maximal
        if m is None:
            return None
        t0 = time.perf_counter()
        for role in ex.launches:
            verdict = _logged_accesses(run, ex, m, role)
            if verdict is not None:
                return verdict
        replay_s = 0.0
        if m.indexed:
            verdict, replay_s = _indexed_accesses(run, ex, m)
            if verdict is not None:
                return verdict
        count = sum(len(launch.obligations) + len(launch.indexed)
                    for launch in ex.launches.values())
        run.stage("bounds", StageStatus.OK, t0,
                  f"{count} access obligation(s) over {m.what}" + (
                      f"; the write logs replayed meanwhile ({replay_s:.2f} s)"
                      if m.replayed is not None else ""))
        return None


def _logged_accesses(run: Run, ex: Execution, m: Maximal, role: str) -> Verdict | None:
    """The accesses of `role` past a symbolic length never happen."""
    launch = ex.launches[role]
    if not launch.obligations:
        return None
    # Conditions about shapes alone are decided by evaluating them at every shape.
    own = m.feass[role]
    hit, terms = None, []
    for o in launch.obligations:
        decided, at = own.violated(o)
        if not decided:
            terms.append(o.violation)
        elif at is not None:
            hit = at
            break
    if hit is None:
        hit, rest = own.decide(terms)
    if hit is not None:
        verdict = replay_fault(run, role, dict(ex.env, **own.shape_at(hit)), ex.seed)
        if verdict is not None:
            return verdict
        if m.ctas is not None:      # (the point's CTA may not exist in the real launch)
            raise Undecided(f"an invalid access by the {role} at "
                            f"{shape_text(own.shape_at(hit))} did not fault")
        raise InternalError(f"an invalid access by the {role} at "
                            f"{shape_text(own.shape_at(hit))} did not fault on the emulator "
                            f"(keq bug)")
    if not rest:
        return None
    ob = Obligation(z3.And(*ex.constraints, z3.Or(rest)), f"{role} stays inside its buffers")
    r = run.solve(ob)
    if r.answer == "sat":
        model = r.model or {}
        scalars, inputs = model_inputs(run, ex.env, lambda v: int(model.get(str(v), 0)),
                                       ex.variables, ex.seed)
        verdict = replay_fault(run, role, scalars, ex.seed, inputs)
        if verdict is not None:
            return verdict
        if m.indexed:       # the model may read an indexed buffer's array freely
            raise Undecided(f"a solver model of an invalid access by the {role} did "
                            f"not fault on the emulator at {shape_text(scalars)}")
        raise InternalError(f"a solver model of an invalid access by the {role} did not "
                            f"fault on the emulator (keq bug): {shape_text(scalars)}")
    if r.answer != "unsat":
        return run.inconclusive(f"bounds of the {role}: no solver answered "
                                f"({r.answer}: {r.detail or r.solver})")
    return None


def _indexed_accesses(run: Run, ex: Execution, m: Maximal) -> tuple[Verdict | None, float]:
    """The logged accesses of the indexed buffers stay inside them at every shape. Fills in
    each kernel's view of the buffers (`m.infos`, `m.logs`) for the outputs stage, and the
    replayed write logs (`m.replayed`) when a worker decided the bounds meanwhile."""
    spec = run.spec
    for r in ("reference", "candidate") if m.apart else ("reference",):
        m.infos[r] = indexable(buffer_info, spec, ex.values,
                               lambda p: p.length.to_z3(m.env64), m.feass[r].values)
    if not m.apart:
        m.infos["candidate"] = m.infos["reference"]
    m.logs = {r: launch.indexed for r, launch in ex.launches.items()}
    replay_s = 0.0
    if not m.apart and run.jobs > 1:
        first, replay_s = _first_outside_while_replaying(run, ex, m)
    else:
        first = {role: first_outside(m.feass[role].values, m.infos[role], launch.indexed,
                                     run.jobs)
                 for role, launch in ex.launches.items()}
    for role, launch in ex.launches.items():
        hit = indexable(violation_of, m.feass[role].values, m.infos[role], launch.indexed,
                        first[role])
        if hit is not None:
            at = dict(ex.env, **m.feass[role].shape_at(hit[0]))
            verdict = replay_fault(run, role, at, ex.seed)
            if verdict is not None:
                return verdict, replay_s
            raise Undecided(f"{hit[1].what} may access '{hit[1].buffer}' out of "
                            f"bounds at {shape_text(at)}, yet the emulator does not fault")
    return None, replay_s


def _first_outside_while_replaying(run: Run, ex: Execution,
                                   m: Maximal) -> tuple[dict, float]:
    """With two processes or more, a worker decides the bounds of the logged accesses while
    this one replays the write logs (`indexed.replay_logs`: numpy over terms that already
    exist), then joins it (`FirstFailureBeside`). What the replay raises is kept, and raised
    where the comparison meets it, only once the bounds passed: the sequential order."""
    spec = run.spec
    widths = {p.name: type_bits(p.type) for p in spec.buffers}
    initial = {p.name: m.infos["reference"][p.name].ids for p in spec.buffers
               if p.access == "out"}
    # Both kernels' accesses in one order (the reference's first): the first outside is the
    # reference's first, else the candidate's.
    roles = [(role, i) for role, launch in ex.launches.items()
             for i in range(len(launch.indexed))]
    with FirstFailureBeside(len(roles), lambda j: inside_at(
            m.feass[roles[j][0]].values, m.infos[roles[j][0]],
            ex.launches[roles[j][0]].indexed[roles[j][1]]), run.jobs) as outside:
        t1 = time.perf_counter()
        m.replayed = list(replay_logs(m.feas.values, m.infos["reference"], widths, initial,
                                      m.logs, m.feas.per_shape, keep_errors=True))
        replay_s = time.perf_counter() - t1
        j = outside.result()
    first = {role: None for role in ex.launches}
    if j is not None:
        first[roles[j][0]] = roles[j][1]
    return first, replay_s


__all__ = ["Bounds"]
