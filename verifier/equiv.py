"""Equivalence checking of a kernel pair (DESIGN.md, "Verdicts"): the staged check behind
`keq verify`.

How the claim is covered (and what is not yet):
- Integer scalars that shape the launch (they appear in a grid, block, length or `assume`
  expression) are *enumerated*: every allowed value combination is checked, up to
  `max_assignments`; beyond that the verdict is Inconclusive, naming the count. The other
  scalars (floats, and integers only the kernel reads) stay *symbolic*, constrained to their
  declared ranges, so one check covers all their values.
- Buffer contents are symbolic: the same fresh bit-vector per element for both kernels
  (in/inout contents and the initial contents of out buffers), so every bit pattern is covered.
Per assignment the stages are (Alive2 style, each with its own message):
  1. bounds: both kernels run on the symbolic domain; an access outside every buffer or
     misaligned is a memory fault (in the reference: an error about the spec; in the candidate:
     not equivalent). A data-dependent address is refused by name (Inconclusive).
  2. races: when no branch depends on data, the set of accesses is the same for every input, so
     one emulator run with the race detector decides race freedom for the assignment;
     otherwise Inconclusive.
  3. effects: undefined behaviour, uninitialized shared reads and nondeterminism make the
     verdict Inconclusive; approximate functions (uninterpreted) become a stated assumption.
  4. outputs: every out/inout element must be equal: identical terms need no solver, the rest
     go to z3 in one query. A model becomes concrete inputs, both kernels are replayed on the
     emulator, and only a reproduced difference is reported; a model that does not reproduce
     is an internal error (or Inconclusive when approximations are involved).
`mode = "real"` is proved only when the outputs are bit-identical terms (which implies equality
as reals); otherwise Inconclusive: the real-arithmetic encoding is not built yet.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import z3

from semantics.errors import KeqError, UnsupportedError
from semantics.machine import MemoryFault
from semantics.machine.executor import ExecutionError, UnrollLimit
from semantics.machine.symbolic_run import SymBuffer, SymbolicLaunch, run_symbolic
from verifier.counterexample import (_domain, _env, _fault_counterexample, _inconclusive,
                                     _race_check)
from verifier.emulate import prepare_side
from verifier.outputs import _outputs, _same, compare_outputs
from verifier.solvers import DEFAULT_SOLVERS
from verifier.spec import PairSpec, int_bounds, type_bits
from verifier.verdict import (EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, Counterexample,
                              InternalError, Stage, Verdict, _Ctx)

__all__ = ["EQUIVALENT", "INCONCLUSIVE", "NOT_EQUIVALENT", "Counterexample", "InternalError",
           "Stage", "Verdict", "verify", "claim_text", "assignments"]


def _launch_scalars(spec: PairSpec) -> set[str]:
    names: set[str] = set()
    for side in (spec.reference, spec.candidate):
        for e in (*side.grid, *side.block):
            names |= e.names
    for p in spec.params:
        if p.length is not None:
            names |= p.length.names
    for a in spec.assume:
        names |= a.names
    return names


def assignments(spec: PairSpec, fixed: dict[str, int], limit: int) -> tuple[list[dict], str]:
    """Every allowed combination of the enumerated scalars, or ([], why) if too many."""
    shaping = _launch_scalars(spec)
    axes: list[tuple[str, list[int]]] = []
    for p in spec.scalars:
        if p.name in fixed:
            axes.append((p.name, [fixed[p.name]]))
        elif p.name in shaping:
            dom = _domain(p)
            if dom is None:
                lo, hi = int_bounds(p.type)
                return [], (f"scalar '{p.name}' shapes the launch and has no range: "
                            f"{hi - lo + 1} values")
            axes.append((p.name, dom))
    total = 1
    for _, dom in axes:
        total *= len(dom)
    if total > 50 * limit:
        return [], (f"the claim covers {total} launch shapes ({' x '.join(f'{n}: {len(d)}' for n, d in axes)}); "
                    f"keq enumerates at most {limit} (fix scalars with --set, or raise "
                    f"--max-shapes); symbolic launch shapes are not supported yet")
    out = []
    for combo in itertools.product(*[d for _, d in axes]):
        env = dict(zip([n for n, _ in axes], combo))
        if spec.check_assumptions(env):
            out.append(env)
    if len(out) > limit:
        return [], (f"the claim covers {len(out)} launch shapes; keq enumerates at most "
                    f"{limit} (fix scalars with --set, or raise --max-shapes)")
    return out, ""


# -- one assignment ---------------------------------------------------------------------------

def _symbolic_inputs(spec: PairSpec, env: dict[str, int]):
    """Shared symbolic inputs: one fresh variable per buffer element and per free scalar."""
    values: dict[str, Any] = {}
    constraints: list = []
    variables: dict[str, tuple[str, int | None, Any]] = {}
    for p in spec.params:
        bits = type_bits(p.type)
        if p.is_buffer:
            n = p.length_of(env)
            elems = []
            for i in range(n):
                v = z3.BitVec(f"{p.name}[{i}]", bits)
                variables[str(v)] = (p.name, i, v)
                elems.append(v)
            values[p.name] = SymBuffer(bits, tuple(elems))
        elif p.name in env:
            values[p.name] = env[p.name]
        else:
            v = z3.BitVec(p.name, bits)
            variables[p.name] = (p.name, None, v)
            values[p.name] = v
            dom = _domain(p)
            if dom is not None and not p.is_float:
                signed = p.type.startswith("s")
                lo, hi = min(dom), max(dom)
                le = (lambda a, b: a <= b) if signed else z3.ULE
                constraints.append(z3.And(le(z3.BitVecVal(lo, bits), v),
                                          le(v, z3.BitVecVal(hi, bits))))
                if p.values is not None:
                    constraints.append(z3.Or([v == x for x in p.values]))
    return values, constraints, variables


def _run_side_symbolic(ctx: _Ctx, role: str, values: dict, env: dict) -> SymbolicLaunch:
    side = ctx.spec.side(role)
    k = ctx.prepared.get(role)
    if k is None:
        k = ctx.prepared[role] = prepare_side(side)
    grid, block = side.launch(env)
    return run_symbolic(k, grid, block, side.kernel_args(values),
                        dynamic_shared=side.dynamic_shared, unroll=ctx.unroll)


def check_assignment(ctx: _Ctx, env: dict[str, int], seed: int) -> Verdict | None:
    """None when the assignment is proved; else the verdict it forces."""
    spec = ctx.spec
    values, constraints, variables = _symbolic_inputs(spec, env)
    t0 = time.perf_counter()
    launches = {}
    for role in ("reference", "candidate"):
        try:
            launches[role] = _run_side_symbolic(ctx, role, values, env)
        except MemoryFault as e:
            if role == "reference":
                raise KeqError(f"the reference kernel faults at {_env(env)}: {e.render()}")
            return _fault_counterexample(ctx, env, e, seed)
        except ExecutionError as e:
            if role == "reference":
                raise KeqError(f"the reference kernel fails at {_env(env)}: {e.render()}")
            return _fault_counterexample(ctx, env, e, seed)
        except (UnsupportedError, UnrollLimit) as e:
            return _inconclusive(ctx, f"{role} at {_env(env)}: {e}")
    ctx.stages.append(Stage("symbolic execution", "ok", time.perf_counter() - t0, _env(env)))
    for role, launch in launches.items():
        for e in launch.effects:
            if e.kind == "approximation":
                ctx.assumptions.add(f"{e.what} is the same function in both kernels "
                                    f"(uninterpreted; {e.loc})")
            else:
                return _inconclusive(ctx, f"{role}: {e.kind}: {e.what} at {e.loc}")
    # races
    t0 = time.perf_counter()
    if any(launch.symbolic_control for launch in launches.values()):
        return _inconclusive(ctx, f"control flow depends on input data at {_env(env)}: race "
                                  f"freedom is not established for every input")
    race = _race_check(ctx, env, seed)
    ctx.stages.append(Stage("races", "ok" if race is None else "failed",
                            time.perf_counter() - t0, _env(env)))
    if race is not None:
        return race
    # outputs
    t0 = time.perf_counter()
    ref = _outputs(spec, "reference", launches["reference"], ctx)
    cand = _outputs(spec, "candidate", launches["candidate"], ctx)
    diffs = []
    for p in spec.params:
        if not p.is_buffer or p.access not in ("out", "inout"):
            continue
        for i, (a, b) in enumerate(zip(ref[p.name], cand[p.name])):
            if not _same(a, b):
                diffs.append((p, i, a, b, True))
    return compare_outputs(ctx, env, diffs, constraints, variables, seed, t0)


# -- counterexamples ---------------------------------------------------------------------------


# -- the whole claim -----------------------------------------------------------------------------

def claim_text(spec: PairSpec, fixed: dict[str, int]) -> str:
    parts = []
    for p in spec.scalars:
        if p.name in fixed:
            parts.append(f"{p.name}={fixed[p.name]}")
        elif p.values is not None:
            parts.append(f"{p.name} in {list(p.values)}")
        elif p.range is not None:
            parts.append(f"{p.range[0]} <= {p.name} <= {p.range[1]}")
        else:
            parts.append(f"every {p.type} {p.name}")
    assume = "".join(f", assuming {a.text}" for a in spec.assume)
    return (f"{spec.name}: {spec.candidate.kernel} == {spec.reference.kernel} ({spec.mode}) "
            f"for {', '.join(parts) or 'the launch'}{assume}, every input")


def verify(spec: PairSpec, *, fixed: dict[str, int] | None = None, timeout_s: float = 60.0,
           unroll: int = 64, max_shapes: int = 16, seed: int = 0, progress=None,
           solvers: tuple[str, ...] = DEFAULT_SOLVERS, dump_smt: str | None = None,
           trials: int = 8) -> Verdict:
    fixed = dict(fixed or {})
    start = time.perf_counter()
    ctx = _Ctx(spec, timeout_s, unroll, solvers=tuple(solvers), dump_dir=dump_smt,
               trials=trials)
    claim = claim_text(spec, fixed)
    shapes, why = assignments(spec, fixed, max_shapes)
    if not shapes:
        reason = why or "no launch shape satisfies the ranges and `assume`"
        return Verdict(INCONCLUSIVE, claim, (reason,), seconds=time.perf_counter() - start)
    for n, env in enumerate(shapes):
        if progress:
            progress(n, len(shapes), env)
        v = check_assignment(ctx, env, seed)
        if v is not None:
            return Verdict(v.kind, claim, v.reasons, tuple(sorted(ctx.assumptions)),
                           tuple(ctx.stages), n + 1, v.counterexample,
                           time.perf_counter() - start, tuple(ctx.obligations))
    return Verdict(EQUIVALENT, claim, (), tuple(sorted(ctx.assumptions)), tuple(ctx.stages),
                   len(shapes), None, time.perf_counter() - start, tuple(ctx.obligations))
