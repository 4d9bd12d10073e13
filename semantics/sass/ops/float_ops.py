"""Floating-point SASS instructions, each mapped to the PTX instruction ptxas lowers to it, whose
semantics it then runs (`ptxcall.ptx`): rounding, .FTZ, .SAT and the canonical NaN are the
PTX definitions, not restated here.

| SASS                              | PTX                                   |
|-----------------------------------|---------------------------------------|
| FADD[.FTZ][.RZ/.RM/.RP][.SAT]     | add.{rn,rz,rm,rp}[.ftz][.sat].f32     |
| FMUL[...]                         | mul.{..}[.ftz][.sat].f32              |
| FFMA[...]                         | fma.{..}[.ftz][.sat].f32              |
| FMNMX[.FTZ] d, a, b, p            | p ? min[.ftz].f32 : max[.ftz].f32     |
| FSETP.cmp[.FTZ].bop p, q, a, b, c | setp.cmp[.ftz].bop.f32 p|q, a, b, c   |
| FSEL d, a, b, p                   | selp.b32 (p ? a : b)                  |
| MUFU.EX2/RCP/RSQ/LG2/SQRT/TANH    | ex2/rcp/rsqrt/lg2/sqrt/tanh .approx.ftz.f32 |
| F2I[.FTZ].{S32,U32}.{TRUNC,FLOOR,CEIL,-} | cvt.{rzi,rmi,rpi,rni}[.ftz].{s32,u32}.f32 |
| I2F[.{S32,U32}][.RZ/.RM/.RP]      | cvt.{rn,..}.f32.{s32,u32}             |
| HFMA2[.MMA] d, a, b, c            | fma.rn.f16x2                          |
| F2F.F64.F32 / F2F.F32.F64         | cvt.f64.f32 / cvt.rn.f32.f64          |
| I2FP.F32.{S32,U32}                | cvt.rn.f32.{s32,u32}                  |
| F2FP[.F16.F32].PACK_AB d, a, b    | {cvt.rn.f16.f32 a, cvt.rn.f16.f32 b}  |
| HADD2.F32 d, -RZ, b.H0_H0/.H1_H1  | cvt.f32.f16 of the half               |

ASSUMPTIONS (undocumented behaviour), each also in docs/sass.md:
- Source modifiers `-a`/`|a|` are sign-bit operations applied before the operation (no
  canonicalization of a NaN input: the result canonicalizes anyway).
- FMNMX's predicate selects min when true, max when false (`!PT` = fmaxf, which the corpus'
  max reductions confirm against their PTX in the differential tests).
- MUFU.* is the PTX `.approx.ftz` function of the same name: ptxas lowers
  `ex2.approx.ftz.f32` to a lone MUFU.EX2 (the non-.ftz form gets extra scaling code), so
  the two share one uninterpreted function in proofs.
- F2I's .NTZ changes no value.
- HFMA2's two decimal immediates are the high half first, then the low half (a move of 4 is
  printed `HFMA2.MMA R3, -RZ, RZ, 0, 2.384185791015625e-07`); .MMA selects the execution
  unit only.
- FCHK p, a, b (is the fast reciprocal-based division of a by b exact?) is modelled as
  always true: the division always takes ptxas' slow path, which computes the IEEE quotient
  for every input, so the value is the one the hardware's choice would give.
"""

from __future__ import annotations

from semantics.sass.operands import FloatLit
from semantics.sass.ops import register
from semantics.sass.ops.access import (
    fail,
    float_bits,
    float_src,
    int_src,
    parts,
    pred_value,
    reg_value,
    set_pred,
    set_reg,
)
from semantics.sass.ops.ptxcall import ptx

_RND = {"RN": "rn", "RZ": "rz", "RM": "rm", "RP": "rp"}


def _arith_name(op: str, form) -> str | None:
    m = list(form.mods)
    rnd = [k for k in m if k in _RND]
    rest = [k for k in m if k not in _RND]
    if len(rnd) > 1 or not set(rest) <= {"FTZ", "SAT"} or len(rest) != len(set(rest)):
        return None
    name = f"{op}.{_RND[rnd[0]] if rnd else 'rn'}"
    if "FTZ" in rest:
        name += ".ftz"
    if "SAT" in rest:
        name += ".sat"
    return name + ".f32"


def _arith(name: str, nsrc: int):
    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) != nsrc + 1:
            fail(x, f"expected {nsrc} sources")
        set_reg(x, ops[0], ptx(x, name, [float_src(x, k) for k in range(1, nsrc + 1)]))
    return sem


def _resolver(op: str, nsrc: int):
    def resolve(form):
        name = _arith_name(op, form)
        return _arith(name, nsrc) if name else None
    return resolve


register("FADD", "FADD32I")(_resolver("add", 2))
register("FMUL", "FMUL32I")(_resolver("mul", 2))
register("FFMA", "FFMA32I")(_resolver("fma", 3))


def _fmnmx(ftz: bool):
    sfx = ".ftz.f32" if ftz else ".f32"

    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) != 4:
            fail(x, "expected FMNMX d, a, b, p")
        a, b = float_src(x, 1), float_src(x, 2)
        mn = ptx(x, "min" + sfx, [a, b])
        mx = ptx(x, "max" + sfx, [a, b])
        set_reg(x, ops[0], x.d.ite(pred_value(x, ops[3]), mn, mx, 32))
    return sem


@register("FMNMX")
def _resolve_fmnmx(form):
    m = set(form.mods)
    return _fmnmx("FTZ" in m) if m <= {"FTZ"} else None


_FCMP = {k: k.lower() for k in ("EQ", "NE", "LT", "LE", "GT", "GE", "EQU", "NEU", "LTU", "LEU",
                                "GTU", "GEU", "NUM", "NAN")}
_BOOL = {"AND": "and", "OR": "or", "XOR": "xor"}


def _fsetp(name: str):
    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) != 5:
            fail(x, "expected FSETP p, q, a, b, c")
        p, q = ptx(x, name, [float_src(x, 2), float_src(x, 3), pred_value(x, ops[4])],
                   pair=True)
        set_pred(x, ops[0], p)
        set_pred(x, ops[1], q)
    return sem


@register("FSETP")
def _resolve_fsetp(form):
    m = list(form.mods)
    ftz = "FTZ" in m
    rest = [k for k in m if k != "FTZ"]
    if len(rest) != 2 or rest[0] not in _FCMP or rest[1] not in _BOOL:
        return None
    return _fsetp(f"setp.{_FCMP[rest[0]]}{'.ftz' if ftz else ''}.{_BOOL[rest[1]]}.f32")


def _fsel(x) -> None:
    ops = x.ins.operands
    if len(ops) != 4:
        fail(x, "expected FSEL d, a, b, p")
    set_reg(x, ops[0], x.d.ite(pred_value(x, ops[3]), float_src(x, 1), float_src(x, 2), 32))


@register("FSEL")
def _resolve_fsel(form):
    return _fsel if not form.mods else None


_MUFU = {"EX2": "ex2", "RCP": "rcp", "RSQ": "rsqrt", "LG2": "lg2", "SQRT": "sqrt",
         "TANH": "tanh"}


def _mufu(name: str):
    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) != 2:
            fail(x, "expected MUFU d, a")
        set_reg(x, ops[0], ptx(x, name, [float_src(x, 1)]))
    return sem


@register("MUFU")
def _resolve_mufu(form):
    if len(form.mods) != 1 or form.mods[0] not in _MUFU:
        return None
    fn = _MUFU[form.mods[0]]
    return _mufu(f"{fn}.approx.ftz.f32" if fn != "tanh" else "tanh.approx.f32")


_F2I_RND = {"TRUNC": "rzi", "FLOOR": "rmi", "CEIL": "rpi"}


@register("F2I")
def _resolve_f2i(form):
    m = list(form.mods)
    rnd = [k for k in m if k in _F2I_RND]
    types = [k for k in m if k in ("S32", "U32")]
    rest = set(m) - set(rnd) - set(types) - {"FTZ", "NTZ", "F32"}
    if rest or len(rnd) > 1 or len(types) > 1:
        return None
    name = (f"cvt.{_F2I_RND[rnd[0]] if rnd else 'rni'}{'.ftz' if 'FTZ' in m else ''}."
            f"{(types[0] if types else 'S32').lower()}.f32")

    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) != 2:
            fail(x, "expected F2I d, a")
        set_reg(x, ops[0], ptx(x, name, [float_src(x, 1)]))
    return sem


@register("I2F")
def _resolve_i2f(form):
    m = list(form.mods)
    rnd = [k for k in m if k in _RND]
    types = [k for k in m if k in ("S32", "U32")]
    rest = set(m) - set(rnd) - set(types) - {"F32"}
    if rest or len(rnd) > 1 or len(types) > 1:
        return None
    name = f"cvt.{_RND[rnd[0]] if rnd else 'rn'}.f32.{(types[0] if types else 'S32').lower()}"

    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) != 2:
            fail(x, "expected I2F d, a")
        set_reg(x, ops[0], ptx(x, name, [int_src(x, 1)]))
    return sem


def _h2_src(x, k: int):
    """A packed f16x2 source: a register (no swizzle), or -RZ/RZ."""
    op = x.ins.operands[k]
    base, src = parts(op)
    if src is not None and (src.mods or src.absolute or src.invert):
        fail(x, f"f16x2 operand '{op}' (swizzles and |.| are not modelled)")
    d = x.d
    v = reg_value(x, base, 32)
    if src is not None and src.neg:
        v = d.bxor(v, d.const(0x80008000, 32), 32)
    return v


def _hfma2(x) -> None:
    ops = x.ins.operands
    d = x.d
    if len(ops) == 5 and all(isinstance(o, FloatLit) for o in ops[3:]):
        c = d.const(float_bits(ops[3], 16) << 16 | float_bits(ops[4], 16), 32)
    elif len(ops) == 4:
        c = _h2_src(x, 3)
    else:
        fail(x, "expected HFMA2 d, a, b, c")
    set_reg(x, ops[0], ptx(x, "fma.rn.f16x2", [_h2_src(x, 1), _h2_src(x, 2), c]))


@register("HFMA2")
def _resolve_hfma2(form):
    return _hfma2 if set(form.mods) <= {"MMA"} else None


def _fchk(x) -> None:
    ops = x.ins.operands
    if len(ops) != 3:
        fail(x, "expected FCHK p, a, b")
    float_src(x, 1), float_src(x, 2)
    set_pred(x, ops[0], x.d.pconst(True))


@register("FCHK")
def _resolve_fchk(form):
    return _fchk if not form.mods else None


def _f2f(name: str, src_w: int, dst_w: int):
    def sem(x) -> None:
        """F2F.Fdst.Fsrc: PTX cvt between float formats (64-bit values in register pairs)."""
        ops = x.ins.operands
        if len(ops) != 2:
            fail(x, "expected F2F d, a")
        from semantics.sass.ops.access import set_wide
        set_wide(x, ops[0], ptx(x, name, [float_src(x, 1, src_w)]), dst_w)
    return sem


@register("F2F")
def _resolve_f2f(form):
    m = list(form.mods)
    rnd = [k for k in m if k in _RND]
    fmts = [k for k in m if k in ("F32", "F64")]
    if len(fmts) != 2 or set(m) - set(rnd) - set(fmts) - {"FTZ"} or len(rnd) > 1:
        return None
    dst, src = fmts
    if dst == src:
        return None
    ftz = ".ftz" if "FTZ" in m else ""
    if dst == "F64":
        return _f2f(f"cvt{ftz}.f64.f32", 32, 64)
    return _f2f(f"cvt.{_RND[rnd[0]] if rnd else 'rn'}{ftz}.f32.f64", 64, 32)


@register("I2FP")
def _resolve_i2fp(form):
    """I2FP.F32.{S32,U32}: the sm_90 integer-to-float move, PTX cvt.rn.f32.{s32,u32}."""
    m = list(form.mods)
    types = [k for k in m if k in ("S32", "U32")]
    rnd = [k for k in m if k in _RND]
    if "F32" not in m or len(types) != 1 or set(m) - {"F32", *types, *rnd} or len(rnd) > 1:
        return None
    name = f"cvt.{_RND[rnd[0]] if rnd else 'rn'}.f32.{types[0].lower()}"

    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) != 2:
            fail(x, "expected I2FP d, a")
        set_reg(x, ops[0], ptx(x, name, [int_src(x, 1)]))
    return sem


def _f2fp_pack(x) -> None:
    """F2FP[.F16.F32].PACK_AB d, a, b: d = {f16(a) high, f16(b) low}, each `cvt.rn.f16.f32`
    (ASSUMPTION: PACK_AB puts A in the high half, as PTX cvt.rn.f16x2.f32 d, a, b does)."""
    ops = x.ins.operands
    if len(ops) != 3:
        fail(x, "expected F2FP.PACK_AB d, a, b")
    d = x.d
    hi = ptx(x, "cvt.rn.f16.f32", [float_src(x, 1)])
    lo = ptx(x, "cvt.rn.f16.f32", [float_src(x, 2)])
    set_reg(x, ops[0], d.concat(hi, lo, 16, 16))


@register("F2FP")
def _resolve_f2fp(form):
    """F2FP.PACK_AB (sm_80 prints no types) and F2FP.F16.F32.PACK_AB (sm_90): f16 only."""
    return _f2fp_pack if set(form.mods) in ({"PACK_AB"}, {"F16", "F32", "PACK_AB"}) else None


def _hadd2_f32(x) -> None:
    """HADD2.F32 d, -RZ, b.H0_H0 (or .H1_H1): ptxas' f16 -> f32 conversion: -0 + h is h
    exactly, so this is PTX cvt.f32.f16 of the selected half. Other HADD2.F32 operands are
    not modelled."""
    ops = x.ins.operands
    a, asrc = parts(ops[1])
    b, bsrc = parts(ops[2])
    if len(ops) != 3 or str(a) != "RZ" or asrc is None or not asrc.neg or asrc.mods or \
            bsrc is None or bsrc.mods not in (("H0_H0",), ("H1_H1",)) or bsrc.neg or \
            bsrc.absolute:
        fail(x, "only the conversion form HADD2.F32 d, -RZ, Rb.H0_H0|H1_H1 is modelled")
    d = x.d
    v = reg_value(x, b, 32)
    half = d.extract(v, 15, 0, 32) if bsrc.mods == ("H0_H0",) else d.extract(v, 31, 16, 32)
    set_reg(x, ops[0], ptx(x, "cvt.f32.f16", [half]))


@register("HADD2")
def _resolve_hadd2(form):
    return _hadd2_f32 if form.mods == ("F32",) else None
