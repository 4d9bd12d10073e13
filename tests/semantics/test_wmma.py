"""wmma.load / wmma.mma / wmma.store (semantics/ops/wmma.py) against numpy, for every shape
and type keq gives semantics, every .row/.col combination of A, B, C and D in memory, and a
stride other than the default.

The fragment layout is keq's own (the ISA leaves it unspecified), so the tests look only at
memory: what a load, mma and store leave there must be D = A @ B + C in the layouts the
qualifiers name, whatever the layout. Small integers are exact in every datapath, so float
forms must give the product exactly. The fragment rules (`semantics.machine.fragments`) are
tested on kernels that break them: each records a "fragment" effect.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from semantics.machine import prepare, run_kernel
from semantics.machine.memory import UndefinedBehavior
from semantics.ops.wmma_fragments import SHAPES, fragment
from semantics.ptx import parse_ptx

# (shape, a/b type, c type, d type)
FORMS = [(s, "f16", c, d) for s in ("m16n16k16", "m32n8k16", "m8n32k16")
         for c in ("f16", "f32") for d in ("f16", "f32")] + \
        [(s, "bf16", "f32", "f32") for s in ("m16n16k16", "m32n8k16", "m8n32k16")] + \
        [(s, t, "s32", "s32") for s in ("m16n16k16", "m32n8k16", "m8n32k16")
         for t in ("s8", "u8")] + \
        [("m16n16k8", "tf32", "f32", "f32"), ("m8n8k4", "f64", "f64", "f64")]
NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "s8": np.int8, "u8": np.uint8,
      "s32": np.int32, "tf32": np.float32, "bf16": ml_dtypes.bfloat16}


def pad(t: str) -> int:
    """What the stride adds to the default (a sub-matrix of a wider one): 16 bytes or more."""
    return 16 if t in ("s8", "u8") else 8


def _regs(name: str, n: int) -> str:
    return "{" + ",".join(f"%{name}{i}" for i in range(n)) + "}"


def _mma_types(at: str, ct: str, dt: str) -> str:
    if at == "f16":
        return f"{dt}.{ct}"
    return f"{dt}.{at}.{at}.{ct}"


def wmma_kernel(shape, at, ct, dt, la, lb, lc, ld, stride: bool, body: str | None = None):
    return prepare(parse_ptx(wmma_source(shape, at, ct, dt, la, lb, lc, ld, stride, body),
                             "wmma.ptx"), "k")


def wmma_source(shape, at, ct, dt, la, lb, lc, ld, stride: bool, body: str | None = None) -> str:
    fa, fb, fc, fd = (fragment("a", shape, at, la), fragment("b", shape, at, lb),
                      fragment("c", shape, ct), fragment("c", shape, dt))
    wide = at == "f64"
    reg = ".b64" if wide else ".b32"

    def st(f, lay):
        rows, cols = f.dims
        return f", {(cols if lay == 'row' else rows) + pad(f.elem)}" if stride else ""
    rnd = ".rn" if wide else ""
    mma = (f"wmma.mma.sync.aligned.{la}.{lb}.{shape}.{_mma_types(at, ct, dt)}{rnd} "
           f"{_regs('d', fd.regs)}, {_regs('a', fa.regs)}, {_regs('b', fb.regs)}, "
           f"{_regs('c', fc.regs)};\n")
    text = f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
.reg {reg} %a<8>;
.reg {reg} %b<8>;
.reg {".b64" if ct == "f64" else ".b32"} %c<8>;
.reg {".b64" if dt == "f64" else ".b32"} %d<8>;
.reg .b64 %p<5>;
ld.param.u64 %p1, [pa];
ld.param.u64 %p2, [pb];
ld.param.u64 %p3, [pc];
ld.param.u64 %p4, [pd];
wmma.load.a.sync.aligned.{la}.{shape}.global.{at} {_regs('a', fa.regs)}, [%p1]{st(fa, la)};
wmma.load.b.sync.aligned.{lb}.{shape}.global.{at} {_regs('b', fb.regs)}, [%p2]{st(fb, lb)};
wmma.load.c.sync.aligned.{lc}.{shape}.global.{ct} {_regs('c', fc.regs)}, [%p3]{st(fc, lc)};
{body if body is not None else mma}wmma.store.d.sync.aligned.{ld}.{shape}.global.{dt} [%p4], {_regs('d', fd.regs)}{st(fd, ld)};
ret;
}}
"""
    return text


def _stored(m: np.ndarray, lay: str, stride: bool, t: str) -> np.ndarray:
    """`m` as the buffer a load reads (or a store writes) in layout `lay`, padded columns."""
    mm = m if lay == "row" else m.T
    out = np.zeros((mm.shape[0], mm.shape[1] + (pad(t) if stride else 0)), NP[t])
    out[:, :mm.shape[1]] = mm
    return np.ascontiguousarray(out).ravel()


def _matrices(shape, at, ct, seed):
    m, n, k = SHAPES[shape]
    rng = np.random.default_rng(seed)
    lo = 0 if at == "u8" else -3
    a, b = rng.integers(lo, 4, (m, k)), rng.integers(lo, 4, (k, n))
    c = rng.integers(-8, 9, (m, n))
    return a, b, c


def _run(kernel, shape, at, ct, dt, lays, stride, seed=0, choices=None):
    la, lb, lc, ld = lays
    a, b, c = _matrices(shape, at, ct, seed)
    m, n, _ = SHAPES[shape]
    args = [_stored(a, la, stride, at), _stored(b, lb, stride, at),
            _stored(c, lc, stride, ct), _stored(np.zeros((m, n)), ld, stride, dt)]
    res = run_kernel(kernel, None, 1, 32, args, choices=choices)
    return res, (a @ b + c)


def _read_back(buf: np.ndarray, m: int, n: int, lay: str, stride: bool, t: str) -> np.ndarray:
    rows, cols = (m, n) if lay == "row" else (n, m)
    out = buf.reshape(rows, cols + (pad(t) if stride else 0))[:, :cols]
    return out if lay == "row" else out.T


@pytest.mark.parametrize("shape,at,ct,dt", FORMS, ids=["-".join(f) for f in FORMS])
def test_load_mma_store_is_the_product_in_every_memory_layout(shape, at, ct, dt):
    m, n, _ = SHAPES[shape]
    for seed, (lays, stride) in enumerate(itertools.product(
            itertools.product(("row", "col"), repeat=4), (False, True))):
        if seed % 3 and shape != "m16n16k16":
            continue                  # (every combination on one shape, a third elsewhere)
        kernel = wmma_kernel(shape, at, ct, dt, *lays, stride)
        res, want = _run(kernel, shape, at, ct, dt, lays, stride, seed)
        assert not [e for e in res.effects if e.kind not in ("unspecified",)], res.effects
        got = _read_back(res.buffers["pd"], m, n, lays[3], stride, dt)
        assert np.array_equal(got.astype(np.float64), want.astype(np.float64)), (lays, stride)


def test_every_register_count_is_what_nvcc_emits():
    # (from nvcc 13's PTX for each fragment type: tests/data/wmma is not needed for this)
    counts = {("a", "m16n16k16", "f16"): 8, ("c", "m16n16k16", "f16"): 4,
              ("c", "m16n16k16", "f32"): 8, ("a", "m16n16k16", "bf16"): 4,
              ("a", "m32n8k16", "bf16"): 8, ("b", "m32n8k16", "bf16"): 2,
              ("a", "m8n32k16", "bf16"): 2, ("a", "m16n16k8", "tf32"): 4,
              ("a", "m8n8k4", "f64"): 1, ("c", "m8n8k4", "f64"): 2,
              ("a", "m16n16k16", "s8"): 2, ("a", "m32n8k16", "s8"): 4,
              ("b", "m32n8k16", "s8"): 1, ("a", "m8n32k16", "s8"): 1}
    for (mat, shape, t), n in counts.items():
        assert fragment(mat, shape, t, "row").regs == n, (mat, shape, t)


def _effects(body: str, shape="m16n16k16", at="f16", ct="f32", dt="f32"):
    kernel = wmma_kernel(shape, at, ct, dt, "row", "col", "row", "row", False, body)
    res, _ = _run(kernel, shape, at, ct, dt, ("row", "col", "row", "row"), False)
    return [e.what for e in res.effects if e.kind == "fragment"]


MMA = ("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%d0,%d1,%d2,%d3,%d4,%d5,%d6,%d7}, "
       "{%a0,%a1,%a2,%a3,%a4,%a5,%a6,%a7}, {%b0,%b1,%b2,%b3,%b4,%b5,%b6,%b7}, "
       "{%c0,%c1,%c2,%c3,%c4,%c5,%c6,%c7};\n")


def test_the_plain_load_mma_store_records_no_fragment_effect():
    assert _effects(MMA) == []


def test_one_element_changed_is_a_fragment_effect_where_the_fragment_is_used():
    got = _effects(MMA + "add.f32 %d0, %d0, %d0;\n")
    assert got and "mixes the registers of different fragments" in got[0]


def test_an_element_wise_map_over_every_slot_keeps_the_fragment_whole():
    scale = "".join(f"mul.f32 %d{i}, %d{i}, 0f40000000;\n" for i in range(8))
    assert _effects(MMA + scale) == []
    ragged = "".join(f"mul.f32 %d{i}, %d{i}, 0f4{i}000000;\n" for i in range(8))
    assert any("mixes" in w for w in _effects(MMA + ragged))


def test_an_element_used_otherwise_is_a_fragment_effect():
    got = _effects(MMA + "cvt.rzi.s32.f32 %a0, %d0;\n")
    assert got and "'cvt.rzi.s32.f32' reads %d0" in got[0]


def test_registers_of_two_fragments_or_reordered_are_a_fragment_effect():
    swapped = MMA.replace("{%a0,%a1,", "{%a1,%a0,")
    assert any("reorders" in w for w in _effects(swapped))
    mixed = MMA.replace("{%c0,%c1,", "{%d0,%c1,")     # %d0 never written: a plain value
    assert any("mixes" in w or "element by element" in w for w in _effects(mixed))


def test_a_uniform_accumulator_is_any_layout_and_a_non_uniform_one_is_not():
    fill = "".join(f"mov.b32 %c{i}, 0;\n" for i in range(8))
    assert _effects(fill + MMA) == []
    ragged = "".join(f"mov.b32 %c{i}, {i};\n" for i in range(8))
    assert any("element by element" in w for w in _effects(ragged + MMA))


def test_a_fragment_of_another_layout_is_a_fragment_effect():
    other = MMA.replace("row.col.m16n16k16", "row.row.m16n16k16")
    assert any("not B.row" in w for w in _effects(other))


def test_a_misaligned_address_or_short_stride_is_undefined():
    src = wmma_source("m16n16k16", "f16", "f32", "f32", "row", "col", "row", "row", True)
    a, b, c = _matrices("m16n16k16", "f16", "f32", 0)
    args = [_stored(a, "row", True, "f16"), _stored(b, "col", True, "f16"),
            _stored(c, "row", True, "f32"), np.zeros(16 * 24, np.float32)]
    for edit, why in ((("ld.param.u64 %p2, [pb];", "ld.param.u64 %p2, [pb];\nadd.s64 %p1, %p1, 2;"),
                       "32-byte aligned"),
                      (("[%p1], 24", "[%p1], 8"), "stride below 16"),
                      (("[%p1], 24", "[%p1], 20"), "multiple of 16 bytes")):
        bad = prepare(parse_ptx(src.replace(*edit), "wmma.ptx"), "k")
        with pytest.raises(UndefinedBehavior, match=why):
            run_kernel(bad, None, 1, 32, args)


def test_arithmetic_on_a_register_of_two_packed_elements_is_a_fragment_effect():
    # an f16 accumulator holds two elements per register: `mul.f32` on it ties together two
    # elements that another layout pairs differently
    mma = ("wmma.mma.sync.aligned.row.col.m16n16k16.f16.f16 {%d0,%d1,%d2,%d3}, "
           "{%a0,%a1,%a2,%a3,%a4,%a5,%a6,%a7}, {%b0,%b1,%b2,%b3,%b4,%b5,%b6,%b7}, "
           "{%c0,%c1,%c2,%c3};\n")
    scale = "".join(f"mul.f32 %d{i}, %d{i}, 0f40000000;\n" for i in range(4))
    assert _effects(mma + scale, ct="f16", dt="f16")
    assert _effects(mma, ct="f16", dt="f16") == []
