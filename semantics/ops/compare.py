"""Comparison and selection: setp, set, selp, slct (integer and floating point, f16x2 too)."""

from __future__ import annotations

from semantics.ir.operands import Pair
from semantics.ir.types import TYPES
from semantics.ops import register
from semantics.ops.common import flush, fmt_of

_INT_CMPS = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}
_FLOAT_CMPS = {"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
               "num", "nan"}


def int_compare(d, cmp: str, a, b, w: int, signed: bool):
    lt = (lambda p, q: d.slt(p, q, w)) if signed else (lambda p, q: d.ult(p, q, w))
    le = (lambda p, q: d.sle(p, q, w)) if signed else (lambda p, q: d.ule(p, q, w))
    if cmp == "eq":
        return d.eq(a, b, w)
    if cmp == "ne":
        return d.pnot(d.eq(a, b, w))
    if cmp in ("lt", "lo"):
        return lt(a, b) if cmp == "lt" else d.ult(a, b, w)
    if cmp in ("le", "ls"):
        return le(a, b) if cmp == "le" else d.ule(a, b, w)
    if cmp in ("gt", "hi"):
        return lt(b, a) if cmp == "gt" else d.ult(b, a, w)
    if cmp in ("ge", "hs"):
        return le(b, a) if cmp == "ge" else d.ule(b, a, w)
    raise ValueError(cmp)


def float_compare(d, cmp: str, fmt: str, a, b):
    """IEEE comparisons; the `u` forms are also true when either operand is NaN."""
    unordered = d.por(d.fisnan(fmt, a), d.fisnan(fmt, b))
    if cmp == "num":
        return d.pnot(unordered)
    if cmp == "nan":
        return unordered
    base = cmp[:-1] if cmp.endswith("u") else cmp
    lt, eq = d.flt(fmt, a, b), d.feq(fmt, a, b)
    gt = d.flt(fmt, b, a)
    r = {"eq": eq, "ne": d.por(lt, gt), "lt": lt, "le": d.por(lt, eq), "gt": gt,
         "ge": d.por(gt, eq)}[base]
    return d.por(r, unordered) if cmp.endswith("u") else r


def _compare_lanes(x, form, a_op, b_op):
    """[one predicate per packed lane] for the comparison of the form."""
    t = form.types[-1]
    d = x.d
    a, b = x.read(a_op, t), x.read(b_op, t)
    if not t.is_float:
        return [int_compare(d, form.cmp, a, b, t.bits, t.is_signed)]
    fmt = fmt_of(t)
    lw = t.lane_bits
    out = []
    for k in range(t.lanes):
        ak = d.extract(a, (k + 1) * lw - 1, k * lw, t.bits)
        bk = d.extract(b, (k + 1) * lw - 1, k * lw, t.bits)
        if form.has("ftz"):
            ak, bk = flush(d, fmt, ak, lw), flush(d, fmt, bk, lw)
        out.append(float_compare(d, form.cmp, fmt, ak, bk))
    return out


def _combine(x, form, p, c_op):
    if form.boolop is None:
        return p
    c = x.read_pred(c_op)
    return {"and": x.d.pand, "or": x.d.por, "xor": x.d.pxor}[form.boolop](p, c)


def _setp(x) -> None:
    form = x.form
    dst = x.operand(0)
    lanes = _compare_lanes(x, form, 1, 2)
    if len(lanes) == 2:                      # f16x2 / bf16x2: p gets the low half, q the high
        pair = dst if isinstance(dst, Pair) else None
        x.write_pred(pair.first if pair else dst, _combine(x, form, lanes[0], 3))
        if pair:
            x.write_pred(pair.second, _combine(x, form, lanes[1], 3))
        return
    p = lanes[0]
    if isinstance(dst, Pair):
        x.write_pred(dst.first, _combine(x, form, p, 3))
        x.write_pred(dst.second, _combine(x, form, x.d.pnot(p), 3))
    else:
        x.write_pred(dst, _combine(x, form, p, 3))


def _set(x) -> None:
    form = x.form
    dt = form.types[0]
    d = x.d
    p = _combine(x, form, _compare_lanes(x, form, 1, 2)[0], 3)
    if dt.is_float:
        one = {"f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80, "f64": 0x3FF0000000000000}
        true = d.const(one[fmt_of(dt)], dt.bits)
    else:
        true = d.const(-1, dt.bits)
    x.write(0, d.ite(p, true, d.const(0, dt.bits), dt.bits), dt)


def _selp(x) -> None:
    t = x.form.type
    x.write(0, x.d.ite(x.read_pred(3), x.read(1, t), x.read(2, t), t.bits), t)


def _slct(x) -> None:
    t, ct = x.form.types
    d = x.d
    c = x.read(3, ct)
    if ct.is_float:
        if x.form.has("ftz"):
            c = flush(d, "f32", c, 32)
        ge = d.pnot(d.flt("f32", c, d.const(0, 32)))   # NaN counts as >= 0? PTX: c >= 0
        ge = d.pand(ge, d.pnot(d.fisnan("f32", c)))
    else:
        ge = d.sle(d.const(0, ct.bits), c, ct.bits)
    x.write(0, d.ite(ge, x.read(1, t), x.read(2, t), t.bits), t)


@register("setp")
def _resolve_setp(form):
    t = form.types[-1] if form.types else None
    if t is None or not form.flags <= {"ftz"} or form.cmp is None:
        return None
    if t.is_float and form.cmp in _FLOAT_CMPS and t.kind in ("f", "bf"):
        return _setp
    if t.is_int and form.cmp in _INT_CMPS and t.bits <= 64:
        return _setp
    return None


@register("set")
def _resolve_set(form):
    if len(form.types) != 2 or not form.flags <= {"ftz"} or form.cmp is None:
        return None
    st = form.types[1]
    ok = (st.is_float and st.lanes == 1 and form.cmp in _FLOAT_CMPS) or \
        (st.is_int and form.cmp in _INT_CMPS)
    return _set if ok and form.types[0].lanes == 1 else None


@register("selp")
def _resolve_selp(form):
    return _selp if not form.flags and form.types[0].kind != "pred" else None


@register("slct")
def _resolve_slct(form):
    ok = form.types[1] in (TYPES["s32"], TYPES["f32"]) and form.flags <= {"ftz"}
    return _slct if ok else None
