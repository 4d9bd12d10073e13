"""Floating-point mma forms beyond f16/bf16 -> f32 (semantics/ops/mma_float.py): f16
accumulators (`.f16.f16.f16.f16`, m16n8k8 and m16n8k16), tf32 (`.f32.tf32.tf32.f32`, m16n8k4
and m16n8k8) and f64 (`.f64.f64.f64.f64`: m8n8k4, and m16n8k4, m16n8k8, m16n8k16 of sm_90),
over the ISA's layouts (tests/semantics/mma_forms.py). m8n8k4 with .f16 inputs:
test_mma_m8n8k4.py.

- Small integers are exact in every model of the datapath: D must be A @ B + C exactly.
- Random values: each element of D is keq's model (semantics/tensor_core.py) applied to row
  r of A, column c of B and C[r][c], picked by the ISA's layout here: a misplaced element
  changes the inputs of the model, so the layout is checked independently of the model.
- Hand-derived values pin the model: f16 rounding to nearest even, tf32's ignored bits and
  its k4 chaining, f64's chained fma in k order.
- Symbolically every D element is the form's uninterpreted function.
"""

from __future__ import annotations

import numpy as np
import pytest
import z3

from mma_forms import (Form, d_matrix, evaluate, fragments, in_bytes, kernel, out_bytes,
                       run_warps, symbolic_out)
from semantics.choices import FUNCTION_PREFIX
from semantics.machine import run_kernel
from semantics.machine.memory import UndefinedBehavior
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.tensor_core import dot, fma_chain

# (d and c of different types are refused: the ISA's ".dtype must be the same as .ctype")
F16_ACC = [Form(s, "f16", ("f16",) * 4) for s in ("m16n8k8", "m16n8k16")]
TF32 = [Form(s, "tf32", ("f32", "tf32", "tf32", "f32")) for s in ("m16n8k4", "m16n8k8")]
# m8n8k4 (sm_80) and the m16n8 shapes of sm_90 (PTX ISA 7.8)
F64 = [Form(s, "f64", ("f64",) * 4) for s in ("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16")]
NEW = F16_ACC + TF32 + F64
OLD = [Form(s, "f16", ("f32", t, t, "f32")) for s in ("m16n8k8", "m16n8k16")
       for t in ("f16", "bf16")]
NP = {"f16": (np.float16, np.uint16), "f32": (np.float32, np.uint32),
      "f64": (np.float64, np.uint64)}


def to_bits(m: np.ndarray, fmt: str) -> np.ndarray:
    """Values (exact in `fmt`, or rounded by numpy) as bit patterns (uint64)."""
    if fmt == "bf16":
        return (m.astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
    if fmt == "tf32":
        fmt = "f32"
    ft, ut = NP[fmt]
    return m.astype(ft).view(ut).astype(np.uint64)


def from_bits(m: np.ndarray, fmt: str) -> np.ndarray:
    ft, ut = NP[fmt]
    return m.astype(ut).view(ft).astype(np.float64)


def values(bits: np.ndarray, fmt: str) -> np.ndarray:
    """Input bit patterns as float64 values (tf32: its top 19 bits; bf16: an f32's top 16)."""
    if fmt == "tf32":
        return from_bits(bits & ~np.uint64(0x1FFF), "f32")
    if fmt == "bf16":
        return from_bits(bits << np.uint64(16), "f32")
    return from_bits(bits, fmt)


def _run(form: Form, problems: list, ctas: int = 1) -> list[np.ndarray]:
    outs, effects = run_warps(form, [fragments(form, *p) for p in problems], ctas)
    assert [e.kind for e in effects if e.kind != "unspecified"] == []
    assert any(e.kind == "unspecified" for e in effects)
    return [d_matrix(form, o) for o in outs]


@pytest.mark.parametrize("form", NEW, ids=str)
def test_small_integers_give_the_exact_product(form):
    """Two CTAs of two warps, a problem each: D = A @ B + C exactly (every value is a small
    integer: exact in f16, tf32, f64, and in every sum)."""
    rng = np.random.default_rng(sum(map(ord, str(form))))
    m, n, k = form.mnk
    _, at, _, ct = form.types
    mats = [(rng.integers(-4, 5, (m, k)), rng.integers(-4, 5, (k, n)),
             rng.integers(-64, 65, (m, n))) for _ in range(4)]
    probs = [(to_bits(a, at), to_bits(b, at), to_bits(c, ct)) for a, b, c in mats]
    for (a, b, c), got in zip(mats, _run(form, probs, ctas=2)):
        assert np.array_equal(from_bits(got, form.types[0]), (a @ b + c).astype(np.float64))


def _random(rng, fmt: str, shape, spread: int) -> np.ndarray:
    vals = rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread + 1, shape))
    bits = to_bits(vals, fmt)
    if fmt == "tf32":                   # garbage in the 13 bits the tensor core ignores
        bits |= rng.integers(0, 1 << 13, shape).astype(np.uint64)
    return bits


def model(form: Form, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """keq's model, element by element, from the matrices (not the fragments)."""
    dt, at, _, ct = form.types
    m, n, _ = form.mnk
    out = np.zeros((m, n), np.uint64)
    for r in range(m):
        for j in range(n):
            row, col = [int(v) for v in a[r]], [int(v) for v in b[:, j]]
            out[r, j] = fma_chain(row, col, int(c[r, j])) if at == "f64" else \
                dot(at, row, col, int(c[r, j]), ct, dt)
    return out


@pytest.mark.parametrize("form", NEW + OLD, ids=str)
def test_each_element_is_the_model_of_its_row_and_column(form):
    rng = np.random.default_rng(1 + sum(map(ord, str(form))))
    m, n, k = form.mnk
    dt, at, _, ct = form.types
    probs = [(_random(rng, at, (m, k), 4), _random(rng, at, (k, n), 4),
              _random(rng, ct, (m, n), 6)) for _ in range(2)]
    for (a, b, c), got in zip(probs, _run(form, probs)):
        assert np.array_equal(got, model(form, a, b, c))
        # and the model is close to the exact product (a sanity check of the model)
        exact = values(a, at) @ values(b, at) + from_bits(c, ct)
        tol = {"f16": 4e-3, "f32": 1e-5, "f64": 1e-14}[dt]
        assert np.allclose(from_bits(got, dt), exact, rtol=tol, atol=tol * 8)


# -- hand-derived values ----------------------------------------------------------------------
F16_ONE = 0x3C00


def test_f16_results_round_to_nearest_even():
    """k8, C = 0 (f16). Row 0: 1 + 2^-11 (half an f16 ulp at 1): a tie, to even: 1.0
    (0x3C00). Row 1: 1 + 3 * 2^-11 (1.5 ulp): to 1 + 2 ulp (0x3C02); toward zero it would be
    0x3C01. Row 2: 65504 (the largest f16) + 2 * 16: past the halfway point to 2^16, so
    infinity (0x7C00); toward zero it would stay 0x7BFF. Every term is kept exactly by the
    24-bit alignment, so only the final rounding decides."""
    form = Form("m16n8k8", "f16", ("f16", "f16", "f16", "f16"))
    a, b = np.zeros((16, 8)), np.zeros((8, 8))
    c = np.zeros((16, 8))
    a[0, :2], b[:2, 0] = [1, 2.0 ** -6], [1, 2.0 ** -5]
    a[1, :4], b[:4, 1] = [1] + [2.0 ** -6] * 3, [1] + [2.0 ** -5] * 3
    a[2, :3], b[:3, 2] = [65504, 16, 16], [1, 1, 1]
    (got,) = _run(form, [(to_bits(a, "f16"), to_bits(b, "f16"), to_bits(c, "f16"))])
    assert [int(got[0, 0]), int(got[1, 1]), int(got[2, 2])] == [0x3C00, 0x3C02, 0x7C00]


def test_f16_accumulator_special_values():
    nan, inf = 0x7E00, 0x7C00
    assert dot("f16", [nan] + [0] * 7, [F16_ONE] + [0] * 7, 0, "f16", "f16") == 0x7FFF
    assert dot("f16", [inf] + [0] * 7, [F16_ONE] + [0] * 7, 0xFC00, "f16", "f16") == 0x7FFF
    assert dot("f16", [inf] + [0] * 7, [0xBC00] + [0] * 7, 0, "f16", "f16") == 0xFC00
    assert dot("f16", [0x8000] * 8, [F16_ONE] * 8, 0x8000, "f16", "f16") == 0x8000


F32_ONE, F32_TINY = 0x3F800000, 0x33000000          # 1, 2^-25


def test_tf32_ignores_the_low_13_bits():
    """1.0 with its low 13 bits set (0x3F801FFF) is 1.0 to the tensor core: 1 * 1 = 1."""
    assert dot("tf32", [0x3F801FFF, 0, 0, 0], [0x3F801FFF, 0, 0, 0], 0) == F32_ONE
    # the bit just above them counts: (1 + 2^-10) ^ 2 = 1 + 2^-9 + 2^-20
    assert dot("tf32", [0x3F802000] + [0] * 3, [0x3F802000] + [0] * 3, 0) == 0x3F804008


def test_tf32_k8_chains_two_k4_steps():
    """Four products of 2^-25 * 1 (k 0..3), then 1 * 1 (k 4). Step 1 sums them exactly to
    2^-23; step 2 adds 1 with unit 2^-24: 1 + 2^-23 (0x3F800001). In one step of eight each
    2^-25 would truncate to 0 and give 1.0."""
    a = [F32_TINY] * 4 + [F32_ONE] + [0] * 3
    b = [F32_ONE] * 4 + [F32_ONE] + [0] * 3
    assert dot("tf32", a, b, 0) == 0x3F800001
    assert dot("tf32", a[4:] + a[:4], b[4:] + b[:4], 0) == F32_ONE
    form = TF32[1]
    am, bm, cm = np.zeros((16, 8), np.uint64), np.zeros((8, 8), np.uint64), \
        np.zeros((16, 8), np.uint64)
    am[5, :], bm[:, 3] = a, b
    (got,) = _run(form, [(am, bm, cm)])
    assert int(got[5, 3]) == 0x3F800001


def f64(x: float) -> int:
    return int(np.float64(x).view(np.uint64))


def test_f64_is_a_chain_of_fmas_in_k_order():
    """Products 2^53, 1, -2^53, 0 with C = 0: fma(2^53) = 2^53; + 1 is a tie between 2^53
    and 2^53 + 2, to even: 2^53; - 2^53: +0. The exact sum is 1. And one fma does not round
    its product: (1 + 2^-52)(1 - 2^-52) - 1 = -2^-104 (a product rounded first gives 0)."""
    a = [f64(2.0 ** 53), f64(1), f64(-(2.0 ** 53)), 0]
    b = [f64(1)] * 4
    assert fma_chain(a, b, 0) == 0
    assert fma_chain([a[0], a[2], a[1], 0], b, 0) == f64(1)
    e = 2.0 ** -52
    assert fma_chain([f64(1 + e), 0, 0, 0], [f64(1 - e), 0, 0, 0], f64(-1)) == f64(-(2.0 ** -104))
    form = F64[0]
    am, bm, cm = np.zeros((8, 4), np.uint64), np.zeros((4, 8), np.uint64), \
        np.zeros((8, 8), np.uint64)
    am[6, :], am[7, :], bm[:, 1] = a, [a[0], a[2], a[1], 0], b
    (got,) = _run(form, [(am, bm, cm)])
    assert (int(got[6, 1]), int(got[7, 1])) == (0, f64(1))


def test_f64_special_values():
    nan = 0x7FFFFFFFFFFFFFFF
    inf = f64(np.inf)
    assert fma_chain([inf, 0, 0, 0], [0, 0, 0, 0], 0) == nan           # inf * 0
    assert fma_chain([f64(1e300), 0, 0, 0], [f64(1e300), 0, 0, 0], f64(-np.inf)) == f64(-np.inf)
    minus0 = f64(-0.0)
    assert fma_chain([minus0] * 4, [f64(1)] * 4, minus0) == minus0      # -0 + -0
    assert fma_chain([minus0, 0, 0, 0], [f64(1), 0, 0, 0], minus0) == 0  # then + (+0)
    assert fma_chain([inf, 0, 0, 0], [f64(1), 0, 0, 0], f64(-np.inf)) == nan   # inf - inf


# -- the symbolic domain ----------------------------------------------------------------------
def _uf_apps(t, found: set) -> set:
    if z3.is_app(t):
        name = t.decl().name()
        if name.startswith(FUNCTION_PREFIX):
            found.add((name, tuple(c.sort().size() for c in t.children()), t.sort().size()))
        for ch in t.children():
            _uf_apps(ch, found)
    return found


@pytest.mark.parametrize("form", NEW, ids=str)
def test_symbolic_results_are_the_forms_uninterpreted_function(form):
    words = 32 * in_bytes(form) // 4
    xs = [z3.BitVec(f"in[{i}]", 32) for i in range(words)]
    launch = run_symbolic(kernel(form), (1, 1, 1), (32, 1, 1),
                          [SymBuffer(32, tuple(xs)), SymBuffer(32, (0,) * (8 * out_bytes(form)))])
    dt, at, _, ct = form.types
    k = form.mnk[2]
    ebits = {"f16": 16, "tf32": 32, "f64": 64}[at]
    cbits, dbits = ({"f16": 16, "f32": 32, "f64": 64}[t] for t in (ct, dt))
    name = f"{FUNCTION_PREFIX}mma.{form.shape}.row.col.{dt}.{at}.{at}.{ct}"
    found: set = set()
    for t in launch.buffers["out"][:32 * out_bytes(form) // 4]:
        _uf_apps(t, found)
    assert found == {(name, (ebits,) * (2 * k) + (cbits,), dbits)}
    assert any(e.kind == "unspecified" for e in launch.effects)


def test_f64_mma_by_part_of_a_warp_is_undefined():
    form = F64[0]
    k = kernel(form, guard="and.b32 %r5, %r1, 31;\nsetp.lt.u32 %p1, %r5, 16;\n@%p1 ")
    with pytest.raises(UndefinedBehavior, match="another thread of the warp"):
        run_kernel(k, None, 1, 32, [np.zeros(8 * in_bytes(form), np.uint32),
                                    np.zeros(8 * out_bytes(form), np.uint32)])


def _model_of(name: str, args: list[int]) -> int:
    """keq's model of a function `mma.<shape>.<layouts>.<d>.<a>.<b>.<c>` at `args`."""
    dt, at, _, ct = name.split(".")[-4:]
    k = (len(args) - 1) // 2
    if at == "f64":
        return fma_chain(args[:k], args[k:2 * k], args[2 * k])
    return dot(at, args[:k], args[k:2 * k], args[2 * k], ct, dt)


@pytest.mark.parametrize("form", F64 + TF32 + F16_ACC, ids=str)
def test_symbolic_terms_with_the_model_are_the_emulators_values(form):
    """The symbolic domain gathers the same row and column as the emulator for every
    element: its terms, each function application evaluated by keq's model, are the
    emulator's output bits."""
    rng = np.random.default_rng(3 + sum(map(ord, str(form))))
    m, n, k = form.mnk
    _, at, _, ct = form.types
    prob = (_random(rng, at, (m, k), 4), _random(rng, at, (k, n), 4), _random(rng, ct, (m, n), 6))
    words = fragments(form, *prob)
    (out,), _ = run_warps(form, [words])
    xs, terms, _ = symbolic_out(form)
    assert evaluate(terms, xs, words, _model_of) == out.ravel().tolist()
