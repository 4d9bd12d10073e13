"""cvt to and from fp8 (semantics/ops/convert_fp8.py): the ISA's corners as golden results,
the emulator against an independent reference (ml_dtypes' float8_e4m3fn / float8_e5m2),
the symbolic domain against the emulator bit for bit, and the symbolic narrowing and
widening proved equal to z3's own IEEE conversions wherever the fp8 format is IEEE.

The reference and the ISA differ in one rule, applied on top of ml_dtypes here: .satfinite
("|input| > MAX_NORM gives sign-preserved MAX_NORM", ±inf included), where ml_dtypes gives
NaN (e4m3fn) or inf (e5m2). NaN results: ml_dtypes must say NaN too; which NaN the ISA leaves
open (the emulator's: 0x7F, 0x7FFF; the symbolic side's: any NaN fixed by the input).
"""

from __future__ import annotations

import numpy as np
import pytest
import z3

from fpbits import SPECIALS, f16, f32
from harness import agree, execute
from semantics.errors import UnsupportedError
from semantics.fp8 import FP8

ml_dtypes = pytest.importorskip("ml_dtypes")
ML = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
MAXV = {"e4m3": 448.0, "e5m2": 57344.0}
F8X2 = ("e4m3x2", "e5m2x2")


def _narrow_f32(fmt: str, a: list[int], b: list[int], relu: bool = False) -> list[int]:
    mods = ".relu" if relu else ""
    run = execute(f"cvt.rn.satfinite{mods}.{fmt}.f32 %d, %a, %b",
                  {"%d": "b16", "%a": "f32", "%b": "f32"}, {"%a": a, "%b": b})
    return run.outputs["%d"]


def _narrow_f16x2(fmt: str, a: list[int], relu: bool = False) -> list[int]:
    mods = ".relu" if relu else ""
    run = execute(f"cvt.rn.satfinite{mods}.{fmt}.f16x2 %d, %a", {"%d": "b16", "%a": "b32"},
                  {"%a": a})
    return run.outputs["%d"]


def _widen(fmt: str, a: list[int], relu: bool = False) -> list[int]:
    mods = ".relu" if relu else ""
    run = execute(f"cvt.rn{mods}.f16x2.{fmt} %d, %a", {"%d": "b32", "%a": "b16"}, {"%a": a})
    return run.outputs["%d"]


# ---------------------------------------------------------------------------------------------
# golden results: the ISA's rules at their corners

NAN32 = 0x7FC00000
GOLDEN_F32 = [
    # (format, relu, f32 bits, fp8 bits)
    ("e4m3x2", False, f32(1.0), 0x38),
    ("e4m3x2", False, f32(1.0625), 0x38),          # a tie: to the even 1.0
    ("e4m3x2", False, f32(1.1875), 0x3A),          # a tie: to the even 1.25
    ("e4m3x2", False, f32(1.0625 + 2 ** -20), 0x39),
    ("e4m3x2", False, f32(448.0), 0x7E),           # MAX_NORM
    ("e4m3x2", False, f32(464.0), 0x7E),           # halfway to 480: saturated, never 0x7F
    ("e4m3x2", False, f32(1e30), 0x7E),
    ("e4m3x2", False, 0x7F800000, 0x7E),           # +inf: MAX_NORM
    ("e4m3x2", False, 0xFF800000, 0xFE),
    ("e4m3x2", False, f32(-500.0), 0xFE),
    ("e4m3x2", False, f32(2 ** -9), 0x01),         # the smallest subnormal
    ("e4m3x2", False, f32(2 ** -10), 0x00),        # a tie: to the even 0
    ("e4m3x2", False, f32(-(2 ** -10)), 0x80),     # ... keeping the sign
    ("e4m3x2", False, f32(3 * 2 ** -10), 0x02),    # a tie: to the even 2
    ("e4m3x2", False, f32(7.5 * 2 ** -9), 0x08),   # rounds up into the smallest normal
    ("e4m3x2", False, f32(2 ** -6), 0x08),
    ("e4m3x2", False, 0x00000001, 0x00),           # an f32 subnormal
    ("e4m3x2", False, 0x80000000, 0x80),
    ("e4m3x2", False, NAN32, 0x7F),                # the emulator's NaN
    ("e4m3x2", False, 0xFFC00001, 0x7F),
    ("e4m3x2", True, f32(-1.0), 0x00),
    ("e4m3x2", True, 0x80000000, 0x00),
    ("e4m3x2", True, 0xFF800000, 0x00),
    ("e4m3x2", True, f32(3.0), 0x44),
    ("e4m3x2", True, 0xFFC00000, 0x7F),            # canonical NaN
    ("e5m2x2", False, f32(1.0), 0x3C),
    ("e5m2x2", False, f32(1.125), 0x3C),           # a tie: to the even 1.0
    ("e5m2x2", False, f32(1.375), 0x3E),           # a tie: to the even 1.5
    ("e5m2x2", False, f32(57344.0), 0x7B),         # MAX_NORM
    ("e5m2x2", False, f32(61440.0), 0x7B),         # would round to inf: saturated
    ("e5m2x2", False, 0x7F800000, 0x7B),           # +inf: MAX_NORM, not inf
    ("e5m2x2", False, 0xFF800000, 0xFB),
    ("e5m2x2", False, f32(2 ** -16), 0x01),        # the smallest subnormal
    ("e5m2x2", False, f32(2 ** -17), 0x00),        # a tie: to the even 0
    ("e5m2x2", False, f32(3 * 2 ** -17), 0x02),
    ("e5m2x2", False, f32(2 ** -14), 0x04),
    ("e5m2x2", False, NAN32, 0x7F),
    ("e5m2x2", True, f32(-2.0), 0x00),
    ("e5m2x2", True, NAN32, 0x7F),
]


@pytest.mark.parametrize("fmt,relu,a,want", GOLDEN_F32, ids=lambda v: f"{v:#x}"
                         if isinstance(v, int) else str(v))
def test_golden_f32_both_halves(fmt, relu, a, want):
    """cvt(a) lands in d[15:8], cvt(b) in d[7:0]; the symbolic domain agrees."""
    one = f32(1.0)
    mods = ".relu" if relu else ""
    run = agree(f"cvt.rn.satfinite{mods}.{fmt}.f32 %d, %a, %b",
                {"%d": "b16", "%a": "f32", "%b": "f32"}, {"%a": [a, one], "%b": [one, a]})
    one8 = 0x38 if fmt == "e4m3x2" else 0x3C
    assert run.outputs["%d"] == [(want << 8) | one8, (one8 << 8) | want]


@pytest.mark.parametrize("fmt,relu,a,want", [
    ("e4m3x2", False, (f16(1.0625) << 16) | f16(-448.0), 0x38FE),
    ("e4m3x2", False, (0x7C00 << 16) | 0x7E00, 0x7E7F),          # inf, NaN
    ("e4m3x2", False, (f16(2 ** -10) << 16) | 0x0001, 0x0000),    # a tie; an f16 subnormal
    ("e4m3x2", True, (f16(-1.0) << 16) | 0xFE00, 0x007F),
    ("e5m2x2", False, (0x0001 << 16) | 0x0080, 0x0000),           # f16 subnormals: ties...
    ("e5m2x2", False, (0x0180 << 16) | 0x8100, 0x0281),           # ... to even
    ("e5m2x2", False, (0x7BFF << 16) | 0xFC00, 0x7BFB),           # 65504, -inf: saturated
    ("e5m2x2", True, (f16(2.0) << 16) | f16(-2.0), 0x4000),
])
def test_golden_f16x2(fmt, relu, a, want):
    """cvt(a[31:16]) lands in d[15:8], cvt(a[15:0]) in d[7:0]."""
    mods = ".relu" if relu else ""
    run = agree(f"cvt.rn.satfinite{mods}.{fmt}.f16x2 %d, %a", {"%d": "b16", "%a": "b32"},
                {"%a": [a]})
    assert run.outputs["%d"] == [want]


@pytest.mark.parametrize("fmt,relu,a,want", [
    ("e4m3x2", False, 0x3801, (f16(1.0) << 16) | f16(2 ** -9)),   # high byte to the high half
    ("e4m3x2", False, 0x7EFE, (f16(448.0) << 16) | f16(-448.0)),
    ("e4m3x2", False, 0x7F07, (0x7FFF << 16) | f16(7 * 2 ** -9)),  # NaN; the largest subnormal
    ("e4m3x2", False, 0x0880, (f16(2 ** -6) << 16) | 0x8000),
    ("e4m3x2", True, 0xB8FF, 0x00007FFF),                          # -1 -> 0; NaN -> canonical
    ("e5m2x2", False, 0x7CFC, 0x7C00FC00),                         # ±inf stay infinite
    ("e5m2x2", False, 0x7B01, (f16(57344.0) << 16) | 0x0100),
    ("e5m2x2", False, 0x7D00, 0x7FFF0000),                         # a signalling NaN
    ("e5m2x2", True, 0xFC3C, f16(1.0)),
])
def test_golden_widen(fmt, relu, a, want):
    mods = ".relu" if relu else ""
    run = agree(f"cvt.rn{mods}.f16x2.{fmt} %d, %a", {"%d": "b32", "%a": "b16"}, {"%a": [a]})
    assert run.outputs["%d"] == [want]


@pytest.mark.parametrize("line", [
    "cvt.rn.e4m3x2.f32 %d, %a, %b",                     # .satfinite is required
    "cvt.satfinite.e4m3x2.f32 %d, %a, %b",              # .rn is required
    "cvt.rz.satfinite.e5m2x2.f32 %d, %a, %b",           # sm_100+
    "cvt.rn.satfinite.e4m3x2.bf16x2 %d, %a",            # sm_100+
    "cvt.rn.satfinite.ftz.e4m3x2.f32 %d, %a, %b",
    "cvt.rn.satfinite.f16x2.e4m3x2 %d, %a",             # widening takes no .satfinite
    "cvt.f16x2.e4m3x2 %d, %a",
    "cvt.rn.satfinite.e2m1x2.f32 %d, %a, %b",
    "cvt.rn.bf16x2.ue8m0x2 %d, %a",
])
def test_unsupported_forms_stay_unsupported(line):
    decls = {"%d": "b32", "%a": "b32", "%b": "b32"}
    with pytest.raises(UnsupportedError):
        execute(line, decls, {"%a": [0], "%b": [0]})


# ---------------------------------------------------------------------------------------------
# the emulator against ml_dtypes

def _reference_narrow(fmt: str, x: np.ndarray, relu: bool) -> np.ndarray:
    """The expected bits: ml_dtypes' conversion with the ISA's .satfinite and .relu on top
    (a NaN: the emulator's 0x7F)."""
    f = fmt[:4]
    neg = np.signbit(x)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = x.astype(ML[f]).view(np.uint8).astype(np.int64)
        over = np.abs(x.astype(np.float64)) > MAXV[f]
    ref = np.where(over, FP8[f].max_finite | np.where(neg, 0x80, 0), ref)
    if relu:
        ref = np.where(neg, 0, ref)
    return np.where(np.isnan(x), FP8[f].canonical_nan, ref)


def _f32_inputs(n: int, seed: int) -> np.ndarray:
    """Random bit patterns, values around each format's range and grid, and exact ties."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    scaled = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 18, n))).astype(np.float32)
    codes = np.arange(256, dtype=np.uint8)
    ties = []
    for f in ("e4m3", "e5m2"):
        grid = codes.view(ML[f]).astype(np.float64)
        grid = np.sort(grid[np.isfinite(grid)])
        mids = (grid[1:] + grid[:-1]) / 2           # exact ties, and their neighbours
        ties += [mids, np.nextafter(mids.astype(np.float32), np.float32(np.inf)),
                 np.nextafter(mids.astype(np.float32), np.float32(-np.inf))]
    special = np.array(SPECIALS["f32"], dtype=np.uint32).view(np.float32)
    edges = np.array([448, 449, 463.9, 464, 464.1, 480, 57344, 57345, 61439, 61440, 61441,
                      65504, 65520, 2 ** -9, 2 ** -10, 2 ** -16, 2 ** -17], np.float32)
    return np.concatenate([raw.view(np.float32), scaled, special, edges, -edges,
                           *(t.astype(np.float32) for t in ties)])


@pytest.mark.parametrize("fmt", F8X2)
@pytest.mark.parametrize("relu", [False, True])
def test_f32_narrowing_matches_ml_dtypes(fmt, relu):
    x = _f32_inputs(30_000, seed=7)
    bits = x.view(np.uint32).astype(np.int64)
    out = np.array(_narrow_f32(fmt, list(bits), list(bits[::-1]), relu), dtype=np.int64)
    for half, xs in ((out >> 8, x), (out & 0xFF, x[::-1])):
        want = _reference_narrow(fmt, xs, relu)
        bad = np.nonzero(half != want)[0]
        assert bad.size == 0, [(hex(int(xs.view(np.uint32)[i])), hex(int(half[i])),
                                hex(int(want[i]))) for i in bad[:8]]


@pytest.mark.parametrize("fmt", F8X2)
@pytest.mark.parametrize("relu", [False, True])
def test_f16x2_narrowing_matches_ml_dtypes_exhaustively(fmt, relu):
    """Every f16 value, once in each half of the f16x2 operand."""
    lo = np.arange(1 << 16, dtype=np.uint32)
    hi = lo[::-1]
    out = np.array(_narrow_f16x2(fmt, list((hi << 16 | lo).astype(np.int64)), relu))
    for half, src in ((out >> 8, hi), (out & 0xFF, lo)):
        xs = src.astype(np.uint16).view(np.float16)
        want = _reference_narrow(fmt, xs, relu)
        bad = np.nonzero(half != want)[0]
        assert bad.size == 0, [(hex(int(src[i])), hex(int(half[i])), hex(int(want[i])))
                               for i in bad[:8]]


@pytest.mark.parametrize("fmt", F8X2)
@pytest.mark.parametrize("relu", [False, True])
def test_widening_matches_ml_dtypes_exhaustively(fmt, relu):
    """All 65536 pairs of fp8 codes: each of the 256 codes in each byte."""
    a = np.arange(1 << 16, dtype=np.int64)
    out = np.array(_widen(fmt, list(a), relu), dtype=np.int64)
    for half, code in ((out >> 16, a >> 8), (out & 0xFFFF, a & 0xFF)):
        x = code.astype(np.uint8).view(ML[fmt[:4]]).astype(np.float16)
        want = x.view(np.uint16).astype(np.int64)
        if relu:
            want = np.where(np.signbit(x), 0, want)
        want = np.where(np.isnan(x), 0x7FFF, want)
        bad = np.nonzero(half != want)[0]
        assert bad.size == 0, [(hex(int(code[i])), hex(int(half[i])), hex(int(want[i])))
                               for i in bad[:8]]


@pytest.mark.parametrize("fmt", ("e4m3", "e5m2"))
def test_widening_agrees_with_the_tensor_core_decoding(fmt):
    """cvt and the mma model read fp8 through one description (semantics/fp8.py): the f16
    cvt gives is the exact value the tensor-core model decodes."""
    out = _widen(fmt + "x2", list(range(256)))
    for code, r in enumerate(out):
        term = FP8[fmt].decode(code)
        got = np.array([r & 0xFFFF], np.uint16).view(np.float16)[0]
        if term == "nan":
            assert np.isnan(got)
        elif isinstance(term, str):
            assert got == (np.inf if term == "+inf" else -np.inf)
        else:
            neg, sig, exp = term
            assert float(got) == (-1) ** neg * sig * 2.0 ** exp and \
                np.signbit(got) == neg


# ---------------------------------------------------------------------------------------------
# the symbolic domain: bit for bit with the emulator, and against z3's IEEE conversions

@pytest.mark.parametrize("fmt", F8X2)
@pytest.mark.parametrize("relu", ["", ".relu"])
def test_concrete_equals_symbolic_on_samples(fmt, relu):
    x = _f32_inputs(40, seed=3)
    x = np.concatenate([x[:40], x[-60:]])
    bits = [int(v) for v in x.view(np.uint32)]
    agree(f"cvt.rn.satfinite{relu}.{fmt}.f32 %d, %a, %b",
          {"%d": "b16", "%a": "f32", "%b": "f32"}, {"%a": bits, "%b": bits[::-1]})
    with np.errstate(over="ignore"):
        h = [int(v) for v in x.astype(np.float16).view(np.uint16)] + SPECIALS["f16"]
    agree(f"cvt.rn.satfinite{relu}.{fmt}.f16x2 %d, %a", {"%d": "b16", "%a": "b32"},
          {"%a": [(p << 16) | q for p, q in zip(h, h[::-1])]})
    codes = list(range(0, 256, 3)) + [0x7F, 0xFF, 0x7C, 0xFC, 0x80, 0x7E, 0x7B]
    agree(f"cvt.rn{relu}.f16x2.{fmt} %d, %a", {"%d": "b32", "%a": "b16"},
          {"%a": [(c << 8) | codes[-1 - i] for i, c in enumerate(codes)]})


def _prove(claim) -> None:
    s = z3.Solver()
    s.set("timeout", 120_000)
    s.add(z3.Not(claim))
    r = s.check()
    assert r == z3.unsat, s.model() if r == z3.sat else r


@pytest.mark.parametrize("src", ["f32", "f16"])
@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_symbolic_narrowing_is_ieee_rounding(src, fmt):
    """For every non-NaN input within the IEEE part of the format's range (e5m2: MAX_NORM;
    e4m3: 240, the largest value of IEEE's 4-exponent-bit format, whose patterns e4m3
    shares below exponent 1111), the symbolic result is z3's fp.to_fp to (e, m+1) with RNE."""
    w = 32 if src == "f32" else 16
    a = z3.BitVec("a", w)
    if src == "f32":
        out = execute(f"cvt.rn.satfinite.{fmt}x2.f32 %d, %a, %b",
                      {"%d": "b16", "%a": "f32", "%b": "f32"}, {"%a": [a], "%b": [0]},
                      "symbolic").outputs["%d"][0]
    else:
        out = execute(f"cvt.rn.satfinite.{fmt}x2.f16x2 %d, %a", {"%d": "b16", "%a": "b32"},
                      {"%a": [z3.Concat(a, z3.BitVecVal(0, 16))]}, "symbolic").outputs["%d"][0]
    f8 = FP8[fmt]
    sort_in = z3.FPSort(8, 24) if src == "f32" else z3.FPSort(5, 11)
    sort8 = z3.FPSort(f8.ebits, f8.mbits + 1)
    x = z3.fpBVToFP(a, sort_in)
    ieee = z3.fpToIEEEBV(z3.fpToFP(z3.RNE(), x, sort8))
    limit = z3.FPVal(MAXV[fmt] if f8.has_inf else 240.0, sort_in)
    _prove(z3.Implies(z3.And(z3.Not(z3.fpIsNaN(x)), z3.fpLEQ(z3.fpAbs(x), limit)),
                      z3.Extract(15, 8, out) == ieee))


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_symbolic_widening_is_exact(fmt):
    """For every fp8 pattern but NaNs (and e4m3's exponent 1111, which IEEE's format reads
    as inf/NaN), the symbolic f16 is z3's exact fp.to_fp of the IEEE reading."""
    a = z3.BitVec("a", 8)
    out = execute(f"cvt.rn.f16x2.{fmt}x2 %d, %a", {"%d": "b32", "%a": "b16"},
                  {"%a": [z3.Concat(a, z3.BitVecVal(0, 8))]}, "symbolic").outputs["%d"][0]
    f8 = FP8[fmt]
    x = z3.fpBVToFP(a, z3.FPSort(f8.ebits, f8.mbits + 1))
    ieee = z3.fpToIEEEBV(z3.fpToFP(z3.RNE(), x, z3.FPSort(5, 11)))
    ieee_part = z3.Not(z3.fpIsNaN(x)) if f8.has_inf else \
        z3.Not(z3.Or(z3.fpIsNaN(x), z3.fpIsInf(x)))
    _prove(z3.Implies(ieee_part, z3.Extract(31, 16, out) == ieee))
