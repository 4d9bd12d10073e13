"""Stage 4 of a verification: are the output elements equal? Identical terms need no solver;
random testing before solving; integer outputs in one combined query; floats per element;
mode `real` as real arithmetic. Each difference carries the condition under which its element
exists (True at a fixed shape; `index < length` under a symbolic launch shape)."""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np
import z3

from semantics.choices import CONSTANT_PREFIX, chosen_values
from semantics.domains.nan_wrappers import float_view
from semantics.machine.symbolic_run import SymbolicLaunch
from verifier.abstraction import FloatAbstraction
from verifier.open_functions import defaulted, not_both_nan, open_functions
from verifier.claim import real_scalar_constraints
from verifier.approx_evidence import mentions_approximations
from verifier.counterexample import (shape_text, model_counterexample,
                                     tested_difference, variables_in)
from verifier.real_check import shown_to_differ
from verifier.real_mode import (ASSUMPTION as REAL_ASSUMPTION, NotReal, RealTranslator,
                                unspecified_choices)
from verifier.solvers import Obligation
from verifier.terms import free_constants
from verifier.spec import PairSpec, type_bits
from verifier.run import Run
from verifier.verdict import NOT_EQUIVALENT, InternalError, StageStatus, Verdict

# Small-integer models tried in mode real before a difference of the readings is declared
# not a difference of the true real functions (`_true_difference`).
REAL_MODELS = 4
REAL_SAMPLES = 32    # then random small integer inputs, each checked with the true functions
FACTS_S = 5.0        # the real-arithmetic query that adds max's, min's and 2^x's definitions


def output_terms(spec: PairSpec, side_name: str, launch: SymbolicLaunch, ctx: Run) -> dict:
    side = spec.side(side_name)
    if side.then:
        return dict(launch.buffers)        # (by spec name: `verifier.launches`)
    k = ctx.prepared[side_name]
    out = {}
    for name, kp in zip(side.arg_names, k.fn.params):
        if kp.name in launch.buffers:
            out[name] = launch.buffers[kp.name]
    return out


def same_term(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, int) or isinstance(b, int):
        return False
    return a.eq(b)


def _simplified(t, memo: dict | None = None):
    """`t` simplified, with the NaN wrappers that cannot matter gone (`float_view`; `memo`
    shared across the elements of one comparison)."""
    return t if isinstance(t, int) else concrete_value(z3.simplify(float_view(t, memo)))


def concrete_value(t):
    """A simplified term as an int when it is a constant (the output comparison's form)."""
    if isinstance(t, np.integer):
        return int(t)
    if z3.is_expr(t) and z3.is_bv_value(t):
        return t.as_long()
    return t


def _size(t) -> int:
    return 0 if isinstance(t, int) else t.num_args() + len(str(t.decl()))


def _live(live, cond):
    """`cond` restricted to the shapes where the element exists."""
    return cond if live is True else z3.And(live, cond)


def _bv(x, w: int):
    return z3.BitVecVal(x, w) if isinstance(x, int) else x


def _first_true(diffs, model: dict, variables: dict):
    """The element whose difference the model makes true (the witness to show)."""
    subst = [(var, z3.BitVecVal(int(model[name]), var.size()))
             for name, (_, _, var) in variables.items() if name in model]
    for d in diffs:
        p, _, a, b, live = d
        w = type_bits(p.type)
        t = z3.simplify(z3.substitute(_live(live, _bv(a, w) != _bv(b, w)), *subst)) \
            if subst else None
        if t is not None and z3.is_true(t):
            return d
    return diffs[0]


def _bits_of_float(f: float, width: int) -> int:
    if width == 32:
        return int(np.array([f], np.float32).view(np.uint32)[0])
    if width == 64:
        return int(np.array([f], np.float64).view(np.uint64)[0])
    return int(np.array([f], np.float16).view(np.uint16)[0])


def _real_outputs(ctx, env, diffs, constraints, variables, seed, t0) -> Verdict | None:
    """Mode real: the outputs must be equal as real functions of the inputs (module doc of
    `verifier.real_mode`). A difference is replayed with small integer inputs, on which the
    float arithmetic of both kernels is exact, so the emulator shows the same difference."""
    tr = RealTranslator()
    try:
        pairs = [(tr.value(a, type_bits(p.type)), tr.value(b, type_bits(p.type)), live)
                 for p, _, a, b, live in diffs]
    except NotReal as e:
        return ctx.inconclusive(f"mode 'real': {e} has no real-arithmetic reading")
    mixed = tr.mixed_inputs()
    if mixed:
        return ctx.inconclusive(f"mode 'real': a selection reads the bits of float input "
                                  f"{sorted(mixed)[0]}")
    # Elements whose real readings are the same term are equal as reals: no solver needed
    # (`a*b + c` from an fma and from a mul then an add, with operands in canonical order).
    pairs = [(ra, rb, live) for ra, rb, live in pairs if not same_term(ra, rb)]
    if not pairs:
        ctx.stage("outputs (real)", StageStatus.OK, t0,
                  f"{len(diffs)} element(s): identical real terms, no solver "
                  f"needed")
        ctx.assumptions.add(REAL_ASSUMPTION)
        ctx.assumptions.update(tr.notes)
        return None
    # (a float scalar is a real here: the claim's values/range bound that real too)
    phi = z3.And(*constraints, *real_scalar_constraints(ctx.spec, tr.variables),
                 z3.Or([_live(live, ra != rb) for ra, rb, live in pairs]))
    # Through the portfolio so the obligation is recorded (certificates); real arithmetic is
    # z3's dialect, so z3 alone answers it.
    r = ctx.solve(Obligation(phi, f"{len(pairs)} element(s) differ as reals"), validate=False)
    # What the opaque atoms' definitions say of them (`RealTranslator.facts`): asked second,
    # with a shorter limit (their disjunctions slow large queries down).
    facts = tr.facts([t for ra, rb, _ in pairs for t in (ra, rb)])
    if r.answer == "sat" and facts:
        defined = ctx.solve(Obligation(z3.And(phi, *facts), f"{len(pairs)} element(s) "
                                       f"differ as reals, with max, min and 2^x as defined"),
                            timeout_s=FACTS_S, validate=False)
        r = defined if defined.answer == "unsat" else r
    ctx.stage("outputs (real)", r.answer, t0, f"{len(pairs)} element(s) as real arithmetic")
    if r.answer == "unsat":
        ctx.assumptions.add(REAL_ASSUMPTION)
        ctx.assumptions.update(tr.notes)
        return None
    if r.answer != "sat":
        return ctx.inconclusive(f"solver (real arithmetic): {r.answer} "
                                  f"({r.detail or r.solver})")
    return _true_difference(ctx, tr, phi, pairs, seed,
                            lambda model: _replayed(ctx, env, tr, model, variables, seed))


def _replayed(ctx, env, tr: RealTranslator, model, variables, seed) -> Verdict:
    """The emulator's verdict at the small integer inputs of `model` (a refutation, or
    Inconclusive where the floats agree: a real difference below rounding)."""
    def value_of(var) -> int:
        real = tr.variables.get(str(var))
        if real is None:          # a bit-vector input (a launch-shape scalar, an integer)
            x = model.eval(var, True)
            return x.as_long() if z3.is_bv_value(x) else 0
        x = model.eval(real, True)
        f = float(x.as_fraction()) if z3.is_rational_value(x) else 0.0
        return _bits_of_float(f, var.size())

    chosen = {}
    for d in model.decls():
        if d.arity() == 0 and d.name().startswith(CONSTANT_PREFIX):
            x = model.eval(d(), True)
            if z3.is_bv_value(x):
                chosen[d.name()] = x.as_long()

    def real_value(name: str) -> float:
        x = model.eval(tr.variables[name], True)
        return float(x.as_fraction()) if z3.is_rational_value(x) else 0.0
    chosen.update(unspecified_choices(tr, real_value))
    return model_counterexample(ctx, env, value_of, variables, seed, chosen_values(chosen))


def _true_difference(ctx, tr: RealTranslator, phi, pairs: list, seed: int, replay):
    """The refutation `replay(model)` gives at a model of `phi` with small integer inputs
    at which the true real functions differ (`verifier.real_check`: the solver's atoms for
    2^x and max are free to it) and the emulator's floats differ too, or an Inconclusive
    verdict. The solver's own models come first (a few, each at other inputs); since their
    atoms may take values no true function has, random small integer inputs follow, each
    checked with the true functions. A model whose real difference is below rounding (the
    floats agree there) does not end the search: another may show it."""
    below: list[Verdict] = []

    def refuted(model) -> Verdict | None:
        """The refutation at `model` when the true functions differ there and it replays."""
        if not _shown(ctx, tr, model, pairs):
            return None
        verdict = replay(model)
        if verdict.kind == NOT_EQUIVALENT:
            return verdict
        below.append(verdict)
        return None

    names = sorted(tr.variables)
    s = z3.Solver()
    s.set("timeout", int(ctx.timeout_s * 1000))
    s.add(phi)
    for v in tr.variables.values():
        s.add(z3.IsInt(v), v >= -8, v <= 8)
    tried = 0
    for _ in range(REAL_MODELS):
        if s.check() != z3.sat:
            break
        tried += 1
        model = s.model()
        verdict = refuted(model)
        if verdict is not None:
            return verdict
        s.add(z3.Or([v != model.eval(v, True) for v in tr.variables.values()]
                    or [z3.BoolVal(False)]))
    if tried:
        rng = np.random.default_rng(seed)
        for _ in range(REAL_SAMPLES):
            at = z3.Solver()
            at.set("timeout", 10_000)
            at.add(phi, *[tr.variables[n] == int(rng.integers(-8, 9)) for n in names])
            if at.check() != z3.sat:       # (the readings agree there: so do the reals)
                continue
            tried += 1
            verdict = refuted(at.model())
            if verdict is not None:
                return verdict
        if below:
            return below[0]
        return ctx.inconclusive(
            f"mode 'real': the solver's readings differ, but at the {tried} inputs tried "
            f"the true real functions do not (its models choose values of 2^x or max that "
            f"these functions never take, or divide by zero)")
    return ctx.inconclusive("mode 'real': the kernels differ as real functions, but no "
                            "small integer inputs show it (no replayable counterexample)")


def _shown(ctx, tr: RealTranslator, model, pairs: list) -> bool:
    """Do the true real functions differ at `model` (then its pair is the run's witness:
    the inputs a counterexample names)?"""
    shown = shown_to_differ(tr, model, pairs)
    if shown is not None:
        ctx.witness = shown[:2]
    return shown is not None


def _narrower(ctx: Run, p, i: int, a, b, live, constraints: list, functions: list):
    """A solver result with a difference that is not only the open functions' choice, or
    None (`verifier.open_functions`, questions 2 and 3)."""
    w = type_bits(p.type)
    fmt = "bf16" if p.type == "bf16" else p.type
    qa, qb = _bv(a, w), _bv(b, w)
    for q, what in ((z3.And(qa != qb, not_both_nan(qa, qb, fmt)), "not both NaN"),
                    (_bv(defaulted(a, functions), w) != _bv(defaulted(b, functions), w),
                     "with the emulator's NaN rule")):
        r = ctx.solve(Obligation(z3.And(*constraints, _live(live, q)),
                                 f"{p.name}[{i}] differs ({what})"))
        if r.answer == "sat":
            return r
    return None


_FP_SORTS = {"f32": z3.Float32(), "f16": z3.Float16(), "bf16": z3.FPSort(8, 8)}


def _ordinary(ctx: Run, p, i: int, a, b, live, constraints: list):
    """The difference again, with every f32, f16 or bf16 input (a buffer element or a
    scalar) an ordinary float (zero, or normal and at most 16 in magnitude), or None: a
    model of free approximate functions or tensor cores at NaN or huge inputs shows nothing
    on the emulator, while at ordinary ones their bounds can decide it
    (`verifier.approx_bounds`, `verifier.mma_bounds`)."""
    w = type_bits(p.type)
    sorts = {q.name: _FP_SORTS[q.type] for q in ctx.spec.params if q.type in _FP_SORTS}
    ordinary = []
    for c in free_constants(*(t for t in (a, b) if not isinstance(t, int))):
        sort = sorts.get(str(c).split("[")[0])
        if z3.is_bv(c) and sort is not None and c.size() == sort.ebits() + sort.sbits():
            f = z3.fpBVToFP(c, sort)
            ordinary.append(z3.Or(z3.fpIsZero(f), z3.And(z3.fpIsNormal(f),
                                                         z3.fpLEQ(z3.fpAbs(f),
                                                                  z3.FPVal(16.0, sort)))))
    if not ordinary:
        return None
    r = ctx.solve(Obligation(z3.And(*constraints, *ordinary,
                                    _live(live, _bv(a, w) != _bv(b, w))),
                             f"{p.name}[{i}] differs (ordinary inputs)"))
    return r if r.answer == "sat" else None


def _abstracted(ctx: Run, diffs: list, constraints: list):
    """The differences not already refuted with floating-point subterms abstracted (see
    `verifier.abstraction`), lazily: the first (cheapest) element on its own, then the rest
    all at once; if that fails, each element's abstracted query is asked only when the loop
    reaches it, so a real difference is found after one abstracted query instead of one per
    element. The first element goes alone because the elements of one output are mostly
    alike: when its abstraction cannot refute it, the disjunction over all of them (2048
    elements of a saxpy: 8 s of solving, and the answer is "sat") would not either."""
    fa = FloatAbstraction()

    def query(d):
        p, _, a, b, live = d
        return _live(live, differs(ctx.spec, p, fa(a), fa(b)))

    def refuted(q, name) -> bool:
        r = ctx.solve(Obligation(z3.And(*constraints, q), name), timeout_s=10.0)
        return r.answer == "unsat"

    # (each query built only when it is asked: abstracting 2048 elements costs a second)
    first, rest = diffs[0], diffs[1:]
    q_first = query(first)
    # (nothing abstracted: the abstracted query is the original, which the caller asks)
    if fa.count == 0 or not refuted(q_first, f"{first[0].name}[{first[1]}] differs "
                                             f"(floats abstracted)"):
        yield first
    if not rest:
        return
    q_rest = [query(d) for d in rest]
    if fa.count == 0:
        yield from rest
        return
    if refuted(z3.Or(q_rest), f"{len(rest)} elements differ (floats abstracted)"):
        return
    for d, q in zip(rest, q_rest):
        if not refuted(q, f"{d[0].name}[{d[1]}] differs (floats abstracted)"):
            yield d


def random_testing(ctx: Run, env: dict, seed: int, terms: dict) -> Verdict | None:
    """Testing before solving: a difference that random inputs show is found in milliseconds
    (it is concrete, so it needs no further replay); only the rest goes to a solver.
    `terms`: (param name, index) -> (reference term, candidate term) of the elements not
    known equal, for the inputs a counterexample names."""
    if ctx.trials <= 0 or ctx.spec.mode != "bitexact" or not terms:
        return None
    t1 = time.perf_counter()
    tested = tested_difference(ctx, env, seed, trials=ctx.trials, terms=terms)
    ctx.stage("random testing", StageStatus.FAILED if tested else StageStatus.OK, t1,
              f"{ctx.trials} random input set(s)")
    return tested


class ElementPair(NamedTuple):
    """One output element of both kernels whose terms are not identical: the reference's
    and the candidate's term, and the condition under which the element exists (True at one
    launch shape; `index < length` over a maximal launch)."""
    param: Any
    index: int
    ref: Any
    cand: Any
    live: Any


def compare_outputs(ctx: Run, env: dict, diffs: list[ElementPair], constraints: list,
                    variables: dict, seed: int, t0: float, *,
                    test: bool = True) -> Verdict | None:
    """None when every element of `diffs` is proved equal; else the verdict (a replayed
    counterexample, or Inconclusive). `test`: test random inputs first (False when the caller
    already did)."""
    spec = ctx.spec
    # Cheap before solving: z3's simplifier orders sums (and the other associative-commutative
    # operators) canonically, so counts added in another order become the same term.
    # (Not for floats in mode real: they are read as reals next, where the bit-level
    # simplifier rarely makes two terms meet and takes most of the time on long softmax rows.)
    memo: dict = {}
    diffs = [d for d in diffs
             if not (same_term(d.ref, d.cand) if spec.mode == "real" and d.param.is_float else
                     same_term(_simplified(d.ref, memo), _simplified(d.cand, memo)))]
    del memo
    if not diffs:
        ctx.stage("outputs", StageStatus.OK, t0,
                  "identical terms after simplification, no solver needed")
        return None
    if test:
        tested = random_testing(ctx, env, seed,
                                {(d.param.name, d.index): (d.ref, d.cand) for d in diffs})
        if tested is not None:
            return tested
    if spec.mode == "real":
        float_diffs = [d for d in diffs if d.param.is_float]
        diffs = [d for d in diffs if not d.param.is_float]     # integers stay exact
        if float_diffs:
            verdict = _real_outputs(ctx, env, float_diffs, constraints, variables, seed, t0)
            if verdict is not None:
                return verdict
        if not diffs:
            return None
    # One element at a time, cheapest first: a difference usually shows in the first element
    # tried, and small queries keep FP obligations within reach of the solvers.
    ordered = sorted(diffs, key=lambda d: _size(d.ref) + _size(d.cand))
    if len(ordered) > 1 and not any(d.param.is_float for d in ordered):
        ordered = _integers_at_once(ctx, ordered, constraints, variables)
    if any(d.param.is_float for d in ordered):
        ordered = _abstracted(ctx, ordered, constraints)
    found, unknown = _element_by_element(ctx, ordered, constraints)
    status = StageStatus.SAT if found else (StageStatus.UNKNOWN if unknown else
                                            StageStatus.UNSAT)
    ctx.stage("outputs", status, t0,
              f"{len(diffs)} element(s) to the solvers "
              f"({', '.join(ctx.solvers)})")
    if found is None:
        if unknown:
            return ctx.inconclusive(f"no solver answered on {len(unknown)} output "
                                    f"element(s) at {shape_text(env)} (first: {unknown[0]})")
        return None
    model = found.model or {}
    needed = variables_in(ctx.witness)
    missing = sorted(n for n in needed if n in variables and n not in model)
    if missing:
        raise InternalError(f"{found.solver} returned a model without {', '.join(missing[:3])}")
    return model_counterexample(ctx, env, lambda v: int(model.get(str(v), 0)), variables,
                                seed, chosen_values(model))


def _integers_at_once(ctx: Run, ordered: list[ElementPair], constraints: list,
                      variables: dict) -> list[ElementPair]:
    """Integer outputs: all elements in one query first, so a proof of many equal elements (a
    scan's 512 partial sums) costs one solver call instead of 512. Kept short: when it does
    not answer, the per-element queries take over. (A disjunction of floating-point
    differences is much harder than its parts.) Returns the elements left to ask, the
    model's differing one first."""
    diseqs = [_live(d.live, _bv(d.ref, type_bits(d.param.type)) !=
                    _bv(d.cand, type_bits(d.param.type))) for d in ordered]
    ob = Obligation(z3.And(*constraints, z3.Or(diseqs)), f"{len(ordered)} elements differ")
    r = ctx.solve(ob, timeout_s=10.0)
    if r.answer == "unsat":
        return []
    if r.answer == "sat":
        return [_first_true(ordered, r.model or {}, variables)] + ordered
    return ordered


def differs(spec: PairSpec, p, a, b):
    """Output element `a` (reference) and `b` (candidate) of param `p` differ, as the claim
    counts it: their bits, except two NaNs under `allow = ["nan-any"]`."""
    w = type_bits(p.type)
    d = _bv(a, w) != _bv(b, w)
    if p.is_float and "nan-any" in spec.allow:
        d = z3.And(d, not_both_nan(_bv(a, w), _bv(b, w), "bf16" if p.type == "bf16" else p.type))
    return d


def _element_by_element(ctx: Run, ordered, constraints: list) -> tuple[Any, list[str]]:
    """The first solver result that shows an element differing (its terms kept as the run's
    witness), and what no solver decided."""
    unknown: list[str] = []
    for p, i, a, b, live in ordered:
        ob = Obligation(z3.And(*constraints, _live(live, differs(ctx.spec, p, a, b))),
                        f"{p.name}[{i}] differs")
        r = ctx.solve(ob)
        if r.answer == "sat":
            functions = open_functions(a, b) if p.is_float else []
            if functions:
                # (a difference the free functions alone make proves nothing:
                # `verifier.open_functions`)
                r = _narrower(ctx, p, i, a, b, live, constraints, functions)
                if r is None:
                    unknown.append(f"{p.name}[{i}]: differs only through the values the "
                                   f"hardware fixes (the NaN an operation returns); a target "
                                   f"assumption (f32-nan-canonical, f16-nan-canonical) "
                                   f"decides it")
                    continue
            if p.is_float and mentions_approximations(a, b):
                r = _ordinary(ctx, p, i, a, b, live, constraints) or r
            ctx.witness, ctx.witness_of = (a, b), p.name
            return r, unknown
        if r.answer != "unsat":
            unknown.append(f"{p.name}[{i}]: {r.answer} ({r.detail or r.solver})")
    return None, unknown
