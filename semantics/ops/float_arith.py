"""Floating-point arithmetic: add sub mul fma mad div rcp sqrt rsqrt ex2 lg2 sin cos tanh abs neg
min max copysign testp, on f32 f64 f16 f16x2 bf16 bf16x2 (packed types lane by lane).

Modifiers, as the PTX ISA defines them:
- rounding .rn .rz .rm .rp; add/sub/mul (and div.f64, mad) default to .rn when it is omitted.
  PTX allows ptxas to contract an `add`/`mul` *without* a rounding modifier into an fma; keq
  gives such an instruction its stated meaning (a separately rounded operation).
- .ftz flushes subnormal inputs and results to sign-preserving zero (results: after rounding).
- .sat clamps the result to [0.0, 1.0]; a NaN result becomes +0.0 and so does -0.0.
- NaN results follow the PTX ISA (`semantics.ops.nan_results`): single and half precision
  return an unspecified NaN, fixed for the operation and its inputs (canonical under the
  claim's target assumption "f32-nan-canonical" / "f16-nan-canonical"); double precision
  propagates a NaN operand's payload, quieted. The emulator returns the canonical NaN
  (0x7FFFFFFF, 0x7FFF, 0x7FFFFFFFFFFFFFFF) where the ISA leaves the NaN open.
- `*.approx` (and div.full) functions are approximations: concretely the host's value,
  symbolically an uninterpreted function per form; every use records an "approximation" effect.
- abs/neg are sign-bit operations. The PTX ISA says that NaN inputs give an *unspecified* NaN
  (except abs.f64: "passed through unchanged"): an unspecified quiet NaN of the input
  (`nan_results.unspecified_nan`); the emulator returns the IEEE sign-bit result, quieted.

Everything the family does not cover resolves to None (reported as unsupported).
"""

from __future__ import annotations

from semantics.errors import UnsupportedError
from semantics.ops import register
from semantics.ops.common import (CANONICAL_NAN, EXP_MASK, MANT_MASK, SIGN_BIT, flush, fmt_of,
                                  is_nan, sign_of)
from semantics.ops.nan_results import nan_result, quiet, unspecified_nan

_FP_ROUND = frozenset({"rn", "rz", "rm", "rp"})
_ONE = {"f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000, "f64": 0x3FF0000000000000}


# ---------------------------------------------------------------------------------------------
# helpers over the Domain primitives

def _float_type(form):
    """The single float type of the form, or None."""
    if len(form.types) != 1:
        return None
    t = form.types[0]
    return t if t.kind in ("f", "bf") and t.lanes in (1, 2) else None


def _per_lane(d, t, fn, *vals):
    """Apply `fn(*lane_values)` to each 16-bit lane of a packed type (or once for a scalar)."""
    if t.lanes == 1:
        return fn(*vals)
    lw = t.lane_bits
    parts = [fn(*[d.extract(v, (k + 1) * lw - 1, k * lw, t.bits) for v in vals])
             for k in range(t.lanes)]
    return d.concat(parts[1], parts[0], lw, lw)


def _is_inf(d, fmt, a, w):
    mag = d.band(a, d.const(EXP_MASK[fmt] | MANT_MASK[fmt], w), w)
    return d.eq(mag, d.const(EXP_MASK[fmt], w), w)


def _is_zero(d, fmt, a, w):
    return d.eq(d.band(a, d.const(EXP_MASK[fmt] | MANT_MASK[fmt], w), w), d.const(0, w), w)


def _saturate(d, fmt, a, w):
    """.sat: clamp to [0.0, 1.0]; NaN -> +0.0; anything with the sign bit set (-0.0 included)
    -> +0.0 (assumption for -0.0)."""
    one = d.const(_ONE[fmt], w)
    zero = d.const(0, w)
    r = d.ite(d.flt(fmt, one, a), one, a, w)
    r = d.ite(sign_of(d, fmt, a, w), zero, r, w)
    return d.ite(is_nan(d, fmt, a, w), zero, r, w)


def _relu(d, fmt, a, w):
    """.relu: negative results (sign bit set, -0.0 included) -> +0.0; NaN -> canonical NaN."""
    r = d.ite(sign_of(d, fmt, a, w), d.const(0, w), a, w)
    return d.ite(is_nan(d, fmt, a, w), d.const(CANONICAL_NAN[fmt], w), r, w)


def _arith_result(x, form, fmt, r, w, op: str, inputs: list):
    """Post-processing shared by arithmetic: the NaN the ISA allows (`nan_results`), .ftz on
    the result, .sat, .relu (lane by lane: a symbolic domain builds it once and substitutes
    each result in)."""
    d = x.d
    flags = tuple(f for f in ("ftz", "sat", "relu") if form.has(f))
    r = nan_result(x, fmt, op, r, inputs, w)
    if not flags:
        return r

    def post(d, r):
        if "ftz" in flags:
            r = flush(d, fmt, r, w)
        if "sat" in flags:
            r = _saturate(d, fmt, r, w)
        if "relu" in flags:
            r = _relu(d, fmt, r, w)
        return r
    return d.lanewise(("arith_result", fmt) + flags, post, r, w)


def _inputs(d, form, fmt, vals, w):
    return [flush(d, fmt, v, w) for v in vals] if form.has("ftz") else list(vals)


# ---------------------------------------------------------------------------------------------
# add sub mul fma mad div rcp sqrt

def _ieee(kind: str, rm: str, nargs: int):
    """An IEEE-rounded operation on `nargs` source operands."""
    def sem(x) -> None:
        form = x.form
        t = form.type
        d = x.d
        fmt, w = fmt_of(t), t.lane_bits
        srcs = [x.read(i + 1, t) for i in range(nargs)]

        def lane(*vals):
            v = _inputs(d, form, fmt, vals, w)
            if kind == "add":
                r = d.fadd(fmt, rm, v[0], v[1])
            elif kind == "sub":
                r = d.fsub(fmt, rm, v[0], v[1])
            elif kind == "mul":
                r = d.fmul(fmt, rm, v[0], v[1])
            elif kind == "fma":
                r = d.ffma(fmt, rm, v[0], v[1], v[2])
            elif kind == "div":
                r = d.fdiv(fmt, rm, v[0], v[1])
            elif kind == "rcp":
                r = d.fdiv(fmt, rm, d.const(_ONE[fmt], w), v[0])
            elif kind == "sqrt":
                r = d.fsqrt(fmt, rm, v[0])
            else:
                raise ValueError(kind)
            return _arith_result(x, form, fmt, r, w, f"{kind}.{rm}", v)

        x.write(0, _per_lane(d, t, lane, *srcs), t)
    return sem


def _approx(name: str, nargs: int):
    """An approximate function: an uninterpreted function symbolically. The function's name
    includes the .ftz variant: .ftz and non-.ftz hardware paths need not agree after flushing."""
    def sem(x) -> None:
        form = x.form
        t = form.type
        d = x.d
        fmt, w = fmt_of(t), t.lane_bits
        srcs = [x.read(i + 1, t) for i in range(nargs)]
        fname = name + (".ftz" if form.has("ftz") else "")

        def lane(*vals):
            v = _inputs(d, form, fmt, vals, w)
            return _arith_result(x, form, fmt, d.approx(fname, fmt, v), w, fname + ".approx", v)

        x.effect("approximation", form.name)
        x.write(0, _per_lane(d, t, lane, *srcs), t)
    return sem


def _check(form, *, types, rounding, flags, operands=None, ftz_types=("f32",),
           sat_types=("f32",)):
    """Common validity check; returns the float type or None."""
    t = _float_type(form)
    if t is None or t.name not in types:
        return None
    if form.rounding not in rounding or not form.flags <= flags:
        return None
    if form.has("ftz") and t.name not in ftz_types:
        return None
    if form.has("sat") and t.name not in sat_types:
        return None
    return t


_ALL = ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2")
_HALF = ("f16", "f16x2")
_BHALF = ("bf16", "bf16x2")


def _rm_of(form):
    return form.rounding or "rn"


def _resolve_add_sub_mul(kind):
    def resolve(form):
        t = _float_type(form)
        if t is None:
            return None
        half = t.name in _HALF + _BHALF
        ok = _check(form, types=_ALL,
                    rounding=(None, "rn") if half else (None, *_FP_ROUND),
                    flags=frozenset({"ftz", "sat"}),
                    ftz_types=("f32",) + _HALF, sat_types=("f32",) + _HALF)
        return _ieee(kind, _rm_of(form), 2) if ok is not None else None
    return resolve


register("add")(_resolve_add_sub_mul("add"))
register("sub")(_resolve_add_sub_mul("sub"))
register("mul")(_resolve_add_sub_mul("mul"))


def _resolve_fma_like(opcode):
    def resolve(form):
        t = _float_type(form)
        if t is None:
            return None
        half = t.name in _HALF + _BHALF
        if opcode == "fma" and form.rounding is None:
            return None                      # fma requires a rounding modifier
        if form.has("relu") and (not half or form.has("sat")):
            return None
        if half and opcode == "mad":
            return None                      # PTX has no mad.f16
        ok = _check(form, types=_ALL,
                    rounding=(None, "rn") if half else (None, *_FP_ROUND),
                    flags=frozenset({"ftz", "sat", "relu"}),
                    ftz_types=("f32",) + _HALF, sat_types=("f32",) + _HALF)
        # mad.f32 (any PTX target from sm_20 on) is fma; without a rounding modifier: .rn.
        return _ieee("fma", _rm_of(form), 3) if ok is not None else None
    return resolve


register("fma")(_resolve_fma_like("fma"))
register("mad")(_resolve_fma_like("mad"))


@register("div")
def _resolve_div(form):
    t = _float_type(form)
    if t is None or t.name not in ("f32", "f64"):
        return None
    if form.has("approx") or form.has("full"):
        if t.name != "f32" or form.rounding is not None or \
                not form.flags <= {"approx", "ftz"} | {"full"} or \
                (form.has("approx") and form.has("full")):
            return None
        return _approx("div.full" if form.has("full") else "div", 2)
    if not form.flags <= ({"ftz"} if t.name == "f32" else set()):
        return None
    if form.rounding is None:
        # div.f32 without a modifier has no meaning from PTX ISA 1.4 on; div.f64 means div.rn.
        return _ieee("div", "rn", 2) if t.name == "f64" else None
    return _ieee("div", form.rounding, 2) if form.rounding in _FP_ROUND else None


def _resolve_rcp_sqrt(kind):
    def resolve(form):
        t = _float_type(form)
        if t is None or t.name not in ("f32", "f64"):
            return None
        if form.has("approx"):
            # rcp.approx.ftz.f64 / sqrt.approx.f64 are not modelled (gross approximations).
            if t.name != "f32" or form.rounding is not None or not form.flags <= {"approx", "ftz"}:
                return None
            return _approx(kind, 1)
        if form.rounding not in _FP_ROUND:
            return None
        if not form.flags <= ({"ftz"} if t.name == "f32" else set()):
            return None
        return _ieee(kind, form.rounding, 1)
    return resolve


register("rcp")(_resolve_rcp_sqrt("rcp"))
register("sqrt")(_resolve_rcp_sqrt("sqrt"))


def _resolve_approx_only(name, types=("f32",)):
    def resolve(form):
        t = _float_type(form)
        if t is None or t.name not in types or form.rounding is not None:
            return None
        if not form.has("approx") or not form.flags <= {"approx", "ftz"}:
            return None
        if form.has("ftz") and t.name != "f32":
            return None
        if name == "tanh" and form.has("ftz"):
            return None
        return _approx(name, 1)
    return resolve


register("rsqrt")(_resolve_approx_only("rsqrt", ("f32", "f64")))
register("ex2")(_resolve_approx_only("ex2"))
register("lg2")(_resolve_approx_only("lg2"))
register("sin")(_resolve_approx_only("sin"))
register("cos")(_resolve_approx_only("cos"))
register("tanh")(_resolve_approx_only("tanh"))


# ---------------------------------------------------------------------------------------------
# abs neg copysign

def _sign_op(op: str):
    def sem(x) -> None:
        form = x.form
        t = form.type
        d = x.d
        fmt, w = fmt_of(t), t.lane_bits
        a = x.read(1, t)
        sign = d.const(SIGN_BIT[fmt], w)

        def lane(v):
            if form.has("ftz"):
                v = flush(d, fmt, v, w)
            if op == "neg":
                r = d.bxor(v, sign, w)
            else:
                r = d.band(v, d.bnot(sign, w), w)
            if op == "abs" and fmt == "f64":
                # PTX ISA: "For abs.f64, NaN input is passed through unchanged."
                return d.ite(is_nan(d, fmt, v, w), v, r, w)
            # PTX ISA: "NaN inputs yield an unspecified NaN" (the emulator: the IEEE result)
            nan = unspecified_nan(x, fmt, op, v, w, default=quiet(d, fmt, r, w))
            return d.ite(is_nan(d, fmt, v, w), nan, r, w)

        x.write(0, _per_lane(d, t, lane, a), t)
    return sem


def _any_lane(d, t, a):
    """The predicate 'some lane of the (possibly packed) value a is NaN'."""
    fmt, lw = fmt_of(t), t.lane_bits
    p = None
    for k in range(t.lanes):
        v = d.extract(a, (k + 1) * lw - 1, k * lw, t.bits)
        q = is_nan(d, fmt, v, lw)
        p = q if p is None else d.por(p, q)
    return p


def _resolve_sign_op(op):
    def resolve(form):
        t = _float_type(form)
        if t is None or form.rounding is not None or not form.flags <= {"ftz"}:
            return None
        if form.has("ftz") and t.name not in ("f32",) + _HALF:
            return None
        return _sign_op(op)
    return resolve


register("abs")(_resolve_sign_op("abs"))
register("neg")(_resolve_sign_op("neg"))


def _copysign(x) -> None:
    """copysign.T d, a, b: b with the sign of a (a bit operation, NaNs included)."""
    t = x.form.type
    d = x.d
    fmt, w = fmt_of(t), t.bits
    a, b = x.read(1, t), x.read(2, t)
    sign = d.const(SIGN_BIT[fmt], w)
    x.write(0, d.bor(d.band(b, d.bnot(sign, w), w), d.band(a, sign, w), w), t)


@register("copysign")
def _resolve_copysign(form):
    t = _float_type(form)
    ok = t is not None and t.name in ("f32", "f64") and not form.flags and form.rounding is None
    return _copysign if ok else None


# ---------------------------------------------------------------------------------------------
# min max

def _minmax(is_max: bool):
    def sem(x) -> None:
        form = x.form
        t = form.type
        d = x.d
        fmt, w = fmt_of(t), t.lane_bits
        sign = d.const(SIGN_BIT[fmt], w)
        canon = d.const(CANONICAL_NAN[fmt], w)

        if len(x.ins.operands) != 3:
            raise UnsupportedError(f"'{form.name}' with three source operands has no semantics "
                                   f"in keq", x.ins.loc)

        def lt(a, b):
            """a < b with -0.0 < +0.0 (NaNs are handled by the caller)."""
            zeros = d.pand(_is_zero(d, fmt, a, w), _is_zero(d, fmt, b, w))
            neg_pos = d.pand(sign_of(d, fmt, a, w), d.pnot(sign_of(d, fmt, b, w)))
            return d.por(d.flt(fmt, a, b), d.pand(zeros, neg_pos))

        def lane(a, b):
            if form.has("ftz"):
                a, b = flush(d, fmt, a, w), flush(d, fmt, b, w)
            xs = d.bxor(d.band(a, sign, w), d.band(b, sign, w), w)
            if form.has("abs"):
                a = d.band(a, d.bnot(sign, w), w)
                b = d.band(b, d.bnot(sign, w), w)
            na, nb = is_nan(d, fmt, a, w), is_nan(d, fmt, b, w)
            r = d.ite(lt(a, b), b, a, w) if is_max else d.ite(lt(b, a), b, a, w)
            if form.has("NaN"):
                r = d.ite(d.por(na, nb), canon, r, w)
            else:
                r = d.ite(na, b, d.ite(nb, a, r, w), w)
                r = d.ite(d.pand(na, nb), canon, r, w)
            if form.has("xorsign"):
                rn = is_nan(d, fmt, r, w)
                r = d.ite(rn, r, d.bor(d.band(r, d.bnot(sign, w), w), xs, w), w)
            return r

        x.write(0, _per_lane(d, t, lane, x.read(1, t), x.read(2, t)), t)
    return sem


def _resolve_minmax(is_max):
    def resolve(form):
        t = _float_type(form)
        if t is None or form.rounding is not None:
            return None
        if not form.flags <= {"ftz", "NaN", "xorsign", "abs"}:
            return None
        if form.has("xorsign") != form.has("abs"):
            return None                      # .abs alone is the 3-input form; .xorsign needs .abs
        if t.name == "f64" and form.flags:
            return None
        if form.has("ftz") and t.name not in ("f32",) + _HALF:
            return None
        return _minmax(is_max)
    return resolve


register("min")(_resolve_minmax(False))
register("max")(_resolve_minmax(True))


# ---------------------------------------------------------------------------------------------
# testp

_TESTP = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")


def _testp(op: str):
    def sem(x) -> None:
        t = x.form.type
        d = x.d
        fmt, w = fmt_of(t), t.bits
        a = x.read(1, t)
        nan = is_nan(d, fmt, a, w)
        inf = _is_inf(d, fmt, a, w)
        exp_all_ones = d.eq(d.band(a, d.const(EXP_MASK[fmt], w), w), d.const(EXP_MASK[fmt], w), w)
        exp_zero = d.eq(d.band(a, d.const(EXP_MASK[fmt], w), w), d.const(0, w), w)
        zero = _is_zero(d, fmt, a, w)
        p = {
            "finite": d.pnot(exp_all_ones),
            "infinite": inf,
            "number": d.pnot(nan),
            "notanumber": nan,
            # PTX ISA: "positive and negative zero are considered normal numbers".
            "normal": d.pand(d.pnot(exp_all_ones), d.por(d.pnot(exp_zero), zero)),
            "subnormal": d.pand(exp_zero, d.pnot(zero)),
        }[op]
        x.write_pred(0, p)
    return sem


@register("testp")
def _resolve_testp(form):
    t = _float_type(form)
    if t is None or t.name not in ("f32", "f64") or form.rounding is not None:
        return None
    ops = [f for f in form.flags if f in _TESTP]
    if len(ops) != 1 or len(form.flags) != 1:
        return None
    return _testp(ops[0])
