"""Memory layout, which the PTX ISA leaves open (`semantics.machine.layout`): per-variable
shared windows, the pointer-provenance analysis that finds where an address's numeric value
may show (`semantics.machine.layout_taint`), the shifted layout testing tries, and the five
layout specs of tests/data/adversarial end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semantics.choices import Choices
from semantics.machine import prepare, run_kernel
from semantics.machine.layout import for_launch, shared_vars
from semantics.machine.layout_taint import analyse
from semantics.machine.memory import SHARED_SPACING, GlobalLayout, MemoryFault
from semantics.ptx import parse_ptx, parse_ptx_file
from verifier.equiv import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.spec import load_spec

REPO = Path(__file__).resolve().parents[2]
ADV = REPO / "tests" / "data" / "adversarial"
HEAD = ".version 8.8\n.target sm_90\n.address_size 64\n"
REGS = ".reg .pred %p<8>;\n.reg .b32 %r<32>;\n.reg .b64 %rd<32>;\n"


def _kernel(body: str, decls: str = "", params: str = ".param .u64 x, .param .u64 out, "
            ".param .u32 n", funcs: str = ""):
    text = (HEAD + funcs + f".visible .entry k({params})\n{{\n" + REGS + decls +
            "ld.param.u64 %rd1, [x];\nld.param.u64 %rd2, [out];\nld.param.u32 %r1, [n];\n"
            "mov.u32 %r2, %tid.x;\nmul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\n"
            + body + "\nret;\n}\n")
    return prepare(parse_ptx(text, "t.ptx"), "k")


def _found(k, pointers=None) -> list[str]:
    """The opcodes of the findings, in instruction order."""
    return [k.instrs[f.index].form.name for f in sorted(analyse(k, pointers),
                                                        key=lambda f: f.index)]


# -- the analysis, rule by rule -----------------------------------------------------------
def test_a_pointer_stored_to_memory_is_a_finding_and_a_plain_value_is_not():
    assert _found(_kernel("st.global.u64 [%rd4], %rd1;")) == ["st.global.u64"]
    assert _found(_kernel("ld.global.u32 %r3, [%rd1];\nst.global.u32 [%rd4], %r3;")) == []


def test_comparing_two_buffers_is_a_finding_and_a_pointer_against_its_own_end_is_not():
    assert _found(_kernel("setp.lt.u64 %p1, %rd1, %rd2;")) == ["setp.lt.u64"]
    # what loop strength reduction emits: p = x + 4t; end = x + 4n; p < end
    same = _kernel("mul.wide.u32 %rd5, %r1, 4;\nadd.s64 %rd6, %rd1, %rd5;\n"
                   "add.s64 %rd7, %rd1, %rd3;\nsetp.lt.u64 %p1, %rd7, %rd6;")
    assert _found(same) == []
    # a scaled pointer (mangled) compared with its own base is not additions only
    scaled = _kernel("shl.b64 %rd5, %rd1, 1;\nsetp.lt.u64 %p1, %rd5, %rd1;")
    assert _found(scaled) == ["setp.lt.u64"]
    assert _found(_kernel("setp.eq.u64 %p1, %rd1, 0;")) == ["setp.eq.u64"]   # null check


def test_a_low_bit_mask_within_the_alignment_is_no_finding():
    aligned = "cvt.u32.u64 %r3, %rd1;\nand.b32 %r4, %r3, {m};\nst.global.u32 [%rd4], %r4;"
    assert _found(_kernel(aligned.format(m=255))) == []        # 256-byte aligned buffers
    assert _found(_kernel(aligned.format(m=4095))) == ["st.global.u32"]
    # aligning down keeps the address: comparing it with the base stays layout independent
    down = _kernel("add.s64 %rd5, %rd1, %rd3;\nand.b64 %rd6, %rd5, -256;\n"
                   "setp.lt.u64 %p1, %rd6, %rd5;")
    assert _found(down) == []
    shared = ".shared .align 16 .b8 s[64];\n"
    body = "mov.u32 %r3, s;\nand.b32 %r4, %r3, {m};\nst.global.u32 [%rd4], %r4;"
    assert _found(_kernel(body.format(m=15), shared)) == []    # the declared .align
    assert _found(_kernel(body.format(m=31), shared)) == ["st.global.u32"]


def test_subtracting_pointers_into_one_buffer_is_an_offset_and_across_buffers_a_finding():
    one = _kernel("add.s64 %rd5, %rd1, %rd3;\nsub.s64 %rd6, %rd5, %rd1;\n"
                  "st.global.u64 [%rd4], %rd6;")
    assert _found(one) == []
    assert _found(_kernel("sub.s64 %rd6, %rd2, %rd1;\nst.global.u64 [%rd4], %rd6;")) == \
        ["sub.s64"]
    assert _found(_kernel("add.s64 %rd6, %rd2, %rd1;")) == ["add.s64"]


def test_a_pointer_through_selp_carries_both_bases():
    both = _kernel("setp.lt.u32 %p1, %r2, 4;\nselp.b64 %rd5, %rd1, %rd2, %p1;\n"
                   "add.s64 %rd6, %rd1, 64;\nsetp.lt.u64 %p2, %rd5, %rd6;")
    assert _found(both) == ["setp.lt.u64"]
    one = _kernel("setp.lt.u32 %p1, %r2, 4;\nadd.s64 %rd7, %rd1, 8;\n"
                  "selp.b64 %rd5, %rd1, %rd7, %p1;\nadd.s64 %rd6, %rd1, 64;\n"
                  "setp.lt.u64 %p2, %rd5, %rd6;")
    assert _found(one) == []
    # a pointer or an integer: stored, it is the address on some path
    mixed = _kernel("setp.lt.u32 %p1, %r2, 4;\nselp.b64 %rd5, %rd1, 0, %p1;\n"
                    "st.global.u64 [%rd4], %rd5;")
    assert _found(mixed) == ["st.global.u64"]


def test_a_pointer_loop_is_no_finding_and_a_pointer_made_in_a_loop_is_tracked():
    loop = ("mov.u64 %rd5, %rd1;\nmul.wide.u32 %rd6, %r1, 4;\nadd.s64 %rd7, %rd1, %rd6;\n"
            "LOOP:\nld.global.u32 %r3, [%rd5];\nst.global.u32 [%rd4], %r3;\n"
            "add.s64 %rd5, %rd5, 4;\nsetp.lt.u64 %p1, %rd5, %rd7;\n@%p1 bra LOOP;")
    assert _found(_kernel(loop)) == []
    # %rd8 holds an integer on the first trip and the pointer after: a store sees both
    carried = ("mov.u64 %rd8, 0;\nmov.u32 %r5, 0;\nLOOP:\nst.global.u64 [%rd4], %rd8;\n"
               "mov.u64 %rd8, %rd1;\nadd.s32 %r5, %r5, 1;\nsetp.lt.u32 %p1, %r5, 3;\n"
               "@%p1 bra LOOP;")
    assert _found(_kernel(carried)) == ["st.global.u64"]


def test_a_guarded_write_keeps_the_old_value_possible():
    k = _kernel("mov.u64 %rd5, 7;\nsetp.lt.u32 %p1, %r2, 4;\n@%p1 mov.u64 %rd5, %rd1;\n"
                "add.s64 %rd6, %rd1, 64;\nsetp.lt.u64 %p2, %rd5, %rd6;")
    assert _found(k) == ["setp.lt.u64"]


def test_shared_and_local_addresses_are_bases_through_cvta():
    shared = ".shared .align 4 .b8 s[128];\n"
    k = _kernel("mov.u64 %rd5, s;\ncvta.shared.u64 %rd6, %rd5;\nst.global.u64 [%rd4], %rd6;",
                shared)
    assert _found(k) == ["st.global.u64"]
    depot = ".local .align 8 .b8 __local_depot0[16];\n.reg .b64 %SP;\n.reg .b64 %SPL;\n"
    k = _kernel("mov.u64 %SPL, __local_depot0;\ncvta.local.u64 %SP, %SPL;\n"
                "st.global.u64 [%rd4], %SP;", depot)
    assert _found(k) == ["st.global.u64"]


def test_only_the_launchs_buffers_are_pointers():
    k = _kernel("setp.lt.u64 %p1, %rd3, %rd1;")     # x compared with 4 * tid
    assert _found(k) == ["setp.lt.u64"]            # default: every 64-bit parameter
    assert _found(k, frozenset({"out"})) == []      # x is a 64-bit integer in this launch


def test_an_address_through_a_call_is_tracked_in_the_callee():
    func = (".func (.param .b64 ret) keep(.param .b64 p)\n{\n.reg .b64 %rd<4>;\n"
            "ld.param.u64 %rd1, [p];\nst.param.b64 [ret], %rd1;\nret;\n}\n"
            ".func poke(.param .b64 p, .param .b64 q)\n{\n.reg .b64 %rd<4>;\n"
            "ld.param.u64 %rd1, [p];\nld.param.u64 %rd2, [q];\n"
            "st.global.u64 [%rd1], %rd2;\nret;\n}\n")
    call = ("{{\n.param .b64 param0;\n.param .b64 param1;\nst.param.b64 [param0], %rd4;\n"
            "st.param.b64 [param1], {v};\ncall.uni poke, (param0, param1);\n}}")
    assert _found(_kernel(call.format(v="%rd3"), funcs=func)) == []
    k = _kernel(call.format(v="%rd1"), funcs=func)
    found = analyse(k)
    assert [(f.function, k.callees["poke"].instrs[f.index].form.name) for f in found] == \
        [("poke", "st.global.u64")]
    back = ("{\n.param .b64 param0;\n.param .b64 retval0;\nst.param.b64 [param0], %rd1;\n"
            "call.uni (retval0), keep, (param0);\nld.param.b64 %rd9, [retval0];\n}\n"
            "st.global.u64 [%rd4], %rd9;")
    assert _found(_kernel(back, funcs=func)) == ["st.global.u64"]


def test_arithmetic_mangles_an_address_and_exchanges_or_unmodelled_uses_are_findings():
    k = _kernel("cvt.u32.u64 %r3, %rd1;\nmul.hi.u32 %r4, %r3, 3;\nst.global.u32 [%rd4], %r4;")
    assert _found(k) == ["st.global.u32"]          # mangled, then observed
    k = _kernel("xor.b64 %rd5, %rd1, 16;\nld.global.u32 %r3, [%rd5];")
    assert _found(k) == []                         # a mangled address used as one: checked
    k = _kernel("shfl.sync.idx.b32 %r4|%p1, %r3, 0, 31, -1;\ncvt.u32.u64 %r3, %rd1;\n"
                "shfl.sync.idx.b32 %r4|%p1, %r3, 0, 31, -1;")
    assert _found(k) == ["shfl.sync.idx.b32"]
    # `bar` has no rule of its own: any address among its operands is a finding
    k = _kernel("cvt.u32.u64 %r3, %rd1;\nbar.sync %r3;")
    assert _found(k) == ["bar.sync"]


# -- the executor records the effect ------------------------------------------------------
def test_running_a_finding_records_a_layout_effect_only_where_a_lane_runs_it():
    k = _kernel("setp.ge.u32 %p1, %r2, %r1;\n@%p1 bra DONE;\ncvt.u32.u64 %r5, %rd1;\n"
                "st.global.u32 [%rd4], %r5;\nDONE:")
    out = np.zeros(64, np.uint32)
    x = np.zeros(8, np.uint32)
    ran = run_kernel(k, None, 1, 8, [x, out, 8]).effects
    assert [e.kind for e in ran] == ["layout"] and "store to memory" in ran[0].what
    assert run_kernel(k, None, 1, 8, [x, out, 0]).effects == ()
    plain = _kernel("st.global.u32 [%rd4], %r2;")
    launched = for_launch(plain, frozenset({"x", "out"}))
    assert launched is for_launch(plain, frozenset({"x", "out"}))   # prepared once
    assert launched.semantics[-2].__wrapped__ is plain.semantics[-2]  # the store: confined
    bare = _kernel("mov.u32 %r3, 1;")           # no access, no finding: nothing to wrap
    assert for_launch(bare, frozenset()) is bare


def test_an_access_that_leaves_what_its_address_derives_from_faults_however_far():
    shared = ".shared .align 4 .b8 a[64];\n.shared .align 4 .b8 b[64];\n"
    # a + 1 MiB is b's window in the packed layout: still out of bounds of a
    k = _kernel("mov.u32 %r3, b;\nst.shared.u32 [%r3], %r2;\nmov.u32 %r4, a;\n"
                f"add.s32 %r5, %r4, {SHARED_SPACING};\nld.shared.u32 %r6, [%r5];", shared)
    x, out = np.zeros(4, np.uint32), np.zeros(4, np.uint32)
    with pytest.raises(MemoryFault, match=r"shared variable 'a' \(64 bytes\)"):
        run_kernel(k, None, 1, 1, [x, out, 1])
    # x + 8 KiB is inside `out` in the packed layout (16 KiB buffers, 4 KiB apart)
    k = _kernel("add.s64 %rd5, %rd1, 20480;\nld.global.u32 %r6, [%rd5];")
    big = np.zeros(4096, np.uint32)
    with pytest.raises(MemoryFault, match=r"out of bounds of buffer 'x' \(16384 bytes\)"):
        run_kernel(k, None, 1, 1, [big, big.copy(), 1])
    # an address of no known provenance (loaded from memory) is only checked against all
    k = _kernel("ld.global.u64 %rd5, [%rd1];\nld.global.u32 %r6, [%rd5];")
    with pytest.raises(MemoryFault, match="every global buffer"):
        run_kernel(k, None, 1, 1, [big, big.copy(), 1])


# -- shared windows -----------------------------------------------------------------------
def test_each_shared_variable_has_its_own_window_and_a_compact_row():
    m = parse_ptx_file(ADV / "shared_layout.ptx")
    k = prepare(m, "read_past_a")
    assert k.shared_offsets == {"a": 0, "b": SHARED_SPACING}
    assert k.shared_rows == {"a": 0, "b": 128} and k.static_shared == 256
    shifted = for_launch(k, frozenset({"x", "out"}), "shifted")
    assert shifted.shared_offsets == {"b": 0x400, "a": SHARED_SPACING + 0x400}
    assert [v.row for v in shared_vars(shifted, 0)] == [0, 128]


@pytest.mark.parametrize("layout", ["packed", "shifted"])
def test_reading_past_a_shared_variable_faults_naming_it(layout):
    m = parse_ptx_file(ADV / "shared_layout.ptx")
    x, out = np.arange(32, dtype=np.int32), np.zeros(32, np.int32)
    with pytest.raises(MemoryFault, match=r"out of bounds of shared variable 'a' \(128 bytes\)"):
        run_kernel(m, "read_past_a", 1, 32, [x, out, 32], choices=Choices(layout=layout))
    good = run_kernel(m, "read_b", 1, 32, [x, out, 32], choices=Choices(layout=layout))
    assert good.buffers["out"].tolist() == (x + 1).tolist()


DYNAMIC = HEAD + """.extern .shared .align 16 .b8 smem[];
.visible .entry k(.param .u64 out, .param .u32 at)
{
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [at];
mov.u32 %r2, smem;
add.s32 %r3, %r2, %r1;
mov.u32 %r4, 7;
st.shared.u32 [%r3], %r4;
ld.shared.u32 %r5, [%r3];
st.global.u32 [%rd1], %r5;
ret;
}
"""


def test_the_dynamic_shared_array_is_as_long_as_the_launch_gives():
    m = parse_ptx(DYNAMIC, "dyn.ptx")
    out = np.zeros(1, np.uint32)
    assert run_kernel(m, "k", 1, 1, [out, 60], dynamic_shared=64).buffers["out"][0] == 7
    with pytest.raises(MemoryFault, match=r"shared variable 'smem' \(64 bytes\)"):
        run_kernel(m, "k", 1, 1, [out, 64], dynamic_shared=64)


# -- the shifted layout -------------------------------------------------------------------
def test_the_shifted_layout_moves_every_buffer_and_keeps_the_alignment():
    packed, shifted = GlobalLayout(), GlobalLayout(shifted=True)
    a = [packed.allocate(n, 100) for n in "xyz"]
    b = [shifted.allocate(n, 100) for n in "xyz"]
    assert [p.base < q.base for p, q in zip(a, a[1:])] == [True, True]
    assert [p.base > q.base for p, q in zip(b, b[1:])] == [True, True]      # reversed
    assert all(p.base % 256 == 0 for p in a + b)
    assert all((p.base ^ q.base) & 0xF00 for p, q in zip(a, b))    # other bits above 256


@pytest.mark.parametrize("ptx,kernel,args", [
    ("kernels/histogram/histogram_shared.ptx", "histogram_shared", "hist"),
    ("kernels/reduce/reduce_sequential.ptx", None, "reduce"),
])
def test_a_layout_independent_kernel_computes_the_same_under_both_layouts(ptx, kernel, args):
    m = parse_ptx_file(REPO / ptx)
    name = kernel or next(iter(m.entries))
    k = prepare(m, name)
    assert analyse(k) == []
    rng = np.random.default_rng(1)
    vals = []
    for p in k.fn.params:
        vals.append(rng.integers(0, 256, 300).astype(np.int32) if p.type.bits == 64 else 300)
    outs = [run_kernel(k, None, 2, 256, [v.copy() if isinstance(v, np.ndarray) else v
                                         for v in vals], choices=Choices(layout=lay))
            for lay in ("packed", "shifted")]
    for n in outs[0].buffers:
        assert np.array_equal(outs[0].buffers[n], outs[1].buffers[n]), n
    assert outs[0].effects == outs[1].effects


def test_choices_name_a_non_default_layout():
    assert "shifted memory layout" in Choices(layout="shifted").describe()
    assert Choices(layout="shifted").with_values({"a!t0": 1}).layout == "shifted"
    with pytest.raises(ValueError, match="memory layout"):
        Choices(layout="random")


# -- the adversarial specs end to end -----------------------------------------------------
@pytest.mark.parametrize("name,want,why", [
    ("layout_address_bits", NOT_EQUIVALENT, "shifted memory layout"),
    ("layout_address_order", NOT_EQUIVALENT, "shifted memory layout"),
    ("layout_shared_address", NOT_EQUIVALENT, "shifted memory layout"),
    ("layout_shared_past_end", NOT_EQUIVALENT, "out of bounds of shared variable 'a'"),
    ("layout_address_aligned", EQUIVALENT, None),
])
def test_the_layout_specs(name, want, why):
    spec = load_spec(ADV / f"{name}.toml")
    assert spec.expect == want
    v = verify(spec, timeout_s=60)
    assert v.kind == want, v.reasons
    if why is None:
        return
    cex = v.counterexample
    assert why in " ".join((cex.note, *v.reasons)), (cex.note, v.reasons)
    if cex.differences:
        # the counterexample replays under its choices (the shifted layout)
        assert cex.choices is not None and cex.choices.layout == "shifted"
        from verifier.emulate import run_side
        final, _ = run_side(spec.side("candidate"), dict(cex.inputs), cex.scalars,
                            choices=cex.choices, tag="candidate")
        assert np.array_equal(final["out"], cex.candidate["out"])


HIDDEN = HEAD + """.visible .entry hidden(.param .u64 x, .param .u64 out, .param .u32 n)
{
.reg .pred %p<2>;
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [x];
ld.param.u64 %rd2, [out];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
setp.ge.s32 %p1, %r2, %r1;
@%p1 bra DONE;
cvt.u32.u64 %r3, %rd1;
and.b32 %r4, %r3, 4095;
mul.lo.u32 %r5, %r4, 0;
mul.wide.s32 %rd3, %r2, 4;
add.s64 %rd4, %rd2, %rd3;
st.global.u32 [%rd4], %r5;
DONE:
ret;
}
"""


def test_a_layout_finding_no_layout_shows_leaves_the_claim_inconclusive_and_says_why(tmp_path):
    # (x & 0xFFF) * 0: the address reaches the store, though no layout changes the value
    (tmp_path / "hidden.ptx").write_text(HIDDEN)
    text = (ADV / "layout_address_bits.toml").read_text()
    text = text.replace('expect = "not-equivalent"', 'expect = "inconclusive"')
    text = text.replace('ptx = "layout.ptx"\nkernel = "address_bits"',
                        f'ptx = "{tmp_path / "hidden.ptx"}"\nkernel = "hidden"')
    text = text.replace('ptx = "layout.ptx"', f'ptx = "{ADV / "layout.ptx"}"')
    from verifier.spec import loads_spec
    v = verify(loads_spec(text, str(tmp_path / "t.toml")), timeout_s=60)
    assert v.kind == "inconclusive", v.reasons
    assert "candidate: the numeric value of an address reaches a store to memory" in \
        v.reasons[0] and "memory layout is unspecified" in v.reasons[0], v.reasons
