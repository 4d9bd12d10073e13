"""Golden values for integer and bit instructions, from the PTX ISA text and its examples.
Every case also runs symbolically (harness.agree), so both domains are held to the ISA."""

from __future__ import annotations

import numpy as np
import pytest

from harness import agree, execute

M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF


def one(line: str, types: dict[str, str], **inputs) -> int:
    """Run `line` on one lane with %-registers named by `types`; return %d."""
    ins = {f"%{k}": [v] for k, v in inputs.items()}
    return agree(line, {f"%{k}": t for k, t in types.items()}, ins).outputs["%d"][0]


def T(t, *names, **extra):
    return {**{n: t for n in names}, **extra}


@pytest.mark.parametrize("line,t,a,b,want", [
    ("add.s32 %d, %a, %b", "s32", 0x7FFFFFFF, 1, 0x80000000),          # wraps
    ("add.u32 %d, %a, %b", "u32", M32, 1, 0),
    ("sub.u32 %d, %a, %b", "u32", 0, 1, M32),
    ("add.s64 %d, %a, %b", "s64", 0x7FFFFFFFFFFFFFFF, 1, 1 << 63),
    ("mul.lo.s32 %d, %a, %b", "s32", 0x10000, 0x10000, 0),
    ("mul.lo.u16 %d, %a, %b", "u16", 0xFFFF, 0xFFFF, 1),
    ("mul.hi.s32 %d, %a, %b", "s32", (-2) & M32, 3, M32),               # -6 >> 32 = -1
    ("mul.hi.u32 %d, %a, %b", "u32", M32, M32, 0xFFFFFFFE),
    ("mul.hi.s64 %d, %a, %b", "s64", 1 << 63, 1 << 63, 1 << 62),        # (-2^63)^2 = 2^126
    ("mul.hi.u64 %d, %a, %b", "u64", M64, M64, M64 - 1),
    ("mul.hi.s64 %d, %a, %b", "s64", M64, 5, M64),                      # -5 >> 64 = -1
    ("add.sat.s32 %d, %a, %b", "s32", 0x7FFFFFFF, 1, 0x7FFFFFFF),
    ("add.sat.s32 %d, %a, %b", "s32", 0x80000000, M32, 0x80000000),
    ("sub.sat.s32 %d, %a, %b", "s32", 0x80000000, 1, 0x80000000),
    ("sub.sat.s32 %d, %a, %b", "s32", 5, 7, (-2) & M32),
    ("min.s32 %d, %a, %b", "s32", M32, 1, M32),                         # -1 < 1
    ("min.u32 %d, %a, %b", "u32", M32, 1, 1),
    ("max.s32 %d, %a, %b", "s32", M32, 1, 1),
    ("max.u32 %d, %a, %b", "u32", M32, 1, M32),
    ("max.s16 %d, %a, %b", "s16", 0x8000, 0x7FFF, 0x7FFF),
    ("min.u64 %d, %a, %b", "u64", 1 << 63, 3, 3),
])
def test_binary_golden(line, t, a, b, want):
    assert one(line, T(t, "d", "a", "b"), a=a, b=b) == want


@pytest.mark.parametrize("t,a,b,want", [
    ("s32", 0xFFFFFFFF, 0xFFFFFFFF, 1),
    ("s32", 0x80000000, 2, (-(1 << 32)) & M64),
    ("u32", M32, M32, 0xFFFFFFFE00000001),
    ("s16", 0x8000, 0x8000, 0x40000000),
    ("u16", 0xFFFF, 0xFFFF, 0xFFFE0001),
])
def test_mul_wide(t, a, b, want):
    w = int(t[1:])
    dt = f"{t[0]}{2 * w}"
    assert one(f"mul.wide.{t} %d, %a, %b", {"d": dt, "a": t, "b": t}, a=a, b=b) == want


def test_mad_lo_hi_wide():
    assert one("mad.lo.s32 %d, %a, %b, %c", T("s32", "d", "a", "b", "c"),
               a=0x10000, b=0x10001, c=5) == 0x10005
    assert one("mad.hi.u32 %d, %a, %b, %c", T("u32", "d", "a", "b", "c"),
               a=M32, b=M32, c=2) == 0
    assert one("mad.wide.s32 %d, %a, %b, %c", {"d": "s64", "a": "s32", "b": "s32", "c": "s64"},
               a=M32, b=3, c=10) == 7
    assert one("mad.wide.u32 %d, %a, %b, %c", {"d": "u64", "a": "u32", "b": "u32", "c": "u64"},
               a=M32, b=M32, c=M64) == 0xFFFFFFFE00000000
    # mad.hi.sat.s32: saturates the 32-bit high half + c
    assert one("mad.hi.sat.s32 %d, %a, %b, %c", T("s32", "d", "a", "b", "c"),
               a=0x40000000, b=0x40000000 * 2 - 1, c=0x7FFFFFFF) == 0x7FFFFFFF


@pytest.mark.parametrize("op,t,a,b,want", [
    ("div", "s32", -7, 2, -3), ("rem", "s32", -7, 2, -1),
    ("div", "s32", 7, -2, -3), ("rem", "s32", 7, -2, 1),
    ("div", "s32", -7, -2, 3), ("rem", "s32", -7, -2, -1),
    ("div", "u32", (-7) & M32, 2, 0x7FFFFFFC), ("rem", "u32", (-7) & M32, 2, 1),
    ("div", "s32", -(1 << 31), -1, -(1 << 31)),                          # overflow wraps
    ("div", "s64", -7, 2, -3), ("rem", "s64", -7, 2, -1),
    ("div", "s64", 32, -(1 << 63), 0), ("rem", "s64", 32, -(1 << 63), 32),
    ("div", "s16", -7, 2, -3), ("rem", "u16", 0xFFF9, 2, 1),
])
def test_div_rem_signedness(op, t, a, b, want):
    w = int(t[1:])
    r = agree(f"{op}.{t} %d, %a, %b", T(t, "%d", "%a", "%b"),
              {"%a": [a], "%b": [b]})
    assert r.outputs["%d"][0] == want & ((1 << w) - 1)
    assert r.effect_whats() == set()


@pytest.mark.parametrize("op", ["div", "rem"])
@pytest.mark.parametrize("t", ["s32", "u32", "u64"])
def test_division_by_zero_is_an_undefined_effect(op, t):
    r = agree(f"{op}.{t} %d, %a, %b", T(t, "%d", "%a", "%b"), {"%a": [7, 7], "%b": [0, 1]})
    what = "integer remainder by zero" if op == "rem" else "integer division by zero"
    assert r.effect_whats() == {("undefined", what)}
    # Only the lane dividing by zero raises it: with b != 0 everywhere there is no effect.
    r = agree(f"{op}.{t} %d, %a, %b", T(t, "%d", "%a", "%b"), {"%a": [7], "%b": [1]})
    assert r.effect_whats() == set()


@pytest.mark.parametrize("line,t,a,s,want", [
    ("shl.b32 %d, %a, %s", "b32", 1, 31, 0x80000000),
    ("shl.b32 %d, %a, %s", "b32", 1, 32, 0),
    ("shl.b32 %d, %a, %s", "b32", 1, 33, 0),
    ("shl.b32 %d, %a, %s", "b32", 1, M32, 0),
    ("shl.b16 %d, %a, %s", "b16", 1, 16, 0),
    ("shl.b16 %d, %a, %s", "b16", 1, 0x10001, 0),                        # not taken mod 2^16
    ("shl.b64 %d, %a, %s", "b64", 1, 63, 1 << 63),
    ("shl.b64 %d, %a, %s", "b64", 1, 64, 0),
    ("shr.u32 %d, %a, %s", "u32", 0x80000000, 31, 1),
    ("shr.u32 %d, %a, %s", "u32", 0x80000000, 32, 0),
    ("shr.b32 %d, %a, %s", "b32", 0x80000000, 40, 0),
    ("shr.s32 %d, %a, %s", "s32", 0x80000000, 31, M32),
    ("shr.s32 %d, %a, %s", "s32", 0x80000000, 32, M32),                  # sign fill
    ("shr.s32 %d, %a, %s", "s32", 0x40000000, 100, 0),
    ("shr.s16 %d, %a, %s", "s16", 0x8000, 17, 0xFFFF),
    ("shr.s64 %d, %a, %s", "s64", 1 << 63, 64, M64),
    ("shr.u64 %d, %a, %s", "u64", 1 << 63, 65, 0),
])
def test_shift_amounts(line, t, a, s, want):
    assert one(line, {"d": t, "a": t, "s": "u32"}, a=a, s=s) == want


@pytest.mark.parametrize("line,want", [
    # bfe: ISA pseudo-code corners
    ("bfe.u32 %d, %a, 8, 8", 0x56),
    ("bfe.s32 %d, %a, 8, 8", 0x56),
    ("bfe.s32 %d, %a, 4, 8", 0x67),
    ("bfe.u32 %d, %a, 28, 8", 0x1),                                      # field past the msb
    ("bfe.s32 %d, %a, 0, 0", 0),                                         # len 0 -> 0
    ("bfe.s32 %d, %a, 40, 4", 0),                                        # pos past msb, sign 0
    ("bfe.u32 %d, %a, 0, 300", 0x12345678 & 0xFFFFFFFF),                 # len & 0xff = 44
    ("bfe.u32 %d, %a, 260, 4", 0x7),                                     # pos & 0xff = 4
])
def test_bfe_u32_s32(line, want):
    assert one(line, T("b32", "d", "a"), a=0x12345678) == want


def test_bfe_sign_replication():
    t = {"d": "s32", "a": "s32"}
    assert one("bfe.s32 %d, %a, 28, 4", t, a=0x80000000) == 0xFFFFFFF8
    assert one("bfe.s32 %d, %a, 28, 8", t, a=0x80000000) == 0xFFFFFFF8  # sbit = a[31]
    assert one("bfe.s32 %d, %a, 40, 4", t, a=0x80000000) == M32          # pos > msb: sbit=a[31]
    assert one("bfe.s32 %d, %a, 0, 4", t, a=0x8) == M32 - 7
    assert one("bfe.u32 %d, %a, 28, 4", {"d": "u32", "a": "u32"}, a=0x80000000) == 8
    assert one("bfe.s64 %d, %a, 60, 8", {"d": "s64", "a": "s64"}, a=1 << 63) == M64 - 7
    assert one("bfe.u64 %d, %a, 32, 32", {"d": "u64", "a": "u64"}, a=0xDEADBEEF00000000) == 0xDEADBEEF


@pytest.mark.parametrize("line,a,b,want", [
    ("bfi.b32 %d, %a, %b, 8, 4", 0xF, 0x12345678, 0x12345F78),
    ("bfi.b32 %d, %a, %b, 0, 0", 0xF, 0x12345678, 0x12345678),           # len 0 -> b
    ("bfi.b32 %d, %a, %b, 32, 4", 0xF, 0x12345678, 0x12345678),          # pos past msb -> b
    ("bfi.b32 %d, %a, %b, 30, 8", 0xFF, 0, 0xC0000000),                  # clipped at the msb
    ("bfi.b32 %d, %a, %b, 264, 4", 0xF, 0x12345678, 0x12345F78),         # pos & 0xff = 8
])
def test_bfi(line, a, b, want):
    assert one(line, T("b32", "d", "a", "b"), a=a, b=b) == want


@pytest.mark.parametrize("mode,c,want", [
    ("", 0x3210, 0x03020100),
    ("", 0x7531, 0x07050301),                                            # cub::PRMT example
    ("", 0x4444, 0x04040404),
    ("", 0x000B, 0x00000000 | 0x00),                                     # sign of byte 3 (0x03)
    (".f4e", 1, 0x04030201), (".f4e", 3, 0x06050403),
    (".b4e", 0, 0x05060700), (".b4e", 2, 0x07000102),
    (".rc8", 2, 0x02020202),
    (".ecl", 1, 0x03020101), (".ecl", 2, 0x03020202),
    (".ecr", 1, 0x01010100), (".ecr", 2, 0x02020100),
    (".rc16", 0, 0x01000100), (".rc16", 1, 0x03020302),
])
def test_prmt(mode, c, want):
    assert one(f"prmt.b32{mode} %d, %a, %b, %c", T("b32", "d", "a", "b", "c"),
               a=0x03020100, b=0x07060504, c=c) == want


def test_prmt_sign_replication():
    t = T("b32", "d", "a", "b", "c")
    assert one("prmt.b32 %d, %a, %b, %c", t, a=0x80, b=0, c=0x8888) == M32
    assert one("prmt.b32 %d, %a, %b, %c", t, a=0x7F, b=0, c=0x0008) == 0x7F7F7F00  # byte0: sign 0


@pytest.mark.parametrize("line,types,a,want", [
    ("popc.b32 %d, %a", {"d": "u32", "a": "b32"}, 0xF0F0F0F1, 17),
    ("popc.b64 %d, %a", {"d": "u32", "a": "b64"}, M64, 64),
    ("clz.b32 %d, %a", {"d": "u32", "a": "b32"}, 0, 32),
    ("clz.b32 %d, %a", {"d": "u32", "a": "b32"}, 1, 31),
    ("clz.b64 %d, %a", {"d": "u32", "a": "b64"}, 1 << 40, 23),
    ("brev.b32 %d, %a", {"d": "b32", "a": "b32"}, 0x00000001, 0x80000000),
    ("brev.b32 %d, %a", {"d": "b32", "a": "b32"}, 0x12345678, 0x1E6A2C48),
    ("brev.b64 %d, %a", {"d": "b64", "a": "b64"}, 0x3, 0xC000000000000000),
    ("bfind.u32 %d, %a", {"d": "u32", "a": "u32"}, 0x00010000, 16),
    ("bfind.u32 %d, %a", {"d": "u32", "a": "u32"}, 0, M32),
    ("bfind.shiftamt.u32 %d, %a", {"d": "u32", "a": "u32"}, 0x00010000, 15),
    ("bfind.shiftamt.u32 %d, %a", {"d": "u32", "a": "u32"}, 0, M32),
    ("bfind.s32 %d, %a", {"d": "u32", "a": "s32"}, M32, M32),            # -1: no non-sign bit
    ("bfind.s32 %d, %a", {"d": "u32", "a": "s32"}, 0xFFFF0000, 15),      # most significant 0
    ("bfind.s32 %d, %a", {"d": "u32", "a": "s32"}, 0x7FFFFFFF, 30),
    ("bfind.s64 %d, %a", {"d": "u32", "a": "s64"}, 1 << 63, 62),
    ("bfind.shiftamt.s64 %d, %a", {"d": "u32", "a": "s64"}, 1, 63),
    ("bfind.u64 %d, %a", {"d": "u32", "a": "u64"}, 1 << 63, 63),
    ("cnot.b32 %d, %a", {"d": "b32", "a": "b32"}, 0, 1),
    ("cnot.b32 %d, %a", {"d": "b32", "a": "b32"}, 5, 0),
])
def test_counting(line, types, a, want):
    assert one(line, types, a=a) == want


def test_shf_lop3_bmsk_fns():
    t = T("b32", "d", "a", "b", "c")
    assert one("shf.l.clamp.b32 %d, %a, %b, %c", t, a=0x80000000, b=0x1, c=1) == 0x3
    assert one("shf.l.clamp.b32 %d, %a, %b, %c", t, a=0xAAAA, b=0x1, c=40) == 0xAAAA
    assert one("shf.l.wrap.b32 %d, %a, %b, %c", t, a=0x80000000, b=0x1, c=33) == 0x3
    assert one("shf.r.clamp.b32 %d, %a, %b, %c", t, a=0x2, b=0x1, c=1) == 0x80000001
    assert one("shf.r.clamp.b32 %d, %a, %b, %c", t, a=0x2, b=0x1234, c=32) == 0x1234
    assert one("shf.r.wrap.b32 %d, %a, %b, %c", t, a=0x2, b=0x1234, c=32) == 0x2
    # lop3: immLut = F(0xF0, 0xCC, 0xAA)
    for lut, f in ((0x96, lambda a, b, c: a ^ b ^ c), (0xE8, lambda a, b, c: (a & b) | (a & c) | (b & c)),
                   (0x80, lambda a, b, c: a & b & c), (0xFE, lambda a, b, c: a | b | c)):
        a, b, c = 0x12345678, 0x0F0F0F0F, 0xFF00FF00
        assert one(f"lop3.b32 %d, %a, %b, %c, {lut}", t, a=a, b=b, c=c) == f(a, b, c) & M32
    t2 = T("b32", "d", "a", "b")
    assert one("bmsk.wrap.b32 %d, %a, %b", t2, a=1, b=2) == 0x6                # ISA example
    assert one("bmsk.clamp.b32 %d, %a, %b", t2, a=4, b=40) == 0xFFFFFFF0
    assert one("bmsk.wrap.b32 %d, %a, %b", t2, a=4, b=40) == 0xFF0           # b & 31 = 8: bits 4..11
    assert one("bmsk.clamp.b32 %d, %a, %b", t2, a=32, b=4) == 0
    assert one("bmsk.wrap.b32 %d, %a, %b", t2, a=30, b=4) == 0xC0000000       # sum overflow
    t3 = {"d": "b32", "m": "b32", "b": "b32", "o": "s32"}
    for base, off, want in ((3, 1, 3), (3, -1, 3), (2, 1, 3), (2, -1, 1), (2, 0, M32),
                            (3, 0, 3), (1, 16, 31), (1, 17, M32), (31, -16, 1)):
        assert one("fns.b32 %d, %m, %b, %o", t3, m=0xAAAAAAAA, b=base, o=off & M32) == want


def test_logic_and_pred_ops():
    assert one("and.b32 %d, %a, %b", T("b32", "d", "a", "b"), a=0xFF00FF00, b=0x0FF00FF0) == 0x0F000F00
    assert one("xor.b64 %d, %a, %b", T("b64", "d", "a", "b"), a=M64, b=1) == M64 - 1
    assert one("not.b16 %d, %a", T("b16", "d", "a"), a=0x00FF) == 0xFF00
    P = {"%p": "pred", "%q": "pred", "%r": "pred"}
    q, r = [False, False, True, True], [False, True, False, True]
    for op, f in (("and", lambda a, b: a and b), ("or", lambda a, b: a or b),
                  ("xor", lambda a, b: a != b)):
        out = agree(f"{op}.pred %p, %q, %r", P, {"%q": q, "%r": r}).outputs["%p"]
        assert out == [f(a, b) for a, b in zip(q, r)]
    assert agree("not.pred %p, %q", P, {"%q": q}).outputs["%p"] == [True, True, False, False]


def test_setp_combiners_and_pair():
    regs = {"%p": "pred", "%q": "pred", "%c": "pred", "%a": "s32", "%b": "s32"}
    a, b = [1, 5, (-3) & M32, 5], [2, 2, 1, 5]
    lt = [True, False, True, False]
    c = [True, True, False, False]
    r = agree("setp.lt.s32 %p|%q, %a, %b", regs, {"%a": a, "%b": b})
    assert r.outputs == {"%p": lt, "%q": [not x for x in lt]}
    r = agree("setp.lt.u32 %p, %a, %b", regs, {"%a": a, "%b": b})
    assert r.outputs["%p"] == [True, False, False, False]               # -3 is big unsigned
    for op, f in (("and", lambda x, y: x and y), ("or", lambda x, y: x or y),
                  ("xor", lambda x, y: x != y)):
        r = agree(f"setp.lt.{op}.s32 %p|%q, %a, %b, %c", regs, {"%a": a, "%b": b, "%c": c})
        assert r.outputs["%p"] == [f(x, y) for x, y in zip(lt, c)]
        assert r.outputs["%q"] == [f(not x, y) for x, y in zip(lt, c)]
        r = agree(f"setp.lt.{op}.s32 %p, %a, %b, !%c", regs, {"%a": a, "%b": b, "%c": c})
        assert r.outputs["%p"] == [f(x, not y) for x, y in zip(lt, c)]


def test_selp():
    regs = {"%d": "b32", "%a": "b32", "%b": "b32", "%p": "pred"}
    r = agree("selp.b32 %d, %a, %b, %p", regs,
              {"%a": [1, 1], "%b": [2, 2], "%p": [True, False]})
    assert r.outputs["%d"] == [1, 2]
    r = agree("selp.s32 %d, %a, 7, %p", {"%d": "s32", "%a": "s32", "%p": "pred"},
              {"%a": [M32, M32], "%p": [True, False]})
    assert r.outputs["%d"] == [M32, 7]


# -- shfl.sync on one full warp (32 lanes, concrete) ---------------------------------------------

WARP = list(range(100, 132))      # lane i holds 100 + i
SHFL_REGS = {"%d": "b32", "%p": "pred", "%a": "b32"}


def shfl(mode: str, b: int, c: int):
    r = execute(f"shfl.sync.{mode}.b32 %d|%p, %a, {b}, {c}, -1", SHFL_REGS, {"%a": WARP},
                "concrete")
    return [v - 100 for v in r.outputs["%d"]], r.outputs["%p"], r.effect_whats()


def test_shfl_bfly():
    src, ok, eff = shfl("bfly", 1, 0x1F)
    assert src == [i ^ 1 for i in range(32)] and all(ok) and eff == set()
    src, ok, _ = shfl("bfly", 16, 0x1F)
    assert src == [i ^ 16 for i in range(32)] and all(ok)
    # segments of 8 (c = 0x181F: segmask 0x18): j = i ^ 4 stays inside the segment
    src, ok, _ = shfl("bfly", 4, 0x181F)
    assert src == [i ^ 4 for i in range(32)] and all(ok)


def test_shfl_down_clamp_and_segments():
    src, ok, _ = shfl("down", 1, 0x1F)
    assert src == list(range(1, 32)) + [31]
    assert ok == [True] * 31 + [False]
    src, ok, _ = shfl("down", 2, 0x181F)      # 4 segments of 8 lanes
    want = [i + 2 if (i % 8) + 2 <= 7 else i for i in range(32)]
    assert src == want
    assert ok == [(i % 8) + 2 <= 7 for i in range(32)]


def test_shfl_up_clamp_and_segments():
    src, ok, _ = shfl("up", 3, 0)
    assert src == [0, 1, 2] + list(range(0, 29))
    assert ok == [False] * 3 + [True] * 29
    src, ok, _ = shfl("up", 1, 0x1800)        # up: c = segment start (0) with segmask 0x18
    assert src == [i - 1 if i % 8 >= 1 else i for i in range(32)]
    assert ok == [i % 8 >= 1 for i in range(32)]


def test_shfl_idx():
    src, ok, _ = shfl("idx", 5, 0x1F)
    assert src == [5] * 32 and all(ok)
    src, ok, _ = shfl("idx", 3, 0x181F)       # lane 3 of each segment of 8
    assert src == [(i // 8) * 8 + 3 for i in range(32)] and all(ok)
    src, ok, _ = shfl("idx", 7, 0x1C1F)       # segments of 4: index 7 & ~segmask = 3
    assert src == [(i // 4) * 4 + 3 for i in range(32)] and all(ok)


def test_shfl_symbolic_agrees():
    r = agree("shfl.sync.bfly.b32 %d|%p, %a, 8, 31, -1", SHFL_REGS, {"%a": WARP})
    assert [v - 100 for v in r.outputs["%d"]] == [i ^ 8 for i in range(32)]


def _warp_kernel(body: str, regs: str) -> str:
    return f""".version 8.5
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
{regs}
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %laneid;
{body}
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    ret;
}}
"""


@pytest.mark.parametrize("body,expect", [
    ("    redux.sync.add.u32 %r3, %r1, -1;", lambda lane: sum(range(32))),
    ("    redux.sync.max.s32 %r3, %r1, -1;", lambda lane: 31),
    ("    redux.sync.min.u32 %r3, %r1, -1;", lambda lane: 0),
    ("    redux.sync.xor.b32 %r3, %r1, -1;", lambda lane: 0),
    ("    and.b32 %r2, %r1, 3;\n    match.any.sync.b32 %r3, %r2, -1;",
     lambda lane: sum(1 << k for k in range(32) if k % 4 == lane % 4)),
    ("    and.b32 %r2, %r1, 0;\n    match.all.sync.b32 %r3|%p1, %r2, -1;",
     lambda lane: 0xFFFFFFFF),
    ("    match.all.sync.b32 %r3|%p1, %r1, -1;", lambda lane: 0),
])
def test_redux_and_match_across_a_warp(body, expect):
    from semantics.machine import run_kernel
    from semantics.ptx import parse_ptx
    regs = "    .reg .b32 %r<4>;\n    .reg .b64 %rd<4>;\n    .reg .pred %p<2>;"
    out = np.zeros(32, np.uint32)
    res = run_kernel(parse_ptx(_warp_kernel(body, regs)), "k", 1, 32, [out])
    got = res.buffers["out"]
    assert [int(v) for v in got] == [expect(lane) & 0xFFFFFFFF for lane in range(32)]


@pytest.mark.parametrize("body", [
    "    redux.sync.min.u32 %r3, %r1, 0x0000FFF0;",
    "    match.any.sync.b32 %r3, %r1, 0x0000FFFF;",
    "    vote.sync.ballot.b32 %r3, %p1, 1;",
    "    shfl.sync.idx.b32 %r3, %r1, 0, 31, 0xFFFF0000;",
])
def test_a_warp_operation_whose_membermask_leaves_a_lane_out_is_undefined(body):
    # PTX ISA: undefined behaviour when the executing thread is not in the membermask; the
    # emulator reports it as a fault of the kernel, with a thread it happens in
    from semantics.machine import run_kernel
    from semantics.machine.memory import UndefinedBehavior
    from semantics.ptx import parse_ptx
    regs = "    .reg .b32 %r<4>;\n    .reg .b64 %rd<4>;\n    .reg .pred %p<2>;"
    with pytest.raises(UndefinedBehavior, match="membermask leaves out"):
        run_kernel(parse_ptx(_warp_kernel(body, regs)), "k", 1, 32, [np.zeros(32, np.uint32)])


@pytest.mark.parametrize("typ,init,add,want", [
    ("f16", 0x3C00, 0x3C00, 0x4000),                        # 1 + 1 = 2
    ("f16x2", 0x3C00_4000, 0x3C00_3C00, 0x4000_4200),       # (1,2) + (1,1) per half
    ("bf16x2", 0x3F80_BF80, 0x3F80_3F80, 0x4000_0000),      # (1,-1) + (1,1)
    ("f32", 0x3F800000, 0x7FC00001, 0x7FFFFFFF),            # NaN result is canonical
])
def test_float_atomic_add_in_shared_memory(typ, init, add, want):
    """One thread does atom.shared.add on a value it stored; the old value comes back too."""
    from semantics.machine import run_kernel
    from semantics.ptx import parse_ptx
    bits = 16 if typ == "f16" else 32
    noftz = ".noftz" if typ != "f32" else ""
    ptx = f""".version 8.5
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .reg .b{bits} %h<4>;
    .reg .b64 %rd<2>;
    .shared .align 4 .b8 s[4];
    ld.param.u64 %rd1, [out];
    mov.b{bits} %h1, {init};
    st.shared.b{bits} [s], %h1;
    mov.b{bits} %h2, {add};
    atom.shared.add{noftz}.{typ} %h3, [s], %h2;
    ld.shared.b{bits} %h0, [s];
    st.global.b{bits} [%rd1], %h0;
    st.global.b{bits} [%rd1+4], %h3;
    ret;
}}
"""
    out = np.zeros(2, np.uint32)
    got = run_kernel(parse_ptx(ptx), "k", 1, 1, [out]).buffers["out"]
    assert int(got[0]) == want and int(got[1]) == init
