"""Single-bit mma (semantics/ops/mma_b1.py): `mma.sync.aligned.{m8n8k128,m16n8k128,m16n8k256}
.row.col.s32.b1.b1.s32.{xor,and}.popc`, against numpy's C + popc(A bitOp B) over the ISA's
per-bit fragment layouts (tests/semantics/mma_forms.py, independent of keq's word-level
ones): wrapped to 32 bits. The symbolic terms evaluate to the emulator's values, the solver
refutes a kernel with one bit moved, and ptxas accepts every form keq accepts."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import z3

from mma_forms import Form, d_matrix, fragments, in_bytes, kernel, out_bytes, run_warps
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ops import lookup
from semantics.ptx import parse_ptx

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
FORMS = [Form(shape, "b1", ("s32", "b1", "b1", "s32"), bitop=op)
         for shape in ("m8n8k128", "m16n8k128", "m16n8k256") for op in ("xor", "and")]


def expected(a: np.ndarray, b: np.ndarray, c: np.ndarray, bitop: str) -> np.ndarray:
    """C + popc over k of (A[i][k] bitOp B[k][j]), wrapped to s32 (numpy, bit by bit)."""
    op = np.bitwise_xor if bitop == "xor" else np.bitwise_and
    counts = op(a[:, :, None], b[None, :, :]).sum(axis=1)
    return (counts + c + (1 << 31)) % (1 << 32) - (1 << 31)


def problem(form: Form, rng):
    m, n, k = form.mnk
    pick = rng.integers(0, 3, (m, n))
    c = np.where(pick == 0, INT_MAX - rng.integers(0, 100, (m, n)),
                 rng.integers(INT_MIN, INT_MAX, (m, n), dtype=np.int64))
    return rng.integers(0, 2, (m, k)), rng.integers(0, 2, (k, n)), c


def frag(form: Form, a, b, c) -> np.ndarray:
    return fragments(form, a.astype(np.uint64), b.astype(np.uint64),
                     (c.astype(np.int64) & 0xFFFFFFFF).astype(np.uint64))


def signed(mat: np.ndarray) -> np.ndarray:
    return mat.astype(np.uint32).view(np.int32).astype(np.int64)


@pytest.mark.parametrize("form", FORMS, ids=str)
def test_single_bit_mma_is_the_popcount_of_the_bit_products(form):
    """Two CTAs of two warps, one problem per warp: D is numpy's, element for element, over
    the ISA's per-bit layout of A and B and its C/D layout; C near MAX_INT32 wraps."""
    rng = np.random.default_rng(sum(map(ord, str(form))))
    problems = [problem(form, rng) for _ in range(4)]
    outs, effects = run_warps(form, [frag(form, *p) for p in problems], ctas=2)
    assert not effects
    wrapped = 0
    for (a, b, c), out in zip(problems, outs):
        want = expected(a, b, c, form.bitop)
        wrapped += int((want < c).sum())
        assert np.array_equal(signed(d_matrix(form, out)), want)
    assert wrapped > 0


def test_one_bit_at_the_isas_place_counts_once():
    """A[3][200] and B[200][5] set, all else zero (m16n8k256: column 200 is word 6, bit 8,
    held by lane 4*3 + 2's register 2): .and gives D[3][5] = C + 1 and C elsewhere; .xor gives
    C + 1 in row 3 and column 5 but for D[3][5]."""
    for op in ("and", "xor"):
        form = Form("m16n8k256", "b1", ("s32", "b1", "b1", "s32"), bitop=op)
        a, b = np.zeros((16, 256), np.int64), np.zeros((256, 8), np.int64)
        a[3, 200] = b[200, 5] = 1
        c = np.full((16, 8), 7, np.int64)
        (out,), _ = run_warps(form, [frag(form, a, b, c)])
        got = signed(d_matrix(form, out))
        want = np.full((16, 8), 7)
        if op == "and":
            want[3, 5] = 8
        else:
            want[3, :] += 1
            want[:, 5] += 1
            want[3, 5] = 7
        assert np.array_equal(got, want), op


# -- the symbolic domain ----------------------------------------------------------------------
def _symbolic(form: Form, line: str | None = None):
    words = 32 * in_bytes(form) // 4
    xs = [z3.BitVec(f"in[{i}]", 32) for i in range(words)]
    launch = run_symbolic(kernel(form, line=line), (1, 1, 1), (32, 1, 1),
                          [SymBuffer(32, tuple(xs)), SymBuffer(32, (0,) * (8 * out_bytes(form)))])
    return xs, launch


@pytest.mark.parametrize("form", FORMS, ids=str)
def test_symbolic_terms_evaluate_to_the_emulators_values(form):
    rng = np.random.default_rng(11)
    inp = frag(form, *problem(form, rng)).ravel()
    (out,), _ = run_warps(form, [inp.reshape(32, -1)])
    xs, launch = _symbolic(form)
    assert not launch.effects
    subst = [(x, z3.BitVecVal(int(v), 32)) for x, v in zip(xs, inp)]
    terms = launch.buffers["out"][:32 * out_bytes(form) // 4]
    got = [z3.simplify(z3.substitute(t, *subst)).as_long() if z3.is_expr(t) else int(t)
           for t in terms]
    assert got == out.ravel().tolist()


def test_the_solver_refutes_a_rotated_a_and_proves_complemented_xor_operands():
    """Complementing both operands of .xor leaves every bit product, so D, unchanged: the
    solver proves it for lane 0's outputs. Rotating A's word alone pairs other bits of A and
    B: the solver refutes it."""
    form = FORMS[0]                                            # m8n8k128 .xor
    xs, good = _symbolic(form)
    both = ("not.b32 %r60, %r10;\nnot.b32 %r61, %r50;\n"
            f"{form.line_name} {{%r90,%r91}}, {{%r60}}, {{%r61}}, {{%r70,%r71}};\n")
    one = ("shf.l.wrap.b32 %r60, %r10, %r10, 5;\n"
           f"{form.line_name} {{%r90,%r91}}, {{%r60}}, {{%r50}}, {{%r70,%r71}};\n")
    _, neg = _symbolic(form, both)
    _, bad = _symbolic(form, one)
    for i in range(2):
        s = z3.Solver()
        s.set(timeout=60_000)
        s.add(good.buffers["out"][i] != neg.buffers["out"][i])
        assert s.check() == z3.unsat
    s = z3.Solver()
    s.set(timeout=60_000)
    s.add(good.buffers["out"][0] != bad.buffers["out"][0])
    assert s.check() == z3.sat


# -- the forms keq accepts and refuses, and ptxas ---------------------------------------------
HEAD = (".version 8.0\n.target {arch}\n.address_size 64\n.visible .entry k()\n{{\n"
        ".reg .b32 %r<40>;\n")
OPERANDS = {"m8n8k128": "{%r30,%r31}, {%r10}, {%r20}, {%r34,%r35}",
            "m16n8k128": "{%r30,%r31,%r32,%r33}, {%r10,%r11}, {%r20}, {%r34,%r35,%r36,%r37}",
            "m16n8k256": "{%r30,%r31,%r32,%r33}, {%r10,%r11,%r12,%r13}, {%r20,%r21}, "
                         "{%r34,%r35,%r36,%r37}"}


def _keq_accepts(line: str) -> bool:
    text = HEAD.format(arch="sm_90") + line + "\nret;\n}\n"
    (ins,) = [i for i in parse_ptx(text, "b.ptx").functions["k"].instructions
              if i.opcode == "mma"]
    return lookup(ins.form) is not None


@pytest.mark.parametrize("line", [
    "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.or.popc",       # no such bitOp
    "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor",            # no .popc
    "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.and.popc",
    "mma.sync.aligned.m8n8k128.col.row.s32.b1.b1.s32.xor.popc",
    "mma.sync.aligned.m8n8k128.row.col.satfinite.s32.b1.b1.s32.xor.popc",
    "mma.sync.aligned.m8n8k128.row.col.s32.b1.s32.xor.popc",
    "mma.sync.aligned.m16n8k64.row.col.s32.b1.b1.s32.xor.popc",        # a 4-bit shape
])
def test_other_single_bit_forms_are_refused(line):
    shape = next(s for s in ("m8n8k128", "m16n8k64") if s in line)
    ops = OPERANDS.get(shape, OPERANDS["m16n8k128"])
    assert not _keq_accepts(f"{line} {ops};")


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptxas_accepts_every_single_bit_form_keq_accepts(tmp_path, arch):
    lines = [f"{f.line_name} {OPERANDS[f.shape]};" for f in FORMS]
    assert all(_keq_accepts(line) for line in lines)
    ptx = tmp_path / "b1.ptx"
    ptx.write_text(HEAD.format(arch=arch) + "\n".join(lines) + "\nret;\n}\n")
    r = subprocess.run(["ptxas", f"-arch={arch}", "-o", str(tmp_path / "b1.cubin"), str(ptx)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
