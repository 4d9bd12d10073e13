"""`mma.sync.aligned.m8n8k4.{row,col}.{row,col}.{f16,f32}.f16.f16.{f16,f32}` (d and c alike):
four 8x8x4 products per warp, over a numpy model of the PTX ISA's quad-pair layouts written
here from 9.7.14.5.1 "Matrix Fragments for mma.m8n8k4 with .f16 floating point type"
(independent of semantics/ops/mma_m8n8k4.py):

- product p: lanes 4p..4p+3 (low group) and 16+4p..16+4p+3 (high group);
- A .row: row %laneid % 4 (+ 4 in the high group), col i; A .col: row i (+ 4), col %laneid % 4;
- B .row: row %laneid % 4, col i (+ 4); B .col: row i, col %laneid % 4 (+ 4);
- C/D .f16: row %laneid % 4 (+ 4), col i (i < 8); C/D .f32: row X (+ 4) with
  X = (%laneid & 1) + (i & 2), col (i & 4) + (%laneid & 2) + (i & 1).

Small integers give A @ B + C exactly per product; random values give, element by element,
keq's model of the row and column the layout names; the symbolic terms, evaluated with the
model, are the emulator's values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from mma_forms import Form, evaluate, kernel, run_warps, symbolic_out
from semantics.machine import run_kernel
from semantics.machine.memory import UndefinedBehavior
from semantics.tensor_core import dot

LANE = np.arange(32)
HI = np.where(LANE < 16, 0, 4)
PROBLEM = (LANE >> 2) & 3


@dataclass(frozen=True)
class QuadForm(Form):
    """An m8n8k4 .f16 form for mma_forms.kernel: its layouts, four problems per warp."""

    alayout: str = "row"
    blayout: str = "col"

    def n_regs(self, which: str) -> int:
        if which in "ab":
            return 2                       # four .f16 in two .f16x2
        return 4 if self.types[0 if which == "d" else 3] == "f16" else 8

    @property
    def line_name(self) -> str:
        return f"mma.sync.aligned.m8n8k4.{self.alayout}.{self.blayout}." + ".".join(self.types)


FORMS = [QuadForm("m8n8k4", "f16", (acc, "f16", "f16", acc), alayout=al, blayout=bl)
         for al in ("row", "col") for bl in ("row", "col") for acc in ("f16", "f32")]


def a_place(form: QuadForm, i: int):
    if form.alayout == "row":
        return LANE % 4 + HI, np.full(32, i)
    return i % 4 + HI, LANE % 4


def b_place(form: QuadForm, i: int):
    if form.blayout == "row":
        return LANE % 4, i + HI
    return np.full(32, i), LANE % 4 + HI


def c_place(acc: str, i: int):
    if acc == "f16":
        return LANE % 4 + HI, np.full(32, i)
    return (LANE & 1) + (i & 2) + HI, (i & 4) + (LANE & 2) + (i & 1)


def _f16(m: np.ndarray) -> np.ndarray:
    return m.astype(np.float16).view(np.uint16).astype(np.uint64)


def _pack16(elems: list[np.ndarray]) -> list[np.ndarray]:
    return [elems[2 * r] | elems[2 * r + 1] << np.uint64(16) for r in range(len(elems) // 2)]


def fragments(form: QuadForm, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The 32 lanes' input words from bit patterns: a (4, 8, 4), b (4, 4, 8) (f16), c (4, 8,
    8) in C's format; lane L holds problem PROBLEM[L]'s fragments."""
    regs = _pack16([a[(PROBLEM, *a_place(form, i))] for i in range(4)])
    regs += _pack16([b[(PROBLEM, *b_place(form, i))] for i in range(4)])
    cs = [c[(PROBLEM, *c_place(form.types[3], i))] for i in range(8)]
    regs += _pack16(cs) if form.types[3] == "f16" else cs
    return np.stack(regs, axis=1).astype(np.uint32)


def d_matrices(form: QuadForm, out: np.ndarray) -> np.ndarray:
    """The four 8x8 D matrices (bit patterns) from the 32 lanes' output words."""
    words = out.astype(np.uint64).reshape(32, -1)
    if form.types[0] == "f16":
        elems = [h for r in range(4) for h in (words[:, r] & np.uint64(0xFFFF),
                                                words[:, r] >> np.uint64(16))]
    else:
        elems = [words[:, r] for r in range(8)]
    d = np.zeros((4, 8, 8), np.uint64)
    for i in range(8):
        d[(PROBLEM, *c_place(form.types[0], i))] = elems[i]
    return d


def _c_bits(c: np.ndarray, acc: str) -> np.ndarray:
    return _f16(c) if acc == "f16" else c.astype(np.float32).view(np.uint32).astype(np.uint64)


def _values(bits: np.ndarray, fmt: str) -> np.ndarray:
    t = (np.float16, np.uint16) if fmt == "f16" else (np.float32, np.uint32)
    return bits.astype(t[1]).view(t[0]).astype(np.float64)


def _run(form: QuadForm, probs: list, ctas: int = 1) -> list[np.ndarray]:
    outs, effects = run_warps(form, [fragments(form, *p) for p in probs], ctas)
    assert [e.kind for e in effects if e.kind != "unspecified"] == []
    assert any(e.kind == "unspecified" for e in effects)
    return [d_matrices(form, o) for o in outs]


@pytest.mark.parametrize("form", FORMS, ids=str)
def test_small_integers_give_the_four_exact_products(form):
    """Two CTAs of two warps, four products each: D = A @ B + C exactly (small integers
    are exact in f16 and in every sum)."""
    rng = np.random.default_rng(sum(map(ord, str(form))))
    acc = form.types[3]
    mats = [(rng.integers(-4, 5, (4, 8, 4)), rng.integers(-4, 5, (4, 4, 8)),
             rng.integers(-64, 65, (4, 8, 8))) for _ in range(4)]
    probs = [(_f16(a), _f16(b), _c_bits(c, acc)) for a, b, c in mats]
    for (a, b, c), got in zip(mats, _run(form, probs, ctas=2)):
        assert np.array_equal(_values(got, form.types[0]), (a @ b + c).astype(np.float64))


def _random(rng, shape, fmt: str) -> np.ndarray:
    vals = rng.standard_normal(shape) * np.exp2(rng.integers(-4, 5, shape))
    return _c_bits(vals, fmt) if fmt != "f16" else _f16(vals)


@pytest.mark.parametrize("form", FORMS, ids=str)
def test_each_element_is_the_model_of_its_row_and_column(form):
    rng = np.random.default_rng(1 + sum(map(ord, str(form))))
    dt, _, _, ct = form.types
    a, b, c = _random(rng, (4, 8, 4), "f16"), _random(rng, (4, 4, 8), "f16"), \
        _random(rng, (4, 8, 8), ct)
    (got,) = _run(form, [(a, b, c)])
    for p in range(4):
        for r in range(8):
            for j in range(8):
                want = dot("f16", [int(v) for v in a[p, r]], [int(v) for v in b[p, :, j]],
                           int(c[p, r, j]), ct, dt)
                assert int(got[p, r, j]) == want, (p, r, j)
    exact = np.einsum("prk,pkj->prj", _values(a, "f16"), _values(b, "f16")) + _values(c, ct)
    tol = 4e-3 if dt == "f16" else 1e-5
    assert np.allclose(_values(got, dt), exact, rtol=tol, atol=tol * 8)


def _model_of(name: str, args: list[int]) -> int:
    dt, at, _, ct = name.split(".")[-4:]
    return dot(at, args[:4], args[4:8], args[8], ct, dt)


@pytest.mark.parametrize("form", FORMS[::3] + [FORMS[5]], ids=str)
def test_symbolic_terms_with_the_model_are_the_emulators_values(form):
    rng = np.random.default_rng(5)
    ct = form.types[3]
    words = fragments(form, _random(rng, (4, 8, 4), "f16"), _random(rng, (4, 4, 8), "f16"),
                      _random(rng, (4, 8, 8), ct))
    (out,), _ = run_warps(form, [words])
    xs, terms, effects = symbolic_out(form)
    names: set = set()
    got = evaluate(terms, xs, words, lambda name, args: names.add(name) or _model_of(name, args))
    assert got == out.ravel().tolist()
    # one function per form, named with its layouts
    assert names == {f"mma.m8n8k4.{form.alayout}.{form.blayout}." + ".".join(form.types)}
    assert any(e.kind == "unspecified" for e in effects)


def test_the_layouts_are_not_interchangeable():
    """The same registers under .row.col and .col.row give different products (a layout read
    as another would be caught)."""
    rng = np.random.default_rng(9)
    words = fragments(FORMS[3], _random(rng, (4, 8, 4), "f16"), _random(rng, (4, 4, 8), "f16"),
                      _random(rng, (4, 8, 8), "f32"))
    outs = [run_warps(f, [words])[0][0] for f in (FORMS[3], FORMS[5])]
    assert FORMS[3].alayout != FORMS[5].alayout and not np.array_equal(*outs)


def test_m8n8k4_by_part_of_a_warp_is_undefined():
    form = FORMS[0]
    k = kernel(form, guard="and.b32 %r5, %r1, 31;\nsetp.lt.u32 %p1, %r5, 16;\n@%p1 ")
    with pytest.raises(UndefinedBehavior, match="another thread of the warp"):
        run_kernel(k, None, 1, 32, [np.zeros(32 * 8, np.uint32), np.zeros(32 * 4, np.uint32)])
