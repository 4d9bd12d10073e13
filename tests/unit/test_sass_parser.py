"""The SASS front end (semantics.sass): nvdisasm and cuobjdump listings, cubins, operands,
parameters from the constant bank, the CFG with BSSY/BSYNC pairs, errors, `keq parse`.

Corpus facts (opcode counts, parameter layouts) are checked against the committed listings in
kernels/, which nvdisasm 13.2 printed; the cuobjdump listing below was printed by
`cuobjdump -sass` 13.5 (PyPI nvidia-cuda-cuobjdump) for kernels/vector_add/
vector_add_vec4.sm_90.cubin, with the padding NOPs after the final self-branch removed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from semantics.errors import LocatedError
from semantics.ir.nodes import Form, Guard, Label
from semantics.ir.operands import IntImm, SpecialReg, Sym
from semantics.ptx import parse_ptx_file
from semantics.sass import (
    SassSyntaxError, build_sass_cfg, find_nvdisasm, parse_cubin, parse_sass, parse_sass_file,
    print_sass,
)
from semantics.sass import registry
from semantics.sass.operands import (
    ConstBank, FloatLit, SassAddr, SassReg, SassTarget, Src, register_of,
)
from verifier.cli import main

REPO = Path(__file__).resolve().parents[2]
SASS_FILES = sorted((REPO / "kernels").rglob("*.sass"))
IDS = [str(p.relative_to(REPO / "kernels")) for p in SASS_FILES]

R = lambda i: SassReg("R", i)          # noqa: E731
UR = lambda i: SassReg("UR", i)        # noqa: E731
P = lambda i: SassReg("P", i)          # noqa: E731
RZ, URZ, PT = SassReg("RZ"), SassReg("URZ"), SassReg("PT")

CUOBJDUMP_VEC4 = '''

	code for sm_90
	.target	sm_90

		Function : vector_add_vec4
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                        /* 0x00000a00ff017b82 */
                                                                                 /* 0x000ff00000000800 */
        /*0010*/                   LDC R7, c[0x0][0x228] ;                       /* 0x00008a00ff077b82 */
                                                                                 /* 0x000e220000000800 */
        /*0020*/                   S2R R4, SR_CTAID.X ;                          /* 0x0000000000047919 */
                                                                                 /* 0x000e620000002500 */
        /*0030*/                   ULDC UR4, c[0x0][0x0] ;                       /* 0x0000000000047ab9 */
                                                                                 /* 0x000fe20000000800 */
        /*0040*/                   BSSY B0, 0x1e0 ;                              /* 0x0000019000007945 */
                                                                                 /* 0x000fe20003800000 */
        /*0050*/                   S2R R5, SR_TID.X ;                            /* 0x0000000000057919 */
                                                                                 /* 0x000e620000002100 */
        /*0060*/                   SHF.R.S32.HI R0, RZ, 0x1f, R7 ;               /* 0x0000001fff007819 */
                                                                                 /* 0x001fc80000011407 */
        /*0070*/                   LEA.HI R3, R0, R7, RZ, 0x2 ;                  /* 0x0000000700037211 */
                                                                                 /* 0x000fc800078f10ff */
        /*0080*/                   LOP3.LUT R2, R3, 0xfffffffc, RZ, 0xc0, !PT ;  /* 0xfffffffc03027812 */
                                                                                 /* 0x000fe400078ec0ff */
        /*0090*/                   SHF.R.S32.HI R3, RZ, 0x2, R3 ;                /* 0x00000002ff037819 */
                                                                                 /* 0x000fe20000011403 */
        /*00a0*/                   IMAD R0, R4, UR4, R5 ;                        /* 0x0000000404007c24 */
                                                                                 /* 0x002fe2000f8e0205 */
        /*00b0*/                   IADD3 R5, -R2, R7, RZ ;                       /* 0x0000000702057210 */
                                                                                 /* 0x000fe20007ffe1ff */
        /*00c0*/                   ULDC.64 UR4, c[0x0][0x208] ;                  /* 0x0000820000047ab9 */
                                                                                 /* 0x000fc60000000a00 */
        /*00d0*/                   ISETP.GE.AND P0, PT, R0.reuse, R3, PT ;       /* 0x000000030000720c */
                                                                                 /* 0x040fe40003f06270 */
        /*00e0*/                   ISETP.GE.AND P1, PT, R0, R5, PT ;             /* 0x000000050000720c */
                                                                                 /* 0x000fd60003f26270 */
        /*00f0*/               @P0 BRA 0x1d0 ;                                   /* 0x0000000000340947 */
                                                                                 /* 0x000fea0003800000 */
        /*0100*/                   LDC.64 R4, c[0x0][0x210] ;                    /* 0x00008400ff047b82 */
                                                                                 /* 0x000e300000000a00 */
        /*0110*/                   LDC.64 R6, c[0x0][0x218] ;                    /* 0x00008600ff067b82 */
                                                                                 /* 0x000e700000000a00 */
        /*0120*/                   LDC.64 R8, c[0x0][0x220] ;                    /* 0x00008800ff087b82 */
                                                                                 /* 0x000ea20000000a00 */
        /*0130*/                   IMAD.WIDE R4, R0, 0x10, R4 ;                  /* 0x0000001000047825 */
                                                                                 /* 0x001fca00078e0204 */
        /*0140*/                   LDG.E.128.CONSTANT R12, desc[UR4][R4.64] ;    /* 0x00000004040c7981 */
                                                                                 /* 0x000ee2000c1e9d00 */
        /*0150*/                   IMAD.WIDE R6, R0, 0x10, R6 ;                  /* 0x0000001000067825 */
                                                                                 /* 0x002fca00078e0206 */
        /*0160*/                   LDG.E.128.CONSTANT R16, desc[UR4][R6.64] ;    /* 0x0000000406107981 */
                                                                                 /* 0x000ee2000c1e9d00 */
        /*0170*/                   IMAD.WIDE R8, R0, 0x10, R8 ;                  /* 0x0000001000087825 */
                                                                                 /* 0x004fc800078e0208 */
        /*0180*/                   FADD R15, R15, R19 ;                          /* 0x000000130f0f7221 */
                                                                                 /* 0x008fe20000000000 */
        /*0190*/                   FADD R14, R14, R18 ;                          /* 0x000000120e0e7221 */
                                                                                 /* 0x000fe20000000000 */
        /*01a0*/                   FADD R13, R13, R17 ;                          /* 0x000000110d0d7221 */
                                                                                 /* 0x000fe20000000000 */
        /*01b0*/                   FADD R12, R12, R16 ;                          /* 0x000000100c0c7221 */
                                                                                 /* 0x000fca0000000000 */
        /*01c0*/                   STG.E.128 desc[UR4][R8.64], R12 ;             /* 0x0000000c08007986 */
                                                                                 /* 0x0001e4000c101d04 */
        /*01d0*/                   BSYNC B0 ;                                    /* 0x0000000000007941 */
                                                                                 /* 0x000fea0003800000 */
        /*01e0*/               @P1 EXIT ;                                        /* 0x000000000000194d */
                                                                                 /* 0x000fea0003800000 */
        /*01f0*/                   LDC.64 R4, c[0x0][0x210] ;                    /* 0x00008400ff047b82 */
                                                                                 /* 0x000e620000000a00 */
        /*0200*/                   LEA R9, R3, R0, 0x2 ;                         /* 0x0000000003097211 */
                                                                                 /* 0x001fce00078e10ff */
        /*0210*/                   LDC.64 R6, c[0x0][0x218] ;                    /* 0x00008600ff067b82 */
                                                                                 /* 0x000e220000000a00 */
        /*0220*/                   IMAD.WIDE R2, R9, 0x4, R4 ;                   /* 0x0000000409027825 */
                                                                                 /* 0x002fcc00078e0204 */
        /*0230*/                   LDG.E.CONSTANT R3, desc[UR4][R2.64] ;         /* 0x0000000402037981 */
                                                                                 /* 0x000ea2000c1e9900 */
        /*0240*/                   IMAD.WIDE R4, R9.reuse, 0x4, R6 ;             /* 0x0000000409047825 */
                                                                                 /* 0x041fe400078e0206 */
        /*0250*/                   LDC.64 R6, c[0x0][0x220] ;                    /* 0x00008800ff067b82 */
                                                                                 /* 0x000e280000000a00 */
        /*0260*/                   LDG.E.CONSTANT R4, desc[UR4][R4.64] ;         /* 0x0000000404047981 */
                                                                                 /* 0x000ea2000c1e9900 */
        /*0270*/                   IMAD.WIDE R6, R9, 0x4, R6 ;                   /* 0x0000000409067825 */
                                                                                 /* 0x001fc800078e0206 */
        /*0280*/                   FADD R9, R4, R3 ;                             /* 0x0000000304097221 */
                                                                                 /* 0x004fca0000000000 */
        /*0290*/                   STG.E desc[UR4][R6.64], R9 ;                  /* 0x0000000906007986 */
                                                                                 /* 0x000fe2000c101904 */
        /*02a0*/                   EXIT ;                                        /* 0x000000000000794d */
                                                                                 /* 0x000fea0003800000 */
        /*02b0*/                   BRA 0x2b0;                                    /* 0xfffffffc00fc7947 */
                                                                                 /* 0x000fc0000383ffff */
		..........


'''


def _wrap(body: str, extra: str = "") -> str:
    """A minimal nvdisasm listing around instruction lines."""
    return (f"\t.target\tsm_90\n{extra}\t.section\t.text.k,\"ax\",@progbits\n"
            "\t.type\tk,@function\n\t.other\tk,@\"STO_CUDA_ENTRY STV_DEFAULT\"\nk:\n" + body)


def _instrs(lines: list[str]):
    body = "".join(f"        /*{16 * i:04x}*/                   {t}\n"
                   for i, t in enumerate(lines))
    return parse_sass(_wrap(body), "t.sass").functions[0].instructions


# -- the corpus ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", SASS_FILES, ids=IDS)
def test_every_committed_listing_parses_round_trips_and_builds_a_cfg(path):
    m = parse_sass_file(path)
    assert m.source == "nvdisasm" and m.arch == path.name.split(".")[-2]
    assert m.entries, "every corpus file has a kernel"
    again = parse_sass(print_sass(m), "printed.sass")
    assert again == m
    for f in m.functions:
        cfg = build_sass_cfg(f)
        assert len(cfg.blocks) == len(cfg.ipdom) >= 1
    # every instruction line of the listing is an instruction of the module: none skipped
    n_text = sum(1 for ln in path.read_text().split("\n")
                 if re.match(r"\s+/\*[0-9a-f]{4}\*/\s+[@A-Z]", ln))
    assert sum(len(f.instructions) for f in m.functions) == n_text


@pytest.mark.parametrize("path", SASS_FILES, ids=IDS)
def test_parameters_match_the_ptx_entry_and_the_constant_bank(path):
    """KPARAM_INFO gives each .entry parameter of the PTX its size and cbank slot."""
    m = parse_sass_file(path)
    ptx = parse_ptx_file(path.with_name(path.name.split(".")[0] + ".ptx"))
    base = 0x160 if m.arch == "sm_80" else 0x210
    for name, f in m.entries.items():
        entry = ptx.entries[name]
        assert [p.ordinal for p in f.params] == list(range(len(entry.params)))
        assert [p.size for p in f.params] == [p.size_bytes for p in entry.params]
        assert f.param_cbank is not None and (f.param_cbank.bank, f.param_cbank.base) == (0, base)
        assert f.param_cbank.size == max(p.offset + p.size for p in f.params)
        for p in f.params:
            assert f.param_at(ConstBank(0, base + p.offset)) == (p, 0)
            assert p.offset % min(p.size, 8) == 0


def test_constant_bank_operands_map_to_parameters():
    m = parse_sass_file(REPO / "kernels/vector_add/vector_add.sm_90.sass")
    f = m.entries["vector_add"]
    assert [(p.ordinal, p.offset, p.size) for p in f.params] == \
        [(0, 0, 8), (1, 8, 8), (2, 16, 8), (3, 24, 4)]
    assert [f.cbank_offset(p) for p in f.params] == [0x210, 0x218, 0x220, 0x228]
    n = f.params[3]
    assert f.param_at(ConstBank(0, 0x228)) == (n, 0)
    assert f.param_at(ConstBank(0, 0x21C)) == (f.params[1], 4)      # high half of a pointer
    assert f.param_at(ConstBank(0, 0x28)) is None                   # driver data (stack)
    assert f.param_at(ConstBank(0, 0x22C)) is None                  # past the last param
    assert f.param_at(ConstBank(1, 0x210)) is None
    assert f.param_at(ConstBank(0, 0, RZ)) is None                  # register-indexed
    uses = [o for i in f.instructions for o in i.operands if isinstance(o, ConstBank)]
    assert [f.param_at(c)[0].ordinal for c in uses if f.param_at(c)] == [3, 0, 1, 2]
    assert (f.regcount, f.shared_bytes, f.kind, f.section) == (12, None, "entry",
                                                               ".text.vector_add")


def _corpus_opcodes() -> Counter:
    c: Counter = Counter()
    for path in SASS_FILES:
        for f in parse_sass_file(path).functions:
            c.update(i.opcode for i in f.instructions)
    return c


def test_corpus_opcodes_are_registered_and_counted():
    c = _corpus_opcodes()
    assert set(c) <= registry.OPCODES
    assert len(c) == 87
    assert (c["IMAD"], c["NOP"], c["FFMA"], c["BSSY"], c["BSYNC"], c["CALL"], c["RET"]) == \
        (5762, 3065, 4355, 749, 749, 193, 47)
    # only in kernels/texture, fp8, block_reduce, pdl: textures, surfaces, fp8 packing,
    # bar.red (B2R), nanosleep, and griddepcontrol (ACQBULK, PREEXIT); in the GEMM ladder
    # (tensorcore/mma_*): cp.async (LDGSTS, LDGDEPBAR) and its waits (DEPBAR, 2 in pdl)
    assert {o: c[o] for o in ("TEX", "TLD4", "SULD", "SUST", "F2FP", "B2R", "NANOSLEEP",
                              "ACQBULK", "PREEXIT", "DEPBAR", "LDGSTS", "LDGDEPBAR")} == {
        "TEX": 34, "TLD4": 4, "SULD": 4, "SUST": 4, "F2FP": 10, "B2R": 12, "NANOSLEEP": 2,
        "ACQBULK": 2, "PREEXIT": 1, "DEPBAR": 120, "LDGSTS": 346, "LDGDEPBAR": 193}
    named = set("""IMAD IADD3 LEA LOP3 SHF ISETP FADD FMUL FFMA FSETP FSEL SEL FMNMX IMNMX MUFU
        F2I I2F F2F MOV S2R S2UR CS2R ULDC UMOV UIADD3 ULEA USHF UIMAD LDC LDG STG LDS STS RED
        REDG ATOM ATOMS ATOMG SHFL VOTE BAR BRA EXIT BSSY BSYNC WARPSYNC NOP POPC FLO BREV
        VIADD HFMA2""".split())
    assert named <= registry.OPCODES
    assert registry.family_of("IMAD") == "integer" and registry.family_of("XYZ") is None


def test_every_bssy_is_closed_by_a_bsync_just_before_its_target():
    n = 0
    for path in SASS_FILES:
        for f in parse_sass_file(path).functions:
            for r in build_sass_cfg(f).reconvergence:
                n += 1
                assert len(r.bsyncs) == 1, (path, f.name, r)
                sync = f.instructions[r.bsyncs[0]]
                assert sync.offset == r.target - 16 and str(sync.operands[0]) == r.barrier
                assert build_sass_cfg(f).blocks[r.block].start == r.bsyncs[0] + 1
    assert n == 749


# -- cubins and cuobjdump -----------------------------------------------------------------

@pytest.mark.skipif(find_nvdisasm() is None, reason="nvdisasm not installed: pip install "
                    "-e '.[sass]'")
@pytest.mark.parametrize("stem", ["vector_add/vector_add.sm_90", "softmax/softmax_online.sm_80",
                                  "triton/softmax.sm_90a"])
def test_a_cubin_parses_to_its_committed_listing(stem):
    assert parse_cubin(REPO / f"kernels/{stem}.cubin") == \
        parse_sass_file(REPO / f"kernels/{stem}.sass")


def test_cuobjdump_listing_matches_nvdisasm():
    """Raw addresses (`BRA 0x1d0`, `BSSY B0, 0x1e0`) resolve to the offsets nvdisasm's labels
    name; the code and the CFG are the same; metadata is absent."""
    c = parse_sass(CUOBJDUMP_VEC4, "vec4.cuobjdump.sass")
    n = parse_sass_file(REPO / "kernels/vector_add/vector_add_vec4.sm_90.sass")
    assert c.source == "cuobjdump" and c.arch == "sm_90"
    (cf,), nf = c.functions, n.functions[0]
    assert cf.name == nf.name and cf.kind == "entry" and cf.params == ()
    assert cf.param_cbank is None and cf.regcount is None
    assert len(cf.instructions) == 44
    for a, b in zip(cf.instructions, nf.instructions):
        assert (a.offset, a.form, a.guard) == (b.offset, b.form, b.guard)
        for x, y in zip(a.operands, b.operands):
            if isinstance(x, SassTarget):
                assert x.label is None and x.offset == y.offset and y.label.startswith(".L_x_")
            else:
                assert x == y
    cc, nc = build_sass_cfg(cf), build_sass_cfg(nf)
    assert [b.succs for b in cc.blocks] == [b.succs for b in nc.blocks][:len(cc.blocks)]
    assert [(r.target, r.barrier) for r in cc.reconvergence] == [(0x1E0, "B0")]
    assert parse_sass(print_sass(c), "p.sass") == c


# -- instructions and operands --------------------------------------------------------------

def test_operand_shapes():
    ins = _instrs([
        "LDC.64 R2, c[0x0][0x210] ;",
        "@!P0 LDG.E.CONSTANT R3, desc[UR4][R2.64+-0x10] ;",
        "ISETP.GE.U32.AND P0, PT, R9, UR4, PT ;",
        "FSETP.NEU.FTZ.AND P1, PT, |R2|.reuse, +INF , PT ;",
        "FFMA R5, -R4.reuse, 1.4426950216293334961, -RZ ;",
        "LDS R4, [R2.X4+UR5+-0x8] ;",
        "SEL R0, RZ, 0x1, !P2 ;",
        "LOP3.LUT R1, ~R2, 0xff, RZ, 0xc0, !PT ;",
        "@!PT LDS RZ, [RZ] ;",
        "S2UR UR4, SR_CgaCtaId ;",
        "LDC R9, c[0x0][RZ] ;",
        "MUFU.RSQ R18, -QNAN  ;",
        "HFMA2.MMA R3, -RZ, RZ, 0, 2.384185791015625e-07 ;",
        "ATOMS.POPC.INC.32 RZ, [R3.X4+URZ] ;",
        "@UP0 BAR.SYNC.DEFER_BLOCKING 0x0 ;",
        "DEPBAR.LE SB0, 0x1 ;",
        "NOP;",
    ])
    assert ins[0].form == Form("LDC", ("64",)) and ins[0].operands == (R(2), ConstBank(0, 0x210))
    assert ins[1].guard == Guard(P(0), True)
    assert ins[1].operands[1] == SassAddr(R(2), ("64",), None, -0x10, UR(4))
    assert ins[1].operands[1].wide and ins[1].operands[1].scale == 1
    assert ins[2].operands == (P(0), PT, R(9), UR(4), PT)
    assert ins[3].operands[2] == Src(R(2), absolute=True, reuse=True)
    assert ins[3].operands[3] == FloatLit("+INF") and ins[3].operands[3].value == float("inf")
    assert ins[4].operands[1] == Src(R(4), neg=True, reuse=True)
    assert ins[4].operands[2].value == pytest.approx(1.4426950216293334961)
    assert ins[4].operands[3] == Src(RZ, neg=True)
    assert ins[5].operands[1] == SassAddr(R(2), ("X4",), UR(5), -8) and \
        ins[5].operands[1].scale == 4
    assert ins[6].operands[2:] == (IntImm(1), Src(P(2), invert=True))
    assert ins[7].operands[1] == Src(R(2), invert=True) and ins[7].operands[5] == \
        Src(PT, invert=True)
    assert ins[8].guard == Guard(PT, True) and ins[8].operands[1] == SassAddr(RZ)
    assert ins[9].operands[1] == SpecialReg("SR_CgaCtaId")
    assert ins[10].operands[1] == ConstBank(0, 0, RZ)
    assert ins[11].operands[1] == FloatLit("-QNAN")
    assert ins[12].operands[3:] == (FloatLit("0"), FloatLit("2.384185791015625e-07"))
    assert ins[13].operands[1] == SassAddr(R(3), ("X4",), URZ)
    assert ins[14].guard == Guard(SassReg("UP", 0), False) and ins[14].operands == (IntImm(0),)
    assert ins[15].operands == (Sym("SB0"), IntImm(1))
    assert ins[16].operands == () and ins[16].offset == 0x100
    assert [register_of(o) for o in ins[4].operands] == [R(5), R(4), None, RZ]
    assert str(ins[1]) == "@!P0 LDG.E.CONSTANT R3, desc[UR4][R2.64+-0x10] ;"
    assert str(ins[3]) == "FSETP.NEU.FTZ.AND P1, PT, |R2|.reuse, +INF, PT ;"


def test_labels_targets_calls_and_ret():
    m = parse_sass_file(REPO / "kernels/softmax/softmax_online.sm_90.sass")
    k, sub = m.functions
    assert (k.kind, sub.kind) == ("entry", "func") and sub.section == k.section
    assert sub.name == "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath"
    call = next(i for i in k.instructions if i.opcode == "CALL")
    assert call.operands == (SassTarget(sub.name, sub.instructions[0].offset),)
    ret = sub.instructions[-1] if sub.instructions[-1].opcode == "RET" else \
        next(i for i in sub.instructions if i.opcode == "RET")
    assert ret.form.name == "RET.REL.NODEC" and ret.operands[1] == SassTarget("softmax_online", 0)
    assert str(ret).endswith(" `(softmax_online) ;") and ", `" not in str(ret)
    bssy = k.instructions[4]
    assert bssy.opcode == "BSSY" and bssy.operands[0] == SassReg("B", 0)
    assert bssy.operands[1].label == ".L_x_0" and bssy.operands[1].offset == \
        k.instructions[k.labels[".L_x_0"]].offset
    assert isinstance(k.body[0], type(bssy)) and any(isinstance(s, Label) for s in k.body)


def test_cfg_of_vector_add():
    f = parse_sass_file(REPO / "kernels/vector_add/vector_add.sm_90.sass").functions[0]
    c = build_sass_cfg(f)
    shape = [(b.start, b.end, b.succs, c.ipdom[b.index]) for b in c.blocks]
    # @P0 EXIT; the body; EXIT; .L_x_0: BRA .L_x_0 (the trap loop); the padding NOPs
    assert shape == [(0, 8, (-1, 1), -1), (8, 20, (-1,), -1), (20, 21, (1 - 1 + 2,), None),
                     (21, 32, (-1,), -1)]
    assert c.blocks[2].labels == (".L_x_0",) and c.reconvergence == ()


def test_cfg_guards_pt_and_conditional_branches():
    body = """        /*0000*/                   BSSY B0, `(.L_x_1) ;
        /*0010*/               @P0 BRA `(.L_x_0) ;
        /*0020*/              @!PT EXIT ;
        /*0030*/               @PT BRA `(.L_x_0) ;
        /*0040*/                   NOP ;
.L_x_0:
        /*0050*/                   BSYNC B0 ;
.L_x_1:
        /*0060*/                   BRA.DIV UR4, `(.L_x_2) ;
        /*0070*/                   RET.REL.NODEC R20 `(k) ;
.L_x_2:
        /*0080*/                   EXIT ;
"""
    f = parse_sass(_wrap(body), "t.sass").functions[0]
    c = build_sass_cfg(f)
    # @!PT EXIT never runs (no edge to exit); @PT BRA is unconditional; BRA.DIV has a
    # condition operand, so it may fall through; RET leaves the function
    assert [(b.start, b.succs) for b in c.blocks] == [
        (0, (3, 1)), (2, (3,)), (4, (3,)), (5, (4,)), (6, (6, 5)), (7, (-1,)), (8, (-1,))]
    assert [c.ipdom[b.index] for b in c.blocks] == [3, 3, 3, 4, -1, -1, -1]
    (r,) = c.reconvergence
    assert (r.bssy, r.barrier, r.target, r.block, r.bsyncs) == (0, "B0", 0x60, 4, (5,))


def test_cuobjdump_raw_target_must_be_an_instruction():
    text = CUOBJDUMP_VEC4.replace("BRA 0x1d0 ;", "BRA 0x1d8 ;")
    with pytest.raises(SassSyntaxError, match="target 0x1d8 is not an instruction offset") as e:
        parse_sass(text, "c.sass")
    assert text.split("\n")[e.value.loc.line - 1].strip().startswith("/*00f0*/")


# -- errors ---------------------------------------------------------------------------------

ERRORS = [
    ("        /*0000*/                   IMADD R1, R2, R3, R4 ;", 1, 36,
     "unknown SASS opcode 'IMADD'"),
    ("        /*0000*/                   IMAD R1, R2, R3, R4", 1, 55, "expected ';'"),
    ("        /*0000*/                   IMAD R1 R2 ;", 1, 44, "expected ',' or ';'"),
    ("        /*0000*/                   IMAD R1, R2.., R3 ;", 1, 45, "bad register"),
    ("        /*0000*/                   MOV R1, R256 ;", 1, 44, "bad register number"),
    ("        /*0000*/                   LDG.E R1, desc[R4][R2.64] ;", 1, 51,
     "a memory descriptor is a uniform register"),
    ("        /*0000*/                   LDS R1, [R2+R3] ;", 1, 48, "one base register"),
    ("        /*0000*/                   LDS R1, [R2+0x4+0x8] ;", 1, 52, "one immediate offset"),
    ("        /*0000*/                   LDS R1, [R2 ;", 1, 48, "expected ']'"),
    ("        /*0000*/                @R0 EXIT ;", 1, 34, "a guard must be a predicate"),
    ("        /*0000*/                   BRA `(.L_nowhere) ;", 1, 36,
     "undefined label '.L_nowhere'"),
    ("        /*0000*/                   FADD R1, -0x, R2 ;", 1, 46, "bad number"),
    ("        /*0000*/                   SEL R1, R2, R3, ~P0 ;", 1, 52,
     "'!' negates predicates"),
    ("        /*0000*/                   IADD3 R1, -1.5.reuse, R2, RZ ;", 1, 47, "bad number"),
    ("        /*0000*/                   NOP ; NOP ;", 1, 42, "unexpected 'NOP'"),
    ("        /*0010*/                   NOP ;\n        /*0010*/                   NOP ;", 2,
     1, "offset 0x0010 does not follow 0x0010"),
    ("        /*0000*/                   BRA.U R1.64.reuse.H1 ;", 1, 42, "bad register suffix"),
    ("\t.frobnicate 1", 1, 2, "unknown directive '.frobnicate'"),
    ("garbage here", 1, 1, "expected an instruction, a label or a directive"),
    ("\t.section\t.nv.info,\"\",@\"SHT_CUDA_INFO\"\n\t.byte\t0x1ff", 2, 8,
     "does not fit a .byte"),
]


@pytest.mark.parametrize("body,line,col,message", ERRORS, ids=[e[3] for e in ERRORS])
def test_errors_are_located(body, line, col, message):
    text = _wrap(body + "\n")
    head = text.count("\n") - body.count("\n") - 1
    with pytest.raises(SassSyntaxError) as e:
        parse_sass(text, "bad.sass")
    err = e.value
    assert isinstance(err, LocatedError) and message in err.message, err.render()
    assert (err.loc.file, err.loc.line, err.loc.col) == ("bad.sass", head + line, col), \
        err.render()
    rendered = err.render().split("\n")
    assert rendered[0] == f"bad.sass:{head + line}:{col}: error: {err.message}"
    assert rendered[2] == " " * (col - 1) + "^"


def test_listing_level_errors():
    with pytest.raises(SassSyntaxError, match="no '.target sm_XX'"):
        parse_sass("", "e.sass")
    with pytest.raises(SassSyntaxError, match="an instruction outside a function") as e:
        parse_sass("\t.target\tsm_90\n        /*0000*/ NOP ;\n", "e.sass")
    assert (e.value.loc.line, e.value.loc.col) == (2, 18)
    with pytest.raises(SassSyntaxError, match="second architecture"):
        parse_sass("\t.target\tsm_90\n\tcode for sm_80\n", "e.sass")
    bad_param = _wrap("", '\t.section\t.nv.info.k,"",@"SHT_CUDA_INFO"\n'
                          "\t//----- nvinfo : EIATTR_KPARAM_INFO\n"
                          "\t.byte\t0x04, 0x17\n\t.short\t0x000c\n\t.word\t0x0\n")
    with pytest.raises(SassSyntaxError, match="EIATTR_KPARAM_INFO needs 12 bytes") as e:
        parse_sass(bad_param, "e.sass")
    assert e.value.loc.line == 3


# -- keq parse ------------------------------------------------------------------------------

def test_keq_parse_sass_text_and_json(capsys):
    path = str(REPO / "kernels/vector_add/vector_add_vec4.sm_90.sass")
    assert main(["parse", path]) == 0
    out = capsys.readouterr().out
    assert "SASS sm_90 (nvdisasm listing), 1 function(s)" in out
    assert "param_0: 8 bytes at c[0x0][0x210]" in out and "param_3: 4 bytes at c[0x0][0x228]" in out
    assert "reconverge   BSSY B0 at 0x0040 -> 0x01e0 (bb3), BSYNC at 0x01d0" in out
    # every instruction of the corpus has semantics now (semantics.sass.ops)
    assert "unsupported  none: every instruction has semantics" in out
    assert main(["parse", path, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (fn,) = data["functions"]
    assert data["arch"] == "sm_90" and fn["name"] == "vector_add_vec4"
    assert [p["cbank"] for p in fn["params"]] == ["c[0x0][0x210]", "c[0x0][0x218]",
                                                  "c[0x0][0x220]", "c[0x0][0x228]"]
    assert fn["unsupported"] == [] and fn["instructions"] == 56
    assert fn["reconvergence"] == [{"bssy": 0x40, "barrier": "B0", "target": 0x1E0,
                                    "block": 3, "bsync": [0x1D0]}]


def test_keq_parse_bad_sass_exits_3(tmp_path, capsys):
    bad = tmp_path / "bad.sass"
    bad.write_text(_wrap("        /*0000*/                   FOO R1 ;\n"))
    assert main(["parse", str(bad)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:6:36: error: unknown SASS opcode 'FOO'")


def test_keq_parse_cubin_without_nvdisasm_says_how_to_install(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("NVDISASM", str(tmp_path / "missing"))
    assert main(["parse", str(REPO / "kernels/vector_add/vector_add.sm_90.cubin")]) == 3
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "nvdisasm not found" in err and "pip install -e '.[sass]'" in err


@pytest.mark.skipif(find_nvdisasm() is None, reason="nvdisasm not installed")
def test_keq_parse_cubin(capsys):
    assert main(["parse", str(REPO / "kernels/vector_add/vector_add.sm_80.cubin")]) == 0
    out = capsys.readouterr().out
    assert "SASS sm_80 (nvdisasm listing)" in out and "at c[0x0][0x160]" in out
    assert "vector_add.sm_80.cubin" in out and "unsupported  none" in out


def test_nvdisasm_spellings_of_fp8_and_texture_code():
    # nvdisasm 13.2 on nvcc 13's sm_90 cubins (kernels/fp8, kernels/texture): the reuse
    # flag before a half selector, and a texture geometry operand
    half, tld4 = _instrs(["HADD2.F32 R6, -RZ, R0.reuse.H0_H0 ;",
                          "TLD4.R R6, R4, R4, UR4, 0x0, 2D ;"])
    assert half.operands[2] == Src(R(0), mods=("H0_H0",), reuse=True)
    assert tld4.operands[5] == Sym("2D")
    for bad in ("HADD2.F32 R6, -RZ, R0.reuse.X4 ;", "TLD4.R R6, R4, R4, UR4, 0x0, 4D ;"):
        with pytest.raises(SassSyntaxError):
            _instrs([bad])
