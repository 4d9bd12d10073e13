"""mma.sync m16n8k16 / m16n8k8 .row.col f32.{f16,bf16}.{f16,bf16}.f32 (semantics/ops/mma.py)
against a numpy model of the PTX ISA's fragment layouts (9.7.14.5.7 and 9.7.14.5.8, with
g = %laneid >> 2 and t = %laneid % 4):
- A: a_i at row g (k16: for 0 <= i < 2 or 4 <= i < 6; k8: for a0, a1), else g + 8; column
  2t + (i & 1), plus 8 for i >= 4 (k16). Register r holds a_2r (low half), a_2r+1.
- B: b_i at row 2t + (i & 1), plus 8 for i >= 2 (k16); row 2t + i (k8); column g.
- C, D: c_i at row g for i < 2, else g + 8; column 2t + (i & 1).

Small integers are exact in every model of the datapath, so D must be A @ B + C exactly. The
rounding itself is keq's model (semantics/tensor_core.py), checked on hand-derived cases.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import z3

from semantics.choices import FUNCTION_PREFIX
from semantics.errors import UnsupportedError
from semantics.machine import prepare, run_kernel
from semantics.machine.memory import UndefinedBehavior
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ptx import parse_ptx_file
from semantics.ops import lookup
from semantics.ptx import parse_ptx
from semantics.tensor_core import dot

CTAS, WARPS = 2, 2
THREADS = 32 * WARPS
LANES = CTAS * THREADS
FORMS = [(k, fmt) for k in (16, 8) for fmt in ("f16", "bf16")]
DATA = Path(__file__).resolve().parents[1] / "data" / "mma"

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
.reg .pred %p<4>;
.reg .b32 %r<48>;
.reg .f32 %f<16>;
.reg .b64 %rd<16>;
ld.param.u64 %rd1, [in];
ld.param.u64 %rd2, [out];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %ntid.x;
mad.lo.u32 %r4, %r2, %r3, %r1;
"""


def regs(first: int, n: int) -> str:
    return "{" + ",".join(f"%r{first + i}" for i in range(n)) + "}"


def _words_per_lane(k: int) -> int:
    return k // 4 + k // 8 + 4                 # A registers, B registers, C


def mma_kernel(k: int, fmt: str, guard: str = "", line: str | None = None):
    """Each thread loads its A, B and C fragment registers (one after another in `in`), runs
    the mma and stores its four D registers to `out`."""
    na, nb = k // 4, k // 8
    body = f"mul.wide.u32 %rd3, %r4, {4 * _words_per_lane(k)};\nadd.s64 %rd4, %rd1, %rd3;\n"
    body += "".join(f"ld.global.u32 %r{10 + i}, [%rd4+{4 * i}];\n" for i in range(na))
    body += "".join(f"ld.global.u32 %r{20 + i}, [%rd4+{4 * (na + i)}];\n" for i in range(nb))
    body += "".join(f"ld.global.f32 %f{1 + i}, [%rd4+{4 * (na + nb + i)}];\n" for i in range(4))
    body += guard + (line or f"mma.sync.aligned.m16n8k{k}.row.col.f32.{fmt}.{fmt}.f32 "
                     f"{{%f5,%f6,%f7,%f8}}, {regs(10, na)}, {regs(20, nb)}, "
                     f"{{%f1,%f2,%f3,%f4}};\n")
    body += "mul.wide.u32 %rd5, %r4, 16;\nadd.s64 %rd6, %rd2, %rd5;\n" \
            "st.global.v4.f32 [%rd6], {%f5,%f6,%f7,%f8};\n"
    return prepare(parse_ptx(HEAD + body + "ret;\n}\n", "mma.ptx"), "k")


# -- the model of the layout, from the ISA's formulas -----------------------------------------
LANE = np.arange(32)
G, T = LANE >> 2, LANE % 4


def a_place(k: int, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of a_i for each lane."""
    if k == 16:
        row = G if (0 <= i < 2 or 4 <= i < 6) else G + 8
        col = T * 2 + (i & 1) + (8 if i >= 4 else 0)
    else:
        row = G if i < 2 else G + 8
        col = T * 2 + (i & 1)
    return row, col


def b_place(k: int, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of b_i for each lane."""
    if k == 16:
        row = T * 2 + (i & 1) + (8 if i >= 2 else 0)
    else:
        row = T * 2 + i
    return row, G


def c_place(i: int) -> tuple[np.ndarray, np.ndarray]:
    return (G if i < 2 else G + 8), T * 2 + (i & 1)


def halves_bits(m: np.ndarray, fmt: str) -> np.ndarray:
    """Small integers as f16 or bf16 bit patterns (bf16: the top half of the f32, exact)."""
    if fmt == "f16":
        return m.astype(np.float16).view(np.uint16).astype(np.uint32)
    return m.astype(np.float32).view(np.uint32) >> 16


def fragments(a: np.ndarray, b: np.ndarray, c: np.ndarray, k: int, fmt: str) -> np.ndarray:
    """The 32 lanes' input words: A registers, B registers, C (f32 bits)."""
    ha, hb = halves_bits(a, fmt), halves_bits(b, fmt)
    elems_a = [ha[a_place(k, i)] for i in range(k // 2)]
    elems_b = [hb[b_place(k, i)] for i in range(k // 4)]
    regs = [elems_a[2 * r] | elems_a[2 * r + 1] << 16 for r in range(k // 4)]
    regs += [elems_b[2 * r] | elems_b[2 * r + 1] << 16 for r in range(k // 8)]
    regs += [c.astype(np.float32).view(np.uint32)[c_place(i)] for i in range(4)]
    return np.stack(regs, axis=1).astype(np.uint32)


def d_of(words: np.ndarray) -> np.ndarray:
    """The 16x8 f32 matrix whose D fragments the 32 lanes' four `words` are."""
    d = np.zeros((16, 8), np.float32)
    for i in range(4):
        d[c_place(i)] = words[:, i].view(np.float32)
    return d


def _problems(k: int, seed: int):
    rng = np.random.default_rng(seed)
    return [(rng.integers(-4, 5, (16, k)), rng.integers(-4, 5, (k, 8)),
             rng.integers(-16, 17, (16, 8))) for _ in range(LANES // 32)]


def _run(kernel, inp: np.ndarray, lanes: int = LANES, ctas: int = CTAS):
    res = run_kernel(kernel, None, ctas, lanes // ctas, [inp, np.zeros(4 * lanes, np.uint32)])
    assert [e.kind for e in res.effects if e.kind != "unspecified"] == [], res.effects
    return res.buffers["out"].reshape(lanes, 4)


@pytest.mark.parametrize("k,fmt", FORMS)
def test_mma_of_small_integers_is_the_exact_product(k, fmt):
    problems = _problems(k, 10 * k + len(fmt))
    inp = np.concatenate([fragments(a, b, c, k, fmt) for a, b, c in problems]).ravel()
    got = _run(mma_kernel(k, fmt), inp)
    for w, (a, b, c) in enumerate(problems):          # one problem per warp
        want = (a @ b + c).astype(np.float32)
        assert np.array_equal(d_of(got[32 * w:32 * w + 32]), want), f"warp {w}"


def test_the_model_truncates_each_term_and_the_sum():
    """k8 f16, C = 0 (hand-derived):
    D[0][0] = 1*1 + 3 * (2^-12 * 2^-12) = 1 + 3*2^-24. The largest exponent is 0, so terms are
      kept to multiples of 2^-24: 2^24 + 3 units, exact. To f32 toward zero: 1 + 2^-23
      (0x3F800001); the exact value rounded to nearest would be 1 + 2^-22 (0x3F800002).
    D[1][1] = 1*1 + 7 * (2^-13 * 2^-12) = 1 + 7*2^-25. Each 2^-25 is below the 2^-24 unit and
      truncates to 0: D = 1.0 (0x3F800000); rounded to nearest, 1 + 2^-22 (0x3F800002)."""
    a, b, c = np.zeros((16, 8)), np.zeros((8, 8)), np.zeros((16, 8))
    a[0, :4], b[:4, 0] = [1] + [2.0 ** -12] * 3, [1] + [2.0 ** -12] * 3
    a[1, :], b[:, 1] = [1] + [2.0 ** -13] * 7, [1] + [2.0 ** -12] * 7
    got = _run(mma_kernel(8, "f16"), fragments(a, b, c, 8, "f16").ravel(), 32, 1)
    d = d_of(got).view(np.uint32)
    assert (d[0, 0], d[1, 1]) == (0x3F800001, 0x3F800000)
    assert np.float32(1 + 3 * 2.0 ** -24).view(np.uint32) == 0x3F800002   # not the model's
    assert np.float32(1 + 7 * 2.0 ** -25).view(np.uint32) == 0x3F800002


F16_ONE, F16_TINY13, F16_TINY12 = 0x3C00, 0x0800, 0x0C00      # 1, 2^-13, 2^-12


def test_k16_chains_two_k8_steps():
    """Eight products of 2^-25 (k 0..7), then 1*1 (k 8). Step 1 sums the tiny ones exactly:
    2^-22; step 2 adds 1 with unit 2^-24 and keeps it: 1 + 2^-22 (0x3F800002). In one step
    each 2^-25 would truncate to 0 and give 1.0."""
    a = [F16_TINY13] * 8 + [F16_ONE] + [0] * 7
    b = [F16_TINY12] * 8 + [F16_ONE] + [0] * 7
    assert dot("f16", a, b, 0) == 0x3F800002
    assert dot("f16", a[8:] + a[:8], b[8:] + b[:8], 0) == 0x3F800000


@pytest.mark.parametrize("a0,b0,c,want", [
    (0x7E00, F16_ONE, 0, 0x7FFFFFFF),              # NaN input
    (0x7C00, 0, 0, 0x7FFFFFFF),                    # inf * 0
    (0x7C00, F16_ONE, 0xFF800000, 0x7FFFFFFF),     # inf - inf
    (0x7C00, 0xBC00, 0x3F800000, 0xFF800000),      # -inf wins over finite
    (0, 0, 0x7F800000, 0x7F800000),                # C = inf
    (0x8000, F16_ONE, 0x80000000, 0),              # -0 + -0 + (+0 products): +0
    (F16_ONE, 0xBC00, 0x3F800000, 0),              # 1 - 1: +0
])
def test_the_model_on_special_values(a0, b0, c, want):
    assert dot("f16", [a0] + [0] * 7, [b0] + [0] * 7, c) == want


def test_only_negative_zeros_sum_to_negative_zero():
    assert dot("f16", [0x8000] * 8, [F16_ONE] * 8, 0x80000000) == 0x80000000


# -- the symbolic domain ----------------------------------------------------------------------
def test_symbolic_results_are_the_uninterpreted_function():
    k = mma_kernel(8, "bf16")
    n = 32 * _words_per_lane(8)
    xs = [z3.BitVec(f"in[{i}]", 32) for i in range(n)]
    launch = run_symbolic(k, (1, 1, 1), (32, 1, 1),
                          [SymBuffer(32, tuple(xs)), SymBuffer(32, (0,) * 128)])
    names = {t.decl().name() for t in launch.buffers["out"]}
    assert names == {f"{FUNCTION_PREFIX}mma.m16n8k8.row.col.f32.bf16.bf16.f32"}
    # D[0][0] (lane 0, d0) and D[0][1] (lane 0, d1) share row 0 of A: the same A arguments
    t0, t1 = launch.buffers["out"][0], launch.buffers["out"][1]
    assert [str(x) for x in t0.children()[:8]] == [str(x) for x in t1.children()[:8]]
    assert any(e.kind == "unspecified" for e in launch.effects)


def test_two_equivalent_fragment_loads_verify_equivalent():
    from verifier.api import EQUIVALENT, load_pair, verify
    v = verify(load_pair(DATA / "halves.toml"), timeout_s=60)
    assert v.kind == EQUIVALENT, v.reasons


def test_a_different_fragment_is_never_equivalent():
    """Swapped B halves: the outputs differ only through the open function; they differ for
    every function within keq's bound of the exact sum (verifier/mma_bounds.py): refuted,
    with the counterexample replayed."""
    from verifier.api import NOT_EQUIVALENT, load_pair, verify
    v = verify(load_pair(DATA / "swapped.toml"), timeout_s=60)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert v.counterexample is not None


# -- undefined behaviour and refusals ---------------------------------------------------------
def test_mma_by_part_of_a_warp_is_undefined():
    k = mma_kernel(8, "f16", guard="and.b32 %r5, %r1, 31;\nsetp.lt.u32 %p1, %r5, 16;\n@%p1 ")
    with pytest.raises(UndefinedBehavior, match="another thread of the warp"):
        run_kernel(k, None, 1, 32, [np.zeros(32 * 7, np.uint32), np.zeros(128, np.uint32)])


@pytest.mark.parametrize("line", [
    "mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32 {%f5,%f6,%f7,%f8}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f1,%f2,%f3,%f4};",
    "mma.sync.aligned.m16n8k16.row.col.satfinite.f16.f16.f16.f16 {%r30,%r31}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%r32,%r33};",
    "mma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32 {%f5,%f6,%f7,%f8}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f1,%f2,%f3,%f4};",
    "mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f32 {%r30,%r31}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f1,%f2,%f3,%f4};",
    "mma.sync.aligned.m16n8k8.row.col.f32.bf16.tf32.f32 {%f5,%f6,%f7,%f8}, "
    "{%r10,%r11}, {%r20}, {%f1,%f2,%f3,%f4};",
    "mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%f5,%f6,%f7,%f8}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f1,%f2,%f3,%f4};",
    # m8n8k4 .f16: d .f32 with c .f16 (the ISA does not say which layout D takes), d .f16
    # with c .f32 (the ISA forbids it), .satfinite
    "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f16 {%f5,%f6,%f7,%f8,%f9,%f10,%f11,%f12}, "
    "{%r10,%r11}, {%r20,%r21}, {%r30,%r31,%r32,%r33};",
    "mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f32 {%r30,%r31,%r32,%r33}, "
    "{%r10,%r11}, {%r20,%r21}, {%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8};",
    "mma.sync.aligned.m8n8k4.row.col.satfinite.f16.f16.f16.f16 {%r30,%r31,%r32,%r33}, "
    "{%r10,%r11}, {%r20,%r21}, {%r30,%r31,%r32,%r33};",
    # d and c of different types on m16n8k8/k16 (the ISA: ".dtype must be the same as
    # .ctype"; ptxas 13 agrees)
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {%f5,%f6,%f7,%f8}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%r34,%r35};",
    "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f32 {%r30,%r31}, "
    "{%r10,%r11}, {%r20}, {%f1,%f2,%f3,%f4};",
    # layouts other than .row.col where only m8n8k4 .f16 has them (.col.row was once read
    # as .row.col: the flag set forgets order)
    "mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32 {%f5,%f6,%f7,%f8}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f1,%f2,%f3,%f4};",
    "mma.sync.aligned.m8n8k4.row.row.f64.f64.f64.f64 {%rd1,%rd2}, {%rd5}, {%rd9}, "
    "{%rd11,%rd12};",
    "mma.sync.aligned.m16n8k8.col.col.f64.f64.f64.f64 {%rd1,%rd2,%rd3,%rd4}, "
    "{%rd5,%rd6,%rd7,%rd8}, {%rd9,%rd10}, {%rd11,%rd12,%rd13,%rd14};",
    "mma.sync.aligned.m16n8k8.rn.row.col.f64.f64.f64.f64 {%rd1,%rd2,%rd3,%rd4}, "
    "{%rd5,%rd6,%rd7,%rd8}, {%rd9,%rd10}, {%rd11,%rd12,%rd13,%rd14};",
    "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f16 {%f5,%f6,%f7,%f8}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%r34,%r35};",
    # (.b1 with .xor/.and.popc has semantics: tests/semantics/test_mma_b1.py; not .or)
    "mma.sync.aligned.m16n8k256.row.col.or.popc.s32.b1.b1.s32 {%r30,%r31,%r32,%r33}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%r34,%r35,%r36,%r37};",
    "mma.sync.aligned.m16n8k32.row.col.s32.s8.s4.s32 {%r30,%r31,%r32,%r33}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%r34,%r35,%r36,%r37};",
    "mma.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {%r30,%r31,%r32,%r33}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%r34,%r35,%r36,%r37};",
    "mma.sync.aligned.m16n8k32.row.col.f32.s8.s8.f32 {%f5,%f6,%f7,%f8}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f1,%f2,%f3,%f4};",
    "mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%f5,%f6,%f7,%f8}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21,%r22,%r23}, {%f1,%f2,%f3,%f4}, %r24, 0x0;",
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.bf16.f32 {%f5,%f6,%f7,%f8}, "
    "{%r10,%r11,%r12,%r13}, {%r20,%r21}, {%f1,%f2,%f3,%f4};",
])
def test_other_mma_forms_are_refused_by_name(line):
    text = HEAD + line + "\nret;\n}\n"
    (ins,) = [i for i in parse_ptx(text, "m.ptx").functions["k"].instructions
              if i.opcode == "mma"]
    assert lookup(ins.form) is None
    with pytest.raises(UnsupportedError, match="no semantics") as err:
        prepare(parse_ptx(text, "m.ptx"), "k")
    assert (err.value.loc.file, err.value.loc.line) == ("m.ptx", HEAD.count("\n") + 1)


def test_nvccs_ldmatrix_and_mma_compute_the_tile_of_a_matmul():
    # The fragment layouts of ldmatrix and mma composed, in nvcc's own output: with small
    # integers every model sums exactly, so the tile is numpy's A @ B.
    m = parse_ptx_file(Path(__file__).resolve().parents[1] / "data" / "mma" /
                       "ldmatrix_mma_tile.ptx")
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 5, size=(16, 16)).astype(np.float16)
    bt = rng.integers(-4, 5, size=(8, 16)).astype(np.float16)       # B's columns, in rows
    c = np.zeros(128, dtype=np.float32)
    res = run_kernel(m, "tile", grid=1, block=32, args=[a.reshape(-1), bt.reshape(-1), c])
    got = res.buffers["tile_param_2"].reshape(16, 8)
    assert np.array_equal(got, a.astype(np.float32) @ bt.astype(np.float32).T)


def test_a_staged_tile_and_a_direct_one_feed_the_same_mma_so_they_are_equal():
    # Needs ldmatrix's layout, the mma's, and __syncwarp ordering the shared-memory staging
    # (without it the reference would race).
    from verifier.api import EQUIVALENT, load_pair, verify
    spec = Path(__file__).resolve().parents[1] / "data" / "mma" / "tile_staged_vs_direct.toml"
    v = verify(load_pair(spec), timeout_s=60)
    assert v.kind == EQUIVALENT, v.reasons
