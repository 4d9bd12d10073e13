"""fp8 mma (`mma.sync.aligned.m16n8k32.row.col.{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}.{f32,f16}`,
sm_89+), over the ISA's 8-bit m16n8k32 layout (tests/semantics/mma_forms.py, family "f8"):
small values whose products and sums are exact give A @ B + C exactly in every model of the
datapath, with f32 or f16 accumulators; e4m3's encoding (no infinities, S.1111.111 the only
NaN, 1111.xxx otherwise normal up to 448) and e5m2's (IEEE-like, with infinities) decoded by
hand-derived cases; symbolically every element is the form's uninterpreted function."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import z3

from mma_forms import Form, d_matrix, fragments, kernel, run_warps
from semantics.choices import FUNCTION_PREFIX
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.tensor_core import decode, dot

FORMS = [Form("m16n8k32", "f8", ("f32", a, b, "f32"))
         for a, b in itertools.product(("e4m3", "e5m2"), repeat=2)]
# with f16 accumulators: d and c both .f16 (ptxas 13 accepts no mix)
FORMS_F16 = [Form("m16n8k32", "f8", ("f16", a, b, "f16"))
             for a, b in itertools.product(("e4m3", "e5m2"), repeat=2)]


def e4m3(v: float) -> int:
    """The e4m3 pattern of an exactly representable value."""
    if v == 0:
        return 0x80 if np.signbit(v) else 0
    neg, v = v < 0, abs(v)
    e = int(np.floor(np.log2(v)))
    if e < -6:                                   # subnormal: v = f * 2^-9
        return (neg << 7) | int(v * 2 ** 9)
    f = v / 2.0 ** e - 1
    assert (f * 8).is_integer(), v
    return (neg << 7) | ((e + 7) << 3) | int(f * 8)


def e5m2(v: float) -> int:
    """The e5m2 pattern of an exactly representable value: the top byte of its f16."""
    return int(np.array([v], np.float16).view(np.uint16)[0] >> 8)


ENCODE = {"e4m3": e4m3, "e5m2": e5m2}


@pytest.mark.parametrize("form", FORMS + FORMS_F16, ids=str)
def test_small_values_give_the_exact_product_over_the_layout(form):
    acc = np.float16 if form.types[3] == "f16" else np.float32
    bits = np.uint16 if acc is np.float16 else np.uint32
    rng = np.random.default_rng(5)
    vals = np.array([0.0, 0.5, 1.0, 1.5, 2.0, -1.0, -2.0, 3.0, 0.25, -0.75])
    a = rng.choice(vals, (16, 32))
    b = rng.choice(vals, (32, 8))
    c = rng.integers(-8, 8, (16, 8)).astype(acc)
    abits = np.vectorize(ENCODE[form.types[1]])(a).astype(np.uint64)
    bbits = np.vectorize(ENCODE[form.types[2]])(b).astype(np.uint64)
    cbits = c.view(bits).astype(np.uint64)
    (out,), effects = run_warps(form, [fragments(form, abits, bbits, cbits)])
    got = d_matrix(form, out).astype(bits).view(acc)
    assert got.tolist() == (a @ b + c).astype(acc).tolist()
    assert any(e.kind == "unspecified" for e in effects)


@pytest.mark.parametrize("bits, want", [
    (0x7E, (False, 14, 5)),          # e4m3 1111.110: 1.75 * 2^8 = 448, a normal number
    (0x7F, "nan"), (0xFF, "nan"),    # S.1111.111: the only NaNs
    (0x01, (False, 1, -9)),          # the smallest subnormal, 2^-9
    (0x38, (False, 8, -3)),          # 1.0
])
def test_e4m3_has_no_infinities(bits, want):
    assert decode("e4m3", bits) == want


def test_e5m2_is_ieee_like():
    assert decode("e5m2", 0x7C) == "+inf" and decode("e5m2", 0xFC) == "-inf"
    assert decode("e5m2", 0x7D) == "nan"
    assert decode("e5m2", e5m2(1.5)) == (False, 6, -2)
    # inf * 0 is NaN; a NaN input gives the canonical NaN
    assert dot("e5m2", [0x7C] + [0] * 31, [0] * 32, 0) == 0x7FFFFFFF
    assert dot("e4m3", [0x7F] + [0] * 31, [e4m3(1.0)] * 32, 0) == 0x7FFFFFFF


def test_mixed_inputs_decode_each_operand_by_its_own_type():
    one_e4, one_e5 = e4m3(1.0), e5m2(1.0)
    assert one_e4 != one_e5
    total = dot("e4m3", [one_e4] * 32, [one_e5] * 32, 0, b_fmt="e5m2")
    assert np.uint32(total).view(np.float32) == 32.0


@pytest.mark.parametrize("form", FORMS[:2], ids=str)
def test_symbolically_each_element_is_the_forms_function(form):
    words = [z3.BitVec(f"w{i}", 32) for i in range(32 * 10)]
    launch = run_symbolic(kernel(form), (1, 1, 1), (32, 1, 1),
                          [SymBuffer(32, tuple(words)), SymBuffer(32, (0,) * 128)])
    name = f"{FUNCTION_PREFIX}mma.m16n8k32.row.col.f32.{form.types[1]}.{form.types[2]}.f32"
    for t in launch.buffers["out"]:
        assert z3.is_app(t) and t.decl().name() == name and t.num_args() == 65


def test_f16_accumulation_rounds_the_last_step_to_nearest_even():
    # 2048 + 1 + 1 in f16: the k16 steps give 2049 each time in f32 (exact), and the last
    # step's f32 sum 2050 is an f16 value; 2048 + 1 alone (2049) rounds to even: 2048.
    one = e4m3(1.0)
    c = int(np.array([2048.0], np.float16).view(np.uint16)[0])
    two = dot("e4m3", [one, one] + [0] * 30, [one] * 32, c, "f16", "f16")
    single = dot("e4m3", [one] + [0] * 31, [one] * 32, c, "f16", "f16")
    assert np.uint16(two).view(np.float16) == 2050.0
    assert np.uint16(single).view(np.float16) == 2048.0


def test_symbolically_an_f16_accumulated_element_is_its_forms_function():
    form = FORMS_F16[0]
    words = [z3.BitVec(f"w{i}", 32) for i in range(32 * 8)]
    launch = run_symbolic(kernel(form), (1, 1, 1), (32, 1, 1),
                          [SymBuffer(32, tuple(words)), SymBuffer(32, (0,) * 64)])
    name = f"{FUNCTION_PREFIX}mma.m16n8k32.row.col.f16.e4m3.e4m3.f16"
    apps = [t for t in launch.buffers["out"] if z3.is_app(t)]
    assert apps and all(name in str(t) for t in apps)
