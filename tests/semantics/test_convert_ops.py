"""cvt (semantics/ops/convert.py): golden results from the PTX ISA and IEEE 754 for the corners,
and concrete == symbolic bit for bit on every case and on random operands mixed with specials."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fpbits import bf16, f16, f32, f64, int_operand, integral_edge, operand
from harness import agree, execute
from semantics.errors import UnsupportedError

# register type holding each cvt type (8-bit values live in 16-bit registers)
REG = {"u8": "b16", "s8": "b16", "u16": "u16", "s16": "s16", "u32": "u32", "s32": "s32",
       "u64": "u64", "s64": "s64", "f16": "b16", "bf16": "b16", "f32": "f32", "f64": "f64",
       "f16x2": "b32", "bf16x2": "b32"}
FMT_OF = {"f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64"}


def cvt(mods: str, *args: int) -> int:
    """Run `cvt{mods} %d, %a[, %b]` on one lane in both domains; the bits of %d."""
    dt, st_ = mods.split(".")[-2:]
    names = "ab"[: len(args)]
    decls = {"%d": REG[dt], **{f"%{n}": REG[st_] for n in names}}
    ops = ", ".join(["%d"] + [f"%{n}" for n in names])
    run = agree(f"cvt{mods} {ops}", decls, {f"%{n}": [v] for n, v in zip(names, args)})
    return run.outputs["%d"][0]


NAN32 = 0x7FC00000
S32_MAX, S32_MIN = 0x7FFFFFFF, 0x80000000

GOLDEN = [
    # float -> int: NaN -> 0, saturation, the four integer roundings
    (".rzi.s32.f32", NAN32, 0),
    (".rzi.s32.f32", 0xFFC00001, 0),
    (".rni.u32.f32", NAN32, 0),
    (".rzi.s32.f32", f32(3e9), S32_MAX),
    (".rzi.s32.f32", f32(-3e9), S32_MIN),
    (".rzi.s32.f32", 0x7F800000, S32_MAX),
    (".rzi.s32.f32", 0xFF800000, S32_MIN),
    (".rzi.s32.f32", f32(2147483520.0), 2147483520),       # largest f32 below 2^31
    (".rzi.s32.f32", f32(2 ** 31), S32_MAX),
    (".rzi.s32.f32", f32(-(2 ** 31)), S32_MIN),             # exactly INT_MIN: no clamping
    (".rni.s32.f32", f32(-1.5), 0xFFFFFFFE),
    (".rzi.s32.f32", f32(-1.5), 0xFFFFFFFF),
    (".rmi.s32.f32", f32(-1.5), 0xFFFFFFFE),
    (".rpi.s32.f32", f32(-1.5), 0xFFFFFFFF),
    (".rni.s32.f32", f32(2.5), 2),
    (".rni.s32.f32", f32(3.5), 4),
    (".rni.s32.f32", f32(-0.5), 0),
    (".rmi.s32.f32", f32(-0.25), 0xFFFFFFFF),
    (".rpi.s32.f32", f32(0.25), 1),
    (".rmi.s32.f32", 0x80000001, 0xFFFFFFFF),                # -subnormal floors to -1 ...
    (".rmi.ftz.s32.f32", 0x80000001, 0),                     # ... unless flushed first
    (".rpi.ftz.s32.f32", 0x00000001, 0),
    (".rpi.s32.f32", 0x00000001, 1),
    (".rzi.u32.f32", f32(-1.5), 0),
    (".rzi.u32.f32", f32(-0.5), 0),
    (".rmi.u32.f32", f32(-0.5), 0),
    (".rzi.u32.f32", f32(5e9), 0xFFFFFFFF),
    (".rzi.u32.f32", f32(4294967040.0), 4294967040),
    (".rzi.sat.u32.f32", f32(5e9), 0xFFFFFFFF),              # .sat is redundant
    (".rzi.u8.f32", f32(300.0), 0xFF),
    (".rzi.u8.f32", f32(-3.0), 0),
    (".rzi.s8.f32", f32(-200.0), 0xFF80),                    # -128, sign-extended into .b16
    (".rzi.s8.f32", f32(127.9), 0x7F),
    (".rni.s16.f32", f32(40000.0), 0x7FFF),
    (".rni.u16.f32", f32(65535.4), 0xFFFF),
    (".rni.u16.f32", f32(65535.6), 0xFFFF),
    (".rzi.s64.f32", f32(2 ** 63), 0x7FFFFFFFFFFFFFFF),
    (".rzi.s64.f32", f32(-(2 ** 63)), 0x8000000000000000),
    (".rzi.s64.f32", f32(-1e30), 0x8000000000000000),
    (".rzi.u64.f32", f32(1e30), 0xFFFFFFFFFFFFFFFF),
    (".rzi.s64.f64", f64(2.0 ** 63), 0x7FFFFFFFFFFFFFFF),
    (".rzi.s64.f64", f64(9.223372036854775e18), 9223372036854774784),
    (".rni.s64.f64", f64(-2.5), 0xFFFFFFFFFFFFFFFE),
    (".rzi.u64.f64", f64(1.8446744073709550e19), 18446744073709549568),
    (".rzi.u64.f64", f64(2.0 ** 64), 0xFFFFFFFFFFFFFFFF),
    (".rzi.s32.f64", f64(-2147483648.9), S32_MIN),
    (".rzi.s32.f64", f64(-2147483649.0), S32_MIN),
    (".rzi.s32.f64", f64(2147483647.9), S32_MAX),
    (".rmi.s32.f64", f64(-2147483648.5), S32_MIN),
    (".rzi.s32.f16", 0x7C00, S32_MAX),
    (".rzi.s32.f16", 0xFC00, S32_MIN),
    (".rzi.s32.f16", f16(65504.0), 65504),
    (".rzi.u16.f16", 0x7C00, 0xFFFF),
    (".rzi.u16.f16", f16(65504.0), 65504),
    (".rzi.s16.f16", f16(-65504.0), 0x8000),
    (".rzi.s16.f16", 0x7E00, 0),
    (".rni.s32.bf16", bf16(-2.5), 0xFFFFFFFE),
    (".rzi.s32.bf16", 0x4F00, S32_MAX),                      # bf16 2^31
    # int -> float
    (".rn.f32.s32", 16777217, f32(16777216.0)),
    (".rp.f32.s32", 16777217, f32(16777218.0)),
    (".rz.f32.s32", 16777219, f32(16777218.0)),
    (".rn.f32.s32", 16777219, f32(16777220.0)),
    (".rm.f32.s32", (-16777217) & 0xFFFFFFFF, f32(-16777218.0)),
    (".rz.f32.s32", (-16777217) & 0xFFFFFFFF, f32(-16777216.0)),
    (".rn.f32.s32", S32_MIN, f32(-(2.0 ** 31))),
    (".rn.f32.u32", 0xFFFFFFFF, f32(2.0 ** 32)),
    (".rz.f32.u32", 0xFFFFFFFF, f32(4294967040.0)),
    (".rn.f32.u64", 0xFFFFFFFFFFFFFFFF, f32(2.0 ** 64)),
    (".rz.f32.u64", 0xFFFFFFFFFFFFFFFF, 0x5F7FFFFF),
    (".rn.f32.s64", 0x8000000000000000, f32(-(2.0 ** 63))),
    (".rn.f64.u64", 0xFFFFFFFFFFFFFFFF, f64(2.0 ** 64)),
    (".rz.f64.u64", 0xFFFFFFFFFFFFFFFF, 0x43EFFFFFFFFFFFFF),
    (".rn.f64.s64", 0x0020000000000001, f64(2.0 ** 53)),
    (".rp.f64.s64", 0x0020000000000001, f64(2.0 ** 53 + 2)),
    (".f64.s32", 0xFFFFFFFF, f64(-1.0)),                     # exact: no rounding needed
    (".f32.u16", 0xFFFF, f32(65535.0)),
    (".rn.f16.s32", 70000, 0x7C00),
    (".rz.f16.s32", 70000, 0x7BFF),
    (".rn.f16.u32", 2049, f16(2048.0)),
    (".rn.bf16.s32", 257, bf16(256.0)),
    (".rn.sat.f32.s32", 7, f32(1.0)),
    (".rn.sat.f32.s32", 0xFFFFFFFF, 0),
    # float -> float, narrowing
    (".rn.f16.f32", f32(65520.0), 0x7C00),
    (".rz.f16.f32", f32(65520.0), 0x7BFF),
    (".rn.f16.f32", f32(65519.0), 0x7BFF),
    (".rm.f16.f32", f32(-65520.0), 0xFC00),
    (".rp.f16.f32", f32(-65520.0), 0xFBFF),
    (".rn.f16.f32", f32(2 ** -25), 0),                       # tie to even: +0
    (".rp.f16.f32", f32(2 ** -30), 0x0001),
    (".rn.f16.f32", f32(1 + 2 ** -11), f16(1.0)),
    (".rn.f16.f32", f32(1 + 3 * 2 ** -11), 0x3C02),
    (".rn.f16.f32", NAN32, 0x7FFF),
    (".rn.f16.f32", 0xFFC00001, 0x7FFF),
    (".rn.f16.f32", 0xFF800000, 0xFC00),
    (".rn.satfinite.f16.f32", f32(65520.0), 0x7BFF),
    (".rn.satfinite.f16.f32", 0x7F800000, 0x7BFF),
    (".rn.satfinite.f16.f32", 0xFF800000, 0xFBFF),
    (".rn.satfinite.f16.f32", NAN32, 0x7FFF),
    (".rn.relu.f16.f32", f32(-1.0), 0),
    (".rn.relu.f16.f32", f32(2.0), f16(2.0)),
    (".rn.relu.f16.f32", NAN32, 0x7FFF),
    (".rn.bf16.f32", 0x3F808000, 0x3F80),                    # tie to even
    (".rn.bf16.f32", 0x3F818000, 0x3F82),
    (".rn.bf16.f32", 0x3F808001, 0x3F81),
    (".rz.bf16.f32", 0x3F80FFFF, 0x3F80),
    (".rm.bf16.f32", 0xBF800001, 0xBF81),
    (".rn.bf16.f32", 0x7F7FFFFF, 0x7F80),
    (".rz.bf16.f32", 0x7F7FFFFF, 0x7F7F),
    (".rn.bf16.f32", NAN32, 0x7FFF),
    (".rn.satfinite.bf16.f32", 0x7F800000, 0x7F7F),
    (".rn.f32.f64", f64(1.0 / 3), 0x3EAAAAAB),
    (".rz.f32.f64", f64(1.0 / 3), 0x3EAAAAAA),
    (".rn.f32.f64", f64(1e300), 0x7F800000),
    (".rz.f32.f64", f64(1e300), 0x7F7FFFFF),
    (".rm.f32.f64", f64(-1e300), 0xFF800000),
    (".rn.f32.f64", f64(1e-40), f32(1e-40)),                 # an f32 subnormal
    (".rn.ftz.f32.f64", f64(1e-40), 0),                      # ... flushed
    (".rn.ftz.f32.f64", f64(-1e-40), 0x80000000),
    (".rn.f32.f64", 0x7FF8000000000001, 0x7FFFFFFF),
    (".rn.f16.f64", f64(65520.0), 0x7C00),
    (".rn.bf16.f64", f64(1.0 + 2 ** -8 + 2 ** -40), 0x3F81),  # no double rounding
    (".rn.f16.bf16", bf16(1.0), f16(1.0)),
    (".rn.f16.bf16", 0x4780, 0x7C00),                        # bf16 65536 overflows f16
    (".rz.bf16.f16", f16(1.0 + 2 ** -10), bf16(1.0)),
    (".rn.sat.f16.f32", f32(3.0), f16(1.0)),
    # float -> float, widening: exact; NaN -> canonical NaN (assumption)
    (".f32.f16", f16(1.0), f32(1.0)),
    (".f32.f16", 0x0001, f32(2 ** -24)),
    (".f32.f16", 0xFC00, 0xFF800000),
    (".f32.f16", 0x7E01, 0x7FFFFFFF),
    (".f32.bf16", bf16(-1.5), f32(-1.5)),
    (".f32.bf16", 0x0001, 0x00010000),
    (".ftz.f32.bf16", 0x0001, 0),                            # the f32 result is subnormal
    (".f64.f32", f32(1.5), f64(1.5)),
    (".f64.f32", 0x00000001, f64(2.0 ** -149)),
    (".ftz.f64.f32", 0x80000001, 0x8000000000000000),        # the f32 input is flushed
    (".f64.f32", 0xFFC00001, 0x7FFFFFFFFFFFFFFF),
    (".rn.f64.bf16", bf16(2.0), f64(2.0)),                   # a rounding modifier changes nothing
    (".sat.f64.f32", f32(-2.0), 0),
    # float -> float, same type
    (".f32.f32", 0x7FC00001, 0x7FC00001),                    # a move
    (".f32.f32", 0x80000001, 0x80000001),
    (".ftz.f32.f32", 0x80000001, 0x80000000),
    (".ftz.f32.f32", f32(1.5), f32(1.5)),
    (".sat.f32.f32", f32(2.0), f32(1.0)),
    (".sat.f32.f32", f32(-3.0), 0),
    (".sat.f32.f32", 0xFFC00000, 0),
    (".sat.f32.f32", f32(0.25), f32(0.25)),
    (".rni.f32.f32", f32(2.5), f32(2.0)),
    (".rni.f32.f32", f32(-0.5), 0x80000000),
    (".rmi.f32.f32", f32(-0.5), f32(-1.0)),
    (".rpi.f32.f32", f32(-0.5), 0x80000000),
    (".rzi.f32.f32", f32(-7.9), f32(-7.0)),
    (".rpi.f32.f32", f32(7.1), f32(8.0)),
    (".rni.f32.f32", 0x7FC00001, 0x7FFFFFFF),
    (".rzi.ftz.f32.f32", 0x80000001, 0x80000000),
    (".rpi.f32.f32", 0x00000001, f32(1.0)),
    (".rpi.ftz.f32.f32", 0x00000001, 0),
    (".rni.sat.f32.f32", f32(0.7), f32(1.0)),
    (".rni.f64.f64", f64(-2.5), f64(-2.0)),
    (".rmi.f64.f64", f64(2.0 ** 60 + 2 ** 8), f64(2.0 ** 60 + 2 ** 8)),
    (".rni.f16.f16", f16(2.5), f16(2.0)),
    (".rpi.bf16.bf16", bf16(1.5), bf16(2.0)),
    # int -> int
    (".u32.s8", 0x80, 0xFFFFFF80),                           # sign-extended by the source type
    (".s32.u8", 0xFF, 0xFF),
    (".u16.u32", 0x12345, 0x2345),
    (".s16.s32", 0x18000, 0x8000),
    (".s64.s32", 0x80000000, 0xFFFFFFFF80000000),
    (".u64.s32", 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF),
    (".s64.u32", 0xFFFFFFFF, 0xFFFFFFFF),
    (".u32.u64", 0x1FFFFFFFF, 0xFFFFFFFF),
    (".s8.s32", 0x1FF, 0xFFFF),                              # -1, sign-extended into .b16
    (".u8.s32", 0x1FF, 0x00FF),
    (".sat.u8.s32", (-5) & 0xFFFFFFFF, 0),
    (".sat.u8.s32", 300, 0xFF),
    (".sat.s8.s32", (-200) & 0xFFFFFFFF, 0xFF80),
    (".sat.s8.s32", 100, 100),
    (".sat.u32.s32", 0xFFFFFFFF, 0),
    (".sat.s32.u32", 0xFFFFFFFF, S32_MAX),
    (".sat.s32.u32", 5, 5),
    (".sat.u64.s32", 0xFFFFFFFF, 0),
    (".sat.s16.u64", 0xFFFFFFFFFFFFFFFF, 0x7FFF),
    (".sat.s32.s64", 0xFFFFFFFF00000000, S32_MIN),
    (".sat.s32.s64", 0x0000000100000000, S32_MAX),
    (".sat.s32.s64", 0xFFFFFFFFFFFFFFF0, 0xFFFFFFF0),
    (".sat.u16.s16", 0x8000, 0),
    (".sat.s64.u64", 0x8000000000000000, 0x7FFFFFFFFFFFFFFF),
    (".sat.s64.s32", 0x80000000, 0xFFFFFFFF80000000),        # nothing to clamp
]


@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: f"cvt{c[0]}:{c[1]:x}")
def test_golden(case):
    mods, *args, want = case
    got = cvt(mods, *args)
    assert got == want, f"cvt{mods} {[hex(a) for a in args]}: got {got:#x}, want {want:#x}"


@pytest.mark.parametrize("mods,a,want", [
    (".rzi.s8.f32", f32(-200.0), 0xFF80),
    (".sat.s8.s32", (-200) & 0xFFFFFFFF, 0xFF80),
    (".s8.s32", 0x1FF, 0xFFFF),
])
def test_s8_destination_is_sign_extended_in_a_wider_register(mods, a, want):
    assert cvt(mods, a) == want


@pytest.mark.parametrize("mods,a,b,want", [
    (".rn.f16x2.f32", f32(1.0), f32(2.0), (f16(1.0) << 16) | f16(2.0)),
    (".rz.f16x2.f32", f32(65520.0), f32(-1.0), (0x7BFF << 16) | f16(-1.0)),
    (".rn.relu.f16x2.f32", f32(-1.0), NAN32, 0x7FFF),
    (".rn.satfinite.f16x2.f32", 0x7F800000, f32(0.5), (0x7BFF << 16) | f16(0.5)),
    (".rn.bf16x2.f32", 0x3F808000, 0x3F818000, (0x3F80 << 16) | 0x3F82),
    (".rz.satfinite.bf16x2.f32", 0xFF800000, f32(1.0), (0xFF7F << 16) | 0x3F80),
])
def test_pack_two(mods, a, b, want):
    assert cvt(mods, a, b) == want


@pytest.mark.parametrize("line", [
    "cvt.s32.f32 %d, %a",                    # float -> int needs .rni/.rzi/.rmi/.rpi
    "cvt.rn.s32.f32 %d, %a",
    "cvt.f32.s32 %d, %a",                    # inexact int -> float needs a rounding
    "cvt.f32.f64 %d, %a",                    # narrowing needs a rounding
    "cvt.rni.f32.f64 %d, %a",
    "cvt.rn.f32.f32 %d, %a",                 # not lossy: a float rounding is illegal
    "cvt.rni.f64.f32 %d, %a",
    "cvt.rn.s32.s64 %d, %a",                 # int -> int takes no rounding
    "cvt.ftz.s32.s64 %d, %a",
    "cvt.ftz.f64.f64 %d, %a",                # .ftz is for f32 only
    "cvt.rzi.ftz.s32.f64 %d, %a",
    "cvt.rna.f16.f32 %d, %a",
    "cvt.rn.satfinite.f32.f64 %d, %a",
    "cvt.rn.relu.sat.f16.f32 %d, %a",
    "cvt.rna.satfinite.tf32.f32 %d, %a",
    "cvt.rn.e4m3x2.f32 %d, %a, %b",         # fp8 narrowing needs .satfinite (convert_fp8.py)
    "cvt.rm.f16x2.f32 %d, %a, %b",
])
def test_unsupported_forms(line):
    decls = {"%d": "b64", "%a": "b64", "%b": "b64"}
    with pytest.raises(UnsupportedError):
        execute(line, decls, {"%a": [0], "%b": [0]})


# ---------------------------------------------------------------------------------------------
# random operands mixed with specials: concrete == symbolic bit for bit

LANES = 8
_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])
_INTS = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")
_FLOATS = ("f16", "bf16", "f32", "f64")


def _width(t: str) -> int:
    return {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(t) or int(t[1:])


def _families():
    f2i = [f".{r}{f}.{d}.{s}" for s in _FLOATS for d in _INTS
           for r, f in (("rzi", ""), ("rni", ""), ("rmi", ""), ("rpi", ""))]
    f2i += [f".rmi.ftz.{d}.f32" for d in ("s32", "u8")] + [".rzi.sat.s16.f32"]
    i2f = [f".{r}.{d}.{s}" for s in _INTS for d in _FLOATS for r in ("rn", "rz", "rm", "rp")]
    i2f += [".rn.sat.f32.s32", ".rm.sat.f16.s64"]
    i2i = [f".{d}.{s}" for s in _INTS for d in _INTS] + \
        [f".sat.{d}.{s}" for s in _INTS for d in _INTS if d != s]
    narrow = [(s, d) for s in _FLOATS for d in _FLOATS
              if s != d and not (d in ("f32", "f64") and _width(d) > _width(s)) and
              not (s, d) in (("f16", "f32"), ("f16", "f64"), ("bf16", "f32"), ("bf16", "f64"))]
    f2f = [f".{r}.{d}.{s}" for s, d in narrow for r in ("rn", "rz", "rm", "rp")]
    f2f += [f".rn.satfinite.{d}.f32" for d in ("f16", "bf16")] + \
        [f".rz.relu.{d}.f32" for d in ("f16", "bf16")] + [".rn.ftz.f32.f64", ".rm.sat.f16.f32"]
    widen = [".f32.f16", ".f32.bf16", ".f64.f32", ".f64.f16", ".f64.bf16", ".ftz.f64.f32",
             ".ftz.f32.f16", ".sat.f32.f16"]
    same = [f".{r}.{t}.{t}" for t in _FLOATS for r in ("rni", "rzi", "rmi", "rpi")] + \
        [".f32.f32", ".ftz.f32.f32", ".sat.f32.f32", ".rni.ftz.sat.f32.f32", ".f64.f64"]
    return {"float-to-int": f2i, "int-to-float": i2f, "int-to-int": i2i,
            "float-narrowing": f2f, "float-widening": widen, "float-same-type": same}


def _strategy(t: str):
    if t in FMT_OF:
        return st.one_of(operand(FMT_OF[t]), integral_edge(FMT_OF[t]))
    return int_operand(_width(t))


@pytest.mark.parametrize("family", list(_families()))
def test_random_concrete_equals_symbolic(family):
    forms = _families()[family]

    @_SETTINGS
    @given(st.sampled_from(forms), st.data())
    def check(mods, data):
        dt, st_ = mods.split(".")[-2:]
        values = data.draw(st.lists(_strategy(st_), min_size=LANES, max_size=LANES))
        agree(f"cvt{mods} %d, %a", {"%d": REG[dt], "%a": REG[st_]}, {"%a": values})

    check()
