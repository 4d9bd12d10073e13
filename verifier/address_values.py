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
from verifier.term_eval import NotEvaluable, evaluate, free_constants, is_input, subterms

DATA_BITS = 16              # free input bits an offset may depend on (65536 combinations)
POINT_LIMIT = 1 << 20       # shapes x input combinations evaluated for one offset


def offset_values(off, cond, shape_points: Mapping[str, np.ndarray], shape_count: int,
                  limit: int) -> dict[int, Any] | None:
    """Every value `off` takes over the allowed shapes (`shape_points`: scalar name -> its
    value at each of `shape_count` shapes) and over all values of the input bits it mentions,
    where `cond` may hold (when `cond` can be evaluated on the same points; else everywhere).
    None when it reads more than DATA_BITS input bits, a non-bit-vector input, something
    the evaluator cannot read, or takes more than `limit` values. The answer maps each value
    k to the test `off == k` restated on the one input the offset reads, when it reads one
    input and nothing else (see `_tests`), else to None (the caller tests `off == k`)."""
    consts = free_constants(off)
    shape = [c for c in consts if str(c) in shape_points]
    data = _bits_read(off, set(shape_points))
    if data is None:
        return None
    bits = sum(hi - lo + 1 for _, lo, hi in data)
    if bits > DATA_BITS:
        return None
    combos = 1 << bits
    shapes = shape_count if shape else 1
    if shapes * combos > POINT_LIMIT:
        return None
    n = shapes * combos
    env: dict[str, np.ndarray] = {}
    for c in shape:
        env[str(c)] = np.repeat(shape_points[str(c)], combos)
    index = np.tile(np.arange(combos, dtype=np.uint64), shapes)
    shift = 0
    for var, lo, hi in data:
        # the bits the offset reads, in place; the others 0 (the offset never sees them)
        width = hi - lo + 1
        part = (index >> np.uint64(shift)) & np.uint64((1 << width) - 1)
        env[str(var)] = part << np.uint64(lo)
        shift += width
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
    var, lo, hi = data[0]
    leaf = var if (lo, hi) == (0, var.size() - 1) else z3.Extract(hi, lo, var)
    return _tests(leaf, vals, out)


def _bits_read(off, shape_names: set[str]) -> list[tuple[Any, int, int]] | None:
    """The inputs `off` reads, each as (constant, lowest bit, highest bit): a constant that
    occurs only under `Extract`s is read in the span of those bits (a byte loaded from a
    32-bit word reads bits 7..0), any other occurrence reads it all. None when an input is not
    a bit-vector."""
    spans: dict[int, list] = {}

    def input_bits(e) -> bool:
        return z3.is_app_of(e, z3.Z3_OP_EXTRACT) and _is_input(e.arg(0), shape_names)

    for e in subterms(off, stop=input_bits):
        if input_bits(e):
            hi, lo = e.params()
            var = e.arg(0)
        elif _is_input(e, shape_names):
            if not z3.is_bv(e):
                return None
            var, lo, hi = e, 0, e.size() - 1
        else:
            continue
        span = spans.setdefault(var.get_id(), [var, lo, hi])
        span[1], span[2] = min(span[1], lo), max(span[2], hi)
    return [tuple(v) for v in spans.values()]


def _is_input(e, shape_names: set[str]) -> bool:
    return is_input(e) and str(e) not in shape_names


def _tests(var, vals: np.ndarray, out: set[int]) -> dict[int, Any]:
    """`off == k` restated on the one input it reads: `var == v` for the values v of `var`
    that give k (exact: the offset depends on `var` alone, and `vals[v]` is the offset at v).
    Two kernels that compute one index with other widths or operations (a 64-bit global
    offset and a 32-bit shared one) then guard their accesses with the very same term."""
    tests: dict[int, Any] = {}
    equal = _equalities(var)
    order = np.argsort(vals, kind="stable")
    bounds = np.searchsorted(vals[order], np.array(sorted(out), dtype=vals.dtype))
    ends = list(bounds[1:]) + [len(vals)]
    for k, lo, hi in zip(sorted(out), bounds.tolist(), ends):
        at = order[lo:hi].tolist()
        if len(at) > 4:
            return dict.fromkeys(out)    # not one-to-few: keep `off == k`
        tests[k] = z3.Or([equal(v) for v in at]) if len(at) > 1 else equal(at[0])
    return tests


_NUMERALS: dict[tuple[int, int], Any] = {}
_EQUALITIES: dict[int, tuple[Any, dict[int, Any]]] = {}


def _equalities(var):
    """v -> the term `var == v`, one term per (var, v) however many offsets read `var` (two
    kernels reading one input element build the test once)."""
    hit = _EQUALITIES.get(var.get_id())
    if hit is None or not hit[0].eq(var):
        if len(_EQUALITIES) > 1 << 16:
            _EQUALITIES.clear()
        hit = _EQUALITIES[var.get_id()] = (var, {})      # keeps var (and so its id) alive
    _, made = hit
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
    if not all(str(c) in shape_names and str(c) in env for c in free_constants(cond)):
        return None
    return evaluate(cond, env, n)


__all__ = ["DATA_BITS", "offset_values"]
