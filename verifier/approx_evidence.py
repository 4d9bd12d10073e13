"""Evidence through approximate instructions and the values the hardware fixes.

Symbolically, approximate instructions and the values the PTX ISA leaves to the hardware
(the NaN an operation returns) are uninterpreted functions: a proof holds for any of them.
A difference is a counterexample only when it holds for every function the GPU may
compute: free for the NaN functions, within the ISA's documented error bound for the
approximations (`verifier.approx_bounds`). These checks fix the inputs of the differing
pair of terms and ask z3 whether any admissible choice of the functions makes the two equal.
`verifier.counterexample` asks them of solver models and of emulator differences.
"""

from __future__ import annotations

import numpy as np
import z3

from semantics.choices import CONSTANT_PREFIX, FUNCTION_PREFIX
from semantics.ops.nan_results import is_nan_result_effect
from verifier.approx_bounds import admissible
from verifier.mma_bounds import bounded_effect, tensor_range
from verifier.solvers.backends import BitwuzlaBackend
from verifier.terms import free_constants, function_names
from verifier.testing import check_reference_determined, differences


def for_every_function(witness, value_of, variables, chosen: dict) -> bool:
    """Do the differing terms differ at the model's inputs whatever the uninterpreted
    functions they apply are (the GPU's own NaN rule, its approximation)? Asked of z3 with
    every constant fixed to the model's value and the functions free."""
    a, b = witness
    if isinstance(a, int) or isinstance(b, int):      # (an element the kernel left constant)
        size = b.size() if isinstance(a, int) else a.size()
        a, b = (z3.BitVecVal(t, size) if isinstance(t, int) else t for t in (a, b))
    pairs = []
    for c in free_constants(a, b):
        name = str(c)
        if name.startswith(CONSTANT_PREFIX):
            v = chosen.get(name[len(CONSTANT_PREFIX):], 0)
        else:
            var = variables.get(name)
            v = value_of(var[2]) if var is not None else 0
        pairs.append((c, z3.BoolVal(bool(v)) if z3.is_bool(c) else z3.BitVecVal(int(v),
                                                                               c.size())))
    a, b = (z3.substitute(t, *pairs) if pairs else t for t in (a, b))
    return never_equal(*bounded_approximations(a, b))


def never_equal(a, b, within: list) -> bool:
    """Is `a == b` unsatisfiable under `within`, every function and free value left open?
    Both sides simplified (constants folded), then bitwuzla (fast on floating point: a
    softmax's 0 / 0 behind a bounded ex2 took it 2 s on a loaded machine, where z3 ran past
    20 s), z3 where it does not answer."""
    query = z3.And(*within, z3.simplify(a) == z3.simplify(b))
    if BitwuzlaBackend.available()[0]:
        answer = BitwuzlaBackend().check(query, 10.0).answer
        if answer in ("sat", "unsat"):
            return answer == "unsat"
    s = z3.Solver()
    s.set("timeout", 20_000)
    s.add(query)
    return s.check() == z3.unsat


_TENSOR = (FUNCTION_PREFIX + "mma.", FUNCTION_PREFIX + "wmma.")
_SORTS = {"f32": z3.Float32(), "f16": z3.Float16()}


def _span(app) -> tuple[int, int, str] | None:
    """The bit patterns an approximate instruction or a tensor core may return at this
    application (its arguments fixed), and their format; None: any value."""
    name = app.decl().name()
    args = [z3.simplify(x) for x in app.children()]
    if not all(z3.is_bv_value(x) for x in args):
        return None
    if name.startswith(_TENSOR):
        return tensor_range(name[len(FUNCTION_PREFIX):], [x.as_long() for x in args])
    span = admissible(name, args[0].as_long()) if len(args) == 1 else None
    return None if span is None else (span[0], span[1], "f32")


def bounded_approximations(a, b) -> tuple:
    """`a` and `b` (inputs fixed) with each approximate instruction and tensor core applied
    to fixed arguments replaced by a fresh value and the constraints that keep it within
    what keq admits for it (`verifier.approx_bounds`, `verifier.mma_bounds`); the others
    stay free."""
    apps: dict[int, z3.ExprRef] = {}
    todo, seen = [a, b], set()
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t) and ((t.num_args() == 1 and ".approx." in t.decl().name()) or
                             t.decl().name().startswith(_TENSOR)):
            apps[t.get_id()] = t
        todo.extend(t.children())
    pairs, within = [], []
    values: dict[tuple, z3.BitVecRef] = {}     # (function, arguments) -> its value
    for app in apps.values():
        span = _span(app)
        if span is None:
            continue
        key = (app.decl().name(), tuple(z3.simplify(x).as_long() for x in app.children()))
        v = values.get(key)          # (one function: the same arguments, the same value)
        if v is None:
            v = values[key] = z3.BitVec(f"keq!approx!{len(values)}", app.size())
            sort = _SORTS[span[2]]
            lo, hi = (z3.fpBVToFP(z3.BitVecVal(x, app.size()), sort) for x in span[:2])
            fv = z3.fpBVToFP(v, sort)
            within.append(v == span[0] if span[0] == span[1] else
                          z3.And(z3.fpLEQ(lo, fv), z3.fpLEQ(fv, hi)))
        pairs.append((app, v))
    if pairs:
        a, b = z3.substitute(a, *pairs), z3.substitute(b, *pairs)
    return a, b, within


def mentions_approximations(*terms) -> bool:
    """Does one of `terms` (ints or z3 terms) apply an approximate instruction or a tensor
    core (the functions whose values keq bounds)?"""
    return any(".approx." in name or name.startswith(_TENSOR) for name in
               function_names(*[t for t in terms if not isinstance(t, int)]))


def mentions_functions(witness) -> bool:
    """Does the differing pair of terms apply an uninterpreted function (an approximate
    function, or a value the ISA leaves open as a function of the inputs)?"""
    if witness is None:
        return False
    return any(name.startswith((FUNCTION_PREFIX,)) or ".approx." in name
               for name in function_names(*[t for t in witness if not isinstance(t, int)]))


def bounded_difference(ctx, scalars: dict, inputs: dict, rep: dict, terms: dict | None,
                        seed: int):
    """(choices, the candidate's final values, differences) when the emulator's outputs
    differ, the only thing that made its run no evidence is approximate instructions (the
    host's values are not the GPU's), and some differing element's terms differ at these
    inputs for every value of those instructions within the ISA's documented bounds
    (`bounded_approximations`) and every NaN the hardware may return; else None."""
    if not terms:
        return None
    effects = [e for side in rep.values() for e in side.result.effects]
    if any(e.kind in ("undefined", "unspecified", "fragment") and not bounded_effect(e)
           and not _nan_result(e) for e in effects) or \
            not any(e.kind == "approximation" or bounded_effect(e) or _nan_result(e)
                    for e in effects):
        return None
    diffs = differences(ctx.spec, rep["reference"].final, rep["candidate"].final)
    for d in diffs[:4]:
        pair = terms.get((d[0], d[1]))
        if pair is None or any(isinstance(t, int) for t in pair):
            continue
        fixed = _fixed_at(ctx.spec, pair, scalars, inputs)
        if fixed is None:
            continue
        a, b = (z3.substitute(t, *fixed) if fixed else t for t in pair)
        if never_equal(*bounded_approximations(a, b)):   # (this element first: shown certain)
            ref = rep["reference"]
            check_reference_determined(ctx, scalars, inputs, ref.final, ref.result.effects,
                                       seed)
            return ctx.choices, rep["candidate"].final, (d,) + tuple(x for x in diffs
                                                                      if x is not d)
    return None


def _nan_result(effect) -> bool:
    """A NaN result the ISA leaves open: a quiet NaN of the hardware's choosing, an
    uninterpreted function in the terms, which the check leaves free (every choice)."""
    return effect.kind == "unspecified" and is_nan_result_effect(effect.what)


def _fixed_at(spec, pair, scalars: dict, inputs: dict) -> list | None:
    """Each input constant of `pair` (`x[3]`, a scalar `n`) with its value in `inputs` (a
    float scalar by its bit pattern), or None when one is something else (a value the ISA
    leaves open: not fixed here)."""
    out = []
    for c in free_constants(*pair):
        name = str(c)
        base, _, rest = name.partition("[")
        if rest:
            arr = inputs.get(base)
            if not isinstance(arr, np.ndarray) or not rest[:-1].isdigit():
                return None
            raw = arr.view(f"u{arr.dtype.itemsize}").reshape(-1)
            idx = int(rest[:-1])
            if idx >= raw.size:
                return None
            out.append((c, z3.BitVecVal(int(raw[idx]), c.size())))
        elif name in scalars and any(q.name == name for q in spec.params):
            p = spec.param(name)
            bits = p.bits_of(scalars[name]) if p.is_float else int(scalars[name])
            out.append((c, z3.BitVecVal(bits % (1 << c.size()), c.size())))
        else:
            return None
    return out


__all__ = ["bounded_approximations", "bounded_difference", "for_every_function",
           "mentions_approximations", "mentions_functions"]
