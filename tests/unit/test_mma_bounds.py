"""`verifier.mma_bounds`: the range a tensor core's result may take, which refutations through
an `mma` rely on. It must contain the exact result and every datapath keq models (each
arch's emulator model), on ordinary and adversarial inputs (cancellation, mixed exponents,
subnormals), and leave free what it does not bound."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from semantics.tensor_core import mma_model
from verifier.mma_bounds import tensor_range

F16 = "mma.m16n8k16.row.col.f32.f16.f16.f32"


def _f16(x) -> int:
    return int(np.array([x], np.float16).view(np.uint16)[0])


def _f32(x) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])


def _val(bits: int, fmt: str) -> float:
    t, u = (np.float16, np.uint16) if fmt == "f16" else (np.float32, np.uint32)
    return float(np.array([bits], u).view(t)[0])


def _inside(span, bits: int) -> bool:
    lo, hi, fmt = span
    return _val(lo, fmt) <= _val(bits, fmt) <= _val(hi, fmt)


def _cases(rng, k: int):
    for _ in range(60):                                   # ordinary values
        yield rng.normal(size=k), rng.normal(size=k), rng.normal()
    for _ in range(30):                                   # mixed exponents, cancellation
        a = rng.normal(size=k) * 2.0 ** rng.integers(-14, 14, k)
        b = rng.normal(size=k) * 2.0 ** rng.integers(-14, 14, k)
        yield a, b, -float(np.dot(a.astype(np.float16).astype(np.float64),
                                  b.astype(np.float16).astype(np.float64)))
    tiny = 2.0 ** -14                                     # the smallest normal f16
    yield np.full(k, tiny), np.full(k, 2.0 ** -14), 0.0   # a result far below f32's normal range


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
@pytest.mark.parametrize("form,dt,ct", [(F16, "f32", "f32"),
                                        ("mma.m16n8k8.row.col.f32.f16.f16.f32", "f32", "f32"),
                                        ("mma.m16n8k16.row.col.f16.f16.f16.f16", "f16", "f16"),
                                        ("mma.m8n8k4.col.row.f32.f16.f16.f32", "f32", "f32"),
                                        ("mma.m8n8k4.row.row.f16.f16.f16.f16", "f16", "f16")])
def test_every_modelled_datapath_and_the_exact_sum_lie_in_the_range(arch, form, dt, ct):
    k = int(form.split(".")[1].split("k")[1])
    model = mma_model("f16", k, ct, dt, "f16", arch)
    rng = np.random.default_rng(7)
    c_bits = _f16 if ct == "f16" else _f32
    for a, b, c in _cases(rng, k):
        args = [_f16(x) for x in a] + [_f16(x) for x in b] + [c_bits(c)]
        span = tensor_range(form, args)
        if span is None:
            continue                                      # (past the finite range: free)
        got = int(model(*[np.array([x], np.uint64) for x in args])[0])
        assert _inside(span, got), (a, b, c, span, got)
        av = [Fraction(_val(x, "f16")) for x in args[:k]]
        bv = [Fraction(_val(x, "f16")) for x in args[k:2 * k]]
        exact = sum((x * y for x, y in zip(av, bv)), Fraction(_val(args[-1], ct)))
        lo, hi = (Fraction(_val(x, dt)) for x in span[:2])
        assert lo <= exact <= hi


def test_the_range_is_narrow_enough_to_tell_a_transposed_operand():
    # ones times 1..16 against the reversed column: the same sum, so no refutation there;
    # a column of 2s instead of 1s doubles it, far outside the range
    k = 16
    a = [_f16(1.0)] * k
    b = [_f16(float(j)) for j in range(1, k + 1)]
    lo, hi, _ = tensor_range(F16, a + b + [_f32(0.0)])
    assert _val(lo, "f32") <= 136.0 <= _val(hi, "f32") and _val(hi, "f32") < 136.01


@pytest.mark.parametrize("form,args", [
    ("mma.m16n8k8.row.col.f32.tf32.tf32.f32", [0] * 17),          # tf32: not bounded
    ("mma.m8n8k4.row.col.f64.f64.f64.f64", [0] * 9),              # f64: not bounded
    (F16, [0x7C00] + [0] * 32),                                   # an infinity in A
    (F16, [0x7E00] + [0] * 32),                                   # a NaN in A
    (F16, [0x0001] + [0x3C00] * 32),                              # a subnormal in A
    (F16, [0x3C00] * 32 + [0x00000001]),                          # a subnormal f32 C
    ("ex2.approx.f32", [0]),                                      # not a tensor core
])
def test_what_is_not_bounded_is_left_free(form, args):
    assert tensor_range(form, args) is None


def test_an_f16_result_past_the_format_is_left_free():
    k = 16
    big = [_f16(60000.0)] * k
    assert tensor_range("mma.m16n8k16.row.col.f16.f16.f16.f16", big + big + [0]) is None
