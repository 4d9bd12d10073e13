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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import z3

from semantics.errors import KeqError, UnsupportedError
from semantics.machine import MemoryFault
from semantics.machine.executor import ExecutionError, UnrollLimit
from semantics.machine.kernel import PreparedKernel
from semantics.machine.symbolic_run import SymBuffer, SymbolicLaunch, run_symbolic
from verifier.emulate import prepare_side, run_side
from verifier.real_mode import NotReal, RealTranslator
from verifier.solvers import DEFAULT_SOLVERS, Cache, Obligation, solve
from verifier.spec import (PairSpec, ParamSpec, draw_scalars, int_bounds, make_inputs,
                           type_bits)

EQUIVALENT, NOT_EQUIVALENT, INCONCLUSIVE = "equivalent", "not-equivalent", "inconclusive"


class InternalError(KeqError):
    """keq contradicted itself (e.g. a solver model that does not replay): a keq bug."""


@dataclass(frozen=True)
class Stage:
    name: str
    status: str          # ok | failed | inconclusive | skipped
    seconds: float
    detail: str = ""


@dataclass(frozen=True)
class Counterexample:
    scalars: dict[str, int]
    inputs: dict[str, Any]                     # every param by spec name (replayable)
    reference: dict[str, Any]                  # final out/inout contents
    candidate: dict[str, Any]
    differences: tuple[tuple[str, int, int, int], ...]   # (param, index, ref bits, cand bits)
    note: str = ""
    depends_on: tuple[str, ...] = ()           # the inputs the differing element depends on


@dataclass(frozen=True)
class Verdict:
    kind: str
    claim: str
    reasons: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    stages: tuple[Stage, ...] = ()
    assignments: int = 0
    counterexample: Counterexample | None = None
    seconds: float = 0.0
    # Every obligation sent to a solver (canonical SMT-LIB2 hash, solver, answer), in order:
    # the evidence a certificate records (verifier.certs).
    obligations: tuple = ()


@dataclass
class _Ctx:
    spec: PairSpec
    timeout_s: float
    unroll: int
    prepared: dict[str, PreparedKernel] = field(default_factory=dict)
    stages: list[Stage] = field(default_factory=list)
    assumptions: set[str] = field(default_factory=set)
    witness: tuple | None = None          # the differing pair of terms the solver split
    solvers: tuple[str, ...] = DEFAULT_SOLVERS
    dump_dir: str | None = None
    cache: Cache = field(default_factory=Cache)
    obligations: list = field(default_factory=list)   # every SolveResult, for certificates
    trials: int = 8


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


def _domain(p: ParamSpec) -> list[int] | None:
    if p.values is not None:
        return list(p.values)
    if p.range is not None:
        return list(range(p.range[0], p.range[1] + 1))
    return None


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


def _outputs(spec: PairSpec, side_name: str, launch: SymbolicLaunch, ctx: _Ctx) -> dict:
    side = spec.side(side_name)
    k = ctx.prepared[side_name]
    out = {}
    for name, kp in zip(side.arg_names, k.fn.params):
        if kp.name in launch.buffers:
            out[name] = launch.buffers[kp.name]
    return out


def _same(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, int) or isinstance(b, int):
        return False
    return a.eq(b)


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
                diffs.append((p, i, a, b))
    if not diffs:
        ctx.stages.append(Stage("outputs", "ok", time.perf_counter() - t0,
                                "identical terms, no solver needed"))
        return None
    # Testing before solving: a difference that random inputs show is found in milliseconds
    # (it is concrete, so it needs no further replay); only the rest goes to a solver.
    if ctx.trials > 0 and spec.mode == "bitexact":
        t1 = time.perf_counter()
        tested = _test_for_difference(ctx, env, seed, trials=ctx.trials,
                                      terms={(p.name, i): (a, b) for p, i, a, b in diffs})
        ctx.stages.append(Stage("random testing", "failed" if tested else "ok",
                                time.perf_counter() - t1, f"{ctx.trials} random input set(s)"))
        if tested is not None:
            return tested
    if spec.mode == "real":
        float_diffs = [d for d in diffs if d[0].is_float]
        diffs = [d for d in diffs if not d[0].is_float]     # integers stay exact
        if float_diffs:
            verdict = _real_outputs(ctx, env, float_diffs, constraints, variables, seed, t0)
            if verdict is not None:
                return verdict
        if not diffs:
            return None
    # One element at a time, cheapest first: a difference usually shows in the first element
    # tried, and small queries keep FP obligations within reach of the solvers.
    unknown = []
    found = None
    ordered = sorted(diffs, key=lambda d: _size(d[2]) + _size(d[3]))
    if len(ordered) > 1 and not any(p.is_float for p, _, _, _ in ordered):
        # Integer outputs: all elements in one query first, so a proof of many equal
        # elements (a scan's 512 partial sums) costs one solver call instead of 512. Kept
        # short: when it does not answer, the per-element queries below take over. (A
        # disjunction of floating-point differences is much harder than its parts.)
        diseqs = [_bv(a, type_bits(p.type)) != _bv(b, type_bits(p.type))
                  for p, _, a, b in ordered]
        ob = Obligation(z3.And(*constraints, z3.Or(diseqs)), f"{len(ordered)} elements differ")
        r = solve(ob, solvers=ctx.solvers, timeout_s=min(ctx.timeout_s, 10.0), cache=ctx.cache,
                  dump_dir=ctx.dump_dir)
        ctx.obligations.append(r)
        if r.answer == "unsat":
            ordered = []
        elif r.answer == "sat":
            ordered = [_first_true(ordered, r.model or {}, variables)] + ordered
    for p, i, a, b in ordered:
        w = type_bits(p.type)
        ob = Obligation(z3.And(*constraints, _bv(a, w) != _bv(b, w)), f"{p.name}[{i}] differs")
        r = solve(ob, solvers=ctx.solvers, timeout_s=ctx.timeout_s, cache=ctx.cache,
                  dump_dir=ctx.dump_dir)
        ctx.obligations.append(r)
        if r.answer == "sat":
            ctx.witness = (a, b)
            found = r
            break
        if r.answer != "unsat":
            unknown.append(f"{p.name}[{i}]: {r.answer} ({r.detail or r.solver})")
    ctx.stages.append(Stage("outputs", "sat" if found else ("unknown" if unknown else "unsat"),
                            time.perf_counter() - t0,
                            f"{len(diffs)} element(s) to the solvers "
                            f"({', '.join(ctx.solvers)})"))
    if found is None:
        if unknown:
            return _inconclusive(ctx, f"no solver answered on {len(unknown)} output "
                                      f"element(s) at {_env(env)} (first: {unknown[0]})")
        return None
    model = found.model or {}
    needed = _variables(ctx.witness)
    missing = sorted(n for n in needed if n in variables and n not in model)
    if missing:
        raise InternalError(f"{found.solver} returned a model without {', '.join(missing[:3])}")
    return _model_counterexample(ctx, env, lambda v: int(model.get(str(v), 0)), variables,
                                 seed)


def _real_outputs(ctx, env, diffs, constraints, variables, seed, t0) -> Verdict | None:
    """Mode real: the outputs must be equal as real functions of the inputs (module doc of
    `verifier.real_mode`). A difference is replayed with small integer inputs, on which the
    float arithmetic of both kernels is exact, so the emulator shows the same difference."""
    tr = RealTranslator()
    try:
        pairs = [(tr.value(a, type_bits(p.type)), tr.value(b, type_bits(p.type)))
                 for p, _, a, b in diffs]
    except NotReal as e:
        return _inconclusive(ctx, f"mode 'real': {e} has no real-arithmetic reading")
    s = z3.Solver()
    s.set("timeout", int(ctx.timeout_s * 1000))
    s.add(z3.Or([ra != rb for ra, rb in pairs]))
    answer = s.check()
    ctx.stages.append(Stage("outputs (real)", str(answer), time.perf_counter() - t0,
                            f"{len(pairs)} element(s) as real arithmetic"))
    if answer == z3.unsat:
        ctx.assumptions.add("mode real: the results are equal as real numbers, so the kernels "
                            "agree modulo rounding, for finite values (no NaN or infinity)")
        return None
    if answer == z3.unknown:
        return _inconclusive(ctx, f"solver (real arithmetic): {s.reason_unknown()}")
    for v in tr.variables.values():
        s.add(z3.IsInt(v), v >= -8, v <= 8)
    if s.check() != z3.sat:
        return _inconclusive(ctx, "mode 'real': the kernels differ as real functions, but no "
                                  "small integer inputs show it (no replayable counterexample)")
    model = s.model()

    def value_of(var) -> int:
        real = tr.variables.get(str(var))
        if real is None:
            return 0
        x = model.eval(real, True)
        f = float(x.as_fraction()) if z3.is_rational_value(x) else 0.0
        return _bits_of_float(f, var.size())

    return _model_counterexample(ctx, env, value_of, variables, seed)


def _bits_of_float(f: float, width: int) -> int:
    if width == 32:
        return int(np.array([f], np.float32).view(np.uint32)[0])
    if width == 64:
        return int(np.array([f], np.float64).view(np.uint64)[0])
    return int(np.array([f], np.float16).view(np.uint16)[0])


def _first_true(diffs, model: dict, variables: dict):
    """The element whose difference the model makes true (the witness to show)."""
    subst = [(var, z3.BitVecVal(int(model[name]), var.size()))
             for name, (_, _, var) in variables.items() if name in model]
    for d in diffs:
        p, _, a, b = d
        w = type_bits(p.type)
        t = z3.simplify(z3.substitute(_bv(a, w) != _bv(b, w), *subst)) if subst else None
        if t is not None and z3.is_true(t):
            return d
    return diffs[0]


def _variables(terms) -> set[str]:
    """Names of the uninterpreted constants in terms (a DAG walk: z3util.get_vars walks the
    tree and is exponential on the shared sums of a reduction)."""
    seen: set[int] = set()
    out: set[str] = set()
    stack = [t for t in terms if not isinstance(t, int)]
    while stack:
        t = stack.pop()
        tid = t.get_id()
        if tid in seen:
            continue
        seen.add(tid)
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(str(t))
        else:
            stack.extend(t.children())
    return out


def _size(t) -> int:
    return 0 if isinstance(t, int) else t.num_args() + len(str(t.decl()))


def _bv(x, w: int):
    return z3.BitVecVal(x, w) if isinstance(x, int) else x


def _env(env: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(env.items())) or "the only launch shape"


def _inconclusive(ctx: _Ctx, reason: str) -> Verdict:
    return Verdict(INCONCLUSIVE, "", (reason,))


# -- counterexamples ---------------------------------------------------------------------------

def _replay(ctx: _Ctx, env: dict, inputs: dict, *, races: bool = False):
    spec = ctx.spec
    out = {}
    for role in ("reference", "candidate"):
        final, result = run_side(spec.side(role), inputs, env, detect_races=races)
        out[role] = (final, result)
    return out


def _differences(spec: PairSpec, ref: dict, cand: dict):
    diffs = []
    for p in spec.params:
        if not p.is_buffer or p.access not in ("out", "inout"):
            continue
        a = np.ascontiguousarray(ref[p.name]).view(f"u{p.dtype.itemsize}").reshape(-1)
        b = np.ascontiguousarray(cand[p.name]).view(f"u{p.dtype.itemsize}").reshape(-1)
        for i in np.nonzero(a != b)[0][:16].tolist():
            diffs.append((p.name, i, int(a[i]), int(b[i])))
    return tuple(diffs)


def _model_counterexample(ctx, env, value_of, variables, seed) -> Verdict:
    """`value_of(variable) -> bit pattern` reads the solver's model."""
    spec = ctx.spec
    rng = np.random.default_rng(seed)
    scalars = dict(env)
    for name, (pname, idx, v) in variables.items():
        if idx is None:
            scalars[pname] = _from_bits(spec.param(pname), value_of(v))
    inputs = make_inputs(spec, scalars, rng)
    for name, (pname, idx, v) in variables.items():
        if idx is not None:
            arr = inputs[pname]
            raw = arr.view(f"u{arr.dtype.itemsize}")
            raw[idx] = value_of(v)
    inputs.update({k: v for k, v in scalars.items()})
    rep = _replay(ctx, scalars, {k: (v.copy() if isinstance(v, np.ndarray) else v)
                                 for k, v in inputs.items()})
    ref, cand = rep["reference"][0], rep["candidate"][0]
    diffs = _differences(spec, ref, cand)
    if not diffs:
        if ctx.assumptions:
            return _inconclusive(ctx, "the solver found inputs on which the kernels may differ "
                                      "only through approximate functions; the emulator's "
                                      "approximations do not show a difference")
        raise InternalError("a solver model did not reproduce on the emulator (keq bug): "
                            f"{_env(scalars)}")
    depends = []
    if ctx.witness is not None:
        depends = sorted(_variables(ctx.witness), key=lambda n: (n.split("[")[0], len(n), n))
    cex = Counterexample(scalars, inputs, _outs(spec, ref), _outs(spec, cand), diffs,
                         depends_on=tuple(depends))
    return Verdict(NOT_EQUIVALENT, "", (f"{len(diffs)}+ output element(s) differ",),
                   counterexample=cex)


def _outs(spec: PairSpec, vals: dict) -> dict:
    return {p.name: vals[p.name] for p in spec.params
            if p.is_buffer and p.access in ("out", "inout")}


def _from_bits(p: ParamSpec, bits: int):
    if p.is_float:
        return np.array([bits], dtype=f"u{type_bits(p.type) // 8}").view(p.dtype)[0].item()
    lo, hi = int_bounds(p.type)
    w = type_bits(p.type)
    return bits - (1 << w) if lo < 0 and bits >= 1 << (w - 1) else bits


def _concrete_inputs(ctx, env: dict, seed: int, *,
                     random_scalars: bool = False) -> tuple[dict, dict]:
    """Replay inputs for a launch shape: random buffer contents, and the free scalars at their
    least allowed value (for replays whose behaviour does not depend on them) or, with
    `random_scalars`, drawn within their ranges."""
    rng = np.random.default_rng(seed)
    scalars = dict(env)
    for p in ctx.spec.scalars:
        if p.name not in scalars:
            dom = _domain(p)
            if random_scalars:
                scalars[p.name] = draw_scalars(ctx.spec, rng, fixed=scalars)[p.name]
            else:
                scalars[p.name] = dom[0] if dom else 0
    inputs = make_inputs(ctx.spec, scalars, rng)
    inputs.update(scalars)
    return scalars, inputs


def _test_for_difference(ctx, env: dict, seed: int, trials: int,
                         terms: dict | None = None) -> Verdict | None:
    """Run both kernels on random inputs of this launch shape; a bit difference (bitexact) is
    a counterexample as it stands. In real mode only differences the real check would also
    see count, so testing is skipped there."""
    if ctx.spec.mode == "real":
        return None
    for k in range(trials):
        scalars, inputs = _concrete_inputs(ctx, env, seed + 1 + k, random_scalars=True)
        rep = _replay(ctx, scalars, {n: (v.copy() if isinstance(v, np.ndarray) else v)
                                     for n, v in inputs.items()})
        ref, cand = rep["reference"][0], rep["candidate"][0]
        diffs = _differences(ctx.spec, ref, cand)
        if diffs:
            approx = [e for role in rep.values() for e in role[1].effects
                      if e.kind == "approximation"]
            if approx:
                continue          # the host's approximations are not the GPU's
            # The inputs that matter: those the first differing element's terms mention.
            pair = (terms or {}).get(diffs[0][:2], ())
            depends = sorted(_variables(pair), key=lambda n: (n.split("[")[0], len(n), n))
            cex = Counterexample(scalars, inputs, _outs(ctx.spec, ref), _outs(ctx.spec, cand),
                                 diffs, note="found by random testing before solving",
                                 depends_on=tuple(depends))
            return Verdict(NOT_EQUIVALENT, "", (f"{len(diffs)}+ output element(s) differ",),
                           counterexample=cex)
    return None


def _fault_counterexample(ctx, env, error, seed) -> Verdict:
    scalars, inputs = _concrete_inputs(ctx, env, seed)
    try:
        _replay(ctx, scalars, inputs)
    except (MemoryFault, ExecutionError) as e:
        cex = Counterexample(scalars, inputs, {}, {}, (), note=e.render())
        return Verdict(NOT_EQUIVALENT, "", (f"the candidate faults: {e}",), counterexample=cex)
    raise InternalError(f"the candidate faulted symbolically but not on replay: {error}")


def _race_check(ctx, env, seed) -> Verdict | None:
    scalars, inputs = _concrete_inputs(ctx, env, seed)
    for role in ("reference", "candidate"):
        _, result = run_side(ctx.spec.side(role), inputs, scalars, detect_races=True)
        races = [e for e in result.effects if e.kind == "race"]
        if races:
            if role == "reference":
                raise KeqError(f"the reference kernel has a data race at {_env(env)}: "
                               f"{races[0].what}")
            cex = Counterexample(scalars, inputs, {}, {}, (), note=races[0].what)
            return Verdict(NOT_EQUIVALENT, "", (f"the candidate has a data race: "
                                                f"{races[0].what}",), counterexample=cex)
    return None


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
