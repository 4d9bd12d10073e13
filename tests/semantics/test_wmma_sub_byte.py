"""wmma's sub-byte and single-bit shapes (semantics/ops/wmma.py): `.s4/.u4` m8n8k32 (optional
.satfinite) and `.b1` m8n8k128 (`.xor.popc`, `.and.popc`), loaded (A `.row`, B `.col`, the
only layouts the ISA allows them), multiplied and stored, against numpy in memory: the
fragment layout is keq's own, so only memory is compared. Sub-byte matrices are packed low
element first in each byte (numpy's model here; D does not depend on that order as long as
A and B share it, semantics/ops/wmma.py). Also: the symbolic terms evaluate to the emulator's
values, a misaligned sub-byte stride is undefined, other forms are refused, and ptxas
accepts every form keq accepts."""

from __future__ import annotations

import itertools
import shutil
import subprocess

import numpy as np
import pytest
import z3

from semantics.machine import prepare, run_kernel
from semantics.machine.memory import UndefinedBehavior
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ops import lookup
from semantics.ptx import parse_ptx

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
# (shape, a/b type, op): op is .satfinite ("sat"), "" or a .b1 bitOp
FORMS = [("m8n8k32", t, sat) for t in ("s4", "u4") for sat in ("", "sat")] + \
        [("m8n8k128", "b1", op) for op in ("xor", "and")]
K = {"m8n8k32": 32, "m8n8k128": 128}
BITS = {"s4": 4, "u4": 4, "b1": 1}


def mma_line(shape: str, t: str, op: str) -> str:
    if t == "b1":
        return (f"wmma.mma.{op}.popc.sync.aligned.row.col.{shape}.s32.b1.b1.s32 "
                "{%d0,%d1}, {%a0}, {%b0}, {%c0,%c1};\n")
    sat = ".satfinite" if op == "sat" else ""
    return (f"wmma.mma.sync.aligned.row.col.{shape}.s32.{t}.{t}.s32{sat} "
            "{%d0,%d1}, {%a0}, {%b0}, {%c0,%c1};\n")


def source(shape: str, t: str, op: str, lc: str, ld: str, strides: tuple | None,
           arch: str = "sm_90") -> str:
    """Load A (.row), B (.col), C (`lc`), one mma, store D (`ld`); `strides`: those of A, B,
    C, D in elements, or None for the defaults."""
    st = [f", {s}" for s in strides] if strides else [""] * 4
    return f""".version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
.reg .b32 %a<2>;
.reg .b32 %b<2>;
.reg .b32 %c<2>;
.reg .b32 %d<2>;
.reg .b64 %p<5>;
ld.param.u64 %p1, [pa];
ld.param.u64 %p2, [pb];
ld.param.u64 %p3, [pc];
ld.param.u64 %p4, [pd];
wmma.load.a.sync.aligned.row.{shape}.global.{t} {{%a0}}, [%p1]{st[0]};
wmma.load.b.sync.aligned.col.{shape}.global.{t} {{%b0}}, [%p2]{st[1]};
wmma.load.c.sync.aligned.{lc}.{shape}.global.s32 {{%c0,%c1}}, [%p3]{st[2]};
{mma_line(shape, t, op)}wmma.store.d.sync.aligned.{ld}.{shape}.global.s32 [%p4], {{%d0,%d1}}{st[3]};
ret;
}}
"""


def pack(major_rows: np.ndarray, stride: int, eb: int) -> np.ndarray:
    """Rows of elements (each row `stride` elements apart), packed low element first into
    32-bit words."""
    rows, n = major_rows.shape
    words = np.zeros((rows * stride * eb + 31) // 32, np.uint64)
    for r in range(rows):
        for j in range(n):
            e = (r * stride + j) * eb
            words[e // 32] |= np.uint64((int(major_rows[r, j]) & ((1 << eb) - 1)) << (e % 32))
    return words.astype(np.uint32)


def stored32(m: np.ndarray, lay: str, stride: int) -> np.ndarray:
    mm = m if lay == "row" else m.T
    out = np.zeros((mm.shape[0], stride), np.int64)
    out[:, :mm.shape[1]] = mm
    return (out.ravel() & 0xFFFFFFFF).astype(np.uint32)


def read32(buf: np.ndarray, lay: str, stride: int) -> np.ndarray:
    out = buf.astype(np.uint32).view(np.int32).astype(np.int64).reshape(8, stride)[:, :8]
    return out if lay == "row" else out.T


def problem(t: str, k: int, rng):
    lo, hi = {"s4": (-8, 7), "u4": (0, 15), "b1": (0, 1)}[t]
    a, b = rng.integers(lo, hi + 1, (8, k)), rng.integers(lo, hi + 1, (k, 8))
    pick = rng.integers(0, 3, (8, 8))
    c = np.where(pick == 0, INT_MAX - rng.integers(0, 40, (8, 8)),
                 np.where(pick == 1, INT_MIN + rng.integers(0, 40, (8, 8)),
                          rng.integers(-500, 500, (8, 8))))
    return a, b, c


def expected(t: str, op: str, a, b, c) -> np.ndarray:
    if t == "b1":
        f = np.bitwise_xor if op == "xor" else np.bitwise_and
        exact = f(a[:, :, None], b[None, :, :]).sum(axis=1) + c
    else:
        exact = a @ b + c
    if op == "sat":
        return np.clip(exact, INT_MIN, INT_MAX)
    return (exact + (1 << 31)) % (1 << 32) - (1 << 31)


def buffers(t, k, a, b, c, lc, ld, strides):
    eb = BITS[t]
    sa, sb, sc, sd = strides or (k, k, 8, 8)
    return [pack(a, sa, eb), pack(b.T, sb, eb), stored32(c, lc, sc),
            np.zeros(8 * sd, np.uint32)], sd


@pytest.mark.parametrize("shape,t,op", FORMS, ids=["-".join(f) for f in FORMS])
def test_load_mma_store_is_the_product(shape, t, op):
    """Every C and D layout, default strides and wider ones (a sub-matrix of a wider
    matrix: A and B rows 32 elements (.s4) or 128 (.b1) longer, C and D 4 longer)."""
    k = K[shape]
    rng = np.random.default_rng(sum(map(ord, shape + t + op)))
    for lc, ld, wide in itertools.product(("row", "col"), ("row", "col"), (False, True)):
        strides = (2 * k, 2 * k, 12, 12) if wide else None
        a, b, c = problem(t, k, rng)
        args, sd = buffers(t, k, a, b, c, lc, ld, strides)
        kern = prepare(parse_ptx(source(shape, t, op, lc, ld, strides), "w.ptx"), "k")
        res = run_kernel(kern, None, 1, 32, args)
        assert not res.effects, res.effects
        assert np.array_equal(read32(res.buffers["pd"], ld, sd), expected(t, op, a, b, c)), \
            (lc, ld, wide)


def test_the_sign_of_a_nibble_and_the_clamp():
    """All A and B nibbles 0xF: .s4 reads -1 (D = C + 32), .u4 15 (C + 32 * 225); with C =
    MAX_INT32 the .s4 sum wraps, or clamps under .satfinite."""
    a, b = np.full((8, 32), 15), np.full((32, 8), 15)
    c = np.full((8, 8), INT_MAX, np.int64)
    got = {}
    for t, op in (("s4", ""), ("s4", "sat"), ("u4", "")):
        args, sd = buffers(t, 32, a, b, c, "row", "row", None)
        kern = prepare(parse_ptx(source("m8n8k32", t, op, "row", "row", None), "w.ptx"), "k")
        got[t, op] = read32(run_kernel(kern, None, 1, 32, args).buffers["pd"], "row", sd)
    assert (got["s4", ""] == INT_MIN + 31).all()
    assert (got["s4", "sat"] == INT_MAX).all()
    assert (got["u4", ""] == INT_MIN - 1 + 32 * 225).all()


@pytest.mark.parametrize("shape,t,op", FORMS, ids=["-".join(f) for f in FORMS])
def test_symbolic_terms_evaluate_to_the_emulators_values(shape, t, op):
    k = K[shape]
    rng = np.random.default_rng(5)
    a, b, c = problem(t, k, rng)
    args, _ = buffers(t, k, a, b, c, "col", "row", None)
    kern = prepare(parse_ptx(source(shape, t, op, "col", "row", None), "w.ptx"), "k")
    want = run_kernel(kern, None, 1, 32, args).buffers["pd"]
    xs = [[z3.BitVec(f"{p}[{i}]", 32) for i in range(len(buf))]
          for p, buf in zip("abc", args[:3])]
    launch = run_symbolic(kern, (1, 1, 1), (32, 1, 1),
                          [SymBuffer(32, tuple(v)) for v in xs] + [SymBuffer(32, (0,) * 64)])
    assert not launch.effects
    subst = [(x, z3.BitVecVal(int(v), 32)) for vs, buf in zip(xs, args) for x, v in zip(vs, buf)]
    got = [z3.simplify(z3.substitute(e, *subst)).as_long() if z3.is_expr(e) else int(e)
           for e in launch.buffers["pd"]]
    assert got == want.tolist()


def test_a_sub_byte_stride_whose_rows_are_not_word_aligned_is_undefined():
    """A .s4 A with a stride of 36 elements: row 1 starts 18 bytes in (the ISA: each row
    aligned to the fragment's size, 4 bytes)."""
    strides = (36, 32, 8, 8)
    a, b, c = problem("s4", 32, np.random.default_rng(0))
    args, _ = buffers("s4", 32, a, b, c, "row", "row", strides)
    kern = prepare(parse_ptx(source("m8n8k32", "s4", "", "row", "row", strides), "w.ptx"), "k")
    with pytest.raises(UndefinedBehavior, match="4-byte aligned"):
        run_kernel(kern, None, 1, 32, args)


HEAD = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
        ".reg .b32 %r<8>;\n.reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\n")


def _accepted(line: str) -> bool:
    (ins,) = [i for i in parse_ptx(HEAD + line + "\nret;\n}\n", "w.ptx").functions["k"]
              .instructions if i.opcode == "wmma"]
    return lookup(ins.form) is not None


REFUSED = [
    "wmma.load.a.sync.aligned.col.m8n8k32.s4 {%r1}, [%rd1];",           # A must be .row
    "wmma.load.b.sync.aligned.row.m8n8k128.b1 {%r1}, [%rd1];",          # B must be .col
    "wmma.load.c.sync.aligned.row.m8n8k32.s4 {%r1,%r2}, [%rd1];",
    "wmma.mma.sync.aligned.row.col.m8n8k32.s32.s4.u4.s32 {%r1,%r2}, {%r3}, {%r4}, {%r5,%r6};",
    "wmma.mma.sync.aligned.col.col.m8n8k32.s32.s4.s4.s32 {%r1,%r2}, {%r3}, {%r4}, {%r5,%r6};",
    "wmma.mma.or.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r1,%r2}, {%r3}, {%r4}, "
    "{%r5,%r6};",
    "wmma.mma.xor.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r1,%r2}, {%r3}, {%r4}, "
    "{%r5,%r6};",
    "wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32.satfinite {%r1,%r2}, "
    "{%r3}, {%r4}, {%r5,%r6};",
]


@pytest.mark.parametrize("line", REFUSED)
def test_other_sub_byte_forms_are_refused(line):
    assert not _accepted(line)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptxas_accepts_every_sub_byte_form_keq_accepts(tmp_path, arch):
    texts = [source(s, t, op, lc, ld, st, arch) for s, t, op in FORMS
             for lc, ld in (("row", "col"), ("col", "row"))
             for st in (None, (2 * K[s], 2 * K[s], 12, 12))]
    for j, text in enumerate(texts):
        lines = [ln for ln in text.splitlines() if ln.startswith("wmma")]
        assert all(_accepted(ln.replace("%p1", "%rd1").replace("%p2", "%rd1")
                             .replace("%p3", "%rd1").replace("%p4", "%rd1")
                             .replace("%a0", "%r1").replace("%b0", "%r2")
                             .replace("%c0", "%r3").replace("%c1", "%r4")
                             .replace("%d0", "%r5").replace("%d1", "%r6")) for ln in lines)
        ptx = tmp_path / f"w{j}.ptx"
        ptx.write_text(text)
        r = subprocess.run(["ptxas", f"-arch={arch}", "-o", str(tmp_path / f"w{j}.cubin"),
                            str(ptx)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
    # and ptxas refuses the forms keq refuses where the ISA forbids them (the layouts, mixed
    # .s4/.u4, .or)
    for j, line in enumerate(REFUSED[:2] + REFUSED[3:6]):
        ptx = tmp_path / f"r{j}.ptx"
        ptx.write_text(HEAD.replace("sm_90", arch) + line + "\nret;\n}\n")
        r = subprocess.run(["ptxas", f"-arch={arch}", "-o", str(tmp_path / "r.cubin"),
                            str(ptx)], capture_output=True, text=True, timeout=120)
        assert r.returncode != 0, line
