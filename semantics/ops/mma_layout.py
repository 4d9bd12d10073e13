"""The fragment layouts of `mma.sync.aligned ... .row.col` (which lane holds which element of
A, B, C and D), copied from the PTX ISA's formulas, and the gathering of a lane's A row and B
column from them. Used by semantics/ops/mma_float.py and mma_int.py.

PTX ISA section 9.7.14.5 "Matrix multiply-accumulate operation using mma instruction"
(numbered 9.7.14.5.x in the 8.x/9.x manuals), subsections "Matrix Fragments for mma.<shape>",
with g = groupID = %laneid >> 2 and t = threadID_in_group = %laneid % 4, and element i of a
fragment (elements low to high: register 0's low element first):

| layout | A (row, col) of a_i | B (row, col) of b_i |
|---|---|---|
| m16n8k8 f16/bf16 (2 regs, 1 reg) | g + 8(i >= 2), 2t + (i & 1) | 2t + i, g |
| m16n8k16 f16/bf16 (4, 2) | g + 8 for i in {2,3,6,7} else g, 2t + (i & 1) + 8(i >= 4) | 2t + (i & 1) + 8(i >= 2), g |
| m16n8k4 tf32 (2, 1) | g + 8i, t | t, g |
| m16n8k8 tf32 (4, 2) | g + 8(i & 1), t + 4(i >= 2) | t + 4i, g |
| m8n8k4 f64 (1, 1) | g, t | t, g |
| m8n8k16 s8/u8 (1, 1) | g, 4t + i | 4t + i, g |
| m16n8k16 s8/u8 (2, 1) | g + 8(i >= 4), 4t + (i & 3) | 4t + i, g |
| m16n8k32 s8/u8 (4, 2) | g + 8 for i in 4..7, 12..15 else g, 4t + (i & 3) + 16(i >= 8) | 4t + (i & 3) + 16(i >= 4), g |
| m8n8k32 s4/u4 (1, 1) | g, 8t + i | 8t + i, g |
| m16n8k32 s4/u4 (2, 1) | g + 8(i >= 8), 8t + (i & 7) | 8t + i, g |
| m16n8k64 s4/u4 (4, 2) | g + 8 for i in 8..15, 24..31 else g, 8t + (i & 7) + 32(i >= 16) | 8t + (i & 7) + 32(i >= 8), g |

C and D, every form here: c_i at row g + 8(i >= 2), column 2t + (i & 1) (four elements for
the m16 shapes, two (c0, c1) for the m8 shapes).

A lane's output c_i needs row g + 8(i >> 1) of A and column 2t + (i & 1) of B: element k of
each is found by inverting the table (each (row, col) of A and B is held by exactly one lane
and element; checked when a layout is built), and moved with `pick` (one gather per element).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from semantics.ops.matrix import pick, vector_registers, warp_of

Place = Callable[[int, int, int], tuple[int, int]]      # (g, t, i) -> (row, col)


@dataclass(frozen=True)
class Layout:
    """One form family's fragments: M x K A in `a_regs` registers, K x N B in `b_regs`, each
    register of `reg_bits` holding elements of `elem_bits`, low element first."""

    name: tuple[str, str]
    m: int
    n: int
    k: int
    elem_bits: int
    reg_bits: int
    a_place: Place
    b_place: Place

    @property
    def per_reg(self) -> int:
        return self.reg_bits // self.elem_bits

    @property
    def a_regs(self) -> int:
        return self.m * self.k // 32 // self.per_reg

    @property
    def b_regs(self) -> int:
        return self.k * self.n // 32 // self.per_reg

    @property
    def c_count(self) -> int:
        return self.m * self.n // 32

    @cached_property
    def a_inverse(self) -> dict[tuple[int, int], tuple[int, int]]:
        """(row, col) of A -> (element index, lane) holding it."""
        return _inverse(self.a_place, self.m * self.k // 32, (self.m, self.k), f"{self.name} A")

    @cached_property
    def b_inverse(self) -> dict[tuple[int, int], tuple[int, int]]:
        return _inverse(self.b_place, self.k * self.n // 32, (self.k, self.n), f"{self.name} B")


def _inverse(place: Place, count: int, shape: tuple[int, int], what: str) -> dict:
    inv: dict[tuple[int, int], tuple[int, int]] = {}
    for lane in range(32):
        for i in range(count):
            rc = place(lane >> 2, lane % 4, i)
            if rc in inv or not (0 <= rc[0] < shape[0] and 0 <= rc[1] < shape[1]):
                raise AssertionError(f"{what}: element {i} of lane {lane} at {rc}")
            inv[rc] = (i, lane)
    assert len(inv) == shape[0] * shape[1], what
    return inv


def _lay(name, m, n, k, elem_bits, a_place, b_place, reg_bits=32) -> Layout:
    return Layout(name, m, n, k, elem_bits, reg_bits, a_place, b_place)


# (shape, family) -> layout; family: "f16" (f16 and bf16), "tf32", "f64", "i8", "i4", "f8"
# (e4m3/e5m2: the ISA's m16n8k32 figure for 8-bit types covers .s8/.u8 and .e4m3/.e5m2 alike)
LAYOUTS: dict[tuple[str, str], Layout] = {l.name: l for l in [
    _lay(("m16n8k8", "f16"), 16, 8, 8, 16,
         lambda g, t, i: (g + 8 * (i >= 2), 2 * t + (i & 1)),
         lambda g, t, i: (2 * t + i, g)),
    _lay(("m16n8k16", "f16"), 16, 8, 16, 16,
         lambda g, t, i: (g + 8 * (i in (2, 3, 6, 7)), 2 * t + (i & 1) + 8 * (i >= 4)),
         lambda g, t, i: (2 * t + (i & 1) + 8 * (i >= 2), g)),
    _lay(("m16n8k4", "tf32"), 16, 8, 4, 32,
         lambda g, t, i: (g + 8 * i, t),
         lambda g, t, i: (t, g)),
    _lay(("m16n8k8", "tf32"), 16, 8, 8, 32,
         lambda g, t, i: (g + 8 * (i & 1), t + 4 * (i >= 2)),
         lambda g, t, i: (t + 4 * i, g)),
    _lay(("m8n8k4", "f64"), 8, 8, 4, 64,
         lambda g, t, i: (g, t),
         lambda g, t, i: (t, g), reg_bits=64),
    _lay(("m8n8k16", "i8"), 8, 8, 16, 8,
         lambda g, t, i: (g, 4 * t + i),
         lambda g, t, i: (4 * t + i, g)),
    _lay(("m16n8k16", "i8"), 16, 8, 16, 8,
         lambda g, t, i: (g + 8 * (i >= 4), 4 * t + (i & 3)),
         lambda g, t, i: (4 * t + i, g)),
    _lay(("m16n8k32", "i8"), 16, 8, 32, 8,
         lambda g, t, i: (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >= 8)),
         lambda g, t, i: (4 * t + (i & 3) + 16 * (i >= 4), g)),
    _lay(("m16n8k32", "f8"), 16, 8, 32, 8,
         lambda g, t, i: (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >= 8)),
         lambda g, t, i: (4 * t + (i & 3) + 16 * (i >= 4), g)),
    _lay(("m8n8k32", "i4"), 8, 8, 32, 4,
         lambda g, t, i: (g, 8 * t + i),
         lambda g, t, i: (8 * t + i, g)),
    _lay(("m16n8k32", "i4"), 16, 8, 32, 4,
         lambda g, t, i: (g + 8 * (i >= 8), 8 * t + (i & 7)),
         lambda g, t, i: (8 * t + i, g)),
    _lay(("m16n8k64", "i4"), 16, 8, 64, 4,
         lambda g, t, i: (g + 8 * ((i >> 3) & 1), 8 * t + (i & 7) + 32 * (i >= 16)),
         lambda g, t, i: (8 * t + (i & 7) + 32 * (i >= 8), g)),
]}


def elements(d, words: list, lay: Layout) -> list:
    """Registers as their elements, low to high: [w0.e0, w0.e1, ..., w1.e0, ...]."""
    eb, rb = lay.elem_bits, lay.reg_bits
    if eb == rb:
        return list(words)
    return [d.extract(v, lo + eb - 1, lo, rb) for v in words for lo in range(0, rb, eb)]


def a_row(d, warp, a: list, lay: Layout, h: int) -> list:
    """Per lane (g, t): row g + 8h of A, its K elements, gathered from the lanes holding them."""
    inv = lay.a_inverse
    return [pick(d, warp, a, lay.elem_bits, ("mma.a", lay.name, h, k),
                 lambda lane, k=k: inv[((lane >> 2) + 8 * h, k)]) for k in range(lay.k)]


def b_col(d, warp, b: list, lay: Layout, j: int) -> list:
    """Per lane (g, t): column 2t + j of B, its K elements."""
    inv = lay.b_inverse
    return [pick(d, warp, b, lay.elem_bits, ("mma.b", lay.name, j, k),
                 lambda lane, k=k: inv[(k, 2 * (lane % 4) + j)]) for k in range(lay.k)]


def operands(x, lay: Layout, reg_type) -> tuple[list, list]:
    """(rows, cols): rows[h] is each lane's row g + 8h of A (h < M/8), cols[j] its column
    2t + j of B, read from operands 1 and 2. Output c_i takes rows[i >> 1] and cols[i & 1]."""
    d = x.d
    a = elements(d, [x.read(e, reg_type) for e in vector_registers(x, 1, lay.a_regs)], lay)
    b = elements(d, [x.read(e, reg_type) for e in vector_registers(x, 2, lay.b_regs)], lay)
    warp = warp_of(x)
    rows = [a_row(d, warp, a, lay, h) for h in range(lay.m // 8)]
    cols = [b_col(d, warp, b, lay, j) for j in (0, 1)]
    return rows, cols
