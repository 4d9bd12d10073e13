"""The symbolic domain: z3 terms for symbolic lanes, plain ints and bools for concrete ones.

A value is a list with one entry per lane. Thread ids, sizes and most addresses are concrete
in a bounded launch, so most lanes of most values stay plain Python numbers; only data is
symbolic. Lanes whose operands are all concrete are computed by the concrete domain in one
numpy call (the same primitive definitions, so concrete folding can never disagree with the
emulator); the rest become z3 terms that transcribe SMT-LIB's QF_BV/QF_FP operations.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import z3

from semantics.domains.base import FP_FORMATS
from semantics.domains import z3raw
from semantics.domains.concrete import ConcreteDomain
from semantics.domains.real_exactness import rounded_conversions, rounded_lanes
from semantics.choices import CONSTANT_PREFIX, FUNCTION_PREFIX

_RM = {"rn": z3.RNE, "rz": z3.RTZ, "rm": z3.RTN, "rp": z3.RTP, "rna": z3.RNA}


def fp_sort(fmt: str) -> z3.FPSortRef:
    e, s = FP_FORMATS[fmt]
    return z3raw.fp_sort(e, s)


def _is_concrete(x) -> bool:
    return isinstance(x, (int, bool, np.integer, np.bool_))


# The exact types of concrete lane values the domain meets most (a set lookup by type beats
# an isinstance call per lane; anything else is asked `_is_concrete`).
_CONCRETE = frozenset({int, bool, np.uint64, np.int64, np.bool_, np.uint32, np.int32})


def _symbolic_lanes(vecs) -> list[int]:
    """The lanes where some operand is a term."""
    if len(vecs) == 1:
        return [i for i, x in enumerate(vecs[0])
                if type(x) not in _CONCRETE and not _is_concrete(x)]
    if len(vecs) == 2:
        return [i for i, (x, y) in enumerate(zip(*vecs))
                if (type(x) not in _CONCRETE and not _is_concrete(x)) or
                (type(y) not in _CONCRETE and not _is_concrete(y))]
    return [i for i, xs in enumerate(zip(*vecs)) if not all(map(_is_concrete, xs))]


def _extracted(x, hi: int, lo: int):
    """Bits hi..lo of the term `x`; one whole part of a Concat is that part itself (a half
    of a packed register is the half's own term, so the same arithmetic on the same halves
    builds the same terms, and `_commuted` orders them alike)."""
    if z3.is_app_of(x, z3.Z3_OP_CONCAT):
        top = x.size()
        for part in x.children():
            bottom = top - part.size()
            if hi == top - 1 and lo == bottom:
                return part
            if bottom <= lo and hi < top:
                return _extracted(part, hi - bottom, lo - bottom)
            top = bottom
    return z3.Extract(hi, lo, x)


def _commuted(x, y) -> tuple:
    """The operands of a commutative IEEE operation (add, mul, fma's product) in a canonical
    order, so that `a*b` and `b*a` build one term: ptxas and nvcc swap them freely, and the
    solver cannot see through the swap cheaply. Sound: in z3's floating-point theory (one NaN,
    no payloads) these operations commute exactly, and keq canonicalizes NaN results anyway.
    The order is by z3's structural hash (stable across processes, so obligation texts and
    certificate hashes are reproducible), then by the printed term."""
    ctx = x.ctx.ctx
    if z3raw.read.ast_id(ctx, x.ast) == z3raw.read.ast_id(ctx, y.ast):
        return x, y                    # (a square: printing both to compare them is slow)
    kx, ky = z3raw.read.ast_hash(ctx, x.ast), z3raw.read.ast_hash(ctx, y.ast)
    if kx > ky or (kx == ky and x.sexpr() > y.sexpr()):
        return y, x
    return x, y


_CONSTANTS: dict[tuple[int, int | None], z3.ExprRef] = {}   # interned constant terms
_ONES = {"f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000, "f64": 0x3FF0000000000000}


def _is_one(x, fmt: str) -> bool:
    """Is the bit-vector operand `x` the constant 1.0 of `fmt`?"""
    return isinstance(x, z3.BitVecNumRef) and x.as_long() == _ONES[fmt]


class _Template:
    """`fn`'s one-lane result over a placeholder of `w` bits (`SymbolicDomain.lanewise`)."""

    def __init__(self, key, fn: Callable, w: int) -> None:
        self.placeholder = z3.BitVec(f"keq!lanewise!{key}!{w}", w)
        self.term = fn(SymbolicDomain(1), [self.placeholder])[0]
        self.src, self.dst = (z3.Ast * 1)(), (z3.Ast * 1)()
        self.src[0] = self.placeholder.as_ast()

    def of(self, x):
        if not isinstance(self.term, z3.ExprRef):
            return self.term                       # (it does not depend on the operand)
        self.dst[0] = x.as_ast()
        return z3raw.wrap(_SUBSTITUTE(self.term.ctx_ref(), self.term.as_ast(), 1, self.src,
                                      self.dst), self.term)


class _TemplateN:
    """`fn`'s one-lane result over placeholders of `widths` bits (`lanewise_n`)."""

    def __init__(self, key, fn: Callable, widths: tuple[int, ...]) -> None:
        ph = [z3.BitVec(f"keq!lanewise!{key}!{i}!{w}", w) for i, w in enumerate(widths)]
        self.term = fn(SymbolicDomain(1), *[[p] for p in ph])[0]
        n = len(ph)
        self.n = n
        self.src, self.dst = (z3.Ast * n)(), (z3.Ast * n)()
        for i, p in enumerate(ph):
            self.src[i] = p.as_ast()

    def of(self, xs):
        if not isinstance(self.term, z3.ExprRef):
            return self.term
        for i, x in enumerate(xs):
            self.dst[i] = x.as_ast()
        return z3raw.wrap(_SUBSTITUTE(self.term.ctx_ref(), self.term.as_ast(), self.n,
                                      self.src, self.dst), self.term)


_TEMPLATES: dict[tuple, _Template] = {}
_SUBSTITUTE = z3.z3core.Z3_substitute            # (checked: a sort mismatch raises)


def _conjuncts(c) -> list:
    """`c` and, if it is a conjunction, each of its conjuncts (nested ones too)."""
    out, todo = [], [c]
    while todo:
        k = todo.pop()
        out.append(k)
        if z3.is_and(k):
            todo.extend(k.children())
    return out


class SymbolicDomain:
    """Primitive operations on lists of per-lane ints / z3 terms. See `semantics.domains.base`."""

    def __init__(self, lanes: int, real_floats: bool = False) -> None:
        self.lanes = lanes
        # mode real: a concrete float result that rounds stays a term (`real_exactness`)
        self.real_floats = real_floats
        self.c = ConcreteDomain(lanes)
        self._approx_fns: dict[tuple[str, str, int], z3.FuncDeclRef] = {}

    # -- plumbing ----------------------------------------------------------------------------
    def _map(self, cfn: Callable, zfn: Callable, widths: Sequence[int | None], *vecs):
        """Apply `cfn` to concrete lanes (as numpy arrays) and `zfn` lane by lane to the rest.
        `widths[i]` is the bit width of argument i, or None for a predicate."""
        n = self.lanes
        sym = _symbolic_lanes(vecs)
        if len(sym) == n:         # no concrete lane: nothing for numpy to do
            # (`self._term(x, w)` per operand, its common case, a term, inlined)
            term, expr = self._term, z3.ExprRef
            if len(vecs) == 1:
                (a,), (wa,) = vecs, widths
                return [zfn(x if isinstance(x, expr) else term(x, wa)) for x in a]
            if len(vecs) == 2:
                (a, b), (wa, wb) = vecs, widths
                return [zfn(x if isinstance(x, expr) else term(x, wa),
                            y if isinstance(y, expr) else term(y, wb))
                        for x, y in zip(a, b)]
            return [zfn(*[self._term(v[i], w) for v, w in zip(vecs, widths)]) for i in sym]
        arrays = []
        for v, w in zip(vecs, widths):
            if sym:
                v = [x if _is_concrete(x) else 0 for x in v]
            arrays.append(np.array(v, dtype=bool) if w is None else
                          np.array([int(x) for x in v], dtype=np.uint64))
        res = cfn(*arrays)
        out = res.tolist()
        if res.dtype == bool:
            out = [bool(x) for x in out]
        for i in sym:
            args = [self._term(v[i], w) for v, w in zip(vecs, widths)]
            out[i] = zfn(*args)
        return out

    @staticmethod
    def _term(x, w: int | None):
        if not _is_concrete(x):
            return x
        key = (int(x), w)
        t = _CONSTANTS.get(key)
        if t is None:
            t = z3.BoolVal(bool(x)) if w is None else z3.BitVecVal(int(x), w)
            if len(_CONSTANTS) < 65536:     # masks and small values recur lane after lane
                _CONSTANTS[key] = t
        return t

    def is_value(self, x) -> bool:
        return isinstance(x, list)

    # -- construction and lanes ----------------------------------------------------------------
    def const(self, value: int, w: int):
        return [value & ((1 << w) - 1)] * self.lanes

    def pconst(self, value: bool):
        return [bool(value)] * self.lanes

    def lane_index(self, w: int):
        return list(range(self.lanes))

    def splat(self, value, w: int):
        return [value & ((1 << w) - 1) if _is_concrete(value) else value] * self.lanes

    def from_ints(self, arr, w: int):
        m = (1 << w) - 1
        return [int(x) & m for x in arr]

    def take(self, v, lanes):
        return [v[int(i)] for i in lanes]

    def gather(self, v, index, w: int):
        return [v[int(i)] for i in index]

    def same_values(self, values: list, lanes: list[int], group) -> bool:
        """As the concrete domain's, comparing terms as data (the same term, not an equal
        value: a question for the solver is not asked here)."""
        for i in lanes:
            ref = values[0][int(group[i])]
            for v in values:
                a = v[i]
                if _is_concrete(a) != _is_concrete(ref) or \
                        (a != ref if _is_concrete(a) else not a.eq(ref)):
                    return False
        return True

    def fresh(self, name: str, w: int):
        """One new symbolic bit-vector (a single lane's value)."""
        return z3.BitVec(name, w)

    # -- bit-vectors -------------------------------------------------------------------------
    def add(self, a, b, w):
        return self._map(lambda x, y: self.c.add(x, y, w), z3raw.BvAdd, (w, w), a, b)

    def sub(self, a, b, w):
        return self._map(lambda x, y: self.c.sub(x, y, w), z3raw.BvSub, (w, w), a, b)

    def mul(self, a, b, w):
        return self._map(lambda x, y: self.c.mul(x, y, w), z3raw.BvMul, (w, w), a, b)

    def mulhi(self, a, b, w, signed):
        ext = z3.SignExt if signed else z3.ZeroExt
        return self._map(lambda x, y: self.c.mulhi(x, y, w, signed),
                         lambda x, y: z3.Extract(2 * w - 1, w, ext(w, x) * ext(w, y)),
                         (w, w), a, b)

    def udiv(self, a, b, w):
        return self._map(lambda x, y: self.c.udiv(x, y, w), z3.UDiv, (w, w), a, b)

    def urem(self, a, b, w):
        return self._map(lambda x, y: self.c.urem(x, y, w), z3.URem, (w, w), a, b)

    def sdiv(self, a, b, w):
        return self._map(lambda x, y: self.c.sdiv(x, y, w), lambda x, y: x / y, (w, w), a, b)

    def srem(self, a, b, w):
        return self._map(lambda x, y: self.c.srem(x, y, w), z3.SRem, (w, w), a, b)

    def band(self, a, b, w):
        return self._map(lambda x, y: self.c.band(x, y, w), z3raw.BvAnd, (w, w), a, b)

    def bor(self, a, b, w):
        return self._map(lambda x, y: self.c.bor(x, y, w), z3raw.BvOr, (w, w), a, b)

    def bxor(self, a, b, w):
        return self._map(lambda x, y: self.c.bxor(x, y, w), z3raw.BvXor, (w, w), a, b)

    def bnot(self, a, w):
        return self._map(lambda x: self.c.bnot(x, w), lambda x: ~x, (w,), a)

    def shl(self, a, s, w):
        return self._map(lambda x, y: self.c.shl(x, y, w), z3raw.BvShl, (w, w), a, s)

    def lshr(self, a, s, w):
        return self._map(lambda x, y: self.c.lshr(x, y, w), z3raw.BvLShr, (w, w), a, s)

    def ashr(self, a, s, w):
        return self._map(lambda x, y: self.c.ashr(x, y, w), z3raw.BvAShr, (w, w), a, s)

    def zext(self, a, w, to):
        if to == w:
            return a
        return self._map(lambda x: self.c.zext(x, w, to), lambda x: z3.ZeroExt(to - w, x),
                         (w,), a)

    def sext(self, a, w, to):
        if to == w:
            return a
        return self._map(lambda x: self.c.sext(x, w, to), lambda x: z3.SignExt(to - w, x),
                         (w,), a)

    def extract(self, a, hi, lo, w):
        if lo == 0 and hi == w - 1:
            return a
        return self._map(lambda x: self.c.extract(x, hi, lo, w),
                         lambda x: _extracted(x, hi, lo), (w,), a)

    def concat(self, hi, lo, w_hi, w_lo):
        if w_hi + w_lo > 64:
            # Wider than the numpy carrier: build terms for every lane.
            return [z3.Concat(self._term(h, w_hi), self._term(l, w_lo)) for h, l in zip(hi, lo)]
        return self._map(lambda x, y: self.c.concat(x, y, w_hi, w_lo), z3.Concat,
                         (w_hi, w_lo), hi, lo)

    def eq(self, a, b, w):
        return self._map(lambda x, y: self.c.eq(x, y, w), z3raw.Eq, (w, w), a, b)

    def ult(self, a, b, w):
        return self._map(lambda x, y: self.c.ult(x, y, w), z3raw.ULT, (w, w), a, b)

    def ule(self, a, b, w):
        return self._map(lambda x, y: self.c.ule(x, y, w), z3raw.ULE, (w, w), a, b)

    def slt(self, a, b, w):
        return self._map(lambda x, y: self.c.slt(x, y, w), z3raw.SLT, (w, w), a, b)

    def sle(self, a, b, w):
        return self._map(lambda x, y: self.c.sle(x, y, w), z3raw.SLE, (w, w), a, b)

    def ite(self, c, a, b, w):
        out = []
        for ci, ai, bi in zip(c, a, b):
            if _is_concrete(ci):
                out.append(ai if ci else bi)
            elif _is_concrete(ai) and _is_concrete(bi) and int(ai) == int(bi):
                out.append(ai)
            else:
                out.append(z3raw.If(ci, self._term(ai, w), self._term(bi, w)))
        return out

    def lanewise(self, key, fn: Callable, a, w: int):
        """`fn(domain, a)` for a function of one `w`-bit operand built from this domain's
        operations, each lane on its own (a result's NaN canonicalization): the lanes where
        `a` is a term get `fn`'s term over a placeholder, built once per `key` (which names
        everything `fn` depends on besides `a`), with `a` substituted in. That is one call
        into z3 per lane instead of one per operation, and the very same term: z3's
        substitution rebuilds the template's nodes without simplifying them, and each
        operation builds a term lane from its operands alone (nothing here reorders or
        inspects them). The other lanes: `fn` itself."""
        sym = [i for i, x in enumerate(a) if isinstance(x, z3.ExprRef)]
        if not sym:
            return fn(self, a)
        template = _TEMPLATES.get((key, w))
        if template is None:
            template = _TEMPLATES[(key, w)] = _Template(key, fn, w)
        if len(sym) == len(a):
            out = [None] * len(a)
        else:
            rest = list(a)
            for i in sym:
                rest[i] = 0           # (its result is replaced below)
            out = fn(self, rest)
        for i in sym:
            out[i] = template.of(a[i])
        return out

    def lanewise_n(self, key, fn: Callable, vecs, widths):
        """`lanewise` over several operands (`vecs`, of `widths` bits): a result's NaN,
        which depends on the operation's inputs too (`semantics.ops.nan_results`)."""
        n = len(vecs[0])
        sym = [i for i in range(n) if any(isinstance(v[i], z3.ExprRef) for v in vecs)]
        if not sym:
            return fn(self, *vecs)
        tkey = (key, tuple(widths))
        template = _TEMPLATES.get(tkey)
        if template is None:
            template = _TEMPLATES[tkey] = _TemplateN(key, fn, tuple(widths))
        if len(sym) == n:
            out = [None] * n
        else:
            rest = [list(v) for v in vecs]
            for i in sym:
                for r in rest:
                    r[i] = 0              # (its result is replaced below)
            out = fn(self, *rest)
        for i in sym:
            out[i] = template.of([self._term(v[i], w) for v, w in zip(vecs, widths)])
        return out

    # -- predicates --------------------------------------------------------------------------
    def pand(self, a, b):
        out = []
        for x, y in zip(a, b):
            if _is_concrete(x):
                out.append(y if x else False)
            elif _is_concrete(y):
                out.append(x if y else False)
            else:
                out.append(z3raw.And(x, y))
        return out

    def por(self, a, b):
        out = []
        for x, y in zip(a, b):
            if _is_concrete(x):
                out.append(True if x else y)
            elif _is_concrete(y):
                out.append(True if y else x)
            else:
                out.append(z3raw.Or(x, y))
        return out

    def pxor(self, a, b):
        return self._map(lambda x, y: x ^ y, z3.Xor, (None, None), a, b)

    def pnot(self, a):
        return [(not x) if _is_concrete(x) else z3raw.Not(x) for x in a]

    def pite(self, c, a, b):
        out = []
        for ci, ai, bi in zip(c, a, b):
            if _is_concrete(ci):
                out.append(ai if ci else bi)
            else:
                out.append(z3raw.If(ci, self._term(ai, None), self._term(bi, None)))
        return out

    def bool_to_bv(self, p, w):
        return [int(bool(x)) if _is_concrete(x) else z3.If(x, z3.BitVecVal(1, w),
                                                           z3.BitVecVal(0, w)) for x in p]

    # -- floating point ----------------------------------------------------------------------
    def _fp(self, fmt, x):
        return z3raw.FromBits(x, fp_sort(fmt))

    def _fp_op(self, fmt, nargs, cfn, zfn, op: str | None = None):
        w = sum(FP_FORMATS[fmt])
        def lane(*xs):
            return z3raw.ToBits(zfn(*[self._fp(fmt, x) for x in xs]))
        return lambda *vecs: self._fmap(op, fmt, fmt, cfn, lane, (w,) * nargs, *vecs)

    def _fmap(self, op: str | None, src: str, dst: str, cfn, zfn, widths, *vecs):
        """`_map` of a float operation; with `real_floats`, the concrete lanes whose result
        rounds get the operation's term on their constants (`real_exactness`)."""
        out = self._map(cfn, zfn, widths, *vecs)
        if self.real_floats and op is not None:
            for i in rounded_lanes(op, src, dst, vecs, out):
                out[i] = zfn(*[self._term(v[i], w) for v, w in zip(vecs, widths)])
        return out

    def fadd(self, fmt, rm, a, b):
        return self._fp_op(fmt, 2, lambda x, y: self.c.fadd(fmt, rm, x, y),
                           lambda x, y: z3raw.FpAdd(z3raw.rounding(rm), *_commuted(x, y)), "add")(a, b)

    def fsub(self, fmt, rm, a, b):
        return self._fp_op(fmt, 2, lambda x, y: self.c.fsub(fmt, rm, x, y),
                           lambda x, y: z3raw.FpSub(z3raw.rounding(rm), x, y), "sub")(a, b)

    def fmul(self, fmt, rm, a, b):
        w = sum(FP_FORMATS[fmt])

        def lane(x, y):
            # x * 1.0 is x, exactly, for every x of the FP theory (its one NaN included):
            # the term of a product by a constant one is its other operand.
            for u, v in ((x, y), (y, x)):
                if _is_one(u, fmt):
                    return v
            return z3raw.ToBits(z3raw.FpMul(z3raw.rounding(rm),
                                            *_commuted(self._fp(fmt, x), self._fp(fmt, y))))
        return self._fmap("mul", fmt, fmt, lambda x, y: self.c.fmul(fmt, rm, x, y), lane,
                          (w, w), a, b)

    def fdiv(self, fmt, rm, a, b):
        return self._fp_op(fmt, 2, lambda x, y: self.c.fdiv(fmt, rm, x, y),
                           lambda x, y: z3raw.FpDiv(z3raw.rounding(rm), x, y), "div")(a, b)

    def ffma(self, fmt, rm, a, b, c):
        w = sum(FP_FORMATS[fmt])

        def lane(x, y, z):
            # fma(1.0, y, z) rounds y + z once, exactly as an add does: the add's term.
            for u, v in ((x, y), (y, x)):
                if _is_one(u, fmt):
                    return z3raw.ToBits(z3raw.FpAdd(z3raw.rounding(rm),
                                                    *_commuted(self._fp(fmt, v),
                                                               self._fp(fmt, z))))
            return z3raw.ToBits(z3raw.FpFMA(z3raw.rounding(rm),
                                            *_commuted(self._fp(fmt, x), self._fp(fmt, y)),
                                            self._fp(fmt, z)))
        return self._fmap("fma", fmt, fmt, lambda x, y, z: self.c.ffma(fmt, rm, x, y, z), lane,
                          (w, w, w), a, b, c)

    def fsqrt(self, fmt, rm, a):
        return self._fp_op(fmt, 1, lambda x: self.c.fsqrt(fmt, rm, x),
                           lambda x: z3raw.FpSqrt(z3raw.rounding(rm), x), "sqrt")(a)

    def fround(self, fmt, rm, a):
        return self._fp_op(fmt, 1, lambda x: self.c.fround(fmt, rm, x),
                           lambda x: z3.fpRoundToIntegral(_RM[rm](), x))(a)

    def fcvt(self, src, dst, rm, a):
        ws = sum(FP_FORMATS[src])
        return self._fmap("cvt", src, dst, lambda x: self.c.fcvt(src, dst, rm, x),
                          lambda x: z3.fpToIEEEBV(z3.fpFPToFP(_RM[rm](), self._fp(src, x),
                                                              fp_sort(dst))), (ws,), a)

    def f2int(self, fmt, rm, a, w, signed):
        ws = sum(FP_FORMATS[fmt])
        conv = z3.fpToSBV if signed else z3.fpToUBV
        return self._map(lambda x: self.c.f2int(fmt, rm, x, w, signed),
                         lambda x: conv(_RM[rm](), self._fp(fmt, x), z3.BitVecSort(w)), (ws,), a)

    def int2f(self, w, signed, fmt, rm, a):
        conv = z3.fpSignedToFP if signed else z3.fpUnsignedToFP

        def lane(x):
            return z3.fpToIEEEBV(conv(_RM[rm](), x, fp_sort(fmt)))
        out = self._map(lambda x: self.c.int2f(w, signed, fmt, rm, x), lane, (w,), a)
        if self.real_floats:
            # (a conversion that rounds stays a term, read exactly as its integer)
            for i in rounded_conversions(w, signed, fmt, a, out):
                out[i] = lane(self._term(a[i], w))
        return out

    def flt(self, fmt, a, b):
        w = sum(FP_FORMATS[fmt])
        return self._map(lambda x, y: self.c.flt(fmt, x, y),
                         lambda x, y: z3.fpLT(self._fp(fmt, x), self._fp(fmt, y)), (w, w), a, b)

    def feq(self, fmt, a, b):
        w = sum(FP_FORMATS[fmt])
        return self._map(lambda x, y: self.c.feq(fmt, x, y),
                         lambda x, y: z3.fpEQ(self._fp(fmt, x), self._fp(fmt, y)), (w, w), a, b)

    def fisnan(self, fmt, a):
        w = sum(FP_FORMATS[fmt])
        return self._map(lambda x: self.c.fisnan(fmt, x),
                         lambda x: z3.fpIsNaN(self._fp(fmt, x)), (w,), a)

    def approx(self, name, fmt, args):
        """Uninterpreted for every lane, concrete or not: the proof may not depend on the
        host's approximation of a function the GPU computes differently."""
        w = sum(FP_FORMATS[fmt])
        key = (name, fmt, len(args))
        f = self._approx_fns.get(key)
        if f is None:
            f = z3.Function(f"{name}.approx.{fmt}", *([z3.BitVecSort(w)] * (len(args) + 1)))
            self._approx_fns[key] = f
        return [f(*[self._term(a[i], w) for a in args]) for i in range(self.lanes)]

    # -- what the ISA leaves open (semantics.choices) --------------------------------
    def unspecified(self, name: str, w: int, keys, choices, natural=None, only=None):
        """A constant `keq!u!<name>!<key>` per lane (`keys` names each lane's thread, warp or
        CTA; the same name and key give the same constant: a value fixed by the hardware
        reads alike twice). `only` (a bool array): the lanes that need one; the others get
        0, which the caller never reads. `choices` and `natural` are the emulator's."""
        names = keys.symbolic_names()
        return [z3.BitVec(f"{CONSTANT_PREFIX}{name}!{k}", w) if only is None or only[i] else 0
                for i, k in enumerate(names)]

    def unspecified_fn(self, name: str, w: int, args, default, choices, widths=None):
        """An uninterpreted function `keq!uf!<name>` of the lanes' `args` (bit-vectors of
        `widths` bits): what the hardware computes from the same inputs is the same in both
        kernels, and nothing else is assumed of it. `default` is the emulator's."""
        widths = list(widths) if widths is not None else [self._width_of(a) for a in args]
        key = (name, tuple(widths), w)
        f = self._approx_fns.get(key)
        if f is None:
            f = z3.Function(f"{FUNCTION_PREFIX}{name}", *[z3.BitVecSort(x) for x in widths],
                            z3.BitVecSort(w))
            self._approx_fns[key] = f
        return [f(*[self._term(a[i], wa) for a, wa in zip(args, widths)])
                for i in range(self.lanes)]

    def tensor_fn(self, name: str, w: int, args, widths, model, choices):
        """The uninterpreted function `keq!uf!<name>` of `args` (as `unspecified_fn`): the
        hardware's datapath is not built as terms; `model` is the emulator's."""
        return self.unspecified_fn(name, w, args, None, choices, widths)

    @staticmethod
    def _width_of(v) -> int:
        for x in v:
            if isinstance(x, z3.BitVecRef):
                return x.size()
        raise ValueError("unspecified_fn needs the width of a concrete operand: pass terms")

    # -- questions about predicates ------------------------------------------------------------
    def is_concrete(self, p) -> bool:
        """True when no lane of the value or predicate is a solver term."""
        return all(_is_concrete(x) for x in p)

    def may_any(self, p) -> bool:
        return any((not _is_concrete(x)) or bool(x) for x in p)

    def must_all(self, p) -> bool:
        return all(_is_concrete(x) and bool(x) for x in p)

    def where(self, p, v):
        # (z3 replaces every occurrence of the lane's predicate, and of each of its
        # conjuncts, by true: sound, since the result differs from v only where the
        # predicate is false)
        out = []
        for c, x in zip(p, v):
            if not (_is_concrete(c) or _is_concrete(x)):
                true = z3.BoolVal(True)
                x = z3.simplify(z3.substitute(x, *((k, true) for k in _conjuncts(c))))
                x = x.as_long() if z3.is_bv_value(x) else x
            out.append(x)
        return out
