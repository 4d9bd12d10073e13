"""The fragment layouts of `mma.sync.aligned` (which lane holds which element of A, B, C and
D), copied from the PTX ISA's formulas, and the gathering of a lane's A rows and B columns
from them. Used by semantics/ops/mma_float.py and mma_int.py; the quad-pair layouts of
m8n8k4 with .f16 inputs are built in mma_m8n8k4.py on the same `Layout`.

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
| m16n8k4 f64 (2, 1; sm_90) | g + 8i, t | t, g |
| m16n8k8 f64 (4, 2; sm_90) | g + 8(i & 1), t + 4(i >= 2) | t + 4i, g |
| m16n8k16 f64 (8, 4; sm_90) | g + 8(i & 1), 2i + t (i even) or 2i - 2 + t (i odd) | t + 4i, g |
| m8n8k16 s8/u8 (1, 1) | g, 4t + i | 4t + i, g |
| m16n8k16 s8/u8 (2, 1) | g + 8(i >= 4), 4t + (i & 3) | 4t + i, g |
| m16n8k32 s8/u8 (4, 2) | g + 8 for i in 4..7, 12..15 else g, 4t + (i & 3) + 16(i >= 8) | 4t + (i & 3) + 16(i >= 4), g |
| m8n8k32 s4/u4 (1, 1) | g, 8t + i | 8t + i, g |
| m16n8k32 s4/u4 (2, 1) | g + 8(i >= 8), 8t + (i & 7) | 8t + i, g |
| m16n8k64 s4/u4 (4, 2) | g + 8 for i in 8..15, 24..31 else g, 8t + (i & 7) + 32(i >= 16) | 8t + (i & 7) + 32(i >= 8), g |

The f64 rows of sm_90 (PTX ISA 7.8) are the ISA's ".f64" figures of "Matrix Fragments for
mma.m16n8k4" (Figures 66, 68, 70 in the 9.x manual: "row = groupID for a0, groupID + 8 for
a1; col = threadID_in_group"; B "row = threadID_in_group, col = groupID"), "... for
mma.m16n8k8" (Figures 73, 76, 78: "row = groupID for a0 and a2, groupID + 8 for a1 and a3;
col = threadID_in_group for a0 and a1, threadID_in_group + 4 for a2 and a3"; B "row =
threadID_in_group for b0, threadID_in_group + 4 for b1") and "... for mma.m16n8k16 with
floating point type" (Figures 80, 82, 83: "row = groupID for ai where i % 2 = 0, groupID + 8
Otherwise; col = (i * 2) + threadID_in_group for ai where i % 2 = 0, (i * 2) - 2 +
(threadID_in_group Otherwise" (the ISA's unbalanced parenthesis; the only reading is
2i - 2 + t); B "row = threadID_in_group + (i * 4) for bi where i < 4, col = groupID").

C and D, every form of one product per warp: c_i at row g + 8(i >= 2), column 2t + (i & 1)
(four elements for the m16 shapes, two (c0, c1) for the m8 shapes; the f64 figures 70, 78
and 83 give the same formula). A layout may override it (`c_place`) and compute several
independent products per warp (`groups`, `problem`): m8n8k4 .f16, mma_m8n8k4.py.

A lane's output c_i at (row, col) of its problem needs that row of A and that column of B:
element k of each is found by inverting the table (each (problem, row, col) of A and B is held
by exactly one lane and element; checked when a layout is built), and moved with `pick` (one
gather per element; outputs that need the same row in every lane share its gathers).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from semantics.ops.matrix import pick, vector_registers, warp_of

Place = Callable[[int, int, int], tuple[int, int]]      # (g, t, i) -> (row, col)


def _standard_c(g: int, t: int, i: int) -> tuple[int, int]:
    return g + 8 * (i >= 2), 2 * t + (i & 1)


def _one_problem(g: int) -> int:
    return 0


@dataclass(frozen=True)
class Layout:
    """One form family's fragments: M x K A in `a_regs` registers, K x N B in `b_regs`, each
    register of `reg_bits` holding elements of `elem_bits`, low element first; `groups`
    independent products per warp, lane (g, t) taking part in product `problem(g)`; C and D
    element i of lane (g, t) at `c_place(g, t, i)` of its product."""

    name: tuple[str, str]
    m: int
    n: int
    k: int
    elem_bits: int
    reg_bits: int
    a_place: Place
    b_place: Place
    c_place: Place = _standard_c
    groups: int = 1
    problem: Callable[[int], int] = _one_problem

    @property
    def per_reg(self) -> int:
        return self.reg_bits // self.elem_bits

    @property
    def a_regs(self) -> int:
        return self.groups * self.m * self.k // 32 // self.per_reg

    @property
    def b_regs(self) -> int:
        return self.groups * self.k * self.n // 32 // self.per_reg

    @property
    def c_count(self) -> int:
        return self.groups * self.m * self.n // 32

    @cached_property
    def a_inverse(self) -> dict[tuple[int, int, int], tuple[int, int]]:
        """(problem, row, col) of A -> (element index, lane) holding it."""
        return self._inverse(self.a_place, self.m * self.k, (self.m, self.k), "A")

    @cached_property
    def b_inverse(self) -> dict[tuple[int, int, int], tuple[int, int]]:
        return self._inverse(self.b_place, self.k * self.n, (self.k, self.n), "B")

    @cached_property
    def c_inverse(self) -> dict[tuple[int, int, int], tuple[int, int]]:
        """(problem, row, col) of C and D -> (element index, lane); checks the bijection."""
        return self._inverse(self.c_place, self.m * self.n, (self.m, self.n), "C")

    def _inverse(self, place: Place, size: int, shape: tuple[int, int], what: str) -> dict:
        inv: dict[tuple[int, int, int], tuple[int, int]] = {}
        for lane in range(32):
            for i in range(self.groups * size // 32):
                r, c = place(lane >> 2, lane % 4, i)
                key = (self.problem(lane >> 2), r, c)
                if key in inv or not (0 <= r < shape[0] and 0 <= c < shape[1]):
                    raise AssertionError(f"{self.name} {what}: element {i} of lane {lane} "
                                         f"at {key}")
                inv[key] = (i, lane)
        assert len(inv) == self.groups * size, (self.name, what)
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
    # sm_90's f64 shapes: the tf32 figures' places, one .f64 element per 64-bit register
    _lay(("m16n8k4", "f64"), 16, 8, 4, 64,
         lambda g, t, i: (g + 8 * i, t),
         lambda g, t, i: (t, g), reg_bits=64),
    _lay(("m16n8k8", "f64"), 16, 8, 8, 64,
         lambda g, t, i: (g + 8 * (i & 1), t + 4 * (i >= 2)),
         lambda g, t, i: (t + 4 * i, g), reg_bits=64),
    _lay(("m16n8k16", "f64"), 16, 8, 16, 64,
         lambda g, t, i: (g + 8 * (i % 2), 2 * i + t if i % 2 == 0 else 2 * i - 2 + t),
         lambda g, t, i: (t + 4 * i, g), reg_bits=64),
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


def _gathered(d, warp, elems: list, lay: Layout, inv: dict, what: str, cells_of) -> list:
    """Per lane, the K elements of one row of A or column of B of its product: `cells_of(k)`
    is, per lane, the (problem, row, col) of the k-th element it needs."""
    out = []
    for k in range(lay.k):
        cells = cells_of(k)
        out.append(pick(d, warp, elems, lay.elem_bits, (what, lay.name, cells),
                        lambda lane, cells=cells: inv[cells[lane]]))
    return out


def operands(x, lay: Layout, reg_type) -> list[tuple[list, list]]:
    """Per output element i: (each lane's row of A, its column of B) for C/D element i at
    `lay.c_place`, read from operands 1 and 2. Outputs needing the same row (column) in
    every lane share one list, so its gathers are made once."""
    d = x.d
    a = elements(d, [x.read(e, reg_type) for e in vector_registers(x, 1, lay.a_regs)], lay)
    b = elements(d, [x.read(e, reg_type) for e in vector_registers(x, 2, lay.b_regs)], lay)
    warp = warp_of(x)
    problems = [lay.problem(lane >> 2) for lane in range(32)]
    rows: dict[tuple, list] = {}
    cols: dict[tuple, list] = {}
    out = []
    for i in range(lay.c_count):
        place = [lay.c_place(lane >> 2, lane % 4, i) for lane in range(32)]
        r_sel, c_sel = tuple(p[0] for p in place), tuple(p[1] for p in place)
        if r_sel not in rows:
            rows[r_sel] = _gathered(d, warp, a, lay, lay.a_inverse, "mma.a", lambda k: tuple(
                (p, r, k) for p, r in zip(problems, r_sel)))
        if c_sel not in cols:
            cols[c_sel] = _gathered(d, warp, b, lay, lay.b_inverse, "mma.b", lambda k: tuple(
                (p, k, c) for p, c in zip(problems, c_sel)))
        out.append((rows[r_sel], cols[c_sel]))
    return out
