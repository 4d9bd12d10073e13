"""The values a symbolic address offset can take, when it depends on input data of few bits.

A histogram indexes its bins with a loaded byte: `bins[data[i]]`. The offset term then mentions
an 8-bit input element, so it takes at most 256 values, and the symbolic port can split the
access into one guarded access per value (`SymbolicPort._resolve`). This module lists those
values by evaluating the offset term (`verifier.term_eval`, numpy) at every combination of its
free input bits, jointly with every allowed launch shape when it also mentions shape scalars.

Why this is sound: the list is the exact image of the offset over *all* values of those inputs,
ignoring any constraint on them (ranges, `assume`). That can only add values, and an extra value
becomes an access whose condition (`offset == k`) never holds, so nothing is missed; the
conditions carry the precision. Offsets mentioning more than `DATA_BITS` input bits (a 32-bit
index loaded from memory) are refused: the caller reports them by name (Inconclusive).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import z3

from semantics.domains import z3raw
from verifier.term_eval import NotEvaluable, evaluate
from verifier.terms import TermMemo

DATA_BITS = 16              # free input bits an offset may depend on (65536 combinations)
POINT_LIMIT = 1 << 20       # shapes x input combinations evaluated for one offset


def offset_values(off, cond, shape_points: Mapping[str, np.ndarray], shape_count: int,
                  limit: int, ranges: Mapping[str, tuple[int, int]] | None = None
                  ) -> dict[int, Any] | None:
    """Every value `off` takes over the allowed shapes (`shape_points`: scalar name -> its
    value at each of `shape_count` shapes) and over all values of the input bits it mentions,
    where `cond` may hold (when `cond` can be evaluated on the same points; else everywhere).
    An input with a declared element range (`ranges`: element name -> (lo, hi), the widest
    over the shapes; the claim's constraints hold it there) that the offset reads whole takes
    only the values in it: a gather by token id, `wte[inp[i] * C + c]`.
    None when it reads more than DATA_BITS input bits' worth of values, a non-bit-vector
    input, something the evaluator cannot read, or takes more than `limit` values. The answer
    maps each value k to the test `off == k` restated on the one input the offset reads, when
    it reads one input and nothing else (see `_tests`), else to None (the caller tests
    `off == k`)."""
    read = _inputs_read(off.as_ast(), shape_points)
    if read is None:
        return None
    shape, data = read
    choices = _input_choices(data, ranges or {})
    if choices is None:
        return None
    combos = int(np.prod([len(c) for c in choices], dtype=object))
    shapes = shape_count if shape else 1
    if shapes * combos > POINT_LIMIT:
        return None
    n = shapes * combos
    env: dict[str, np.ndarray] = {}
    for name in shape:
        env[name] = np.repeat(shape_points[name], combos)
    inner = 1
    for name, values in zip(data, choices):
        # every combination of the inputs' values, repeated for each shape
        env[name] = np.tile(np.repeat(values, inner), combos // (inner * len(values)) * shapes)
        inner *= len(values)
    try:
        vals = evaluate(off, env, n)
        keep = _where(cond, env, shape_points, n)
    except NotEvaluable:
        return None
    if keep is not None:
        vals = vals[keep]
    out = set(np.unique(vals).tolist())
    if len(out) > limit:
        return None
    if shape or len(data) != 1 or keep is not None:
        return dict.fromkeys(out)
    raw, lo, hi = next(iter(data.values()))
    var = z3.z3._to_expr_ref(raw, z3.main_ctx())
    leaf = var if (lo, hi) == (0, var.size() - 1) else z3.Extract(hi, lo, var)
    return _tests(leaf, vals, out, (choices[0] >> np.uint64(lo)).tolist())


def _input_choices(data: Mapping[str, list], ranges: Mapping[str, tuple[int, int]]
                   ) -> list[np.ndarray] | None:
    """The values each input read by an offset takes, in place (the bits it does not read
    0): its element range when it has one and is read whole, else every pattern of the bits
    read. None past 2**DATA_BITS combinations."""
    out, combos = [], 1
    for name, (raw, lo, hi) in data.items():
        width = z3.z3._to_expr_ref(raw, z3.main_ctx()).size()
        r = ranges.get(name)
        whole = r is not None and (lo, hi) == (0, width - 1)
        count = r[1] - r[0] + 1 if whole else 1 << (hi - lo + 1)
        combos *= count
        if combos > 1 << DATA_BITS:
            return None
        if whole:
            values = (np.arange(r[0], r[1] + 1, dtype=object) % (1 << width)).astype(np.uint64)
        else:
            values = np.arange(count, dtype=np.uint64) << np.uint64(lo)
        out.append(values)
    return out


def _inputs_read(off, shape_names) -> tuple[set[str], dict[str, list]] | None:
    """(the shape scalars raw term `off` mentions, the inputs it reads: name -> [constant,
    lowest bit, highest bit]). An input that occurs only under `Extract`s is read in the span
    of those bits (a byte loaded from a 32-bit word reads bits 7..0), any other occurrence
    reads it all. None when an input is not a bit-vector. (A walk on raw ASTs, each subterm
    once: this runs for every lane's data-dependent address.)"""
    ctx, R = z3.main_ctx().ref(), z3raw.read
    shape: set[str] = set()
    spans: dict[str, list] = {}
    seen: set[int] = set()
    stack = [off]
    while stack:
        e = stack.pop()
        key = R.ast_id(ctx, e)
        if key in seen or R.ast_kind(ctx, e) != z3.Z3_APP_AST:
            continue
        seen.add(key)
        d = R.app_decl(ctx, e)
        kind, nargs = R.decl_kind(ctx, d), R.num_args(ctx, e)
        if kind == z3.Z3_OP_UNINTERPRETED and nargs == 0:
            name = R.symbol(ctx, R.decl_name(ctx, d)).decode()
            if name in shape_names:
                shape.add(name)
                continue
            sort = R.sort(ctx, e)
            if R.sort_kind(ctx, sort) != z3.Z3_BV_SORT:
                return None
            var, lo, hi = e, 0, R.bv_size(ctx, sort) - 1
        elif kind == z3.Z3_OP_EXTRACT and _is_input(ctx, R.app_arg(ctx, e, 0), shape_names):
            var = R.app_arg(ctx, e, 0)          # (its bits hi..lo: read in place)
            name = R.symbol(ctx, R.decl_name(ctx, R.app_decl(ctx, var))).decode()
            hi, lo = R.decl_int(ctx, d, 0), R.decl_int(ctx, d, 1)
        else:
            stack.extend(R.app_arg(ctx, e, j) for j in range(nargs))
            continue
        span = spans.setdefault(name, [var, lo, hi])
        span[1], span[2] = min(span[1], lo), max(span[2], hi)
    return shape, spans


def _is_input(ctx, e, shape_names) -> bool:
    """Is raw `e` an uninterpreted constant (an input), not a shape scalar?"""
    R = z3raw.read
    if R.ast_kind(ctx, e) != z3.Z3_APP_AST or R.num_args(ctx, e):
        return False
    d = R.app_decl(ctx, e)
    return R.decl_kind(ctx, d) == z3.Z3_OP_UNINTERPRETED and \
        R.symbol(ctx, R.decl_name(ctx, d)).decode() not in shape_names


def _tests(var, vals: np.ndarray, out: set[int], at_values: list[int]) -> dict[int, Any]:
    """`off == k` restated on the one input it reads: `var == v` for the values v of `var`
    that give k (exact: the offset depends on `var` alone, and `vals[i]` is the offset at
    `at_values[i]`: every value of `var`, or those of its element range). Two kernels that
    compute one index with other widths or operations (a 64-bit global offset and a 32-bit
    shared one) then guard their accesses with the very same term."""
    equal = _equalities(var)
    every = at_values[0] == 0 and at_values[-1] == len(at_values) - 1
    if len(out) == vals.size:
        # one value of `var` per offset (an index scaled and moved): `vals[i]` is its offset
        return dict(zip(vals.tolist(), _every_equality(var, vals.size) if every
                        else [equal(v) for v in at_values]))
    tests: dict[int, Any] = {}
    order = np.argsort(vals, kind="stable")
    bounds = np.searchsorted(vals[order], np.array(sorted(out), dtype=vals.dtype))
    ends = list(bounds[1:]) + [len(vals)]
    for k, lo, hi in zip(sorted(out), bounds.tolist(), ends):
        at = [at_values[i] for i in order[lo:hi].tolist()]
        if len(at) > 4:
            return dict.fromkeys(out)    # not one-to-few: keep `off == k`
        tests[k] = z3.Or([equal(v) for v in at]) if len(at) > 1 else equal(at[0])
    return tests


_NUMERALS: dict[tuple[int, int], Any] = {}
_EQUALITIES: TermMemo[dict[int, Any]] = TermMemo()
_EVERY: TermMemo[list] = TermMemo()


def _every_equality(var, n: int) -> list:
    """[`var == v` for v in range(n)], the terms `_equalities` builds, kept per `var` (the
    second kernel to read an input byte finds its 256 tests in one lookup)."""
    hit = _EVERY.get(var)
    if hit is None or len(hit) != n:
        if len(_EVERY) > 1 << 16:
            _EVERY.clear()
        equal = _equalities(var)
        hit = _EVERY.put(var, [equal(v) for v in range(n)])
    return hit


def _equalities(var):
    """v -> the term `var == v`, one term per (var, v) however many offsets read `var` (two
    kernels reading one input element build the test once)."""
    made = _EQUALITIES.get(var)
    if made is None:
        if len(_EQUALITIES) > 1 << 16:
            _EQUALITIES.clear()
        made = _EQUALITIES.put(var, {})
    w = var.size()

    def equal(v: int):
        t = made.get(v)
        if t is None:
            c = _NUMERALS.get((v, w))
            if c is None:
                c = _NUMERALS[(v, w)] = z3.BitVecVal(v, w)
            t = made[v] = z3raw.Eq(var, c)
        return t
    return equal


def _where(cond: Any, env: Mapping[str, np.ndarray], shape_names, n: int) -> np.ndarray | None:
    """`cond` at each point, or None unless it mentions shape scalars alone (`env` gives an
    input only the bits the offset reads)."""
    if isinstance(cond, (bool, np.bool_)) or z3.is_true(cond):
        return None
    read = _inputs_read(cond.as_ast(), shape_names)
    if read is None or read[1] or not all(name in env for name in read[0]):
        return None
    return evaluate(cond, env, n)


__all__ = ["DATA_BITS", "offset_values"]
