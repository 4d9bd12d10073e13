"""Every instruction form of tiers 1 and 2 (PTX-COVERAGE.md) parses into a typed Form whose
generic_name() (type modifiers replaced by T) is the tier entry.

The lines in FORMS are real nvcc output (`nvcc -ptx -arch=sm_90 -O3`, CUDA 13.0, some with
-use_fast_math) or inline asm as nvcc passes it through, with registers renumbered into the
ranges the test kernel declares. The tier lists come from semantics.conformance (PTX-COVERAGE.md as data).
"""

from __future__ import annotations

import pytest

from semantics.ir import (
    TYPES, Addr, BracketList, Instruction, IntImm, OperandList, Pair, Reg, Sym, Vec,
)
from semantics.ptx import parse_ptx, print_module
from semantics.ptx import registry

# The tier lists of PTX-COVERAGE.md, kept once as data in the package.
from semantics.conformance import TIER1, TIER2  # noqa: E402

# (tier entry, one realistic PTX line of that form)
FORMS = (
    ("ret", "ret;"),
    ("ld.param.T", "ld.param.u64 %rd1, [forms_param_0];"),
    ("mov.T", "mov.u32 %r1, %tid.x;"),
    ("add.T", "add.s32 %r16, %r4, 8;"),
    ("cvta.to.global.T", "cvta.to.global.u64 %rd7, %rd6;"),
    ("bra", "@%p3 bra $L__end;"),
    ("mul.wide.T", "mul.wide.u32 %rd8, %r2, 16;"),
    ("mad.lo.T", "mad.lo.s32 %r1, %r3, %r4, %r5;"),
    ("shl.T", "shl.b32 %r5, %r2, 4;"),
    ("st.global.T", "st.global.f32 [%rd11], %f15;"),
    ("setp.ge.T", "setp.ge.f32 %p1, %f9, 0f41102CB4;"),
    ("ld.global.T", "ld.global.u16 %rs1, [%rd8];"),
    ("setp.lt.T", "setp.lt.s32 %p1, %r3, 32;"),
    ("and.T", "and.b32 %r25, %r24, 480;"),
    ("sub.T", "sub.f32 %f73, %f72, %f2;"),
    ("setp.ne.T", "setp.ne.s64 %p1, %rd1, 0;"),
    ("cvt.T.T", "cvt.u64.u32 %rd79, %r111;"),
    ("setp.eq.T", "setp.eq.s32 %p1, %r1, 0;"),
    ("shr.T", "shr.s32 %r35, %r34, 31;"),
    ("mul.lo.T", "mul.lo.s32 %r7, %r6, 16;"),
    ("setp.gt.T", "setp.gt.f32 %p3, %f55, 0f3F000000;"),
    ("bar.sync", "bar.sync 0;"),
    ("or.T", "or.b32 %r26, %r25, %r22;"),
    ("st.shared.T", "st.shared.u16 [%r21], %rs1;"),
    ("mul.T", "mul.f32 %f10, %f9, 0f4038AA3B;"),
    ("cvt.rn.T.T", "cvt.rn.f32.u32 %f12, %r9;"),
    ("ld.shared.T", "ld.shared.f32 %f1, [sbuf+4];"),
    ("fma.rn.T", "fma.rn.f32 %f16, %f14, %f15, %f13;"),
    ("bra.uni", "bra.uni $L__end;"),
    ("selp.T", "selp.f32 %f17, 0f3F800000, %f16, %p1;"),
    ("neg.T", "neg.s32 %r34, %r33;"),
    ("st.global.v4.T", "st.global.v4.f32 [%rd9], {%f22, %f24, %f23, %f21};"),
    ("div.rn.T", "div.rn.f64 %fd3, %fd2, %fd1;"),
    ("ld.global.v4.T", "ld.global.v4.u32 {%r3, %r4, %r5, %r6}, [%rd65];"),
    ("max.T", "max.s32 %r69, %r1, %r2;"),
    ("shfl.sync.bfly.T", "shfl.sync.bfly.b32 %r160|%p10, %r158, %r159, %r146, %r148;"),
    ("xor.T", "xor.b32 %r12, %r8, 16;"),
    ("not.T", "not.pred %p2, %p1;"),
    ("setp.le.T", "setp.le.u64 %p9, %rd14, %rd10;"),
    ("div.T", "div.s32 %r113, %r112, %r2;"),
    ("barrier.sync", "barrier.sync 0;"),
    ("cvt.rzi.T.T", "cvt.rzi.s32.f32 %r28, %f52;"),
    ("abs.T", "abs.f32 %f9, %f1;"),
    ("min.T", "min.u32 %r68, %r1, 255;"),
    ("add.ftz.T", "add.ftz.f32 %f3, %f1, %f2;"),
    ("rcp.rn.T", "rcp.rn.f32 %f20, %f1;"),
    ("st.global.v2.T", "st.global.v2.u32 [%rd70+8], {%r107, %r108};"),
    ("atom.global.add.T", "atom.global.add.f32 %f7, [%rd8], %f1;"),
    ("st.param.T", "st.param.f32 [param0+0], %f4;"),
    ("call.uni", "call.uni (retval0), callee, (param0);"),
    ("ld.global.v2.T", "ld.global.v2.u32 {%r75, %r76}, [%rd72+8];"),
    ("ld.const.T", "ld.const.f32 %f55, [cbuf+12];"),
    ("ex2.approx.T", "ex2.approx.f32 %f33, %f32;"),
    ("rem.T", "rem.u32 %r25, %r24, 16;"),
    ("cvta.global.T", "cvta.global.u64 %rd6, %rd5;"),
    ("tex.2d.v4.T.T", "tex.2d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd2, {%f1, %f2}];"),
    ("sqrt.rn.T", "sqrt.rn.f32 %f39, %f2;"),
    ("shfl.sync.down.T", "shfl.sync.down.b32 %r156|%p9, %r154, %r155, %r146, %r148;"),
    ("setp.ltu.T", "setp.ltu.f32 %p1, %f1, %f2;"),
    ("setp.neu.T", "setp.neu.f32 %p2, %f3, %f3;"),
    ("ex2.approx.ftz.T", "ex2.approx.ftz.f32 %f11, %f10;"),
    ("ld.shared.v4.T", "ld.shared.v4.u32 {%r13, %r14, %r15, %r16}, [%r6];"),
    ("fma.rn.ftz.T", "fma.rn.ftz.f32 %f56, %f53, %f54, %f55;"),
    ("mul.ftz.T", "mul.ftz.f32 %f4, %f1, %f2;"),
    ("cp.async.wait_group", "cp.async.wait_group 0;"),
    ("cp.async.commit_group", "cp.async.commit_group;"),
    ("st.shared.v4.T", "st.shared.v4.u32 [%r7], {%r8, %r9, %r10, %r11};"),
    ("shfl.sync.idx.T", "shfl.sync.idx.b32 %r149|%p7, %r144, %r147, %r146, %r148;"),
    ("sub.ftz.T", "sub.ftz.f32 %f73, %f72, %f2;"),
    ("rcp.approx.ftz.T", "rcp.approx.ftz.f32 %f14, %f12;"),
    ("cvt.sat.T.T", "cvt.sat.f32.f32 %f55, %f1;"),
    ("cp.async.cg.shared.global.L2::128B",
     "cp.async.cg.shared.global.L2::128B [%r6], [%rd5], 16;"),
    ("st.local.T", "st.local.u32 [%rd96], %r145;"),
    ("ldmatrix.sync.aligned.x4.m8n8.shared.T",
     "ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%r1,%r2,%r3,%r4}, [%r5];"),
    ("mma.sync.aligned.m16n8k16.row.col.T.T.T.T",
     "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, "
     "{%r1,%r2,%r3,%r4}, {%r6,%r7}, {%f1,%f2,%f3,%f4};"),
    ("bfi.T", "bfi.b32 %r138, %r139, %r140, 8, 4;"),
    ("div.approx.ftz.T", "div.approx.ftz.f32 %f67, %f1, %f2;"),
    ("ldmatrix.sync.aligned.x2.trans.m8n8.shared.T",
     "ldmatrix.sync.aligned.x2.trans.m8n8.shared.b16 {%r6,%r7}, [%r11];"),
    ("ld.local.T", "ld.local.f32 %f52, [%rd62];"),
    ("ld.global.nc.T", "ld.global.nc.f32 %f4, [%rd5];"),
    ("ldmatrix.sync.aligned.x2.m8n8.shared.T",
     "ldmatrix.sync.aligned.x2.m8n8.shared.b16 {%r9,%r10}, [%r11];"),
    ("ld.volatile.shared.T", "ld.volatile.shared.f32 %f7, [%r27];"),
    ("st.volatile.shared.T", "st.volatile.shared.f32 [%r27], %f7;"),
    ("rsqrt.approx.ftz.T", "rsqrt.approx.ftz.f32 %f8, %f3;"),
    ("fma.rm.T", "fma.rm.f32 %f46, %f1, %f2, %f2;"),
    ("shfl.sync.up.T", "shfl.sync.up.b32 %r152|%p8, %r150, %r151, %r145, %r148;"),
    ("ld.shared.v2.T", "ld.shared.v2.f32 {%f1, %f2}, [%r5+8];"),
    ("mul.hi.T", "mul.hi.u32 %r37, %r35, %r36;"),
    ("cvt.rni.T.T", "cvt.rni.f32.f32 %f52, %f1;"),
    ("rsqrt.approx.T", "rsqrt.approx.f32 %f37, %f1;"),
    ("setp.geu.T", "setp.geu.f32 %p1, %f1, %f2;"),
    ("atom.shared.add.T", "atom.shared.add.u32 %r13, [%r11], 1;"),
    ("bar.warp.sync", "bar.warp.sync -1;"),
    ("cvta.local.T", "cvta.local.u64 %rd1, %rd2;"),
    ("mul.rn.T", "mul.rn.f32 %f50, %f1, %f2;"),
    ("setp.leu.T", "setp.leu.f32 %p2, %f1, %f2;"),
    ("mad.wide.T", "mad.wide.s32 %rd3, %r4, 4, %rd2;"),
    ("st.local.v4.T", "st.local.v4.f32 [%rd22], {%f23, %f20, %f21, %f22};"),
    ("st.shared.v2.T", "st.shared.v2.u32 [%r18], {%r19, %r20};"),
    ("max.ftz.T", "max.ftz.f32 %f69, %f1, %f2;"),
    ("set.eq.T.T", "set.eq.u32.f32 %r143, %f87, %f83;"),
    ("clz.T", "clz.b32 %r19, %r18;"),
    ("cvta.shared.T", "cvta.shared.u64 %rd5, %rd2;"),
    ("ld.global.cs.T", "ld.global.cs.f32 %f3, [%rd4];"),
    ("ld.global.cs.v4.T", "ld.global.cs.v4.f32 {%f11,%f12,%f13,%f14}, [%rd8];"),
    ("ld.const.v4.T", "ld.const.v4.f32 {%f1, %f2, %f3, %f4}, [cbuf+16];"),
    ("st.local.v2.T", "st.local.v2.f32 [%rd5+8], {%f1, %f2};"),
    ("tex.1d.v4.T.T", "tex.1d.v4.f32.f32 {%f8, %f9, %f10, %f11}, [%rd1, {%f1}];"),
    ("ld.global.nc.v4.T", "ld.global.nc.v4.f32 {%f5,%f6,%f7,%f8}, [%rd6];"),
    ("ld.local.v4.T", "ld.local.v4.u32 {%r67, %r68, %r69, %r70}, [%rd69];"),
    ("st.global.cs.T", "st.global.cs.f32 [%rd9], %f1;"),
    ("cp.async.ca.shared.global.L2::128B",
     "cp.async.ca.shared.global.L2::128B [%r6], [%rd6], 4;"),
    ("st.T", "st.f32 [%rd9], %f1;"),
    ("add.rn.T", "add.rn.f64 %fd4, %fd1, %fd2;"),
    ("call", "call (retval0), %rd8, (param0), prototype_0;"),
    ("copysign.T", "copysign.f32 %f8, %f2, %f1;"),
    ("ld.volatile.global.T", "ld.volatile.global.f32 %f62, [%rd1+44];"),
    ("cvt.ftz.T.T", "cvt.ftz.f64.f32 %fd1, %f2;"),
    ("cvt.rmi.T.T", "cvt.rmi.f32.f32 %f53, %f2;"),
    ("cvt.rn.ftz.T.T", "cvt.rn.ftz.f32.f64 %f19, %fd2;"),
    ("div.approx.T", "div.approx.f32 %f31, %f1, %f2;"),
    ("ld.T", "ld.u32 %r5, [%rd1+12];"),
    ("setp.gtu.T", "setp.gtu.f32 %p3, %f1, 0f00000000;"),
    ("setp.lt.ftz.T", "setp.lt.ftz.f32 %p1, %f1, %f2;"),
    ("tex.3d.v4.T.T", "tex.3d.v4.f32.f32 {%f12, %f13, %f14, %f15}, [%rd3, {%f1, %f2, %f3, %f3}];"),
    ("cp.async.cg.shared.global", "cp.async.cg.shared.global [%r1], [%rd1], 16, 16;"),
    ("lg2.approx.ftz.T", "lg2.approx.ftz.f32 %f6, %f3;"),
    ("setp.gt.ftz.T", "setp.gt.ftz.f32 %p6, %f86, %f82;"),
    ("atom.shared.exch.T", "atom.shared.exch.b32 %r17, [%r16], 5;"),
    ("cvta.to.local.T", "cvta.to.local.u64 %rd4, %rd3;"),
    ("lg2.approx.T", "lg2.approx.f32 %f35, %f2;"),
    ("sqrt.approx.ftz.T", "sqrt.approx.ftz.f32 %f4, %f2;"),
    ("st.global.cs.v4.T", "st.global.cs.v4.f32 [%rd10], {%f11,%f12,%f13,%f14};"),
    ("atom.add.noftz.T", "atom.add.noftz.f16x2 %r2,[%rd1],%r1;"),
    ("bmsk.clamp.T", "bmsk.clamp.b32 %r4, %r5, %r6;"),
    ("cp.async.ca.shared.global", "cp.async.ca.shared.global [%r2], [%rd2], 4, 4;"),
    ("ld.global.nc.v2.T", "ld.global.nc.v2.f32 {%f9,%f10}, [%rd7];"),
    ("ld.param.v2.T", "ld.param.v2.f32 {%f1, %f2}, [forms_param_1];"),
    ("ld.volatile.global.v4.T", "ld.volatile.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd1+96];"),
    ("tanh.approx.T", "tanh.approx.f32 %f3, %f1;"),
    ("sust.b.2d.v4.T.trap", "sust.b.2d.v4.b32.trap [%rd5, {%r5, %r7}], {%r3, %r1, %r4, %r6};"),
    ("tex.a2d.v4.T.T",
     "tex.a2d.v4.f32.f32 {%f18, %f19, %f20, %f21}, [%rd4, {%r1, %f1, %f2, %f2}];"),
    ("add.rz.T", "add.rz.f32 %f42, %f1, %f2;"),
    ("cvt.rn.satfinite.T.T", "cvt.rn.satfinite.e4m3x2.f32 %rs2, %f7, %f1;"),
    ("cvt.rpi.T.T", "cvt.rpi.f32.f32 %f54, %f1;"),
    ("fma.rz.T", "fma.rz.f32 %f44, %f1, %f2, %f1;"),
    ("ld.local.v2.T", "ld.local.v2.u32 {%r107, %r108}, [%rd76];"),
)

# Statements a form needs before it (the call sequences nvcc emits).
CONTEXT = {
    "st.param.T": "\t.param .b32 param0;",
    "call.uni": "\t.param .b32 param0;\n\t.param .b32 retval0;",
    "call": "\t.param .b32 param0;\n\t.param .b32 retval0;\n"
            "\tprototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);",
}

KERNEL = """\
.version 8.5
.target sm_90
.address_size 64

.extern .func (.param .b32 func_retval0) callee(.param .b32 callee_param_0);
.const .align 16 .b8 cbuf[256];

.visible .entry forms(
	.param .u64 forms_param_0,
	.param .align 8 .b8 forms_param_1[8]
)
{{
	.reg .pred 	%p<16>;
	.reg .b16 	%rs<8>;
	.reg .b32 	%r<200>;
	.reg .f32 	%f<100>;
	.reg .b64 	%rd<100>;
	.reg .f64 	%fd<8>;
	.shared .align 16 .b8 sbuf[1024];
{context}
	{line}
$L__end:
	ret;
}}
"""
LINE_NO = KERNEL.split("\n").index("\t{line}") + 1     # 1-based, with one context line


def parse_form(entry: str, line: str) -> Instruction:
    context = CONTEXT.get(entry, "")
    text = KERNEL.format(context=context, line=line)
    m = parse_ptx(text, f"{entry}.ptx")
    assert parse_ptx(print_module(m)) == m
    at = LINE_NO + context.count("\n")
    found = [i for i in m.functions["forms"].instructions if i.loc.line == at]
    assert len(found) == 1, found
    return found[0]


def test_tier_lists_are_the_documented_sizes():
    assert len(TIER1) == 60 and len(set(TIER1)) == 60
    assert len(set(TIER1) | set(TIER2)) == 147


def test_every_tier_form_has_one_line():
    entries = [e for e, _ in FORMS]
    assert len(entries) == len(set(entries))
    assert set(entries) == set(TIER1) | set(TIER2)


def _classified(form) -> set[str]:
    """The modifiers a Form classified (rounding, cmp, ...), as modifier names."""
    out = set(form.flags)
    for field in (form.rounding, form.cmp, form.boolop, form.space):
        if field is not None:
            out.add(field)
    if form.vec != 1:
        out.add(f"v{form.vec}")
    return out


@pytest.mark.parametrize("entry,line", FORMS, ids=[e for e, _ in FORMS])
def test_form_parses_to_its_tier_entry(entry, line):
    ins = parse_form(entry, line)
    form = ins.form
    assert form.generic_name() == entry
    assert form.opcode == entry.split(".")[0]
    # One PtxType per T, in order, each a known type.
    parts = entry.split(".")
    assert len(form.types) == parts.count("T")
    assert all(TYPES[t.name] is t for t in form.types)
    # Every other modifier is classified exactly once (a space written `shared::cta` is kept
    # as a flag too).
    others = [m for m in form.mods if m not in {t.name for t in form.types}]
    assert _classified(form) - {m for m in form.flags if "::" in m and m not in others} \
        == set(others)
    if form.rounding is not None:
        assert form.rounding in registry.ROUNDING
    if form.opcode in ("setp", "set"):
        assert form.cmp == parts[1]
    if form.opcode in registry.SPACE_OPCODES and len(parts) > 1:
        spaces = [p for p in parts if p in registry.SPACES]
        assert form.space == (spaces[0] if spaces else None)
    # The opcode is one the registry knows (strictly checked for the scalar ISA).
    assert registry.spec_for(form.opcode) is not None


@pytest.mark.parametrize("entry,line", FORMS, ids=[e for e, _ in FORMS])
def test_form_operand_shapes(entry, line):
    ins = parse_form(entry, line)
    f, ops = ins.form, ins.operands
    if f.opcode in ("ld", "ldu"):
        assert isinstance(ops[1], Addr)
        if f.vec > 1:
            assert isinstance(ops[0], Vec) and len(ops[0].elems) == f.vec
        else:
            assert isinstance(ops[0], Reg)
    elif f.opcode == "st":
        assert isinstance(ops[0], Addr)
        if f.vec > 1:
            assert isinstance(ops[1], Vec) and len(ops[1].elems) == f.vec
    elif f.opcode == "atom":
        assert isinstance(ops[0], Reg) and isinstance(ops[1], Addr)
    elif f.opcode == "tex":
        assert isinstance(ops[0], Vec) and len(ops[0].elems) == f.vec == 4
        assert isinstance(ops[1], BracketList) and isinstance(ops[1].items[1], Vec)
    elif f.opcode == "sust":
        assert isinstance(ops[0], BracketList) and isinstance(ops[1], Vec)
    elif f.opcode == "shfl":
        assert isinstance(ops[0], Pair) and len(ops) == 5
    elif f.opcode == "bra":
        assert ops == (Sym("$L__end"),)
    elif f.opcode == "call":
        assert isinstance(ops[0], OperandList) and isinstance(ops[2], OperandList)
    elif f.opcode == "mma":
        assert [len(o.elems) for o in ops] == [4, 4, 2, 4]
    elif f.opcode == "ldmatrix":
        assert isinstance(ops[0], Vec) and len(ops[0].elems) == int(f.mods[2][1])
        assert isinstance(ops[1], Addr)
    elif f.opcode == "cp" and f.mods[1] in ("ca", "cg"):
        assert isinstance(ops[0], Addr) and isinstance(ops[1], Addr)
    elif f.opcode == "cp":
        assert ops == (() if f.mods[1] == "commit_group" else (IntImm(0),))
    elif f.opcode in ("setp", "set"):
        assert isinstance(ops[0], Reg) and len(ops) == 3
    elif f.opcode in ("ret", "bar", "barrier"):
        pass
    else:
        # Plain arithmetic: a register destination, then register or immediate sources.
        assert isinstance(ops[0], Reg), ops
