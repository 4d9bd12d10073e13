"""The symbolic execution stage: both kernels run on the symbolic domain.

At one launch shape the executor addresses memory concretely, so an access outside every
buffer faults here (in the reference: an error about the spec; in the candidate: a replayed
counterexample). Over a maximal launch (`ex.maximal`) CTAs exist under shape conditions,
accesses past a symbolic length become obligations for the bounds stage, and a launch whose
addresses take too many values runs again with its in/out buffers indexed.
"""

from __future__ import annotations

import time
import z3

from semantics.errors import KeqError, ShapeMachineryNeeded, UnsupportedError
from semantics.machine import MemoryFault
from semantics.machine.executor import ExecutionError, UnrollLimit
from semantics.machine.symbolic_port import AddressBudget, LaunchShape
from semantics.machine.symbolic_run import SymbolicLaunch, run_symbolic
from verifier.counterexample import fault_counterexample, replay_fault, shape_text
from verifier.indexed import NotIndexable, indexed_params, size_check
from verifier.launches import run_launches
from verifier.run import Run
from verifier.spec import type_bits
from verifier.stages.base import Execution, Maximal, Next, Undecided, below
from verifier.symbolic_cta import CtaAxes, existence
from verifier.termination import never_ends
from verifier.verdict import StageStatus, Verdict

ROLES = ("reference", "candidate")


class Execute:
    name = "symbolic execution"

    def check(self, run: Run, ex: Execution) -> Verdict | None:
        if ex.maximal is None:
            return _at_one_shape(run, ex)
        return _over_the_maximal_launch(run, ex, ex.maximal)


def _at_one_shape(run: Run, ex: Execution) -> Verdict | None:
    t0 = time.perf_counter()
    at = shape_text(ex.env)
    for role in ROLES:
        try:
            ex.launches[role] = _launch_at(run, role, ex)
        except MemoryFault as e:
            if role == "reference":
                raise KeqError(f"the reference kernel faults at {at}: {e.render()}")
            return fault_counterexample(run, ex.env, e, ex.seed)
        except ExecutionError as e:
            if role == "reference":
                raise KeqError(f"the reference kernel fails at {at}: {e.render()}")
            return fault_counterexample(run, ex.env, e, ex.seed)
        except ShapeMachineryNeeded as e:
            raise Undecided(f"{role} at {at}: {e}", Next.LOGGED) from None
        except UnsupportedError as e:
            raise Undecided(f"{role} at {at}: {e}", Next.TESTING) from None
        except UnrollLimit as e:
            ended = never_ends(run, role, e, ex.constraints, ex.variables, ex.env, ex.seed)
            if ended is not None:
                return ended
            raise Undecided(f"{role} at {at}: {e}", Next.TESTING) from None
    run.stage("symbolic execution", StageStatus.OK, t0, at)
    return None


def _launch_at(run: Run, role: str, ex: Execution) -> SymbolicLaunch:
    side = run.spec.side(role)
    if side.then:
        return run_launches(run, role, ex.env, ex.values)
    k = run.kernel(role)
    grid, block = side.launch(ex.env)
    return run_symbolic(k, grid, block, side.kernel_args(ex.values),
                        dynamic_shared=side.dynamic_shared, unroll=run.unroll,
                        choices=run.choices, tag=role,
                        read_only=side.read_only_params(k.fn.params),
                        views=side.views_at(ex.env) if side.views else None)


def _over_the_maximal_launch(run: Run, ex: Execution, m: Maximal) -> Verdict | None:
    spec, sp = run.spec, m.plan
    t0 = time.perf_counter()
    if m.indexed:
        indexable(size_check, spec, sp.count, sp.lengths)
        m.what += "; in/out buffers indexed (their lengths mention two shape scalars)"
    while len(ex.launches) < 2:
        role = ROLES[len(ex.launches)]
        try:
            ex.launches[role] = _maximal_launch(run, ex, m, role)
        except (MemoryFault, ExecutionError) as e:
            # On lanes that run for every shape: any shape shows it; the largest has them all.
            verdict = replay_fault(run, role, dict(ex.env, **sp.shapes[-1]), ex.seed)
            if verdict is not None:
                return verdict
            raise Undecided(f"{role}: {e}") from None
        except AddressBudget as e:
            if m.indexed or not any(p.is_buffer and p.access in ("in", "out")
                                    for p in spec.params):
                raise Undecided(f"{role}: {e}") from None
            # Both kernels again, their in and out buffers indexed (one representation).
            indexable(size_check, spec, sp.count, sp.lengths)
            m.indexed = True
            ex.launches.clear()
            m.what += f"; in/out buffers indexed ({role}: {e.message})"
        except UnrollLimit as e:
            ended = never_ends(run, role, e, ex.constraints, ex.variables, ex.env, ex.seed)
            if ended is not None:
                return ended
            raise Undecided(f"{role}: {e}") from None
        except UnsupportedError as e:
            raise Undecided(f"{role}: {e}") from None
    run.stage("symbolic execution", StageStatus.OK, t0, m.what)
    return None


def indexable(check, *args):
    """`check(*args)` of `verifier.indexed`; what cannot be indexed is undecided here."""
    try:
        return check(*args)
    except NotIndexable as e:
        raise Undecided(f"indexed buffers: {e}") from None


def _existence(m: Maximal, role: str, terms: list, values: dict) -> tuple[tuple, list, dict]:
    """The maximal grid of `role`, the condition under which each of its CTAs exists (True
    where certain), and the special registers the shape scalars give."""
    feas = m.feass[role]
    gmax = m.plan.grids[role]
    cta: CtaAxes | None = m.ctas[role] if m.ctas else None
    if cta is not None:
        # one CTA, its %ctaid the shape scalars of `cta` (`verifier.symbolic_cta`)
        cond, special = existence(cta, values, terms)
        exists = [True if cond is True or (cond is not False and feas.certain(cond)) else cond]
        return (1, 1, 1), exists, special
    exists = []
    for z in range(gmax[2]):
        for y in range(gmax[1]):
            for x in range(gmax[0]):
                parts = [c for c in (below(x, terms[0]), below(y, terms[1]), below(z, terms[2]))
                         if c is not True]
                if any(c is False for c in parts):
                    exists.append(False)
                    continue
                cond = z3.And(parts) if parts else True
                exists.append(True if cond is True or feas.certain(cond) else cond)
    special = {f"%nctaid.{a}": z3.Extract(31, 0, t) for a, t in zip("xyz", terms)
               if not isinstance(t, int)}
    return gmax, exists, special


def _maximal_launch(run: Run, ex: Execution, m: Maximal, role: str) -> SymbolicLaunch:
    spec = run.spec
    side = spec.side(role)
    k = run.kernel(role)
    feas = m.feass[role]
    terms = [e.to_z3(m.env64) for e in side.grid] + [1] * (3 - len(side.grid))
    gmax, exists, special = _existence(m, role, terms, ex.values)
    limits = {}
    for name, kp in zip(side.arg_names, k.fn.params):
        p = spec.param(name)
        if p.is_buffer:
            n = p.length.to_z3(m.env64)
            limits[kp.name] = n * (type_bits(p.type) // 8) if isinstance(n, int) else \
                n * z3.BitVecVal(type_bits(p.type) // 8, 64)
    return run_symbolic(k, gmax, m.plan.blocks[role], side.kernel_args(ex.values),
                        dynamic_shared=side.dynamic_shared, unroll=run.unroll,
                        shape=LaunchShape(tuple(exists), limits), special_terms=special,
                        detect_races=True, prune=feas.prune, resolver=feas.resolve,
                        settle=feas.settle, possible=feas.possible,
                        indexed=indexed_params(spec, role, k.fn.params) if m.indexed else None,
                        choices=run.choices, tag=role,
                        read_only=side.read_only_params(k.fn.params),
                        views=side.views_over(m.env64) if side.views else None)


__all__ = ["Execute", "ROLES", "indexable"]
