"""Single-bit mma: `mma.sync.aligned.{m8n8k128,m16n8k128,m16n8k256}.row.col.s32.b1.b1.s32
.{xor,and}.popc d, a, b, c` (PTX ISA 9.7.14.5.14 mma; `.and` from sm_80, `.xor` from sm_75).

Arithmetic, exact: D[i][j] = C[i][j] + popc over k of (A[i][k] bitOp B[k][j]), the ISA's
"multiply" of two .b1 elements being bitOp (.xor or .and) and the sum the population count
of those bits; the popcount is at most K (256), and its addition to C is in 32-bit two's
complement (wrapping: the ISA's syntax gives the single-bit form no `.satfinite`, and keq
wraps as it does for the integer forms without it, mma_int.py; with K <= 256 only a C within
256 of MAX_INT32 can wrap). The solver sees this arithmetic (a swapped bit is refutable).

Layouts, PTX ISA 9.7.14.5.x "Matrix Fragments for mma.<shape>" (9.x manual: .m8n8k128
Figures 62-64; .m16n8k128 9.7.14.5.12, Figures 97-99; .m16n8k256 9.7.14.5.13, Figures
100-103), g = groupID = %laneid >> 2, t = threadID_in_group = %laneid % 4, element
i of a fragment (register 0's bit 0 first, 32 .b1 elements per .b32 register):

| shape | A: row, col of a_i | B: row, col of b_i | C/D |
|---|---|---|---|
| m8n8k128 (1, 1, 2 regs) | "row = groupID", "col = (threadID_in_group * 32) + i for ai where i = {0,..,31}" | "row = (threadID_in_group * 32) + i for bi where i = {0,..,31}", "col = groupID" | "row = groupID", "col = (threadID_in_group * 2) + i for ci where i = {0, 1}" |
| m16n8k128 (2, 1, 4) | "row = groupID for ai where i < 32, groupID + 8 for ai where i >= 32", "col = (threadID_in_group * 32) + (i & 0x1F) for ai where i = {0, ...,63}" | "row = (threadID_in_group * 32) + i for bi where i = {0,...,31}", "col = groupID" | "row = groupID for ci where i < 2, groupID + 8 for ci where i >= 2", "col = (threadID_in_group * 2) + (i & 0x1) for ci where i = {0, 1, 2, 3}" |
| m16n8k256 (4, 2, 4) | "row = groupID for ai where 0 <= i < 32 \\|\\| 64 <= i < 96, groupID + 8 otherwise", "col = (threadID_in_group * 32) + i for ai where i < 64, (threadID_in_group * 32) + (i & 0x1F) + 128 for ai where i >= 64" | "row = (threadID_in_group * 32) + (i & 0x1F) for bi where i < 32, (threadID_in_group * 32) + (i & 0x1F) + 128 for bi where i >= 32", "col = groupID" | as m16n8k128 |

m16n8k256's A column for 32 <= i < 64 (row g + 8) reads "(threadID_in_group * 32) + i" in
the ISA's text: columns 32t + 32 .. 32t + 63, so t = 3 would reach column 159 (which t = 0's
a96..a127 hold in row g + 8) and no lane would hold columns 0..31 of row g + 8. Only
`(i & 0x1F)` makes the layout a bijection (as m16n8k128 writes it, and the 4-bit m16n8k64
writes `(i & 0x7)` at the same place), and keq reads it so; `Layout` checks the bijection.

Each .b32 register of A is 32 consecutive columns of one row (its bit j at column 32q + j
for its word q), and each of B 32 consecutive rows of one column, in the same order. So keq
gathers whole words: A as an M x K/32 matrix of words, B as K/32 x N, with the formulas
above divided by 32 (register r of lane (g, t)):

| shape | A word r | B word r |
|---|---|---|
| m8n8k128 | (g, t) | (t, g) |
| m16n8k128 | (g + 8r, t) | (t, g) |
| m16n8k256 | (g + 8(r & 1), t + 4(r >= 2)) | (t + 4r, g) |

and D[i][j] = C[i][j] + sum over words q of popc(A[i][q] bitOp B[q][j]), which is the sum
over single bits above. tests/semantics/test_mma_b1.py checks it against the bit formulas.
"""

from __future__ import annotations

from semantics.ir.types import TYPES
from semantics.ops.bits import popcount
from semantics.ops.matrix import converged, vector_registers, warp_of
from semantics.ops.mma_int import sum32
from semantics.ops.mma_layout import Layout, operands

B32 = TYPES["b32"]
SHAPES = {"m8n8k128": (8, 128), "m16n8k128": (16, 128), "m16n8k256": (16, 256)}
BITOPS = ("xor", "and")


def _words(name: str, m: int, k_bits: int, a_place, b_place) -> Layout:
    """A layout over 32-bit words: K/32 words along K, one word per register."""
    lay = Layout((name, "b1"), m, 8, k_bits // 32, 32, 32, a_place, b_place)
    lay.a_inverse, lay.b_inverse, lay.c_inverse     # (each a bijection, checked once)
    return lay


LAYOUTS: dict[str, Layout] = {
    "m8n8k128": _words("m8n8k128", 8, 128,
                       lambda g, t, r: (g, t),
                       lambda g, t, r: (t, g)),
    "m16n8k128": _words("m16n8k128", 16, 128,
                        lambda g, t, r: (g + 8 * r, t),
                        lambda g, t, r: (t, g)),
    "m16n8k256": _words("m16n8k256", 16, 256,
                        lambda g, t, r: (g + 8 * (r & 1), t + 4 * (r >= 2)),
                        lambda g, t, r: (t + 4 * r, g)),
}


def popc_dot(d, row: list, col: list, c, bitop: str):
    """C + sum over the words of popc(row[q] bitOp col[q]), in 32 bits (wrapping)."""
    op = d.bxor if bitop == "xor" else d.band
    return d.add(sum32(d, [popcount(d, op(a, b, 32), 32) for a, b in zip(row, col)]), c, 32)


def mma_b1(x, lay: Layout, bitop: str) -> None:
    d = x.d
    n = lay.c_count
    dst = vector_registers(x, 0, n)
    args = operands(x, lay, B32)
    c = [x.read(e, B32) for e in vector_registers(x, 3, n)]
    converged(x, warp_of(x), 32, "matrix fragments")
    out = [popc_dot(d, row, col, c[i], bitop) for i, (row, col) in enumerate(args)]
    # (all read before any write: D may name C's or A's registers)
    for reg, v in zip(dst, out):
        x.write(reg, v, B32)


def b1_form(form) -> tuple[Layout, str] | None:
    """(layout, bitOp) of `mma.sync.aligned.<shape>.row.col.s32.b1.b1.s32.<bitOp>.popc`, else
    None. `.b1` is no keq type (no register holds one), so it is a modifier here: the type
    modifiers must read s32, b1, b1, s32 in order (the flag set forgets order and repeats)."""
    mods = form.mods
    shapes = [m for m in mods if m in SHAPES]
    ops = [m for m in mods if m in BITOPS]
    typed = [m for m in mods if m in ("s32", "b1")]
    if len(shapes) != 1 or len(ops) != 1 or mods.count("popc") != 1 or \
            typed != ["s32", "b1", "b1", "s32"] or \
            [m for m in mods if m in ("row", "col")] != ["row", "col"]:
        return None
    if [t.name for t in form.types] != ["s32", "s32"] or \
            (form.rounding, form.cmp, form.boolop, form.space, form.vec) != (None,) * 4 + (1,):
        return None
    if form.flags != {"sync", "aligned", shapes[0], "row", "col", "b1", ops[0], "popc"}:
        return None
    return LAYOUTS[shapes[0]], ops[0]
