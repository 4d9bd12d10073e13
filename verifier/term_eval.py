"""Evaluate a z3 bit-vector/Boolean term at many points at once (numpy), for the values a term
takes over every launch shape of a claim (a few thousand points).

This is not a semantics of any instruction: it evaluates terms the instruction semantics already
built, exactly as z3 would (`z3.simplify(z3.substitute(t, point))`), only vectorized. Widths up
to 64 bits; `NotEvaluable` for anything else (the caller then falls back to z3).
"""

from __future__ import annotations

import functools
import operator
from typing import Mapping

import numpy as np
import z3

from semantics.domains import z3raw
from verifier.terms import RawTermMemo

_R = z3raw.read


class NotEvaluable(Exception):
    pass


_U64 = np.uint64


# n-ary bit-vector operators, folded left to right (then masked to the width)
_BV_FOLDS = {z3.Z3_OP_BADD: operator.add, z3.Z3_OP_BMUL: operator.mul,
             z3.Z3_OP_BAND: operator.and_, z3.Z3_OP_BOR: operator.or_,
             z3.Z3_OP_BXOR: operator.xor}


def _mask(w: int) -> np.uint64:
    return _U64((1 << w) - 1) if w < 64 else _U64(0xFFFFFFFFFFFFFFFF)


def _signed(v: np.ndarray, w: int) -> np.ndarray:
    """Two's complement reading of w-bit values, as int64."""
    if w == 64:
        return v.view(np.int64)
    if w == 63:
        raise NotEvaluable("63-bit signed values")
    s = v.astype(np.int64)
    return np.where(s >= np.int64(1 << (w - 1)), s - np.int64(1 << w), s)


def evaluate(t, env: Mapping[str, np.ndarray], n: int,
             memo: RawTermMemo[np.ndarray] | None = None) -> np.ndarray:
    """`t` at each of `n` points; `env` maps constant names to uint64 arrays of length n.
    Bit-vectors come back as uint64 arrays (masked to their width), Booleans as bool arrays.
    `memo` (raw term -> values, `verifier.terms`) may be shared between calls over the same
    points.

    The walk reads raw ASTs with libz3's unchecked getters (`z3raw.read`): `t` keeps every
    subterm alive, and a Python wrapper per node cost most of the time. Values that do not
    depend on `env` (numerals and what is computed from them alone) stay numpy scalars inside
    the walk and broadcast like arrays; the result is always an array of length `n`."""
    v = _Walk(env, n, RawTermMemo() if memo is None else memo).value(t.as_ast())
    return v if np.ndim(v) else np.full(n, v)


def evaluate_grid(t, env: Mapping[str, np.ndarray],
                  memo: RawTermMemo[np.ndarray] | None = None) -> np.ndarray:
    """`t` over a grid of points (`verifier.shape_space`): `env` maps constant names to uint64
    arrays that broadcast against each other (one axis each), and the result broadcasts to
    the grid but keeps only the axes `t` varies along (a numpy scalar where it varies along
    none). The same walk as `evaluate`: numpy's broadcasting does the rest."""
    return evaluate_grid_raw(t.as_ast(), env, memo)


def evaluate_grid_raw(a, env: Mapping[str, np.ndarray],
                      memo: RawTermMemo[np.ndarray] | None = None) -> np.ndarray:
    """`evaluate_grid` of a raw AST that the caller keeps alive (no Python wrapper: a term
    walk that evaluates many subterms would pay for one each)."""
    return _Walk(env, 0, RawTermMemo() if memo is None else memo).value(a)


_BOOL_OPS = (z3.Z3_OP_NOT, z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT,
             z3.Z3_OP_ULT, z3.Z3_OP_ULEQ, z3.Z3_OP_UGT, z3.Z3_OP_UGEQ,
             z3.Z3_OP_SLT, z3.Z3_OP_SLEQ, z3.Z3_OP_SGT, z3.Z3_OP_SGEQ)


class _Walk:
    def __init__(self, env: Mapping[str, np.ndarray], n: int, memo: RawTermMemo) -> None:
        self.env, self.n, self.memo = env, n, memo
        self.ctx = z3.main_ctx().ref()

    def width(self, a) -> int:
        """The bit-vector width of raw AST `a`; 0 for any other sort."""
        R, ctx = _R, self.ctx
        s = R.sort(ctx, a)
        return R.bv_size(ctx, s) if R.sort_kind(ctx, s) == z3.Z3_BV_SORT else 0

    def value(self, a) -> np.ndarray:
        hit = self.memo.get(a)
        if hit is not None:
            return hit
        return self.memo.put(a, self.compute(a))

    def compute(self, t) -> np.ndarray:
        R, ctx = _R, self.ctx
        kind = R.ast_kind(ctx, t)
        if kind == z3.Z3_NUMERAL_AST:
            w = self.width(t)
            if not w or w > 64:
                raise NotEvaluable("a numeral wider than 64 bits or not a bit-vector")
            return _U64(int(R.numeral(ctx, t)))
        if kind != z3.Z3_APP_AST:
            raise NotEvaluable("a quantifier or variable")
        d = R.app_decl(ctx, t)
        k = R.decl_kind(ctx, d)
        if k == z3.Z3_OP_TRUE:
            return np.True_
        if k == z3.Z3_OP_FALSE:
            return np.False_
        nargs = R.num_args(ctx, t)
        if k == z3.Z3_OP_UNINTERPRETED and nargs == 0:
            name = R.symbol(ctx, R.decl_name(ctx, d)).decode()
            v = self.env.get(name)
            if v is None:
                raise NotEvaluable(f"free constant {name}")
            return v
        args = [R.app_arg(ctx, t, j) for j in range(nargs)]
        if k == z3.Z3_OP_CONCAT:
            # z3 writes a sign extension as the sign bit Concat'ed on, one level per bit:
            # flattened, the run of sign bits is one multiplication (see `bitvector`)
            args = self.concatenated(args)
        a = [self.value(c) for c in args]
        w = self.width(t)
        if w:
            return self.bitvector(t, d, k, w, args, a)
        return self.boolean(k, args, a)

    def concatenated(self, args) -> list:
        """The operands of nested Concats, most significant first (Concat is associative)."""
        R, ctx = _R, self.ctx
        out, stack = [], list(reversed(args))
        while stack:
            x = stack.pop()
            if R.ast_kind(ctx, x) == z3.Z3_APP_AST and \
                    R.decl_kind(ctx, R.app_decl(ctx, x)) == z3.Z3_OP_CONCAT:
                stack.extend(R.app_arg(ctx, x, j) for j in reversed(range(R.num_args(ctx, x))))
            else:
                out.append(x)
        return out

    def bitvector(self, t, d, k, w: int, args, a) -> np.ndarray:
        R, ctx = _R, self.ctx
        if w > 64:
            raise NotEvaluable("wider than 64 bits")
        m = _mask(w)
        with np.errstate(over="ignore"):
            fold = _BV_FOLDS.get(k)
            if fold is not None:
                return functools.reduce(fold, a) & m
            if k == z3.Z3_OP_BSUB:
                return (a[0] - a[1]) & m
            if k == z3.Z3_OP_BNEG:
                return (~a[0] + _U64(1)) & m
            if k == z3.Z3_OP_BNOT:
                return ~a[0] & m
            if k == z3.Z3_OP_ITE:
                return np.where(a[0], a[1], a[2])
            if k in (z3.Z3_OP_BSHL, z3.Z3_OP_BLSHR, z3.Z3_OP_BASHR):
                s = a[1]
                big = s >= _U64(w)
                sc = np.minimum(s, _U64(63))
                if k == z3.Z3_OP_BSHL:
                    return np.where(big, _U64(0), (a[0] << sc) & m)
                if k == z3.Z3_OP_BLSHR:
                    return np.where(big, _U64(0), a[0] >> sc)
                sv = _signed(a[0], w)
                return (np.right_shift(sv, np.minimum(sc, _U64(w - 1)).astype(np.int64))
                        .view(_U64) & m)
            if k == z3.Z3_OP_EXTRACT:
                hi, lo = R.decl_int(ctx, d, 0), R.decl_int(ctx, d, 1)
                return (a[0] >> _U64(lo)) & _mask(hi - lo + 1)
            if k == z3.Z3_OP_ZERO_EXT:
                return a[0]
            if k == z3.Z3_OP_SIGN_EXT:
                return _signed(a[0], self.width(args[0])).view(_U64) & m
            if k == z3.Z3_OP_CONCAT:
                # Runs of one argument (a sign extension is the sign bit Concat'ed 32 times)
                # are replicated in one multiplication: x * 0b0..01..1 for 1-bit x.
                r = _U64(0)
                j = 0
                while j < len(args):
                    cw = self.width(args[j])
                    key = R.ast_id(ctx, args[j])
                    run = 1
                    while j + run < len(args) and R.ast_id(ctx, args[j + run]) == key:
                        run += 1
                    if cw * run >= 64:
                        run = max(1, 63 // cw) if cw < 64 else 1
                    span = cw * run
                    rep = _U64(((1 << span) - 1) // ((1 << cw) - 1)) if cw < 64 else _U64(1)
                    r = (r << _U64(span)) | (a[j] * rep) if span < 64 else a[j]
                    j += run
                return r & m
            if k in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I, z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I):
                zero = a[1] == 0
                dv = np.where(zero, _U64(1), a[1])
                if k in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I):
                    return np.where(zero, m, a[0] // dv)
                return np.where(zero, a[0], a[0] % dv)
            if k in (z3.Z3_OP_BSDIV, z3.Z3_OP_BSDIV_I, z3.Z3_OP_BSREM, z3.Z3_OP_BSREM_I):
                x, y = _signed(a[0], w), _signed(a[1], w)
                zero = y == 0
                ys = np.where(zero, np.int64(1), y)
                q = np.abs(x) // np.abs(ys)
                q = np.where((x < 0) != (ys < 0), -q, q)
                if k in (z3.Z3_OP_BSDIV, z3.Z3_OP_BSDIV_I):
                    # SMT-LIB: x / 0 is -1 for x >= 0 and 1 for x < 0
                    q = np.where(zero, np.where(x < 0, np.int64(1), np.int64(-1)), q)
                    return q.view(_U64) & m
                r = np.where(zero, x, x - q * ys)
                return r.view(_U64) & m
        raise NotEvaluable(f"operation {R.symbol(ctx, R.decl_name(ctx, d)).decode()}")

    def boolean(self, k, args, a) -> np.ndarray:
        if k == z3.Z3_OP_NOT:
            return ~a[0]
        if k in (z3.Z3_OP_AND, z3.Z3_OP_OR):
            return functools.reduce(operator.and_ if k == z3.Z3_OP_AND else operator.or_, a)
        if k == z3.Z3_OP_ITE:
            return np.where(a[0], a[1], a[2])
        if k not in _BOOL_OPS or (k == z3.Z3_OP_DISTINCT and len(a) != 2):
            raise NotEvaluable(f"operation of kind {k}")
        if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT):
            if not self.width(args[0]) and a[0].dtype != bool:
                raise NotEvaluable("equality of a sort other than bit-vectors and Booleans")
            return a[0] == a[1] if k == z3.Z3_OP_EQ else a[0] != a[1]
        if k in (z3.Z3_OP_ULT, z3.Z3_OP_ULEQ, z3.Z3_OP_UGT, z3.Z3_OP_UGEQ):
            x, y = a
        else:
            w = self.width(args[0])
            x, y = _signed(a[0], w), _signed(a[1], w)
        if k in (z3.Z3_OP_ULT, z3.Z3_OP_SLT):
            return x < y
        if k in (z3.Z3_OP_ULEQ, z3.Z3_OP_SLEQ):
            return x <= y
        if k in (z3.Z3_OP_UGT, z3.Z3_OP_SGT):
            return x > y
        return x >= y


__all__ = ["NotEvaluable", "evaluate", "evaluate_grid", "evaluate_grid_raw"]
