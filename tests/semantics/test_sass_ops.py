"""SASS instruction semantics: exact results of each form the corpus uses (hand-computed, so
the tests fail on a wrong meaning), and concrete vs symbolic agreement bit for bit on random
and special inputs for every form (semantics.sass.conformance.agree_sass)."""

from __future__ import annotations

import random
import struct

import pytest

from semantics.errors import UnsupportedError
from semantics.sass.conformance import agree_sass, execute_sass


def f32(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def run(line, inputs, **kw):
    return agree_sass(line, inputs, **kw).outputs


M32 = 0xFFFFFFFF


# -- exact results --------------------------------------------------------------------------

def test_iadd3_carry_and_borrow():
    out = run("IADD3 R0, P0, R1, -R2, RZ", {"R1": [5, 1, 0, M32], "R2": [3, 2, 0, 1]})
    assert out["R0"] == [2, M32, 0, M32 - 1]
    # -b enters the carry chain as ~b + 1: carry = (a >= b) unsigned
    assert out["P0"] == [True, False, True, True]


def test_iadd3_x_adds_carry_ins():
    out = run("IADD3.X R0, R1, R2, RZ, P0, !PT",
              {"R1": [1, M32], "R2": [2, 0], "P0": [True, True]})
    assert out["R0"] == [4, 0]


def test_imad_forms():
    assert run("IMAD R0, R1, R2, R3", {"R1": [3, M32], "R2": [4, 2], "R3": [1, 5]})["R0"] == \
        [13, 3]
    assert run("IMAD.MOV R0, RZ, RZ, -R1", {"R1": [1, 0]})["R0"] == [M32, 0]
    assert run("IMAD.SHL.U32 R0, R1, 0x4, RZ", {"R1": [3, 0x40000001]})["R0"] == [12, 4]
    assert run("IMAD.IADD R0, R1, 0x1, -R2", {"R1": [10, 0], "R2": [3, 1]})["R0"] == [7, M32]
    assert run("IMAD.X R0, RZ, RZ, R1, P0", {"R1": [7, 7], "P0": [True, False]})["R0"] == [8, 7]


def test_imad_wide_signed_and_unsigned():
    out = run("IMAD.WIDE R2, R0, 0x4, R4", {"R0": [M32, 3], "R4": [0x1000, 0], "R5": [0, 1]})
    # -1 * 4 + 0x1000 = 0xffc; 3 * 4 + 2^32 = 0x1_0000_000c
    assert list(zip(out["R2"], out["R3"])) == [(0xFFC, 0), (12, 1)]
    out = run("IMAD.WIDE.U32 R2, R0, 0x4, R4", {"R0": [M32], "R4": [0], "R5": [0]})
    assert (out["R2"][0], out["R3"][0]) == (0xFFFFFFFC, 3)


def test_imad_hi_adds_a_register_pair():
    # the addend is the pair R2:R3 (R3 high): hi(a*b + (R3 << 32 | R2))
    out = run("IMAD.HI.U32 R3, R3, R9, R2", {"R3": [5, 7], "R9": [3, 0xFFFFFFF0], "R2": [0, 0]})
    assert out["R3"] == [5, 7 + 6]            # hi(7 * 0xfffffff0) = 6


def test_lea_family():
    assert run("LEA R0, R1, R2, 0x2", {"R1": [3], "R2": [100]})["R0"] == [112]
    # the carry is that of the 32-bit add of the shifted value (the low half of an address)
    out = run("LEA R0, P0, R1, R2, 0x2", {"R1": [0x3FFFFFFF, 0x40000000], "R2": [5, 5]})
    assert out["R0"] == [1, 5] and out["P0"] == [True, False]
    # LEA.HI: b + high word of ({c:a} << s)
    assert run("LEA.HI R0, R1, R2, RZ, 0x4", {"R1": [0xF0000000], "R2": [1]})["R0"] == [16]
    out = run("LEA.HI.X.SX32 R0, R1, R2, 0x2, P0", {"R1": [M32], "R2": [10], "P0": [True]})
    assert out["R0"] == [10 + 0xFFFFFFFF + 1 & M32]     # sext(-1) << 2 has high word -1
    out = run("LEA.HI.X R0, R1, R2, R3, 0x2, P0",
              {"R1": [0xC0000000], "R2": [0], "R3": [1], "P0": [False]})
    assert out["R0"] == [(1 << 2) | 3]


def test_lop3_and_plop3():
    out = run("LOP3.LUT R0, R1, R2, R3, 0xc0, !PT",
              {"R1": [0xF0F0], "R2": [0xFF00], "R3": [0x1234]})
    assert out["R0"] == [0xF000]                  # 0xc0 = a & b
    out = run("LOP3.LUT P0, R0, R1, R2, RZ, 0x96, !PT", {"R1": [5, 5], "R2": [5, 4]})
    assert out["R0"] == [0, 1] and out["P0"] == [False, True]
    out = run("PLOP3.LUT P0, P1, PT, PT, P2, 0x80, 0x8", {"P2": [True, False]})
    assert out["P0"] == [True, False] and out["P1"] == [False, False]


def test_shf_funnel_shifts():
    assert run("SHF.L.U32 R0, R1, 0x6, RZ", {"R1": [0x04000001]})["R0"] == [0x40]
    assert run("SHF.L.U64.HI R0, R1, 0x2, R2", {"R1": [0xC0000000], "R2": [1]})["R0"] == [7]
    assert run("SHF.R.S32.HI R0, RZ, 0x1f, R1", {"R1": [0x80000000, 5]})["R0"] == [M32, 0]
    assert run("SHF.R.U32.HI R0, RZ, 0x1, R1", {"R1": [0x80000000]})["R0"] == [0x40000000]
    # register amounts are clamped to the width (shl by >= 32 gives 0)
    assert run("SHF.L.U32 R0, R1, R2, RZ", {"R1": [1, 1], "R2": [31, 40]})["R0"] == [1 << 31, 0]


def test_isetp_combines_and_complements():
    out = run("ISETP.GE.AND P0, P1, R1, R2, PT", {"R1": [M32, 2], "R2": [1, 2]})
    assert out["P0"] == [False, True] and out["P1"] == [True, False]      # signed: -1 < 1
    out = run("ISETP.GE.U32.AND P0, PT, R1, R2, PT", {"R1": [M32], "R2": [1]})
    assert out["P0"] == [True]
    out = run("ISETP.GT.U32.OR P0, PT, R1, 0xfd, P2", {"R1": [1, 1], "P2": [False, True]})
    assert out["P0"] == [False, True]


def test_sel_mov_p2r_cs2r():
    assert run("SEL R0, R1, RZ, P0", {"R1": [9, 9], "P0": [True, False]})["R0"] == [9, 0]
    assert run("MOV R0, 0x1c80", {"R1": [0]})["R0"] == [0x1C80]
    out = run("P2R R0, PR, RZ, 0x3", {"P0": [True, False], "P1": [True, True]})
    assert out["R0"] == [3, 2]
    assert run("CS2R R4, SRZ", {"R4": [7], "R5": [8]})["R4"] == [0]


def test_float_forms():
    one, two, three = f32(1.0), f32(2.0), f32(3.0)
    assert run("FADD R0, R1, -R2", {"R1": [three], "R2": [one]})["R0"] == [two]
    assert run("FMUL R0, R1, R2", {"R1": [two], "R2": [three]})["R0"] == [f32(6.0)]
    assert run("FFMA R0, R1, R2, R3", {"R1": [two], "R2": [three], "R3": [one]})["R0"] == \
        [f32(7.0)]
    # .FTZ flushes a subnormal input; the canonical NaN
    assert run("FADD.FTZ R0, R1, RZ", {"R1": [1]})["R0"] == [0]
    assert run("FADD R0, R1, RZ", {"R1": [0x7F800001]})["R0"] == [0x7FFFFFFF]
    # .SAT clamps to [0, 1]; .RM rounds down: 12582913 = 0x4b400001
    assert run("FFMA.SAT R0, R1, R2, 0.5", {"R1": [two], "R2": [three]})["R0"] == [one]
    assert run("FFMA.RM R0, R1, RZ, 12582913", {"R1": [one]})["R0"] == [0x4B400001]
    # FMNMX: !PT is max, PT is min; NaN loses
    out = run("FMNMX R0, R1, R2, !PT", {"R1": [one, 0x7FC00000], "R2": [two, one]})
    assert out["R0"] == [two, one]
    assert run("FMNMX R0, R1, R2, PT", {"R1": [one], "R2": [two]})["R0"] == [one]
    out = run("FSETP.GTU.FTZ.AND P0, PT, |R1|, +INF, PT", {"R1": [0xFF800000, 0xFFC00000]})
    assert out["P0"] == [False, True]           # |-inf| > inf is false; NaN is unordered


def test_convert_and_hfma2_move():
    assert run("F2I.FTZ.U32.TRUNC.NTZ R0, R1", {"R1": [f32(3.9), f32(-2.0)]})["R0"] == [3, 0]
    assert run("I2F.U32.RP R0, R1", {"R1": [M32]})["R0"] == [f32(4294967296.0)]
    # the high half is printed first: this is the integer 4
    assert run("HFMA2.MMA R3, -RZ, RZ, 0, 2.384185791015625e-07", {"R1": [0]})["R3"] == [4]


def test_mufu_is_the_ptx_approximation():
    r = agree_sass("MUFU.EX2 R0, R1", {"R1": [f32(1.0)]}, approx=True)
    assert [(e.kind, e.what) for e in r.effects] == \
        [("approximation", "MUFU.EX2 (as ex2.approx.ftz.f32)")]


def test_uniform_twins():
    assert run("UIADD3 UR6, UP0, UR6, 0x40, URZ", {"UR6": [M32 - 1]})["UR6"] == [0x3E]
    assert run("ULEA UR4, UR5, UR4, 0x18", {"UR4": [0x400], "UR5": [0]})["UR4"] == [0x400]
    assert run("USHF.R.S32.HI UR4, URZ, 0x1f, UR5", {"UR5": [0x80000000]})["UR4"] == [M32]
    assert run("UIMAD UR4, UR4, UR5, URZ", {"UR4": [6], "UR5": [7]})["UR4"] == [42]


def test_unsupported_forms_are_refused_by_name():
    with pytest.raises(UnsupportedError, match="ISETP.GE.U32.AND.EX"):
        execute_sass("ISETP.GE.U32.AND.EX P0, PT, R1, R2, PT, P1", {"R1": [0]})
    with pytest.raises(UnsupportedError, match="FMUL.D2"):
        execute_sass("FMUL.D2 R0, R1, R2", {"R1": [0]})


# -- concrete vs symbolic, every form -------------------------------------------------------

SPECIAL_F = [0, 0x80000000, f32(1.0), f32(-1.5), 0x7F800000, 0xFF800000, 0x7FC00000,
             0x7F800001, 0xFFFFFFFF, 1, 0x807FFFFF, 0x7F7FFFFF, f32(0.5), f32(12582912.0)]
SPECIAL_I = [0, 1, M32, 0x80000000, 0x7FFFFFFF, 31, 32, 33, 0xFFFFFFFE, 0x10000]

FORMS = [
    ("IADD3 R0, P0, P1, R1, R2, R3", "i"), ("IADD3 R0, P0, R1, -R2, RZ", "i"),
    ("IADD3.X R0, P0, R1, ~R2, R3, P1, !PT", "i"), ("VIADD R0, R1, 0xffffffff", "i"),
    ("IMAD R0, R1, R2, -R3", "i"), ("IMAD.WIDE R2, R1, R4, R6", "i"),
    ("IMAD.WIDE.U32 R2, R1, R4, R6", "i"), ("IMAD.HI.U32 R3, R3, R1, R2", "i"),
    ("IMAD.HI R3, R3, R1, R2", "i"), ("IMAD.X R0, R1, R2, R3, P0", "i"),
    ("IMAD.MOV.U32 R0, RZ, RZ, R1", "i"), ("LEA R0, P0, R1, R2, 0x3", "i"),
    ("LEA.HI R0, R1, R2, R3, 0x5", "i"), ("LEA.HI.X R0, R1, R2, R3, 0x2, P0", "i"),
    ("LEA.HI.X.SX32 R0, R1, R2, 0x1, P0", "i"), ("LOP3.LUT P1, R0, R1, R2, R3, 0x6a, !PT", "i"),
    ("PLOP3.LUT P0, P1, P2, P3, PT, 0x96, 0x17", "i"), ("SEL R0, R1, R2, P0", "i"),
    ("SHF.L.U32 R0, R1, R2, RZ", "i"), ("SHF.L.U64.HI R0, R1, R2, R3", "i"),
    ("SHF.R.S32.HI R0, R1, R2, R3", "i"), ("SHF.R.U64 R0, R1, R2, R3", "i"),
    ("SHF.L.W.U32.HI R0, R1, R2, R3", "i"),
    ("ISETP.LT.OR P0, P1, R1, R2, P2", "i"), ("ISETP.NE.U32.AND P0, PT, R1, R2, PT", "i"),
    ("P2R R0, PR, R1, 0x7f", "i"), ("IMNMX.U32 R0, R1, R2, P0", "i"),
    ("POPC R0, R1", "i"), ("FLO.U32 R0, R1", "i"), ("BREV R0, R1", "i"),
    ("FADD R0, R1, -R2", "f"), ("FADD.FTZ R0, |R1|, R2", "f"), ("FADD.RZ.SAT R0, R1, R2", "f"),
    ("FMUL R0, R1, R2", "f"), ("FMUL.FTZ.RP R0, R1, R2", "f"), ("FFMA R0, R1, R2, R3", "f"),
    ("FFMA.RM R0, R1, R2, -R3", "f"), ("FFMA.SAT R0, R1, R2, 0.5", "f"),
    ("FMNMX R0, R1, R2, !PT", "f"), ("FMNMX.FTZ R0, R1, R2, P0", "f"),
    ("FSETP.NEU.FTZ.AND P0, P1, R1, R2, P2", "f"), ("FSETP.GE.OR P0, PT, R1, R2, P2", "f"),
    ("FSEL R0, R1, R2, P0", "f"), ("F2I.FTZ.U32.TRUNC.NTZ R0, R1", "f"), ("F2I R0, R1", "f"),
    ("I2F.U32.RP R0, R1", "i"), ("I2F R0, R1", "i"), ("HFMA2.MMA R0, R1, R2, R3", "i"),
    ("UIADD3.X UR7, URZ, UR7, URZ, UP0, !UPT", "i"), ("USHF.L.U32 UR5, UR4, 0x2, URZ", "i"),
    ("VIMNMX.U32 R0, R1, R2, !PT", "i"), ("I2FP.F32.U32 R0, R1", "i"),
    ("F2F.F64.F32 R2, R1", "f"), ("F2F.F32.F64 R0, R2", "f"), ("HADD2.F32 R0, -RZ, R1.H1_H1", "i"),
    ("F2FP.F16.F32.PACK_AB R0, R1, R2", "f"), ("VOTE.ANY R0, P1, P2", "i"),
    ("VOTE.ALL P1, P2", "i"),
]


def _inputs(line: str, kind: str, rng: random.Random, lanes: int = 6) -> dict:
    regs = {}
    for tok in line.replace(",", " ").replace("|", " ").replace("-", " ").replace("~", " ") \
            .replace("!", " ").split()[1:]:
        for prefix in ("UR", "UP", "R", "P"):
            if tok.startswith(prefix) and tok[len(prefix):].isdigit():
                regs[tok] = prefix
                break
    # register pairs read by .WIDE/.HI/.64 forms
    for tok, prefix in list(regs.items()):
        if prefix in ("R", "UR"):
            regs.setdefault(f"{prefix}{int(tok[len(prefix):]) + 1}", prefix)
    pool = SPECIAL_F if kind == "f" else SPECIAL_I
    out = {}
    for name, prefix in regs.items():
        if prefix in ("P", "UP"):
            out[name] = [rng.random() < 0.5 for _ in range(lanes)]
        else:
            out[name] = [rng.choice(pool) if rng.random() < 0.6 else rng.getrandbits(32)
                         for _ in range(lanes)]
    return out


@pytest.mark.parametrize("line,kind", FORMS, ids=[f[0].split()[0] + ":" + f[0] for f in FORMS])
def test_concrete_and_symbolic_agree(line, kind):
    rng = random.Random(line)
    for _ in range(3):
        agree_sass(line, _inputs(line, kind, rng))
