"""`mma.sync.aligned.{m8n8k16,m16n8k16,m16n8k32}.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32`
and `.{m8n8k32,m16n8k32,m16n8k64}... .{s4,u4}.{s4,u4}.s32`. Layouts: mma_layout.py.

Integer mma is exact (PTX ISA 9.7.14.5.14 mma, integer types): D = A * B + C, each element
of A and B sign- or zero-extended by its type, the products and their sum exact, and D the
sum with C in 32-bit two's complement (wrapping); with `.satfinite`, D is that exact value
clamped to [MIN_INT32, MAX_INT32]. It is written out here over the domain's primitives, so
both domains compute the same value and the solver sees the arithmetic (a swapped element or
a wrong sign extension is refutable, not an open function).

Widths: an element of e bits (8 or 4) is extended to 2e bits by its type and multiplied
there; the product fits (signed x signed: |p| <= 2^(2e-2); unsigned x unsigned: p < 2^(2e);
mixed: -2^(2e-1) < p < 2^(2e-1)) and is extended to 32 bits (sign-extended when either
factor is signed). The K products sum exactly in 32 bits (|sum| < 2^21 for every form), so
P = sum is exact, and D = P + C wraps only in the addition of C. `.satfinite`: that addition
overflows exactly when P and C have the same sign and D's sign differs; then D is MIN_INT32
if C is negative, else MAX_INT32.
"""

from __future__ import annotations

from semantics.ir.types import TYPES
from semantics.ops.matrix import converged, vector_registers, warp_of
from semantics.ops.mma_layout import Layout, operands

B32 = TYPES["b32"]
INT_MIN, INT_MAX = 0x80000000, 0x7FFFFFFF


def _product(d, a, b, e: int, a_signed: bool, b_signed: bool):
    """The exact product of an e-bit a and b as 32 bits."""
    w = 2 * e
    xa = d.sext(a, e, w) if a_signed else d.zext(a, e, w)
    xb = d.sext(b, e, w) if b_signed else d.zext(b, e, w)
    p = d.mul(xa, xb, w)
    return d.sext(p, w, 32) if (a_signed or b_signed) else d.zext(p, w, 32)


def sum32(d, terms: list):
    """The 32-bit sum of the terms, added pairwise (a balanced tree: shallow terms)."""
    while len(terms) > 1:
        pairs = [d.add(terms[i], terms[i + 1], 32) for i in range(0, len(terms) - 1, 2)]
        terms = pairs + ([terms[-1]] if len(terms) % 2 else [])
    return terms[0]


def _saturate(d, p, c, s):
    """s = p + c (wrapped): clamped to the s32 range where the addition overflowed."""
    zero = d.const(0, 32)
    p_neg, c_neg, s_neg = d.slt(p, zero, 32), d.slt(c, zero, 32), d.slt(s, zero, 32)
    overflow = d.pand(d.pnot(d.pxor(p_neg, c_neg)), d.pxor(s_neg, c_neg))
    bound = d.ite(c_neg, d.const(INT_MIN, 32), d.const(INT_MAX, 32), 32)
    return d.ite(overflow, bound, s, 32)


def dot_s32(d, row: list, col: list, c, e: int, a_signed: bool, b_signed: bool,
            satfinite: bool):
    """C + sum row[k] * col[k] in 32 bits, e-bit elements extended by their types, wrapped
    (or clamped where `.satfinite` and the addition of C overflows). `wmma` shares it."""
    p = sum32(d, [_product(d, a, b, e, a_signed, b_signed) for a, b in zip(row, col)])
    s = d.add(p, c, 32)
    return _saturate(d, p, c, s) if satfinite else s


def mma_int(x, lay: Layout) -> None:
    d = x.d
    _, at, bt, _ = x.form.types
    n = lay.c_count
    dst = vector_registers(x, 0, n)
    args = operands(x, lay, B32)
    c = [x.read(e, B32) for e in vector_registers(x, 3, n)]
    converged(x, warp_of(x), 32, "matrix fragments")
    out = [dot_s32(d, row, col, c[i], lay.elem_bits, at.is_signed, bt.is_signed,
                   x.form.has("satfinite")) for i, (row, col) in enumerate(args)]
    # (all read before any write: D may name C's or A's registers)
    for reg, v in zip(dst, out):
        x.write(reg, v, B32)
