"""Warp-level matrix multiply-accumulate: `mma.sync.aligned.m16n8k16` and `.m16n8k8`,
`.row.col`, f16 or bf16 inputs, f32 accumulators (`.f32.f16.f16.f32`, `.f32.bf16.bf16.f32`).

What the PTX ISA specifies (section 9.7.14.5, "Matrix multiply-accumulate operation using
mma instruction": 9.7.14.5.7 "Matrix Fragments for mma.m16n8k8", 9.7.14.5.8 "Matrix
Fragments for mma.m16n8k16 with floating point type", 9.7.14.5.14 mma), with
groupID = %laneid >> 2 and threadID_in_group = %laneid % 4 (g and t below):
- A (16xK, .row): K/4 .f16x2 registers, elements a0.. low half first. k16: a_i is at row g
  for 0 <= i < 2 or 4 <= i < 6, else g + 8; column 2t + (i & 1), plus 8 for i >= 4. k8: a_i
  at row g for a0, a1, g + 8 for a2, a3; column 2t + (i & 1).
- B (Kx8, .col): K/8 .f16x2 registers. k16: b_i at row 2t + (i & 1), plus 8 for i >= 2,
  column g. k8: b_i at row 2t + i, column g.
- C and D (16x8, f32): four registers; c_i at row g for i < 2, else g + 8; column 2t + (i & 1).
- `.sync.aligned`: every thread of the warp executes the same mma (undefined otherwise).
- The ISA does not say how the products are summed or rounded. Each D[i][j] is therefore a
  deterministic function of row i of A, column j of B and C[i][j] that keq does not claim to
  know: symbolically an uninterpreted function per form (`Domain.tensor_fn`; two kernels that
  feed it the same values agree by congruence), concretely keq's model of sm_80/sm_89
  (semantics/tensor_core.py, docs/tensor-cores.md). Every use records an "unspecified"
  effect: an emulator run proves nothing about the GPU's bits through it.

So element (h, k) of A that lane (g, t) needs for its row g + 8h is at lane 4g + (k%8)/2, half
(k & 1) + 2h + 4(k >= 8) of its A registers; element k of B's column 2t + j is at lane
4(2t + j) + (k%8)/2, half (k & 1) + 2(k >= 8) of its B registers.

Every other mma (other shapes and types, .satfinite, f16 accumulators, integers, tf32, f64,
mma.sp) has no semantics here: the resolver returns None, and it is refused by name.
"""

from __future__ import annotations

from semantics.ir.types import TYPES
from semantics.ops import register
from semantics.ops.matrix import converged, pick, split_halves, vector_registers, warp_of
from semantics.tensor_core import mma_model

B32 = TYPES["b32"]
_SHAPES = {"m16n8k16": 16, "m16n8k8": 8}
_INPUTS = ("f16", "bf16")


def _a_halves(d, warp, a: list, k: int, h: int) -> list:
    """Per lane (g, t): row g + 8h of A, its K halves (16-bit), gathered from their lanes."""
    return [pick(d, warp, a, 16, ("mma.a", k, h, e),
                 lambda i, e=e: ((e & 1) + 2 * h + 4 * (e >= 8), 4 * (i // 4) + (e % 8) // 2))
            for e in range(k)]


def _b_halves(d, warp, b: list, k: int, j: int) -> list:
    """Per lane (g, t): column 2t + j of B, its K halves, gathered from their lanes."""
    return [pick(d, warp, b, 16, ("mma.b", k, j, e),
                 lambda i, e=e: ((e & 1) + 2 * (e >= 8), 4 * (2 * (i % 4) + j) + (e % 8) // 2))
            for e in range(k)]


def _mma(x) -> None:
    d = x.d
    k = next(_SHAPES[f] for f in x.form.flags if f in _SHAPES)
    fmt = x.form.types[1].name
    dst = vector_registers(x, 0, 4)
    a = split_halves(d, [x.read(e, B32) for e in vector_registers(x, 1, k // 4)])
    b = split_halves(d, [x.read(e, B32) for e in vector_registers(x, 2, k // 8)])
    c = [x.read(e, B32) for e in vector_registers(x, 3, 4)]
    warp = warp_of(x)
    converged(x, warp, 32, "matrix fragments")
    name = f"mma.m16n8k{k}.row.col.f32.{fmt}.{fmt}.f32"
    x.effect("unspecified", f"the f32 results of {name} (the PTX ISA does not say how a tensor "
                            f"core sums and rounds; keq models sm_80/sm_89)")
    rows = [_a_halves(d, warp, a, k, h) for h in (0, 1)]
    cols = [_b_halves(d, warp, b, k, j) for j in (0, 1)]
    model = mma_model(fmt, k)
    out = [d.tensor_fn(name, 32, rows[i >> 1] + cols[i & 1] + [c[i]], [16] * (2 * k) + [32],
                       model, x.choices) for i in range(4)]
    # (all four read before any write: D may name C's or A's registers)
    for reg, v in zip(dst, out):
        x.write(reg, v, B32)


def _supported(form) -> bool:
    """`.sync.aligned`, one of the shapes, `.row.col` and nothing else; types d, a, b, c =
    f32, T, T, f32 with T f16 or bf16."""
    shapes = form.flags & set(_SHAPES)
    types = [t.name for t in form.types]
    return len(shapes) == 1 and form.flags == {"sync", "aligned", "row", "col", *shapes} and \
        len(types) == 4 and types[0] == types[3] == "f32" and types[1] == types[2] and \
        types[1] in _INPUTS


@register("mma")
def _resolve_mma(form):
    return _mma if _supported(form) else None
