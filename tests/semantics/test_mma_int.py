"""Integer mma (semantics/ops/mma_int.py): `mma.sync.aligned.<shape>.row.col{.satfinite}
.s32.{s8,u8}.{s8,u8}.s32` (m8n8k16, m16n8k16, m16n8k32) and `.{s4,u4}.{s4,u4}` (m8n8k32,
m16n8k32, m16n8k64), against numpy's exact A @ B + C over the ISA's fragment layouts
(tests/semantics/mma_forms.py): wrapped to 32 bits, or clamped to the s32 range with
.satfinite. The symbolic terms, evaluated at the same inputs, give the emulator's values, and
the solver proves what integer arithmetic implies (a k32 mma is two chained k16 ones) and
refutes what it does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import z3

from mma_forms import Form, d_matrix, fragments, in_bytes, kernel, out_bytes, run_warps
from semantics.machine import run_kernel
from semantics.machine.memory import UndefinedBehavior
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ptx import parse_ptx_file

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
SHAPES = {"i8": ("m8n8k16", "m16n8k16", "m16n8k32"), "i4": ("m8n8k32", "m16n8k32", "m16n8k64")}
ELEMS = {"i8": ("s8", "u8"), "i4": ("s4", "u4")}
FORMS = [Form(shape, fam, ("s32", a, b, "s32"), sat)
         for fam, shapes in SHAPES.items() for shape in shapes
         for a in ELEMS[fam] for b in ELEMS[fam] for sat in (False, True)]
RANGE = {"s8": (-128, 127), "u8": (0, 255), "s4": (-8, 7), "u4": (0, 15)}


def _matrix(rng, t: str, shape) -> np.ndarray:
    lo, hi = RANGE[t]
    return rng.integers(lo, hi + 1, shape)


def _accumulators(rng, shape) -> np.ndarray:
    """C: a third near MAX_INT32, a third near MIN_INT32 (the sum overflows one way or the
    other for many elements), a third small."""
    pick = rng.integers(0, 3, shape)
    off = rng.integers(0, 100, shape)
    return np.where(pick == 0, INT_MAX - off, np.where(pick == 1, INT_MIN + off,
                                                       rng.integers(-5000, 5000, shape)))


def _bits(m: np.ndarray, bits: int) -> np.ndarray:
    return (m.astype(np.int64) & ((1 << bits) - 1)).astype(np.uint64)


def expected(a: np.ndarray, b: np.ndarray, c: np.ndarray, satfinite: bool) -> np.ndarray:
    exact = a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
    if satfinite:
        return np.clip(exact, INT_MIN, INT_MAX)
    return (exact + (1 << 31)) % (1 << 32) - (1 << 31)


def problem(form: Form, rng):
    m, n, k = form.mnk
    return (_matrix(rng, form.types[1], (m, k)), _matrix(rng, form.types[2], (k, n)),
            _accumulators(rng, (m, n)))


def frag(form: Form, a, b, c) -> np.ndarray:
    eb = 8 if form.fam == "i8" else 4
    return fragments(form, _bits(a, eb), _bits(b, eb), _bits(c, 32))


def signed(mat: np.ndarray) -> np.ndarray:
    return mat.astype(np.uint32).view(np.int32).astype(np.int64)


@pytest.mark.parametrize("form", FORMS, ids=str)
def test_integer_mma_is_the_exact_product(form):
    """Two CTAs of two warps, one problem per warp: D is numpy's A @ B + C, wrapped or
    clamped, element for element, over the ISA's layout of A, B, C and D."""
    rng = np.random.default_rng(sum(map(ord, str(form))))
    problems = [problem(form, rng) for _ in range(4)]
    outs, effects = run_warps(form, [frag(form, *p) for p in problems], ctas=2)
    assert effects == [] or all(e.kind != "unspecified" for e in effects)
    overflowed = 0
    for (a, b, c), out in zip(problems, outs):
        want = expected(a, b, c, form.satfinite)
        exact = a.astype(np.int64) @ b.astype(np.int64) + c
        overflowed += int(((exact < INT_MIN) | (exact > INT_MAX)).sum())
        assert np.array_equal(signed(d_matrix(form, out)), want)
    assert overflowed > 0                  # the data exercise the wrap / the clamp


@pytest.mark.parametrize("a_t,b_t,want", [
    ("u8", "s8", -255 * 16),               # 255 zero-extended, 0xFF sign-extended: -1
    ("s8", "u8", -255 * 16),
    ("s8", "s8", 16),                      # (-1) * (-1)
    ("u8", "u8", 255 * 255 * 16),
])
def test_each_factor_is_extended_by_its_own_type(a_t, b_t, want):
    form = Form("m8n8k16", "i8", ("s32", a_t, b_t, "s32"))
    a, b, c = np.full((8, 16), 0xFF), np.full((16, 8), 0xFF), np.zeros((8, 8), np.int64)
    (out,), _ = run_warps(form, [fragments(form, _bits(a, 8), _bits(b, 8), _bits(c, 32))])
    assert (signed(d_matrix(form, out)) == want).all()


def test_the_clamp_and_the_wrap_by_hand():
    """Row 0 of A all -128, column 0 of B all -128: P = 16 * 2^14 = 2^18. With C = MAX_INT32
    the sum wraps to MIN_INT32 + 2^18 - 1, or clamps to MAX_INT32; with C = MIN_INT32 and
    P = 16 * -128 * 127 (B's column 1: 127), it wraps to MAX_INT32 + 1 + P, or clamps."""
    a, b = np.zeros((8, 16), np.int64), np.zeros((16, 8), np.int64)
    a[0, :], b[:, 0], b[:, 1] = -128, -128, 127
    c = np.zeros((8, 8), np.int64)
    c[0, 0], c[0, 1] = INT_MAX, INT_MIN
    got = {}
    for sat in (False, True):
        form = Form("m8n8k16", "i8", ("s32", "s8", "s8", "s32"), sat)
        (out,), _ = run_warps(form, [fragments(form, _bits(a, 8), _bits(b, 8), _bits(c, 32))])
        got[sat] = signed(d_matrix(form, out))[0, :2].tolist()
    p1 = 16 * -128 * 127
    assert got[False] == [INT_MIN + (1 << 18) - 1, INT_MAX + 1 + p1]
    assert got[True] == [INT_MAX, INT_MIN]


# -- the symbolic domain ----------------------------------------------------------------------
def _symbolic(form: Form, lines: str | None = None):
    words = 32 * in_bytes(form) // 4
    xs = [z3.BitVec(f"in[{i}]", 32) for i in range(words)]
    k = kernel(form, line=lines)
    launch = run_symbolic(k, (1, 1, 1), (32, 1, 1),
                          [SymBuffer(32, tuple(xs)), SymBuffer(32, (0,) * (8 * out_bytes(form)))])
    return xs, launch


@pytest.mark.parametrize("form", [
    Form("m16n8k32", "i8", ("s32", "s8", "u8", "s32"), True),
    Form("m8n8k16", "i8", ("s32", "u8", "s8", "s32"), False),
    Form("m16n8k64", "i4", ("s32", "s4", "u4", "s32"), True),
    Form("m8n8k32", "i4", ("s32", "u4", "u4", "s32"), False),
], ids=str)
def test_symbolic_terms_evaluate_to_the_emulators_values(form):
    rng = np.random.default_rng(7)
    a, b, c = problem(form, rng)
    inp = frag(form, a, b, c).ravel()
    (out,), _ = run_warps(form, [inp.reshape(32, -1)])
    xs, launch = _symbolic(form)
    assert not any(e.kind == "unspecified" for e in launch.effects)
    subst = [(x, z3.BitVecVal(int(v), 32)) for x, v in zip(xs, inp)]
    terms = launch.buffers["out"][:32 * out_bytes(form) // 4]
    got = [z3.simplify(z3.substitute(t, *subst)).as_long() if z3.is_expr(t) else int(t)
           for t in terms]
    assert got == out.ravel().tolist()


K32 = Form("m16n8k32", "i8", ("s32", "s8", "s8", "s32"))


def _chained(sat: str) -> str:
    """Two m16n8k16 mmas over the k32 fragments: registers 0-1 of A with register 0 of B
    (columns 0-15 of A, rows 0-15 of B), then registers 2-3 with register 1."""
    k16 = f"mma.sync.aligned.m16n8k16.row.col{sat}.s32.s8.s8.s32"
    return (f"{k16} {{%r100,%r101,%r102,%r103}}, {{%r10,%r11}}, {{%r50}}, "
            f"{{%r70,%r71,%r72,%r73}};\n"
            f"{k16} {{%r90,%r91,%r92,%r93}}, {{%r12,%r13}}, {{%r51}}, "
            f"{{%r100,%r101,%r102,%r103}};\n")


@pytest.mark.parametrize("sat,equal", [("", True), (".satfinite", False)])
def test_the_solver_proves_a_k32_mma_is_two_chained_k16_ones(sat, equal):
    """Wrapping sums are associative: one k32 mma equals two k16 mmas over its halves, and
    the solver proves it (every output of lanes 0 and 29). Clamping is not: with .satfinite
    the solver finds inputs where the first clamp changes D[0][0] (a positive first half, a
    negative second). Its search is kept small: c0 of lane 0 is MAX_INT32, its B registers
    (column 0: rows 0-3, 16-19) hold ones, its A registers 0 and 2 (row 0: columns 0-3 and
    16-19) are free, and every other input word is zero."""
    form = Form(K32.shape, K32.fam, K32.types, bool(sat))
    xs, one = _symbolic(form)
    _, two = _symbolic(form, _chained(sat))
    if not equal:
        s = z3.Solver()
        s.add([x == 0 for i, x in enumerate(xs) if i not in (0, 2, 4, 5, 6)])
        s.add(xs[4] == 0x01010101, xs[5] == 0x01010101, xs[6] == INT_MAX)
        s.add(one.buffers["out"][0] != two.buffers["out"][0])
        assert s.check() == z3.sat
        return
    for lane in (0, 29):
        for i in range(4):
            t1, t2 = one.buffers["out"][4 * lane + i], two.buffers["out"][4 * lane + i]
            s = z3.Solver()
            s.add(t1 != t2)
            assert s.check() == z3.unsat


def test_the_solver_refutes_a_swapped_b_element():
    """A kernel that feeds B's register 0 with its bytes 0 and 1 swapped computes another
    product: the solver finds inputs that tell them apart."""
    form = Form("m16n8k16", "i8", ("s32", "s8", "s8", "s32"))
    xs, good = _symbolic(form)
    line = ("prmt.b32 %r60, %r50, 0, 0x3201;\n"
            f"{form.line_name} {{%r90,%r91,%r92,%r93}}, {{%r10,%r11}}, {{%r60}}, "
            f"{{%r70,%r71,%r72,%r73}};\n")
    _, bad = _symbolic(form, line)
    s = z3.Solver()
    s.add(good.buffers["out"][0] != bad.buffers["out"][0])
    assert s.check() == z3.sat


def test_integer_mma_by_part_of_a_warp_is_undefined():
    form = FORMS[0]
    k = kernel(form, guard="and.b32 %r5, %r1, 31;\nsetp.lt.u32 %p1, %r5, 16;\n@%p1 ")
    with pytest.raises(UndefinedBehavior, match="another thread of the warp"):
        run_kernel(k, None, 1, 32, [np.zeros(8 * in_bytes(form), np.uint32),
                                    np.zeros(8 * out_bytes(form), np.uint32)])


@pytest.mark.parametrize("seed", [0, 1])
def test_nvccs_inline_integer_mma_computes_the_tile(seed):
    """nvcc's PTX for a CUDA kernel that gathers the m16n8k32 fragments from memory by the
    ISA's layout (tests/data/mma/imma_tile.cu, its own transcription) and runs two integer
    mmas: s8 x s8 with .satfinite and u8 x s8 wrapping. The tiles are numpy's."""
    m = parse_ptx_file(Path(__file__).resolve().parents[1] / "data" / "mma" / "imma_tile.ptx")
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (32, 8)).astype(np.int8)
    c = _accumulators(rng, (16, 8)).astype(np.int32)
    zeros = np.zeros(128, np.int32)
    res = run_kernel(m, "imma_tile", grid=1, block=32,
                     args=[a.reshape(-1), b.T.copy().reshape(-1), c.reshape(-1), zeros, zeros])
    sat = res.buffers["imma_tile_param_3"].reshape(16, 8)
    wrap = res.buffers["imma_tile_param_4"].reshape(16, 8)
    assert np.array_equal(sat, expected(a, b, c, True))
    assert np.array_equal(wrap, expected(a.view(np.uint8), b, c, False))
