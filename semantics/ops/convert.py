"""cvt: conversions between integer and floating-point types (PTX ISA "cvt").

- int -> int: truncate, or sign/zero-extend by the SOURCE type's signedness; .sat clamps the
  source value to the destination's range. No rounding modifier is legal.
- float -> int: an integer rounding .rni .rzi .rmi .rpi is required; NaN -> 0; values out of
  the destination's range clamp to its min/max (PTX: "float-to-integer conversions saturate";
  .sat is redundant). .ftz (f32 source only) flushes a subnormal input first.
- int -> float: a rounding .rn .rz .rm .rp (required unless the conversion is exact, in which
  case an omitted one means nothing).
- float -> float: widening is exact (a rounding modifier, if given, changes nothing); narrowing
  needs .rn .rz .rm .rp (.satfinite: an infinite result becomes the largest finite value with its
  sign; .relu: negative -> +0.0, NaN -> canonical NaN); same type with .rni .rzi .rmi .rpi rounds
  to an integral value; same type without rounding is a move (with .ftz/.sat: flush/clamp).
- .ftz: f32 subnormal inputs and results become sign-preserving zeros. .sat on a float
  destination clamps to [0.0, 1.0], NaN -> +0.0.
- A NaN result of a float destination is an unspecified quiet NaN fixed by the input (PTX
  ISA cvt: "NaN input yields unspecified NaN"; `semantics.ops.nan_results`), canonical under
  the claim's target assumption; the emulator gives the canonical NaN of the destination
  format. A plain `cvt.f32.f32` (no modifier) is a bit-exact move. `.relu` makes NaN results
  the canonical NaN, as the ISA says.
- cvt.rn{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b: d = {cvt(a) in the high half, cvt(b)
  in the low half}.
The fp8 forms (.e4m3x2/.e5m2x2) are semantics/ops/convert_fp8.py's. Everything else (tf32,
fp6, fp4 formats, .rna, .rs, other combinations) resolves to None.
"""

from __future__ import annotations

from semantics.domains.base import FP_FORMATS
from semantics.ops import register
from semantics.ops.common import (CANONICAL_NAN, EXP_MASK, MANT_MASK, SIGN_BIT, flush, fmt_of,
                                  int_max, int_min, is_nan, sign_of)
from semantics.ops.nan_results import nan_result, quiet

_INT_ROUND = {"rni": "rn", "rzi": "rz", "rmi": "rm", "rpi": "rp"}
_FP_ROUND = frozenset({"rn", "rz", "rm", "rp"})
_ONE = {"f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000, "f64": 0x3FF0000000000000}


def _is_int(t) -> bool:
    return t.kind in ("s", "u") and t.bits in (8, 16, 32, 64)


def _is_float(t) -> bool:
    return t.kind in ("f", "bf") and t.lanes == 1


def _is_inf(d, fmt, a, w):
    mag = d.band(a, d.const(EXP_MASK[fmt] | MANT_MASK[fmt], w), w)
    return d.eq(mag, d.const(EXP_MASK[fmt], w), w)


def _pow2_bits(fmt: str, k: int, negative: bool = False) -> int | None:
    """The bit pattern of ±2**k in `fmt`, or None when it exceeds the largest finite value."""
    e, s = FP_FORMATS[fmt]
    bias = (1 << (e - 1)) - 1
    if k > bias:
        return None
    bits = (k + bias) << (s - 1)
    return bits | (SIGN_BIT[fmt] if negative else 0)


def _inf_bits(fmt: str, negative: bool = False) -> int:
    return EXP_MASK[fmt] | (SIGN_BIT[fmt] if negative else 0)


def _max_finite(fmt: str) -> int:
    return (EXP_MASK[fmt] - (1 << (FP_FORMATS[fmt][1] - 1))) | MANT_MASK[fmt]


def _saturate(d, fmt, a, w):
    """.sat on a float destination: clamp to [0.0, 1.0]; NaN and -0.0 -> +0.0."""
    one = d.const(_ONE[fmt], w)
    zero = d.const(0, w)
    r = d.ite(d.flt(fmt, one, a), one, a, w)
    r = d.ite(sign_of(d, fmt, a, w), zero, r, w)
    return d.ite(is_nan(d, fmt, a, w), zero, r, w)


# ---------------------------------------------------------------------------------------------
# the four kinds of conversion, each on a single value

def int_to_int(d, dt, st, a, sat: bool):
    wd, ws = dt.bits, st.bits
    if wd < ws:
        r = d.extract(a, wd - 1, 0, ws)
    elif wd > ws:
        r = d.sext(a, ws, wd) if st.is_signed else d.zext(a, ws, wd)
    else:
        r = a
    if not sat:
        return r
    lt = d.slt if st.is_signed else d.ult
    smin, smax = int_min(st), int_max(st)
    lo, hi = int_min(dt), int_max(dt)
    if lo > smin:        # the source can lie below the destination's range
        r = d.ite(lt(a, d.const(lo, ws), ws), d.const(lo, wd), r, wd)
    if hi < smax:        # ... or above it
        r = d.ite(lt(d.const(hi, ws), a, ws), d.const(hi, wd), r, wd)
    return r


def float_to_int(d, dt, fmt, rm, a, ftz: bool):
    w = sum(FP_FORMATS[fmt])
    wd = dt.bits
    if ftz:
        a = flush(d, fmt, a, w)
    r = d.fround(fmt, rm, a)                       # the rounded value, still a float
    lo, hi = int_min(dt), int_max(dt)
    # r < lo  <=>  r < -2**(wd-1) (signed) / r < 0 (unsigned): both bounds are powers of two.
    if dt.is_signed:
        nb = _pow2_bits(fmt, wd - 1, negative=True)
        below = d.flt(fmt, r, d.const(nb, w)) if nb is not None else \
            d.eq(r, d.const(_inf_bits(fmt, True), w), w)
        top = wd - 1
    else:
        below = d.flt(fmt, r, d.const(0, w))
        top = wd
    # r > hi  <=>  r >= 2**top, since r is integral.
    pb = _pow2_bits(fmt, top)
    if pb is not None:
        p = d.const(pb, w)
        above = d.por(d.flt(fmt, p, r), d.feq(fmt, p, r))
    else:
        above = d.eq(r, d.const(_inf_bits(fmt), w), w)
    v = d.f2int(fmt, rm, a, wd, dt.is_signed)
    v = d.ite(below, d.const(lo, wd), v, wd)
    v = d.ite(above, d.const(hi, wd), v, wd)
    return d.ite(is_nan(d, fmt, a, w), d.const(0, wd), v, wd)


def int_to_float(d, fmt, rm, st, a):
    return d.int2f(st.bits, st.is_signed, fmt, rm, a)


def float_to_float(x, dfmt, sfmt, rm, a):
    """Rounded (or exact, when widening) conversion; a NaN input gives the NaN the ISA
    leaves open (`_converted_nan`)."""
    d = x.d
    ws, wd = sum(FP_FORMATS[sfmt]), sum(FP_FORMATS[dfmt])
    r = d.fcvt(sfmt, dfmt, rm, a)
    return d.ite(is_nan(d, sfmt, a, ws), _converted_nan(x, dfmt, sfmt, a), r, wd)


def _converted_nan(x, dfmt: str, sfmt: str, a):
    """The NaN a conversion of the NaN `a` returns: unspecified, fixed by `a` (canonical
    under the target assumption; the emulator's: canonical)."""
    d = x.d
    ws, wd = sum(FP_FORMATS[sfmt]), sum(FP_FORMATS[dfmt])
    canon = d.const(CANONICAL_NAN[dfmt], wd)
    if dfmt in x.choices.target.canonical_nan:
        return canon
    return quiet(d, dfmt, d.unspecified_fn(f"nan/cvt.{dfmt}.{sfmt}", wd, [a], canon,
                                           x.choices, [ws]), wd)


def _widening(src: str, dst: str) -> bool:
    (es, ss), (ed, sd) = FP_FORMATS[src], FP_FORMATS[dst]
    return ed >= es and sd >= ss


def _exact_int_to_float(st, fmt: str) -> bool:
    return st.bits - (1 if st.is_signed else 0) <= FP_FORMATS[fmt][1]


# ---------------------------------------------------------------------------------------------
# the semantic function and its resolver

def _post_float(d, form, fmt, r, w):
    """Destination-side modifiers of a float result."""
    if form.has("ftz") and fmt == "f32":
        r = flush(d, fmt, r, w)
    if form.has("satfinite"):
        big = d.bor(d.band(r, d.const(SIGN_BIT[fmt], w), w), d.const(_max_finite(fmt), w), w)
        r = d.ite(_is_inf(d, fmt, r, w), big, r, w)
    if form.has("relu"):
        r = d.ite(sign_of(d, fmt, r, w), d.const(0, w), r, w)
        r = d.ite(is_nan(d, fmt, r, w), d.const(CANONICAL_NAN[fmt], w), r, w)
    if form.has("sat"):
        r = _saturate(d, fmt, r, w)
    return r


def _convert_one(x, dt, st, a):
    form = x.form
    d = x.d
    if _is_int(dt) and _is_int(st):
        return int_to_int(d, dt, st, a, form.has("sat"))
    if _is_int(dt):
        return float_to_int(d, dt, fmt_of(st), _INT_ROUND[form.rounding], a, form.has("ftz"))
    dfmt = fmt_of(dt)
    wd = dt.bits
    if _is_int(st):
        r = int_to_float(d, dfmt, form.rounding or "rn", st, a)
        return _post_float(d, form, dfmt, r, wd)
    sfmt = fmt_of(st)
    ws = st.bits
    if form.has("ftz") and sfmt == "f32":
        a = flush(d, sfmt, a, ws)
    if dfmt == sfmt:
        if form.rounding in _INT_ROUND:
            r = nan_result(x, dfmt, f"cvt.{form.rounding}", d.fround(dfmt, _INT_ROUND[
                form.rounding], a), [a], wd)
        elif form.flags:
            r = nan_result(x, dfmt, "cvt", a, [a], wd)   # a flushing/clamping cvt: arithmetic
        else:
            return a                           # plain cvt.T.T: a move
    else:
        r = float_to_float(x, dfmt, sfmt, form.rounding or "rn", a)
    return _post_float(d, form, dfmt, r, wd)


def _cvt(x) -> None:
    dt, st = x.form.types
    x.write(0, _convert_one(x, dt, st, x.read(1, st)), dt)


def _cvt_pack(x) -> None:
    """cvt.frnd.{f16x2,bf16x2}.f32 d, a, b: cvt(a) in the high half, cvt(b) in the low half."""
    dt, st = x.form.types
    lane_t = _lane_type(dt)
    hi = _convert_one(x, lane_t, st, x.read(1, st))
    lo = _convert_one(x, lane_t, st, x.read(2, st))
    x.write(0, x.d.concat(hi, lo, 16, 16), dt)


def _lane_type(t):
    from semantics.ir.types import TYPES
    return TYPES["bf16" if t.kind == "bf" else "f16"]


@register("cvt")
def _resolve_cvt(form):
    if len(form.types) != 2:
        return None
    dt, st = form.types
    rnd = form.rounding
    flags = form.flags
    if dt.name in ("f16x2", "bf16x2") and st.name == "f32":
        if rnd not in ("rn", "rz") or not flags <= {"relu", "satfinite"}:
            return None
        return _cvt_pack
    if not ((_is_int(dt) or _is_float(dt)) and (_is_int(st) or _is_float(st))):
        return None
    f32_side = (_is_float(st) and fmt_of(st) == "f32") or (_is_float(dt) and fmt_of(dt) == "f32")
    if "ftz" in flags and not f32_side:
        return None                              # .ftz applies to f32 sources/destinations only
    if _is_int(dt) and _is_int(st):
        return _cvt if rnd is None and flags <= {"sat"} else None
    if _is_int(dt):                              # float -> int
        return _cvt if rnd in _INT_ROUND and flags <= {"ftz", "sat"} else None
    dfmt = fmt_of(dt)
    if _is_int(st):                              # int -> float
        if not flags <= {"sat"}:
            return None
        if rnd is None:
            return _cvt if _exact_int_to_float(st, dfmt) else None
        return _cvt if rnd in _FP_ROUND else None
    sfmt = fmt_of(st)                            # float -> float
    if dfmt == sfmt:
        if rnd is not None and rnd not in _INT_ROUND:
            return None
        return _cvt if flags <= {"ftz", "sat"} else None
    if _widening(sfmt, dfmt):
        if rnd is not None and rnd not in _FP_ROUND:
            return None
        return _cvt if flags <= {"ftz", "sat"} else None
    if rnd not in _FP_ROUND:
        return None                              # narrowing needs a floating-point rounding
    allowed = {"ftz", "sat"}
    if dfmt in ("f16", "bf16"):
        allowed |= {"relu", "satfinite"}
    if not flags <= allowed or ("sat" in flags and flags & {"relu", "satfinite"}):
        return None
    return _cvt
