"""The fragments of `wmma` (PTX ISA 9.7.14.4 "Matrix multiply-accumulate operation using wmma
instructions"): how many registers each holds, and the layout keq gives them.

The ISA fixes the register count of each fragment (the vector operand of `wmma.load`,
`wmma.mma`, `wmma.store`) but **not** which matrix element a lane's register holds: "the
layout of the fragments is unspecified" (9.7.14.4.1, Matrix Fragments for WMMA). keq
therefore picks one (below) and makes every result that could depend on it undecided: a
fragment's registers may only flow from a `wmma.load`/`wmma.mma` to a `wmma.mma`/`wmma.store`
(`semantics.machine.fragments`); then the stored matrices are the same under every layout, so
keq's choice is invisible.

keq's layout: slot s (element s of the lane's registers, low half first) of lane l holds
element e = (l * slots + s) mod (rows * cols) of the matrix in row-major order; for the
sub-byte and single-bit A and B (`.s4/.u4` m8n8k32, `.b1` m8n8k128: the ISA allows A only
`.row` and B only `.col`) in the order of their memory layout, row-major for A and
column-major for B, so that each 32-bit register is 8 (32) consecutive elements along K, one
aligned word of memory (semantics/ops/wmma.py loads and stores it whole). Where a
fragment has more slots than its matrix has elements per lane (f16 A and B of every shape,
as the ISA's eight `.f16x2` registers allow), elements repeat; a reader takes the first copy.

Register counts, as nvcc 13 emits them and the ISA's fragment table lists: `.f16` A/B 8
`.f16x2` registers (every shape); every other fragment rows * cols / 32 elements per lane,
packed per 32-bit register (`.bf16` two, `.s8/.u8` four) or one per register (`.tf32`, `.f32`,
`.s32`; `.f64` one per 64-bit register); `.s4/.u4` eight and `.b1` 32 per register (A and B
of m8n8k32 and m8n8k128: one register each; their s32 accumulators two).
"""

from __future__ import annotations

from dataclasses import dataclass

_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s8": 8, "u8": 8,
         "s32": 32, "s4": 4, "u4": 4, "b1": 1}
SUB_BYTE = frozenset({"s4", "u4", "b1"})
SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16),
          "m16n16k8": (16, 16, 8), "m8n8k4": (8, 8, 4), "m8n8k32": (8, 8, 32),
          "m8n8k128": (8, 8, 128)}
# the element types each shape takes for A/B, and for C/D
_AB_TYPES = {"m16n16k16": {"f16", "bf16", "s8", "u8"}, "m32n8k16": {"f16", "bf16", "s8", "u8"},
             "m8n32k16": {"f16", "bf16", "s8", "u8"}, "m16n16k8": {"tf32"}, "m8n8k4": {"f64"},
             "m8n8k32": {"s4", "u4"}, "m8n8k128": {"b1"}}
_CD_TYPES = {"m16n16k16": {"f16", "f32", "s32"}, "m32n8k16": {"f16", "f32", "s32"},
             "m8n32k16": {"f16", "f32", "s32"}, "m16n16k8": {"f32"}, "m8n8k4": {"f64"},
             "m8n8k32": {"s32"}, "m8n8k128": {"s32"}}
# the only memory layout the ISA allows A and B of the sub-byte shapes
_SUB_BYTE_LAYOUT = {"a": "row", "b": "col"}


@dataclass(frozen=True, slots=True)
class Fragment:
    """One fragment kind: matrix "a", "b" or "c" (C and D share theirs), the shape, the element
    type, and for A and B the layout it was loaded with (`wmma.mma` names it; an accumulator's
    register layout does not depend on how it is stored)."""

    matrix: str
    shape: str
    elem: str
    layout: str | None = None

    @property
    def dims(self) -> tuple[int, int]:
        m, n, k = SHAPES[self.shape]
        return {"a": (m, k), "b": (k, n), "c": (m, n)}[self.matrix]

    @property
    def elem_bits(self) -> int:
        return _BITS[self.elem]

    @property
    def reg_bits(self) -> int:
        return 64 if self.elem == "f64" else 32

    @property
    def per_reg(self) -> int:
        return self.reg_bits // self.elem_bits

    @property
    def regs(self) -> int:
        if self.elem == "f16" and self.matrix in "ab":
            return 8
        rows, cols = self.dims
        return rows * cols // 32 // self.per_reg

    @property
    def slots(self) -> int:
        return self.regs * self.per_reg

    @property
    def column_major(self) -> bool:
        """keq orders this fragment's elements column by column (a sub-byte B)."""
        return self.elem in SUB_BYTE and self.matrix == "b"

    def element(self, lane: int, slot: int) -> tuple[int, int]:
        """(row, col) of the element slot `slot` of `lane` holds, in keq's layout."""
        rows, cols = self.dims
        e = (lane * self.slots + slot) % (rows * cols)
        if self.column_major:
            c, r = divmod(e, rows)
            return r, c
        return divmod(e, cols)

    def holder(self, row: int, col: int) -> tuple[int, int]:
        """(slot, lane) of the first copy of element (row, col)."""
        rows, cols = self.dims
        e = col * rows + row if self.column_major else row * cols + col
        lane, slot = divmod(e, self.slots)
        return slot, lane

    def describe(self) -> str:
        lay = f".{self.layout}" if self.layout else ""
        return f"{'accumulator' if self.matrix == 'c' else self.matrix.upper()}{lay}.{self.shape}.{self.elem}"


def fragment(matrix: str, shape: str, elem: str, layout: str | None = None) -> Fragment | None:
    """The fragment kind, or None where the ISA lists no such fragment (or keq gives it no
    semantics). Sub-byte A and B: only in the layout the ISA allows (A `.row`, B `.col`)."""
    if shape not in SHAPES:
        return None
    if elem not in (_CD_TYPES if matrix == "c" else _AB_TYPES)[shape]:
        return None
    if elem in SUB_BYTE and layout != _SUB_BYTE_LAYOUT[matrix]:
        return None
    return Fragment(matrix, shape, elem, layout if matrix in "ab" else None)


__all__ = ["Fragment", "fragment", "SHAPES", "SUB_BYTE"]
