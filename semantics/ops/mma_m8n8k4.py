"""The quad-pair fragment layouts of `mma.sync.aligned.m8n8k4.<alayout>.<blayout>` with .f16
inputs (every .row/.col of A and of B; C and D both .f16 or both .f32), on mma_layout's
`Layout` (four products per warp).

PTX ISA 9.7.14.5.1 "Matrix Fragments for mma.m8n8k4 with .f16 floating point type": "A warp
executing mma.m8n8k4 with .f16 floating point type will compute 4 MMA operations of shape
.m8n8k4"; "MMA computation 1: Threads with %laneid 0-3 (low group) and 16-19 (high group)",
computation 2 lanes 4-7 and 20-23, 3: 8-11 and 24-27, 4: 12-15 and 28-31. So a lane takes
part in product (%laneid >> 2) & 3, i.e. g & 3 with g = %laneid >> 2 (`problem`), and is in
the high group when %laneid >= 16 (g >= 4). Each product has its own 8x4 A, 4x8 B and 8x8 C.
A and B: two .f16x2 registers (a0..a3, b0..b3); C and D: four .f16x2 (.f16) or eight .f32
registers (c0..c7). The ISA's formulas, with q = %laneid % 4 = t and hi = 4 (%laneid >= 16):

| fragment (ISA figure, 9.x manual) | ISA: row | ISA: col |
|---|---|---|
| A .row (Figure 46) | "%laneid % 4 if %laneid < 16, (%laneid % 4) + 4 otherwise" | "i for ai where i = {0,..,3}" |
| A .col (Figure 47) | "i % 4 ... if %laneid < 16, (i % 4) + 4 ... otherwise" | "%laneid % 4" |
| B .row (Figure 48) | "%laneid % 4" | "i for bi ... if %laneid < 16, i+4 ... otherwise" |
| B .col (Figure 49) | "i for bi where i = {0,..,3}" | "%laneid % 4 if %laneid < 16, (%laneid % 4) + 4 otherwise" |
| C/D, .ctype .f16 (Figure 50) | "%laneid % 4 if %laneid < 16, (%laneid % 4) + 4 otherwise" | "i for ci where i = {0,..,7}" |
| C/D, .ctype .f32 (Figures 51, 52) | "X if %laneid < 16, X + 4 otherwise, where X = (%laneid & 0b1) + (i & 0b10)" | "(i & 0b100) + (%laneid & 0b10) + (i & 0b1)" |

Mixed accumulators: the ISA's C/D layouts are keyed on .ctype alone ("Fragment layout for
accumulator matrix when .ctype is .f16/.f32", "for matrix C/D with .ctype = ..."); it never
says which layout the eight .f32 D registers of `.f32.f16.f16.f16` take, so that form is
refused by name (mma.py), as is `.f16.f16.f16.f32`, which the ISA forbids ("When .ctype is
.f32, .dtype must also be .f32").
"""

from __future__ import annotations

from functools import cache

from semantics.ops.mma_layout import Layout


def _hi(g: int) -> int:
    """4 for the high group (%laneid >= 16, g >= 4), else 0."""
    return 4 * (g >= 4)


def _quad_pair(g: int) -> int:
    return g & 3


_A = {"row": lambda g, t, i: (t + _hi(g), i),
      "col": lambda g, t, i: (i + _hi(g), t)}
_B = {"row": lambda g, t, i: (t, i + _hi(g)),
      "col": lambda g, t, i: (i, t + _hi(g))}
# (lane & 1, lane & 2 are t's bits: lane = 4g + t)
_C = {"f16": lambda g, t, i: (t + _hi(g), i),
      "f32": lambda g, t, i: ((t & 1) + (i & 2) + _hi(g), (i & 4) + (t & 2) + (i & 1))}


@cache
def m8n8k4_f16(alayout: str, blayout: str, acc: str) -> Layout:
    """The layout of `mma.sync.aligned.m8n8k4.<alayout>.<blayout>.<acc>.f16.f16.<acc>`."""
    lay = Layout(("m8n8k4", f"f16.{alayout}.{blayout}.{acc}"), 8, 8, 4, 16, 32,
                 _A[alayout], _B[blayout], _C[acc], groups=4, problem=_quad_pair)
    lay.a_inverse, lay.b_inverse, lay.c_inverse     # (each a bijection, checked once)
    return lay
