"""Integer arithmetic: add sub mul mad mul24 mad24 sad div rem abs neg min max (and .sat,
.lo/.hi/.wide, .cc carries are not modelled: refused as unsupported)."""

from __future__ import annotations

from semantics.ir.types import TYPES, PtxType
from semantics.ops import register
from semantics.ops.common import int_max, int_min


def _is_int(form) -> bool:
    return bool(form.types) and form.types[0].is_int


def _wide(t: PtxType) -> PtxType:
    return TYPES[f"{t.kind}{t.bits * 2}"]


def _saturate_s32(x, full, w):
    """Clamp a (w+1)-bit-exact signed result to the s32 range: computed in 64 bits."""
    d = x.d
    lo, hi = d.const(int_min(TYPES["s32"]), 64), d.const(int_max(TYPES["s32"]), 64)
    c = d.ite(d.slt(full, lo, 64), lo, full, 64)
    c = d.ite(d.slt(hi, c, 64), hi, c, 64)
    return d.extract(c, 31, 0, 64)


def _add_sub(sub: bool):
    def sem(x) -> None:
        t = x.form.type
        d, w = x.d, t.bits
        a, b = x.read(1, t), x.read(2, t)
        if x.form.has("sat"):
            fa, fb = d.sext(a, 32, 64), d.sext(b, 32, 64)
            full = d.sub(fa, fb, 64) if sub else d.add(fa, fb, 64)
            x.write(0, _saturate_s32(x, full, w), t)
            return
        x.write(0, d.sub(a, b, w) if sub else d.add(a, b, w), t)
    return sem


def _mul_parts(x, t, a, b):
    """The product under .lo/.hi/.wide as (value, result type)."""
    d, w = x.d, t.bits
    if x.form.has("wide"):
        wt = _wide(t)
        ext = d.sext if t.is_signed else d.zext
        return d.mul(ext(a, w, 2 * w), ext(b, w, 2 * w), 2 * w), wt
    if x.form.has("hi"):
        return d.mulhi(a, b, w, t.is_signed), t
    return d.mul(a, b, w), t


def _mul(x) -> None:
    t = x.form.type
    v, rt = _mul_parts(x, t, x.read(1, t), x.read(2, t))
    x.write(0, v, rt)


def _mad(x) -> None:
    t = x.form.type
    d = x.d
    v, rt = _mul_parts(x, t, x.read(1, t), x.read(2, t))
    c = x.read(3, rt)
    if x.form.has("sat"):      # mad.hi.sat.s32 only
        full = d.add(d.sext(v, 32, 64), d.sext(c, 32, 64), 64)
        x.write(0, _saturate_s32(x, full, 32), rt)
        return
    x.write(0, d.add(v, c, rt.bits), rt)


def _mul24_parts(x, t, a, b):
    d = x.d
    ext = d.sext if t.is_signed else d.zext
    a24, b24 = ext(d.extract(a, 23, 0, 32), 24, 64), ext(d.extract(b, 23, 0, 32), 24, 64)
    p = d.mul(a24, b24, 64)
    return d.extract(p, 47, 16, 64) if x.form.has("hi") else d.extract(p, 31, 0, 64)


def _mul24(x) -> None:
    t = x.form.type
    x.write(0, _mul24_parts(x, t, x.read(1, t), x.read(2, t)), t)


def _mad24(x) -> None:
    t = x.form.type
    p = _mul24_parts(x, t, x.read(1, t), x.read(2, t))
    x.write(0, x.d.add(p, x.read(3, t), 32), t)


def _sad(x) -> None:
    t = x.form.type
    d, w = x.d, t.bits
    a, b, c = x.read(1, t), x.read(2, t), x.read(3, t)
    lt = d.slt(a, b, w) if t.is_signed else d.ult(a, b, w)
    x.write(0, d.add(c, d.ite(lt, d.sub(b, a, w), d.sub(a, b, w), w), w), t)


def _div_rem(rem: bool):
    def sem(x) -> None:
        t = x.form.type
        d, w = x.d, t.bits
        a, b = x.read(1, t), x.read(2, t)
        zero = d.eq(b, d.const(0, w), w)
        x.effect("undefined", f"integer {'remainder' if rem else 'division'} by zero", zero)
        if t.is_signed:
            v = d.srem(a, b, w) if rem else d.sdiv(a, b, w)
        else:
            v = d.urem(a, b, w) if rem else d.udiv(a, b, w)
        x.write(0, v, t)
    return sem


def _abs(x) -> None:
    t = x.form.type
    d, w = x.d, t.bits
    a = x.read(1, t)
    x.write(0, d.ite(d.slt(a, d.const(0, w), w), d.sub(d.const(0, w), a, w), a, w), t)


def _neg(x) -> None:
    t = x.form.type
    x.write(0, x.d.sub(x.d.const(0, t.bits), x.read(1, t), t.bits), t)


def _minmax(is_max: bool):
    def sem(x) -> None:
        t = x.form.type
        d, w = x.d, t.bits
        a, b = x.read(1, t), x.read(2, t)
        lt = d.slt(a, b, w) if t.is_signed else d.ult(a, b, w)
        v = d.ite(lt, b, a, w) if is_max else d.ite(lt, a, b, w)
        if x.form.has("relu"):
            v = d.ite(d.slt(v, d.const(0, w), w), d.const(0, w), v, w)
        x.write(0, v, t)
    return sem


def _int_only(fn, allowed=frozenset()):
    def resolve(form):
        if not _is_int(form) or not form.flags <= allowed or form.types[0].bits > 64:
            return None
        return fn
    return resolve


register("add")(lambda f: (_add_sub(False) if _is_int(f) and f.flags <= {"sat"}
                           and (not f.has("sat") or f.type.name == "s32") else None))
register("sub")(lambda f: (_add_sub(True) if _is_int(f) and f.flags <= {"sat"}
                           and (not f.has("sat") or f.type.name == "s32") else None))
register("mul")(_int_only(_mul, frozenset({"lo", "hi", "wide"})))
register("mad")(lambda f: (_mad if _is_int(f) and f.flags <= {"lo", "hi", "wide", "sat"}
                           and (not f.has("sat") or (f.has("hi") and f.type.name == "s32"))
                           else None))
register("mul24")(_int_only(_mul24, frozenset({"lo", "hi"})))
register("mad24")(_int_only(_mad24, frozenset({"lo", "hi"})))
register("sad")(_int_only(_sad))
register("div")(_int_only(_div_rem(False)))
register("rem")(_int_only(_div_rem(True)))
register("abs")(lambda f: _abs if _is_int(f) and f.type.is_signed and not f.flags else None)
register("neg")(lambda f: _neg if _is_int(f) and f.type.is_signed and not f.flags else None)
register("min")(_int_only(_minmax(False), frozenset({"relu"})))
register("max")(_int_only(_minmax(True), frozenset({"relu"})))
