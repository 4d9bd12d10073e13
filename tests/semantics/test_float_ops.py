"""Floating-point arithmetic (semantics/ops/float_arith.py): golden results from the PTX ISA
and IEEE 754 for the corners, and concrete == symbolic bit for bit on every case and on random
operands mixed with specials."""

from __future__ import annotations

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fpbits import SPECIALS, bits, f16, f32, f64, operand, pack2, packed
from harness import agree, execute
from semantics.errors import UnsupportedError

QNAN32, CANON32 = 0x7FC00000, 0x7FFFFFFF
INF32, NINF32 = 0x7F800000, 0xFF800000
NZ32 = 0x80000000


def _decls(t: str, names: str, dst: str | None = None) -> dict[str, str]:
    d = {"%d": dst or t}
    for n in names:
        d[f"%{n}"] = t
    return d


def _run(line: str, t: str, *args: int, dst: str | None = None) -> int:
    """Run `line` (operands %d, %a, %b, %c) on one lane in both domains; the result of %d."""
    names = "abc"[: len(args)]
    decls = _decls(t, names, dst)
    run = agree(line, decls, {f"%{n}": [v] for n, v in zip(names, args)})
    return run.outputs["%d"][0]


# ---------------------------------------------------------------------------------------------
# golden tables: (instruction, register type, operands..., expected bits of %d)

_FMA_A = 0x3F800800                       # 1 + 2^-12
_FMA_C = f32(-(1 + 2 ** -11))
GOLDEN_F32 = [
    # rounding of add/sub; an exact zero sum is -0 only under .rm
    ("add.rm.f32", f32(1.0), f32(-1.0), NZ32),
    ("add.rn.f32", f32(1.0), f32(-1.0), 0),
    ("add.f32", f32(1.0), f32(-1.0), 0),
    ("sub.rm.f32", f32(1.0), f32(1.0), NZ32),
    ("add.f32", f32(1.0), f32(2 ** -24), f32(1.0)),          # tie to even
    ("add.f32", f32(1.0 + 2 ** -23), f32(2 ** -24), f32(1.0 + 2 ** -22)),
    ("add.rp.f32", f32(1.0), f32(2 ** -30), 0x3F800001),
    ("add.rz.f32", f32(-1.0), f32(-(2 ** -30)), 0xBF800000),
    ("add.rm.f32", f32(-1.0), f32(-(2 ** -30)), 0xBF800001),
    ("add.rz.f32", 0x7F7FFFFF, 0x7F7FFFFF, 0x7F7FFFFF),     # overflow under rz: max finite
    ("add.rn.f32", 0x7F7FFFFF, 0x7F7FFFFF, INF32),
    ("add.f32", INF32, NINF32, CANON32),                     # invalid -> canonical NaN
    ("add.f32", 0x7FC00001, f32(1.0), CANON32),              # NaN payload is not propagated
    ("add.f32", 0xFF800001, f32(1.0), CANON32),              # nor the sign / signalling bit
    ("mul.rn.f32", f32(3.0), f32(-0.0), NZ32),
    ("mul.rz.f32", f32(1.0 / 3), f32(3.0), f32(1.0)),       # 1 + 2^-25 truncated
    ("mul.rp.f32", f32(1.0 / 3), f32(3.0), 0x3F800001),
    ("mul.f32", 0x00000001, f32(0.5), 0),                    # 2^-150: tie to even -> +0
    ("mul.f32", f32(2 ** -100), f32(2 ** -30), 0x00080000),  # subnormal result kept
    ("mul.ftz.f32", f32(2 ** -100), f32(2 ** -30), 0),       # ... flushed under .ftz
    ("mul.ftz.f32", f32(-(2 ** -100)), f32(2 ** -30), NZ32),  # sign-preserving
    ("add.ftz.f32", 0x00000001, 0x00000001, 0),              # inputs flushed
    ("add.ftz.f32", 0x80000001, NZ32, NZ32),
    ("add.f32", 0x00000001, 0x00000001, 0x00000002),
    ("mul.ftz.f32", 0x00800000, f32(0.5), 0),                # min normal / 2 -> subnormal -> 0
    ("add.sat.f32", f32(0.5), f32(0.75), f32(1.0)),
    ("add.sat.f32", f32(-1.0), f32(0.5), 0),
    ("add.sat.f32", INF32, NINF32, 0),                        # NaN -> +0.0
    ("add.sat.f32", f32(-0.0), f32(-0.0), 0),                 # -0.0 -> +0.0 (assumption)
    ("mul.sat.f32", f32(0.25), f32(2.0), f32(0.5)),
    ("sub.f32", f32(0.0), f32(0.0), 0),
    ("sub.rm.f32", f32(0.0), f32(0.0), NZ32),
    # division, reciprocal, square root: IEEE in every rounding mode
    ("div.rn.f32", f32(1.0), f32(3.0), 0x3EAAAAAB),
    ("div.rz.f32", f32(1.0), f32(3.0), 0x3EAAAAAA),
    ("div.rm.f32", f32(1.0), f32(3.0), 0x3EAAAAAA),
    ("div.rp.f32", f32(1.0), f32(3.0), 0x3EAAAAAB),
    ("div.rz.f32", f32(2.0), f32(3.0), 0x3F2AAAAA),
    ("div.rm.f32", f32(-2.0), f32(3.0), 0xBF2AAAAB),
    ("div.rn.f32", f32(1.0), f32(0.0), INF32),
    ("div.rn.f32", f32(-1.0), f32(0.0), NINF32),
    ("div.rn.f32", f32(0.0), f32(0.0), CANON32),
    ("div.rn.ftz.f32", f32(1.0), 0x00000001, INF32),         # subnormal divisor flushed
    ("div.rn.f32", f32(1.0), 0x00400000, 0x7F000000),         # 1 / 2^-127 = 2^127
    ("div.rn.f32", f32(1.0), 0x00200000, INF32),              # 1 / 2^-128 overflows
    ("div.rz.f32", 0x7F7FFFFF, f32(0.5), 0x7F7FFFFF),
    ("rcp.rn.f32", f32(3.0), 0x3EAAAAAB),
    ("rcp.rz.f32", f32(3.0), 0x3EAAAAAA),
    ("rcp.rn.f32", NZ32, NINF32),
    ("rcp.rn.ftz.f32", 0x80000001, NINF32),
    ("sqrt.rn.f32", f32(2.0), 0x3FB504F3),
    ("sqrt.rp.f32", f32(2.0), 0x3FB504F4),
    ("sqrt.rz.f32", f32(2.0), 0x3FB504F3),
    ("sqrt.rn.f32", f32(-1.0), CANON32),
    ("sqrt.rn.f32", NZ32, NZ32),                              # sqrt(-0) = -0
    ("sqrt.rn.f32", INF32, INF32),
    # fma: one rounding (mul then add would give 0 here); mad.f32 is fma
    ("fma.rn.f32", _FMA_A, _FMA_A, _FMA_C, f32(2 ** -24)),
    ("mad.rn.f32", _FMA_A, _FMA_A, _FMA_C, f32(2 ** -24)),
    ("mad.f32", _FMA_A, _FMA_A, _FMA_C, f32(2 ** -24)),
    ("fma.rz.f32", f32(1.0 / 3), f32(3.0), f32(-1.0), f32(2 ** -25)),  # the exact residual
    ("fma.rn.f32", f32(1.0), f32(-1.0), f32(1.0), 0),
    ("fma.rm.f32", f32(1.0), f32(-1.0), f32(1.0), NZ32),
    ("fma.rn.f32", INF32, f32(0.0), f32(1.0), CANON32),
    ("fma.rn.sat.f32", f32(2.0), f32(2.0), f32(-1.0), f32(1.0)),
    ("fma.rn.ftz.f32", 0x00000001, f32(2 ** 30), f32(0.0), 0),
    # min / max: minNum/maxNum, -0 < +0, NaN handling
    ("min.f32", NZ32, 0, NZ32),
    ("min.f32", 0, NZ32, NZ32),
    ("max.f32", NZ32, 0, 0),
    ("max.f32", 0, NZ32, 0),
    ("min.f32", QNAN32, f32(1.0), f32(1.0)),
    ("min.f32", f32(1.0), 0xFFC00001, f32(1.0)),
    ("max.f32", 0x7F800001, f32(-5.0), f32(-5.0)),
    ("min.f32", 0x7FC00001, 0xFFC00002, CANON32),
    ("min.NaN.f32", QNAN32, f32(1.0), CANON32),
    ("max.NaN.f32", f32(1.0), 0xFFC00001, CANON32),
    ("max.NaN.f32", f32(1.0), f32(2.0), f32(2.0)),
    ("min.f32", f32(-1.0), f32(2.0), f32(-1.0)),
    ("max.f32", NINF32, f32(-1.0), f32(-1.0)),
    ("min.ftz.f32", 0x80000001, 0x00000005, NZ32),           # both flushed: min(-0, +0)
    ("max.ftz.f32", 0x00000001, NZ32, 0),
    ("min.xorsign.abs.f32", f32(-2.0), f32(3.0), f32(-2.0)),
    ("max.xorsign.abs.f32", f32(-2.0), f32(3.0), f32(-3.0)),
    ("max.xorsign.abs.f32", f32(-2.0), f32(-3.0), f32(3.0)),
    ("min.xorsign.abs.f32", QNAN32, f32(-3.0), f32(-3.0)),   # NaN ignored; sign still xor'd
    ("min.NaN.xorsign.abs.f32", 0xFFC00000, f32(3.0), CANON32),
    # sign operations
    ("abs.f32", f32(-1.5), f32(1.5)),
    ("abs.f32", NZ32, 0),
    ("abs.f32", NINF32, INF32),
    ("abs.ftz.f32", 0x80000001, 0),
    ("neg.f32", f32(1.5), f32(-1.5)),
    ("neg.f32", 0, NZ32),
    ("neg.ftz.f32", 0x00000001, NZ32),
    ("neg.f32", 0x00000001, 0x80000001),
    ("copysign.f32", f32(-1.0), f32(2.0), f32(-2.0)),
    ("copysign.f32", f32(1.0), f32(-2.0), f32(2.0)),
    ("copysign.f32", f32(-1.0), QNAN32, 0xFFC00000),
]


@pytest.mark.parametrize("case", GOLDEN_F32, ids=lambda c: f"{c[0]}:{c[1]:x}")
def test_golden_f32(case):
    line, *args, want = case
    ops = ", ".join(["%d"] + [f"%{n}" for n in "abc"[: len(args)]])
    got = _run(f"{line} {ops}", "f32", *args)
    assert got == want, f"{line} {[hex(a) for a in args]}: got {got:#x}, want {want:#x}"


GOLDEN_F64 = [
    ("add.rm.f64", f64(1.0), f64(-1.0), 0x8000000000000000),
    ("add.f64", f64(1.0), f64(2 ** -53), f64(1.0)),
    ("add.rp.f64", f64(1.0), f64(2 ** -60), f64(1.0) + 1),
    ("mul.rz.f64", f64(1.0 / 3), f64(3.0), f64(1.0) - 1),
    ("mul.rn.f64", f64(1.0 / 3), f64(3.0), f64(1.0)),
    ("div.rn.f64", f64(1.0), f64(3.0), 0x3FD5555555555555),
    ("div.rz.f64", f64(2.0), f64(3.0), 0x3FE5555555555555),
    ("div.rp.f64", f64(2.0), f64(3.0), 0x3FE5555555555556),
    ("div.f64", f64(2.0), f64(3.0), 0x3FE5555555555555),
    ("rcp.rn.f64", f64(3.0), 0x3FD5555555555555),
    ("sqrt.rn.f64", f64(2.0), 0x3FF6A09E667F3BCD),
    ("sqrt.rp.f64", f64(2.0), 0x3FF6A09E667F3BCD),
    ("sqrt.rz.f64", f64(2.0), 0x3FF6A09E667F3BCC),
    ("fma.rn.f64", f64(1 + 2 ** -27), f64(1 + 2 ** -27), f64(-(1 + 2 ** -26)), f64(2 ** -54)),
    ("fma.rm.f64", f64(1.0), f64(-1.0), f64(1.0), 0x8000000000000000),
    ("add.f64", 0x7FF0000000000000, 0xFFF0000000000000, 0x7FFFFFFFFFFFFFFF),
    ("min.f64", 0x8000000000000000, 0, 0x8000000000000000),
    ("max.f64", 0x7FF8000000000001, f64(2.0), f64(2.0)),
    ("abs.f64", f64(-2.0), f64(2.0)),
    ("abs.f64", 0xFFF8000000000001, 0xFFF8000000000001),     # PTX: NaN passed through unchanged
    ("neg.f64", f64(2.0), f64(-2.0)),
    ("copysign.f64", f64(-1.0), f64(3.0), f64(-3.0)),
]


@pytest.mark.parametrize("case", GOLDEN_F64, ids=lambda c: f"{c[0]}:{c[1]:x}")
def test_golden_f64(case):
    line, *args, want = case
    ops = ", ".join(["%d"] + [f"%{n}" for n in "abc"[: len(args)]])
    got = _run(f"{line} {ops}", "f64", *args)
    assert got == want, f"{line} {[hex(a) for a in args]}: got {got:#x}, want {want:#x}"


H1, H2, H3, HNAN = f16(1.0), f16(2.0), f16(3.0), 0x7FFF
B1, B15, B225 = bits("bf16", 1.0), bits("bf16", 1.5), bits("bf16", 2.25)
GOLDEN_HALF = [
    ("add.f16", "b16", H1, H1, H2),
    ("add.rn.f16", "b16", f16(65504.0), f16(32.0), 0x7C00),
    ("add.f16", "b16", 0x7C00, 0xFC00, HNAN),
    ("add.f16", "b16", 0x7E01, H1, HNAN),
    ("add.ftz.f16", "b16", 0x0001, 0x0001, 0),
    ("add.f16", "b16", 0x0001, 0x0001, 0x0002),
    ("add.sat.f16", "b16", H2, H1, H1),
    ("mul.f16", "b16", f16(1.5), f16(1.5), f16(2.25)),
    ("sub.f16", "b16", H1, H1, 0),
    ("fma.rn.f16", "b16", H2, H3, H1, f16(7.0)),
    ("fma.rn.relu.f16", "b16", H2, f16(-3.0), H1, 0),
    ("fma.rn.relu.f16", "b16", 0x7C00, 0, H1, HNAN),
    ("min.f16", "b16", 0x8000, 0, 0x8000),
    ("max.f16", "b16", 0x7E00, f16(-2.0), f16(-2.0)),
    ("min.NaN.f16", "b16", 0x7E00, H1, HNAN),
    ("neg.f16", "b16", H1, f16(-1.0)),
    ("abs.f16", "b16", f16(-2.0), H2),
    ("add.f16x2", "b32", pack2(H1, H2), pack2(H1, H1), pack2(H2, H3)),
    ("mul.f16x2", "b32", pack2(H2, 0x7C00), pack2(H3, 0), pack2(f16(6.0), HNAN)),
    ("fma.rn.f16x2", "b32", pack2(H2, H1), pack2(H3, H1), pack2(H1, f16(-1.0)),
     pack2(f16(7.0), 0)),
    ("min.f16x2", "b32", pack2(0x8000, H3), pack2(0, H2), pack2(0x8000, H2)),
    ("neg.f16x2", "b32", pack2(H1, 0x8000), pack2(f16(-1.0), 0)),
    ("add.bf16", "b16", B1, B1, bits("bf16", 2.0)),
    ("add.rn.bf16", "b16", B1, 0x3B80, B1),                  # 1 + 2^-8: tie to even
    ("mul.rn.bf16", "b16", B15, B15, B225),
    ("fma.rn.bf16", "b16", B15, B15, bits("bf16", -2.0), bits("bf16", 0.25)),
    ("fma.rn.relu.bf16", "b16", B15, B15, bits("bf16", -4.0), 0),
    ("add.bf16", "b16", 0x7F80, 0xFF80, 0x7FFF),
    ("max.bf16", "b16", 0x7FC1, B1, B1),
    ("min.bf16x2", "b32", pack2(B1, 0x8000), pack2(B15, 0), pack2(B1, 0x8000)),
    ("add.bf16x2", "b32", pack2(B1, B15), pack2(B1, B15), pack2(bits("bf16", 2.0),
                                                               bits("bf16", 3.0))),
    ("neg.bf16", "b16", B1, bits("bf16", -1.0)),
]


@pytest.mark.parametrize("case", GOLDEN_HALF, ids=lambda c: f"{c[0]}:{c[2]:x}")
def test_golden_half(case):
    line, reg, *args, want = case
    ops = ", ".join(["%d"] + [f"%{n}" for n in "abc"[: len(args)]])
    got = _run(f"{line} {ops}", reg, *args)
    assert got == want, f"{line} {[hex(a) for a in args]}: got {got:#x}, want {want:#x}"


@pytest.mark.parametrize("line,value,want", [
    ("testp.finite.f32", f32(1.0), True), ("testp.finite.f32", INF32, False),
    ("testp.finite.f32", QNAN32, False), ("testp.infinite.f32", NINF32, True),
    ("testp.infinite.f32", QNAN32, False), ("testp.number.f32", QNAN32, False),
    ("testp.number.f32", INF32, True), ("testp.notanumber.f32", 0xFF800001, True),
    ("testp.notanumber.f32", INF32, False), ("testp.normal.f32", 0, True),
    ("testp.normal.f32", NZ32, True), ("testp.normal.f32", 0x00000001, False),
    ("testp.normal.f32", INF32, False), ("testp.normal.f32", 0x00800000, True),
    ("testp.subnormal.f32", 0x807FFFFF, True), ("testp.subnormal.f32", 0, False),
    ("testp.subnormal.f32", 0x00800000, False),
    ("testp.subnormal.f64", 0x1, True), ("testp.normal.f64", 0x7FF0000000000000, False),
    ("testp.notanumber.f64", 0x7FF0000000000001, True),
])
def test_testp(line, value, want):
    t = line.rsplit(".", 1)[1]
    run = agree(f"{line} %p, %a", {"%p": "pred", "%a": t}, {"%a": [value]})
    assert run.outputs["%p"] == [want]


# ---------------------------------------------------------------------------------------------
# effects: approximations and unspecified NaNs

@pytest.mark.parametrize("line,arg,host", [
    ("ex2.approx.f32", f32(3.0), f32(8.0)),
    ("ex2.approx.ftz.f32", f32(-1.0), f32(0.5)),
    ("lg2.approx.f32", f32(8.0), f32(3.0)),
    ("rcp.approx.f32", f32(4.0), f32(0.25)),
    ("rcp.approx.ftz.f32", f32(4.0), f32(0.25)),
    ("sqrt.approx.f32", f32(4.0), f32(2.0)),
    ("rsqrt.approx.f32", f32(4.0), f32(0.5)),
    ("rsqrt.approx.ftz.f32", f32(4.0), f32(0.5)),
    ("sin.approx.f32", f32(0.0), f32(0.0)),
    ("cos.approx.ftz.f32", f32(0.0), f32(1.0)),
    ("tanh.approx.f32", f32(0.0), f32(0.0)),
])
def test_approx_unary(line, arg, host):
    decls = {"%d": "f32", "%a": "f32"}
    conc = execute(f"{line} %d, %a", decls, {"%a": [arg]})
    assert conc.outputs["%d"] == [host]
    assert ("approximation", line) in conc.effect_whats()
    sym = execute(f"{line} %d, %a", decls, {"%a": [arg]}, "symbolic")
    assert ("approximation", line) in sym.effect_whats()
    # Symbolically an uninterpreted function even of a concrete argument.
    assert not isinstance(sym.outputs["%d"][0], int)
    assert line.split(".")[0] in str(sym.outputs["%d"][0])


def test_approx_nan_result_is_canonical():
    conc = execute("lg2.approx.f32 %d, %a", {"%d": "f32", "%a": "f32"}, {"%a": [f32(-1.0)]})
    assert conc.outputs["%d"] == [CANON32]


def test_div_approx_and_full_are_different_functions():
    decls = {"%d": "f32", "%a": "f32", "%b": "f32"}
    a, b = z3.BitVec("a", 32), z3.BitVec("b", 32)
    terms = {}
    for line in ("div.approx.f32", "div.full.f32", "div.approx.ftz.f32", "div.full.ftz.f32"):
        run = execute(f"{line} %d, %a, %b", decls, {"%a": [a], "%b": [b]}, "symbolic")
        assert ("approximation", line) in run.effect_whats()
        terms[line] = run.outputs["%d"][0]
        conc = execute(f"{line} %d, %a, %b", decls, {"%a": [f32(1.0)], "%b": [f32(4.0)]})
        assert conc.outputs["%d"] == [f32(0.25)]
    s = z3.Solver()
    s.add(terms["div.approx.f32"] != terms["div.full.f32"])
    assert s.check() == z3.sat        # nothing forces the two approximations to agree


@pytest.mark.parametrize("line,t,arg,want", [
    ("neg.f32", "f32", 0x7FC00001, 0xFFC00001),
    ("abs.f32", "f32", 0xFFC00001, 0x7FC00001),
    ("neg.f16", "b16", 0x7E01, 0xFE01),
    ("abs.bf16", "b16", 0xFFC1, 0x7FC1),
    ("neg.f64", "f64", 0x7FF8000000000001, 0xFFF8000000000001),
])
def test_sign_op_on_nan_is_recorded_as_unspecified(line, t, arg, want):
    # the emulator's NaN: the IEEE sign-bit result (quieted); the symbolic one: any NaN
    # fixed by the input, of which that is one (`agree` checks membership)
    run = agree(f"{line} %d, %a", {"%d": t, "%a": t}, {"%a": [arg]})
    assert run.outputs["%d"] == [want]
    assert any(k == "unspecified" and "NaN" in w for k, w in run.effect_whats())
    quiet = agree(f"{line} %d, %a", {"%d": t, "%a": t}, {"%a": [0]})
    assert not quiet.effects


def test_abs_f64_nan_is_not_an_effect():
    run = agree("abs.f64 %d, %a", {"%d": "f64", "%a": "f64"}, {"%a": [0xFFF8000000000001]})
    assert not run.effects


def test_exact_ops_record_no_effect_but_the_nan_they_return():
    run = agree("fma.rn.f32 %d, %a, %b, %c", _decls("f32", "abc"),
                {"%a": [QNAN32], "%b": [f32(1.0)], "%c": [f32(1.0)]})
    assert {k for k, _ in run.effect_whats()} == {"unspecified"}    # single precision's NaN
    run = agree("fma.rn.f32 %d, %a, %b, %c", _decls("f32", "abc"),
                {"%a": [f32(2.0)], "%b": [f32(1.0)], "%c": [f32(1.0)]})
    assert not run.effects


# ---------------------------------------------------------------------------------------------
# forms outside the family: refused by name, never approximated

@pytest.mark.parametrize("line,t", [
    ("div.f32 %d, %a, %b", "f32"),              # PTX ISA >= 1.4: a modifier is required
    ("fma.f32 %d, %a, %b, %c", "f32"),          # fma requires a rounding modifier
    ("add.ftz.f64 %d, %a, %b", "f64"),          # .ftz is f32 (and f16) only
    ("add.sat.f64 %d, %a, %b", "f64"),
    ("add.rz.f16 %d, %a, %b", "b16"),           # half precision: .rn only
    ("add.ftz.bf16 %d, %a, %b", "b16"),
    ("sin.f32 %d, %a", "f32"),                  # .approx is required
    ("rcp.approx.ftz.f64 %d, %a", "f64"),       # gross approximation: not modelled
    ("sqrt.f32 %d, %a", "f32"),
    ("min.relu.f32 %d, %a, %b", "f32"),
    ("min.abs.f32 %d, %a, %b", "f32"),          # .abs alone is the three-input form
    ("min.NaN.f64 %d, %a, %b", "f64"),
    ("ex2.approx.f64 %d, %a", "f64"),
    ("div.approx.f64 %d, %a, %b", "f64"),
    ("abs.ftz.f64 %d, %a", "f64"),
    ("fma.rn.sat.bf16 %d, %a, %b, %c", "b16"),
])
def test_unsupported_forms(line, t):
    names = [o.strip().lstrip("%") for o in line.split(" ", 1)[1].split(",")[1:]]
    with pytest.raises(UnsupportedError):
        execute(line, _decls(t, names), {f"%{n}": [0] for n in names})


def test_three_input_min_is_refused():
    with pytest.raises(UnsupportedError):
        execute("min.f32 %d, %a, %b, %c", _decls("f32", "abc"), {"%a": [0], "%b": [0], "%c": [0]})


# ---------------------------------------------------------------------------------------------
# random operands mixed with specials: concrete == symbolic bit for bit

LANES = 4
_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])


def _families():
    """{family: (register type, operand format, [(opcode with modifiers, source count)])}."""
    f32_asm = [(f"{op}{m}.f32", 2) for op in ("add", "sub", "mul")
               for m in ("", ".rn", ".rz", ".rm", ".rp", ".ftz", ".rm.ftz.sat")]
    f32_fma = [(f"{op}{m}.f32", 3) for op in ("fma", "mad")
               for m in (".rn", ".rz", ".rm", ".rp", ".rn.ftz.sat", ".rm.sat")]
    f32_div = ([(f"div{m}.f32", 2) for m in (".rn", ".rz", ".rm", ".rp", ".rn.ftz", ".rp.ftz")]
               + [(f"{op}{m}.f32", 1) for op in ("sqrt", "rcp")
                  for m in (".rn", ".rz", ".rm.ftz", ".rp")])
    f32_minmax = [(f"{op}{m}.f32", 2) for op in ("min", "max")
                  for m in ("", ".ftz", ".NaN", ".xorsign.abs", ".ftz.NaN.xorsign.abs")]
    f32_sign = [(f"{op}.f32", 1) for op in ("abs", "neg", "abs.ftz", "neg.ftz")] + \
        [("copysign.f32", 2)]
    f64 = [(f"{op}.f64", n) for op, n in (
        ("add.rz", 2), ("sub.rp", 2), ("add.rm", 2), ("mul.rm", 2), ("mul.rp", 2),
        ("div.rp", 2), ("div.rn", 2), ("fma.rz", 3), ("fma.rn", 3), ("sqrt.rm", 1),
        ("min", 2), ("max", 2), ("abs", 1), ("neg", 1), ("rcp.rz", 1), ("copysign", 2))]
    half = [("add", 2), ("sub", 2), ("mul.ftz.sat", 2), ("fma.rn", 3), ("fma.rn.relu", 3),
            ("fma.rn.ftz.sat", 3), ("min.NaN", 2), ("max.xorsign.abs", 2), ("min.ftz", 2),
            ("neg", 1), ("abs.ftz", 1)]
    bhalf = [("add", 2), ("sub.rn", 2), ("mul", 2), ("fma.rn", 3), ("fma.rn.relu", 3),
             ("max", 2), ("min.NaN", 2), ("abs", 1), ("neg", 1)]
    return {
        "f32-add-sub-mul": ("f32", "f32", f32_asm),
        "f32-fma-mad": ("f32", "f32", f32_fma),
        "f32-div-rcp-sqrt": ("f32", "f32", f32_div),
        "f32-min-max": ("f32", "f32", f32_minmax),
        "f32-sign": ("f32", "f32", f32_sign),
        "f64": ("f64", "f64", f64),
        "f16": ("b16", "f16", [(f"{op}.f16", n) for op, n in half]),
        "f16x2": ("b32", "f16x2", [(f"{op}.f16x2", n) for op, n in half]),
        "bf16": ("b16", "bf16", [(f"{op}.bf16", n) for op, n in bhalf]),
        "bf16x2": ("b32", "bf16x2", [(f"{op}.bf16x2", n) for op, n in bhalf]),
    }


def _strategy(fmt: str):
    if fmt.endswith("x2"):
        return packed(fmt[:-2])
    return operand(fmt)


@pytest.mark.parametrize("family", list(_families()))
def test_random_concrete_equals_symbolic(family):
    reg, fmt, forms = _families()[family]
    rows = st.lists(st.tuples(*[_strategy(fmt)] * 3), min_size=LANES, max_size=LANES)

    @_SETTINGS
    @given(st.sampled_from(forms), rows)
    def check(form, rows):
        line, nargs = form
        names = "abc"[:nargs]
        inputs = {f"%{n}": [r[i] for r in rows] for i, n in enumerate(names)}
        ops = ", ".join(["%d"] + [f"%{n}" for n in names])
        agree(f"{line} {ops}", _decls(reg, names), inputs)

    check()


@pytest.mark.parametrize("fmt", ["f32", "f64"])
def test_directed_overflow_and_zero_pairs(fmt):
    """Pairs of extreme operands through add.rm / sub.rp / mul.rz: overflow to ±max or ±inf,
    exact zeros and their signs (this found the f64 directed-overflow bug of the concrete add)."""
    sp = [bits(fmt, 0.0), bits(fmt, -0.0), SPECIALS[fmt][2], SPECIALS[fmt][3],
          0x7F7FFFFF if fmt == "f32" else 0x7FEFFFFFFFFFFFFF,
          0xFF7FFFFF if fmt == "f32" else 0xFFEFFFFFFFFFFFFF, 1, bits(fmt, 1.0)]
    a = [x for x in sp for _ in sp]
    b = [y for _ in sp for y in sp]
    for line in (f"add.rm.{fmt}", f"sub.rp.{fmt}", f"mul.rz.{fmt}"):
        agree(f"{line} %d, %a, %b", _decls(fmt, "ab"), {"%a": a, "%b": b})


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_half_special_pairs(fmt):
    """Pairs of specials through add / mul / fma (halves round to nearest only)."""
    sp = [0x0000, 0x8000, SPECIALS[fmt][2], SPECIALS[fmt][3], SPECIALS[fmt][5],
          SPECIALS[fmt][9], SPECIALS[fmt][14], SPECIALS[fmt][15], SPECIALS[fmt][16]]
    a = [x for x in sp for _ in sp]
    b = [y for _ in sp for y in sp]
    for line in (f"add.{fmt}", f"mul.{fmt}"):
        agree(f"{line} %d, %a, %b", _decls("b16", "ab"), {"%a": a, "%b": b})
    agree(f"fma.rn.{fmt} %d, %a, %b, %c", _decls("b16", "abc"), {"%a": a, "%b": b, "%c": a})


def test_f64_directed_add_overflow_golden():
    big = 0x7FEFFFFFFFFFFFFF
    assert _run("add.rm.f64 %d, %a, %b", "f64", big, big) == big
    assert _run("add.rz.f64 %d, %a, %b", "f64", big, big) == big
    assert _run("add.rp.f64 %d, %a, %b", "f64", big, big) == 0x7FF0000000000000
    assert _run("add.rp.f64 %d, %a, %b", "f64", big | 1 << 63, big | 1 << 63) == big | 1 << 63
    assert _run("add.rm.f64 %d, %a, %b", "f64", big | 1 << 63, big | 1 << 63) == 0xFFF0000000000000


# ---------------------------------------------------------------------------------------------
# the symbolic domain's templates (`SymbolicDomain.lanewise`): the very same terms

@pytest.mark.parametrize("flags", [(), ("ftz",), ("sat",), ("relu",), ("ftz", "sat")])
@pytest.mark.parametrize("fmt,w", [("f32", 32), ("f16", 16), ("f64", 64)])
def test_a_result_post_processed_by_template_is_the_term_built_directly(flags, fmt, w):
    # Concrete lanes, plain terms and computed ones: each lane's result is the one the
    # operations build on that lane (the same hash-consed term, compared by id)
    from semantics.domains.symbolic import SymbolicDomain
    from semantics.ops.float_arith import _arith_result
    x, y = z3.BitVec(f"x{w}", w), z3.BitVec(f"y{w}", w)
    lanes = [x, 0x3F80 if w == 16 else 1, x + y, (1 << w) - 1, z3.If(x == y, x, y), 7]

    from semantics.choices import Choices

    class Form:
        def has(self, f: str) -> bool:
            return f in flags

    class X:
        """The executor fields `_arith_result` reads."""

        def __init__(self, d):
            self.d, self.choices = d, Choices()

        def effect(self, *args, **kw):
            pass

    def result(d, vec):
        return _arith_result(X(d), Form(), fmt, vec, w, "add.rn", [vec, vec])

    class Direct(SymbolicDomain):
        def lanewise(self, key, fn, a, w):
            return fn(self, a)

        def lanewise_n(self, key, fn, vecs, widths):
            return fn(self, *vecs)
    templated = result(SymbolicDomain(len(lanes)), lanes)
    direct = result(Direct(len(lanes)), lanes)
    assert [t.get_id() if z3.is_expr(t) else t for t in templated] == \
        [t.get_id() if z3.is_expr(t) else t for t in direct]
    assert all(z3.is_expr(t) for t in (templated[0], templated[2], templated[4]))
    # one lane alone, and every lane a term
    for vec in ([x], [x, y, x + y]):
        assert [t.get_id() for t in result(SymbolicDomain(len(vec)), vec)] \
            == [t.get_id() for t in result(Direct(len(vec)), vec)]
