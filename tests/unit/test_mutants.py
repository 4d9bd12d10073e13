"""bench/mutants.py's mutation engine: the operators' edits, ids, the choice of mutants, and
the rewritten spec. No keq verify or fuzz runs here."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("bench_mutants", ROOT / "bench" / "mutants.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_mutants", mod)
    spec.loader.exec_module(mod)
    return mod


mut = _load()

# Line numbers matter: the tests name mutants by them (`OP@LINE`).
PTX = """\
.version 8.5
.target sm_90
.address_size 64

.func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [twice_param_0];
	shl.b32 %r2, %r1, 1;
	st.param.b32 [func_retval0+0], %r2;
	ret;
}

.func (.param .b32 func_retval0) unused(.param .b32 unused_param_0)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [unused_param_0];
	add.s32 %r2, %r1, 1;
	st.param.b32 [func_retval0+0], %r2;
	ret;
}

.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
{
	.reg .pred 	%p<5>;
	.reg .b32 	%r<40>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<10>;
	.shared .align 4 .b8 tile[128];

	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r1, [k_param_1];
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %laneid;
	add.s32 	%r5, %r2, %r3;
	sub.s32 	%r6, %r5, %r1;
	mul.lo.s32 	%r7, %r6, 3;
	mul.wide.s32 	%rd2, %r7, 4;
	and.b32  	%r8, %r7, 0xff;
	or.b32  	%r9, %r8, %r4;
	min.s32 	%r10, %r9, %r1;
	max.u32 	%r11, %r10, %r2;
	shl.b32 	%r12, %r11, 2;
	shr.s32 	%r13, %r12, 31;
	setp.lt.s32 	%p1, %r13, %r1;
	setp.eq.s32 	%p2, %r13, 0;
	setp.hi.u32 	%p3, %r13, %r2;
	div.s32 	%r14, %r13, %r1;
	rem.u32 	%r15, %r14, %r1;
	selp.b32 	%r16, %r15, %r14, %p1;
	add.s64 	%rd3, %rd1, %rd2;
	ld.global.u32 	%r17, [%rd3+8];
	@%p2 bra 	$L__BB0_2;
	st.global.u32 	[%rd3], %r17;
	st.shared.u32 	[tile+4], %r16;
	bar.sync 	0;
	atom.global.add.u32 	%r18, [%rd3], 1;
	red.global.add.u32 	[%rd3], %r18;
	atom.shared.max.s32 	%r24, [tile], %r2;
	mov.u32 	%r19, 16;
	mov.u32 	%r20, -1;
	shfl.sync.down.b32 	%r21|%p4, %r17, %r19, 31, %r20;
	shfl.sync.bfly.b32 	%r22, %r21, 4, 31, -1;
	{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r22;
	.param .b32 retval0;
	call.uni (retval0), twice, (param0);
	ld.param.b32 	%r23, [retval0+0];
	} // callseq 0
$L__BB0_2:
	ret;
}

.visible .entry other(
	.param .u64 other_param_0
)
{
	.reg .b32 	%r<4>;
	mov.u32 	%r1, %tid.x;
	add.s32 	%r2, %r1, 1;
	bar.sync 	0;
	ret;
}
"""

def _line_of(prefix: str) -> int:
    """The line (1-based) that starts with `prefix`, before the entry `other`, which
    repeats a few lines of `k` (its own header line excepted)."""
    lines = [t.strip() for t in PTX.splitlines()]
    end = lines.index(".visible .entry other(")
    found = [n for n, t in enumerate(lines[:end], 1) if t.startswith(prefix)]
    if prefix.startswith(".visible .entry other"):
        found = [end + 1]
    assert len(found) == 1, (prefix, found)
    return found[0]


@pytest.fixture(scope="module")
def gen():
    return mut.generate(PTX, "k", "fam/pair", "t.ptx")


@pytest.fixture(scope="module")
def by_id(gen):
    return {m.id: m.mutated.strip() for m in gen.mutants}


# (operator, the original line's start, the expected mutated line; tag where the id has one)
EXPECTED = [
    ("add>sub", "add.s32 \t%r5", "sub.s32 \t%r5, %r2, %r3;", None),
    ("add>mul", "add.s32 \t%r5", "mul.lo.s32 \t%r5, %r2, %r3;", None),
    ("add>mul", "add.s64", "mul.lo.s64 \t%rd3, %rd1, %rd2;", None),
    ("sub>add", "sub.s32", "add.s32 \t%r6, %r5, %r1;", None),
    ("mul>add", "mul.lo.s32", "add.s32 \t%r7, %r6, 3;", None),
    ("and>or", "and.b32", "or.b32  \t%r8, %r7, 0xff;", None),
    ("or>and", "or.b32", "and.b32  \t%r9, %r8, %r4;", None),
    ("min>max", "min.s32", "max.s32 \t%r10, %r9, %r1;", None),
    ("max>min", "max.u32", "min.u32 \t%r11, %r10, %r2;", None),
    ("shl>shr", "shl.b32 \t%r12", "shr.b32 \t%r12, %r11, 2;", None),
    ("shr>shl", "shr.s32", "shl.b32 \t%r13, %r12, 31;", None),
    ("cmp-strict", "setp.lt.s32", "setp.le.s32 \t%p1, %r13, %r1;", None),
    ("cmp-swap", "setp.lt.s32", "setp.gt.s32 \t%p1, %r13, %r1;", None),
    ("cmp-eqne", "setp.eq.s32", "setp.ne.s32 \t%p2, %r13, 0;", None),
    ("cmp-strict", "setp.hi.u32", "setp.hs.u32 \t%p3, %r13, %r2;", None),
    ("cmp-swap", "setp.hi.u32", "setp.lo.u32 \t%p3, %r13, %r2;", None),
    ("imm+1", "mul.lo.s32", "mul.lo.s32 \t%r7, %r6, 4;", None),
    ("imm-1", "mul.wide.s32", "mul.wide.s32 \t%rd2, %r7, 3;", None),
    ("imm+1", "and.b32", "and.b32  \t%r8, %r7, 0x100;", None),      # hex stays hex
    ("imm-1", "shr.s32", "shr.s32 \t%r13, %r12, 30;", None),        # a shift amount
    ("imm-1", "mov.u32 \t%r20,", "mov.u32 \t%r20, -2;", None),
    ("addr+1", "ld.global.u32", "ld.global.u32 \t%r17, [%rd3+9];", None),
    ("addr-1", "st.shared.u32", "st.shared.u32 \t[tile+3], %r16;", None),
    ("drop-bar", "bar.sync", "// dropped: bar.sync \t0;", None),
    ("imm+1", "bar.sync", "bar.sync \t1;", None),
    ("drop-st", "st.global.u32", "// dropped: st.global.u32 \t[%rd3], %r17;", None),
    ("drop-st", "st.shared.u32", "// dropped: st.shared.u32 \t[tile+4], %r16;", None),
    ("swap-sub", "sub.s32", "sub.s32 \t%r6, %r1, %r5;", None),
    ("swap-div", "div.s32", "div.s32 \t%r14, %r1, %r13;", None),
    ("swap-rem", "rem.u32", "rem.u32 \t%r15, %r1, %r14;", None),
    ("swap-setp", "setp.lt.s32", "setp.lt.s32 \t%p1, %r1, %r13;", None),
    ("swap-selp", "selp.b32", "selp.b32 \t%r16, %r14, %r15, %p1;", None),
    ("sreg-tid-xy", "mov.u32 \t%r2,", "mov.u32 \t%r2, %tid.y;", None),
    ("sreg-tid-warpid", "mov.u32 \t%r2,", "mov.u32 \t%r2, %warpid;", None),
    ("sreg-ctaid-ntid", "mov.u32 \t%r3,", "mov.u32 \t%r3, %ntid.x;", None),
    ("sreg-lane-warp", "mov.u32 \t%r4,", "mov.u32 \t%r4, %warpid;", None),
    ("atom>max", "atom.global", "atom.global.max.u32 \t%r18, [%rd3], 1;", None),
    ("atom>min", "atom.global", "atom.global.min.u32 \t%r18, [%rd3], 1;", None),
    ("atom>exch", "atom.global", "atom.global.exch.b32 \t%r18, [%rd3], 1;", None),
    ("atom>or", "atom.global", "atom.global.or.b32 \t%r18, [%rd3], 1;", None),
    ("atom>max", "red.global", "red.global.max.u32 \t[%rd3], %r18;", None),
    ("atom>or", "red.global", "red.global.or.b32 \t[%rd3], %r18;", None),
    ("atom>add", "atom.shared", "atom.shared.add.s32 \t%r24, [tile], %r2;", None),
    # a register offset defined once by a mov: the shuffle gets the new value inline
    ("shfl-b+1", "shfl.sync.down", "shfl.sync.down.b32 \t%r21|%p4, %r17, 17, 31, %r20;",
     None),
    ("shfl-b-1", "shfl.sync.down", "shfl.sync.down.b32 \t%r21|%p4, %r17, 15, 31, %r20;",
     None),
    ("shfl-b*2", "shfl.sync.down", "shfl.sync.down.b32 \t%r21|%p4, %r17, 32, 31, %r20;",
     None),
    ("shfl-b/2", "shfl.sync.down", "shfl.sync.down.b32 \t%r21|%p4, %r17, 8, 31, %r20;",
     None),
    ("shfl-mask", "shfl.sync.down",
     "shfl.sync.down.b32 \t%r21|%p4, %r17, %r19, 31, 0x0000ffff;", None),
    ("shfl-b/2", "shfl.sync.bfly", "shfl.sync.bfly.b32 \t%r22, %r21, 2, 31, -1;", None),
    ("shfl-mask", "shfl.sync.bfly", "shfl.sync.bfly.b32 \t%r22, %r21, 4, 31, 0x0000ffff;",
     None),
    # two immediates on one line: the id names the operand
    ("imm+1", "shfl.sync.bfly", "shfl.sync.bfly.b32 \t%r22, %r21, 4, 32, -1;", 3),
    ("imm-1", "shfl.sync.bfly", "shfl.sync.bfly.b32 \t%r22, %r21, 4, 31, -2;", 4),
    ("guard-not", "@%p2 bra", "@!%p2 bra \t$L__BB0_2;", None),
    # in the .func the entry calls
    ("shl>shr", "shl.b32 %r2", "shr.b32 %r2, %r1, 1;", None),
]


@pytest.mark.parametrize("op,prefix,expected,tag", EXPECTED,
                         ids=[f"{e[0]}:{e[1]}" for e in EXPECTED])
def test_operator_edits_the_line(by_id, op, prefix, expected, tag):
    mid = f"fam/pair#{op}@{_line_of(prefix)}" + ("" if tag is None else f".{tag}")
    assert by_id.get(mid) == expected, sorted(i for i in by_id if f"#{op}@" in i)


def test_every_operator_is_exercised(gen):
    assert {m.op for m in gen.mutants} == set(mut.OPERATORS)


def test_no_mutant_where_none_makes_sense(by_id):
    # mul.wide has no add form; a barrier id does not go negative; params are not offset
    assert f"fam/pair#mul>add@{_line_of('mul.wide.s32')}" not in by_id
    assert f"fam/pair#imm-1@{_line_of('bar.sync')}" not in by_id
    param_line = _line_of("st.param.b32 \t[param0")
    assert not any("#addr" in i and i.endswith(f"@{param_line}") for i in by_id)
    # a == b is b == a: swapping an eq/ne comparison's operands is no mutant
    assert f"fam/pair#swap-setp@{_line_of('setp.eq.s32')}" not in by_id
    assert f"fam/pair#swap-sub@{_line_of('sub.s32')}" in by_id


def test_mutants_stay_in_the_entry_and_the_funcs_it_calls(gen):
    lines = PTX.splitlines()
    start_k = _line_of(".visible .entry k(")
    start_other = _line_of(".visible .entry other(")
    twice = range(_line_of(".func (.param .b32 func_retval0) twice"), _line_of(
        ".func (.param .b32 func_retval0) unused"))
    for m in gen.mutants:
        assert start_k < m.line < start_other or m.line in twice, m.id
        out = m.apply(PTX).splitlines(keepends=True)
        orig = PTX.splitlines(keepends=True)
        assert len(out) == len(orig)
        changed = [i + 1 for i, (a, b) in enumerate(zip(orig, out)) if a != b]
        assert changed == [m.line], m.id
        assert out[m.line - 1] == m.mutated + "\n"
        assert m.original == lines[m.line - 1]


def test_apply_keeps_crlf_line_endings():
    text = PTX.replace("\n", "\r\n")
    g = mut.generate(text, "k", "fam/pair", "t.ptx")
    m = next(m for m in g.mutants if m.op == "add>sub")
    out = m.apply(text)
    assert out.count("\r\n") == text.count("\r\n")
    assert out.replace(m.mutated, m.original, 1) == text


def test_ids_are_stable_and_unique(gen):
    again = mut.generate(PTX, "k", "fam/pair", "t.ptx")
    ids = [m.id for m in gen.mutants]
    assert ids == [m.id for m in again.mutants]
    assert len(ids) == len(set(ids))
    assert all(i.startswith("fam/pair#") and "@" in i for i in ids)
    # ids do not depend on which other mutants exist: a file with one instruction fewer
    # elsewhere (a blank line keeps the numbering) gives the same ids for the others
    dropped = PTX.replace("\tmax.u32 \t%r11, %r10, %r2;", "")
    other = {m.id for m in mut.generate(dropped, "k", "fam/pair", "t.ptx").mutants}
    assert {i for i in ids if f"@{_line_of('max.u32')}" not in i} <= other


def test_unparsable_and_no_op_mutants_are_dropped_and_counted(monkeypatch):
    real = mut._edits

    def edits(ins, line, consts):
        yield from real(ins, line, consts)
        if ins.opcode == "add":
            yield "imm+1", None, line.replace("add", "bogus_opcode")   # does not parse
            yield "imm-1", None, line.replace("%r", " %r")             # same instructions
    monkeypatch.setattr(mut, "_edits", edits)
    g = mut.generate(PTX, "k", "fam/pair", "t.ptx")
    assert g.unparsable == 2          # k's add.s32 and add.s64 (not the other functions')
    assert all("#imm+1@" in i for i in g.unparsable_ids)
    assert g.no_op >= 3
    assert not any("bogus" in m.mutated for m in g.mutants)


def test_select_is_deterministic_and_spread_over_operators(gen):
    ops = {m.op for m in gen.mutants}
    a = mut.select(gen.mutants, len(ops), 0, "fam/pair")
    assert [m.id for m in a] == [m.id for m in mut.select(gen.mutants, len(ops), 0,
                                                           "fam/pair")]
    assert {m.op for m in a} == ops                     # one of each operator
    b = mut.select(gen.mutants, len(ops), 1, "fam/pair")
    assert [m.id for m in a] != [m.id for m in b]       # another seed, another draw
    assert len(mut.select(gen.mutants, 0, 0, "fam/pair")) == len(gen.mutants)
    small = mut.select(gen.mutants, 5, 0, "fam/pair")
    assert len({m.op for m in small}) == 5


SPEC = """\
name = "fam/pair"
mode = "bitexact"
expect = "equivalent"

[reference]
ptx = "ref.ptx"   # the reference
kernel = "r"
grid = [1, 1, 1]
block = [32, 1, 1]

[candidate]
ptx = 'sub/cand.ptx'
kernel = "k"
grid = [1, 1, 1]
block = [32, 1, 1]

[[param]]
name = "ptx"
buffer = "f32"
length = "32"
access = "out"
"""


def test_rewrite_spec_points_the_candidate_at_the_mutant(tmp_path):
    mutant = tmp_path / "m" / "add_sub@3.ptx"
    out = mut.rewrite_spec(SPEC, Path("/corpus/fam"), mutant)
    doc = tomllib.loads(out)
    assert doc["candidate"]["ptx"] == str(mutant)
    assert doc["reference"]["ptx"] == str(Path("/corpus/fam/ref.ptx").resolve())
    assert doc["candidate"]["kernel"] == "k" and doc["param"][0]["name"] == "ptx"
    old, new = SPEC.splitlines(), out.splitlines()
    assert len(old) == len(new)
    changed = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
    assert [old[i].split("=")[0].strip() for i in changed] == ["ptx", "ptx"]
    assert new[changed[0]].endswith("# the reference")


def test_corpus_mutants_parse_and_name_the_pair():
    spec = ROOT / "kernels" / "vector_add" / "vec4.toml"
    doc = tomllib.loads(spec.read_text())
    assert mut.pair_name(spec, doc) == "vector_add/vec4"
    text = (spec.parent / doc["candidate"]["ptx"]).read_text()
    g = mut.generate(text, doc["candidate"]["kernel"], "vector_add/vec4")
    assert g.unparsable == 0 and len(g.mutants) > 20
    assert "vector_add/vec4#drop-st@70" in {m.id for m in g.mutants}
