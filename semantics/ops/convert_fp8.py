"""cvt to and from the fp8 formats .e4m3x2 / .e5m2x2 (sm_89+; PTX ISA "cvt"). The formats
themselves: semantics/fp8.py.

Forms (d[15:8] is the first fp8 value, as the ISA's Semantics block writes it):
- cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b: d (.b16) = {cvt(a) in d[15:8],
  cvt(b) in d[7:0]} ("the value converted from input a is stored in the upper 8 bits of d").
- cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a: d[15:8] = cvt(a[31:16]),
  d[7:0] = cvt(a[15:0]).
- cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a: d[31:16] = cvt(a[15:8]), d[15:0] = cvt(a[7:0]);
  every fp8 value is an f16 value, so the conversion is exact.
Rules (ISA cvt, "Description" and the saturation modifiers):
- .rn: to nearest, ties to even (the only rounding these forms take; narrowing needs it and
  .satfinite).
- .satfinite: a NaN input gives a NaN; "if the absolute value of input (ignoring sign) is
  greater than MAX_NORM of the specified destination format, then the result is
  sign-preserved MAX_NORM" (448 for e4m3, 57344 for e5m2; ±inf inputs included). Below it
  the rounded value never exceeds MAX_NORM, so a narrowing never gives an e5m2 infinity and
  never e4m3's S.1111.111 except for a NaN.
- .relu: "clamps the result to 0 if negative. NaN results are converted to canonical NaN"
  (0x7F for fp8, 0x7FFF for f16; a result with its sign bit set, -0 included, becomes +0,
  as convert.py reads "negative").
- A NaN result without .relu: which NaN, the ISA does not say. As every cvt in
  semantics/ops/convert.py: an unspecified NaN fixed by the input (`Domain.unspecified_fn`;
  the emulator's: 0x7F for fp8 (cuda_fp8.hpp's host conversion gives it too), 0x7FFF for
  f16, which the f16-nan-canonical assumption fixes). An fp8 NaN: e4m3 S.1111.111 with an
  open sign; e5m2 a quiet NaN (IEEE conversions deliver quiet NaNs) with open sign/payload.
- Subnormal inputs and results are kept (no .ftz form exists).
Everything else resolves to None: .rz/.rs, the x4 formats, bf16x2 sources (newer targets),
narrowing without .rn.satfinite, fp4/fp6/ue8m0.

How, over Domain operations on the source's bits (so both domains share this meaning):
|a| at or above the target's smallest normal: rebias the exponent and round the fraction to
nearest even as an integer (a carry into the exponent is the correct rounding). Below it:
|a| + 2^k in the source format, 2^k chosen so that its ulp is the target's subnormal
quantum: that IEEE add rounds once, to nearest even, at the right place, and its low bits
minus 2^k's are the target's pattern (2^M, when it rounds up, is the smallest normal's).
"""

from __future__ import annotations

from semantics.domains.base import FP_FORMATS
from semantics.fp8 import FP8, Fp8Format
from semantics.ir.types import TYPES
from semantics.ops import register
from semantics.ops.common import CANONICAL_NAN, SIGN_BIT, is_nan, sign_of
from semantics.ops.nan_results import quiet

B16, B32 = TYPES["b16"], TYPES["b32"]
_FP8X2 = {"e4m3x2": "e4m3", "e5m2x2": "e5m2"}


def _src_bits(sfmt: str, neg: bool, sig: int, exp: int) -> int:
    """The pattern of the normal value sig * 2^exp in the IEEE format `sfmt`."""
    e, s = FP_FORMATS[sfmt]
    bias, mbits = (1 << (e - 1)) - 1, s - 1
    top = exp + sig.bit_length() - 1
    frac = (sig << (mbits - sig.bit_length() + 1)) & ((1 << mbits) - 1)
    return (SIGN_BIT[sfmt] if neg else 0) | ((top + bias) << mbits) | frac


def narrow(x, f8: Fp8Format, sfmt: str, a, relu: bool):
    """cvt.rn.satfinite{.relu} of one f32/f16 value `a` to `f8`: its 8 bits."""
    d = x.d
    ws = sum(FP_FORMATS[sfmt])
    ms = FP_FORMATS[sfmt][1] - 1
    mag = d.band(a, d.const(SIGN_BIT[sfmt] - 1, ws), ws)
    min_normal = _src_bits(sfmt, False, 1, 1 - f8.bias)
    max_norm = _src_bits(sfmt, *f8.decode(f8.max_finite))
    # the normal range: rebias, then round the low `shift` bits to nearest even
    shift = ms - f8.mbits
    v = d.sub(mag, d.const((_bias(sfmt) - f8.bias) << ms, ws), ws)
    odd = d.band(d.lshr(v, d.const(shift, ws), ws), d.const(1, ws), ws)
    up = d.add(d.const((1 << (shift - 1)) - 1, ws), odd, ws)
    normal = d.lshr(d.add(v, up, ws), d.const(shift, ws), ws)
    # the subnormal range: one IEEE add at the magnitude whose ulp is the target's quantum
    magic = d.const(_src_bits(sfmt, False, 1, 1 - f8.bias - f8.mbits + ms), ws)
    sub = d.sub(d.fadd(sfmt, "rn", mag, magic), magic, ws)
    r = d.ite(d.ult(mag, d.const(min_normal, ws), ws), sub, normal, ws)
    r = d.ite(d.ult(d.const(max_norm, ws), mag, ws), d.const(f8.max_finite, ws), r, ws)
    r = d.extract(r, 7, 0, ws)
    r = d.bor(r, d.band(d.extract(a, ws - 1, ws - 8, ws), d.const(0x80, 8), 8), 8)
    nan = is_nan(d, sfmt, a, ws)
    if relu:
        r = d.ite(sign_of(d, sfmt, a, ws), d.const(0, 8), r, 8)
        return d.ite(nan, d.const(f8.canonical_nan, 8), r, 8)
    made = d.unspecified_fn(f"nan/cvt.{f8.name}.{sfmt}", 8, [a],
                            d.const(f8.canonical_nan, 8), x.choices, [ws])
    return d.ite(nan, d.bor(made, d.const(f8.nan_bits, 8), 8), r, 8)


def _bias(sfmt: str) -> int:
    return (1 << (FP_FORMATS[sfmt][0] - 1)) - 1


def widen(x, f8: Fp8Format, a, relu: bool):
    """cvt.rn{.relu}.f16 of one fp8 value `a` (8 bits): its 16 bits, exact."""
    d = x.d
    mag = d.zext(d.band(a, d.const(0x7F, 8), 8), 8, 16)
    sign = d.shl(d.zext(d.band(a, d.const(0x80, 8), 8), 8, 16), d.const(8, 16), 16)
    rebias = (_bias("f16") - f8.bias) << 10
    r = d.add(d.shl(mag, d.const(10 - f8.mbits, 16), 16), d.const(rebias, 16), 16)
    if rebias:
        # an fp8 subnormal m * 2^(1-bias-M): (2^(1-bias) with fraction m) - 2^(1-bias), exact
        low = d.const(rebias + (1 << 10), 16)
        sub = d.fsub("f16", "rn", d.add(r, d.const(1 << 10, 16), 16), low)
        r = d.ite(d.ult(mag, d.const(1 << f8.mbits, 16), 16), sub, r, 16)
    r = d.bor(r, sign, 16)
    top = f8.max_finite + (1 if f8.has_inf else 0)     # inf, or e4m3's largest finite value
    nan = d.ult(d.const(top, 16), mag, 16)
    canon = d.const(CANONICAL_NAN["f16"], 16)
    if relu:
        r = d.ite(sign_of(d, "f16", r, 16), d.const(0, 16), r, 16)
        return d.ite(nan, canon, r, 16)
    if "f16" in x.choices.target.canonical_nan:
        return d.ite(nan, canon, r, 16)
    made = quiet(d, "f16", d.unspecified_fn(f"nan/cvt.f16.{f8.name}", 16, [a], canon,
                                            x.choices, [8]), 16)
    return d.ite(nan, made, r, 16)


# ---------------------------------------------------------------------------------------------
# the semantic functions and their resolver

def _f8(t) -> Fp8Format:
    return FP8[_FP8X2[t.name]]


def _narrow_f32(x) -> None:
    """cvt.rn.satfinite{.relu}.f8x2.f32 d, a, b: cvt(a) in d[15:8], cvt(b) in d[7:0]."""
    dt, st = x.form.types
    relu = x.form.has("relu")
    hi = narrow(x, _f8(dt), "f32", x.read(1, st), relu)
    lo = narrow(x, _f8(dt), "f32", x.read(2, st), relu)
    x.write(0, x.d.concat(hi, lo, 8, 8), B16)


def _narrow_f16x2(x) -> None:
    """cvt.rn.satfinite{.relu}.f8x2.f16x2 d, a: cvt(a[31:16]) in d[15:8], cvt(a[15:0]) in
    d[7:0]."""
    d = x.d
    f8, relu = _f8(x.form.types[0]), x.form.has("relu")
    a = x.read(1, B32)
    hi = narrow(x, f8, "f16", d.extract(a, 31, 16, 32), relu)
    lo = narrow(x, f8, "f16", d.extract(a, 15, 0, 32), relu)
    x.write(0, d.concat(hi, lo, 8, 8), B16)


def _widen_x2(x) -> None:
    """cvt.rn{.relu}.f16x2.f8x2 d, a: cvt(a[15:8]) in d[31:16], cvt(a[7:0]) in d[15:0]."""
    d = x.d
    f8, relu = _f8(x.form.types[1]), x.form.has("relu")
    a = x.read(1, B16)
    hi = widen(x, f8, d.extract(a, 15, 8, 16), relu)
    lo = widen(x, f8, d.extract(a, 7, 0, 16), relu)
    x.write(0, d.concat(hi, lo, 16, 16), B32)


@register("cvt")
def _resolve_cvt_fp8(form):
    if len(form.types) != 2 or form.rounding != "rn":
        return None
    dt, st = form.types
    if dt.name in _FP8X2:
        if "satfinite" not in form.flags or not form.flags <= {"satfinite", "relu"}:
            return None
        return {"f32": _narrow_f32, "f16x2": _narrow_f16x2}.get(st.name)
    if dt.name == "f16x2" and st.name in _FP8X2:
        return _widen_x2 if form.flags <= {"relu"} else None
    return None
