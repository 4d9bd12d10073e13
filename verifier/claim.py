"""What a claim covers: the scalars that shape the launch, the shapes a claim allows, the
shared symbolic inputs both kernels run on, and the claim in one line."""

from __future__ import annotations

import itertools
from typing import Any

import z3

from semantics.machine.symbolic_run import SymBuffer
from verifier.counterexample import scalar_domain
from verifier.spec.model import DEFAULT_ARCH
from verifier.spec import (CLAIM_NAMES, FLOAT_FORMATS, PairSpec, ParamSpec, float_bits,
                           float_value, int_bounds, type_bits)


def _kernels(side) -> str:
    """A side's kernel, or its launches in order ("row_sums; divide")."""
    return "; ".join(s.kernel for s in side.launches)


def launch_scalars(spec: PairSpec) -> set[str]:
    names: set[str] = set()
    for side in spec.reference.launches + spec.candidate.launches:
        for e in (*side.grid, *side.block):
            names |= e.names
    for p in spec.params:
        if p.length is not None:
            names |= p.length.names
        for e in p.elements or ():
            names |= e.names
    for a in spec.assume:
        names |= a.names
    return names


def assignments(spec: PairSpec, fixed: dict[str, int], limit: int) -> tuple[list[dict], str]:
    """Every allowed combination of the enumerated scalars, or ([], why) if too many."""
    shaping = launch_scalars(spec)
    axes: list[tuple[str, list[int]]] = []
    for p in spec.scalars:
        if p.name in fixed:
            axes.append((p.name, [fixed[p.name]]))
        elif p.name in shaping:
            dom = scalar_domain(p)
            if dom is None:
                lo, hi = int_bounds(p.type)
                return [], (f"scalar '{p.name}' shapes the launch and has no range: "
                            f"{hi - lo + 1} values")
            # An `assume` about this scalar alone (`M % 32 == 0`) narrows its axis before the
            # count, as the maximal launch's plan does (`verifier.shape_plan`)
            alone = [a for a in spec.assume if a.names <= {p.name} | set(fixed)]
            dom = [v for v in dict.fromkeys(dom)
                   if all(a.eval(dict(fixed, **{p.name: v})) for a in alone)]
            axes.append((p.name, dom))
    total = 1
    for _, dom in axes:
        total *= len(dom)
    if total > 50 * limit:
        dims = " x ".join(f"{n}: {len(d)}" for n, d in axes)
        return [], (f"the claim covers {total} launch shapes ({dims}); keq enumerates at most "
                    f"{limit} (fix scalars with --set, or enumerate them all with "
                    f"--max-shapes {total}, in parallel with -j 0)")
    out = []
    for combo in itertools.product(*[d for _, d in axes]):
        env = dict(zip([n for n, _ in axes], combo))
        if spec.check_assumptions(env):
            out.append(env)
    if len(out) > limit:
        return [], (f"the claim covers {len(out)} launch shapes; keq enumerates at most "
                    f"{limit} (fix scalars with --set, or enumerate them all with "
                    f"--max-shapes {len(out)}, in parallel with -j 0)")
    return out, ""


def _one_element_value(p: ParamSpec) -> int | None:
    """The one value a scratch or inout buffer's `range = [c, c]` allows its elements, or
    None (in and out buffers keep their terms: indexed buffers name elements by them)."""
    if p.elements is None or p.access not in ("scratch", "inout"):
        return None
    lo, hi = p.elements
    if lo.names or hi.names:
        return None
    a, b = lo.eval({}), hi.eval({})
    return a if a == b else None


def symbolic_inputs(spec: PairSpec, env: dict[str, int],
                     lengths: dict[str, int] | None = None):
    """Shared symbolic inputs: one fresh variable per buffer element and per free scalar.
    Buffers are `lengths[name]` long when given (a maximal launch), else as `env` says."""
    values: dict[str, Any] = {}
    constraints: list = []
    variables: dict[str, tuple[str, int | None, Any]] = {}
    for p in spec.params:
        bits = type_bits(p.type)
        if p.is_buffer:
            n = lengths[p.name] if lengths is not None else p.length_of(env)
            fixed = _one_element_value(p)
            if fixed is not None:
                # (a zeroed semaphore: a known constant, so a wait on it has concrete control)
                values[p.name] = SymBuffer(bits, (fixed & ((1 << bits) - 1),) * n)
                continue
            elems = []
            for i in range(n):
                name = f"{p.name}[{i}]"     # (as z3 prints it: a param name is an identifier)
                v = z3.BitVec(name, bits)
                variables[name] = (p.name, i, v)
                elems.append(v)
            values[p.name] = SymBuffer(bits, tuple(elems))
        elif p.name in env:
            values[p.name] = env[p.name]
        else:
            v = z3.BitVec(p.name, bits)
            variables[p.name] = (p.name, None, v)
            values[p.name] = v
            if p.is_float:
                constraints += _float_constraints(p, v)
                continue
            dom = scalar_domain(p)
            if dom is not None:
                signed = p.type.startswith("s")
                lo, hi = min(dom), max(dom)
                le = (lambda a, b: a <= b) if signed else z3.ULE
                constraints.append(z3.And(le(z3.BitVecVal(lo, bits), v),
                                          le(v, z3.BitVecVal(hi, bits))))
                if p.values is not None:
                    constraints.append(z3.Or([v == x for x in p.values]))
    env64 = {p.name: env[p.name] if p.name in env else widened(values[p.name], p)
             for p in spec.scalars if not p.is_float}
    constraints += element_constraints(spec, values, env64)
    return values, constraints, variables


def widened(v, p: ParamSpec) -> Any:
    """A scalar variable as the 64-bit value launch expressions compute with."""
    bits = type_bits(p.type)
    if bits >= 64 or not isinstance(v, z3.ExprRef):
        return v
    return z3.SignExt(64 - bits, v) if p.type.startswith("s") else z3.ZeroExt(64 - bits, v)


def element_constraints(spec: PairSpec, values: dict, env64: dict) -> list:
    """Every element of a buffer with a `range` lies in it (its ends are 64-bit terms over the
    shape scalars in a maximal launch; `ParamSpec.element_bounds` checks them per shape)."""
    out = []
    for p in spec.buffers:
        if p.elements is None:
            continue
        lo, hi = (z3.BitVecVal(b, 64) if isinstance(b, int) else b
                  for b in (e.to_z3(env64) for e in p.elements))
        le = (lambda a, b: a <= b) if p.type.startswith("s") else z3.ULE
        for v in values[p.name].values:
            w = widened(v, p)
            out.append(z3.And(le(lo, w), le(w, hi)))
    return out


def _float_constraints(p: ParamSpec, v: z3.BitVecRef) -> list:
    """What the claim says of a free float scalar, over its bits `v`: equal to the bit
    pattern of one of its `values` (each rounded to the type: -0.0 and 0.0 are two values),
    or within its `range` compared as floats (both ends rounded to the type; fp comparisons,
    so NaN is in no range and -0.0 is in [0.0, 1.0]). The same rules as `ParamSpec.allows`,
    which every concrete draw and replay is checked against."""
    bits = type_bits(p.type)
    if p.values is not None:
        return [z3.Or([v == z3.BitVecVal(b, bits) for b in p.value_bits()])]
    if p.range is None:
        return []
    sort = z3.FPSort(*FLOAT_FORMATS[p.type])
    lo, hi = (z3.fpBVToFP(z3.BitVecVal(float_bits(p.type, x), bits), sort) for x in p.range)
    x = z3.fpBVToFP(v, sort)
    return [z3.fpLEQ(lo, x), z3.fpLEQ(x, hi)]


def real_scalar_constraints(spec: PairSpec, reals: dict[str, Any]) -> list:
    """`_float_constraints` for mode real, where a float scalar is the real `reals[name]`
    (finite): one of its values, or within its range."""
    out = []
    for p in spec.scalars:
        r = reals.get(p.name)
        if r is None or not p.is_float or (p.values is None and p.range is None):
            continue
        if p.values is not None:
            out.append(z3.Or([r == _real(float_value(p.type, b)) for b in p.value_bits()]))
        else:
            lo, hi = p.float_bounds()
            out += [_real(lo) <= r, r <= _real(hi)]
    return out


def _real(x: float):
    n, d = x.as_integer_ratio()
    return z3.RealVal(n) / z3.RealVal(d)


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
    assume += "".join(f", {p.element_text()}" for p in spec.buffers if p.elements)
    allow = f"; allowing {', '.join(spec.allow)}" if spec.allow else ""
    targets = CLAIM_NAMES["target_assumptions"]
    target = ("; assuming " + ", ".join(f"{n} ({targets[n]})" for n in spec.target_assumptions)
              if spec.target_assumptions else "")
    arch = ""
    if spec.arch or _uses_tensor_cores(spec):
        arch = f"; tensor cores as on {spec.arch or DEFAULT_ARCH}" + ("" if spec.arch else
                                                                       " (the default arch)")
    views = "".join(f"; {v.claim_text()}" for v in getattr(spec, "views", ()))
    kernels = f"{_kernels(spec.candidate)} == {_kernels(spec.reference)}"
    return (f"{spec.name}: {kernels} ({spec.mode}) for {', '.join(parts) or 'the launch'}"
            f"{assume}, every input{allow}{target}{arch}{views}")


def _uses_tensor_cores(spec: PairSpec) -> bool:
    """Does a side's PTX run `mma` (whose numerics the claim's `arch` names)?"""
    for side in spec.reference.launches + spec.candidate.launches:
        functions = getattr(side.module, "functions", None)
        if isinstance(functions, dict) and any(
                ins.form.opcode in ("mma", "wmma") for fn in functions.values()
                for ins in fn.instructions):
            return True
    return False
