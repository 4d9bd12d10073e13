"""Bit patterns of floating-point values and hypothesis strategies of operands, for the float
and conversion tests (f16 bf16 f32 f64 and the packed f16x2 bf16x2)."""

from __future__ import annotations

import struct

import numpy as np
from hypothesis import strategies as st

WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def f32(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f64(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def f16(v: float) -> int:
    return int(np.array([v], dtype=np.float16).view(np.uint16)[0])


def bf16(v: float) -> int:
    """v must be exactly representable in bf16."""
    b = f32(v)
    assert b & 0xFFFF == 0, f"{v} is not a bf16 value"
    return b >> 16


def bits(fmt: str, v: float) -> int:
    return {"f16": f16, "bf16": bf16, "f32": f32, "f64": f64}[fmt](v)


def pack2(hi: int, lo: int) -> int:
    return (hi << 16) | lo


# Special operands per format: zeros, infinities, NaNs (canonical, quiet with payload,
# signalling, negative), the extreme subnormals and normals, and a few ordinary values.
SPECIALS = {
    "f32": [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FFFFFFF, 0x7FC00000,
            0x7FC00001, 0x7F800001, 0xFFC00000, 0x00000001, 0x80000001, 0x007FFFFF,
            0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000,
            0xBF800000, 0x3F000000, 0xBFC00000, 0x4F000000, 0xCF000000, 0x4F800000,
            0x5F000000, 0x3F7FFFFF, 0x40200000],
    "f64": [0x0, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
            0x7FFFFFFFFFFFFFFF, 0x7FF8000000000000, 0x7FF8000000000001, 0x7FF0000000000001,
            0xFFF8000000000000, 0x0000000000000001, 0x8000000000000001, 0x000FFFFFFFFFFFFF,
            0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x3FF0000000000000,
            0xBFF0000000000000, 0x3FE0000000000000, 0xBFF8000000000000, 0x41E0000000000000,
            0xC1E0000000000000, 0x43E0000000000000, 0x47EFFFFFE0000000, 0x36A0000000000000],
    "f16": [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7FFF, 0x7E00, 0x7E01, 0x7C01, 0xFE00, 0x0001,
            0x8001, 0x03FF, 0x0400, 0x8400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x3800, 0xBE00,
            0x3BFF, 0x4100],
    "bf16": [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FFF, 0x7FC0, 0x7FC1, 0x7F81, 0xFFC0, 0x0001,
             0x8001, 0x007F, 0x0080, 0x8080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0x3F00, 0xBFC0,
             0x3F7F, 0x4020],
}


def operand(fmt: str) -> st.SearchStrategy[int]:
    """A bit pattern of `fmt`: specials, neighbours of 1.0, and uniformly random patterns."""
    w = WIDTH[fmt]
    one = bits(fmt, 1.0)
    return st.one_of(
        st.sampled_from(SPECIALS[fmt]),
        st.integers(0, (1 << w) - 1),
        st.integers(-64, 64).map(lambda k: (one + k) & ((1 << w) - 1)),
    )


def packed(fmt: str) -> st.SearchStrategy[int]:
    return st.tuples(operand(fmt), operand(fmt)).map(lambda p: pack2(*p))


INT_SPECIALS = {
    8: [0, 1, 0x7F, 0x80, 0xFF],
    16: [0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x00FF, 0xFF00],
    32: [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x00FFFFFF, 0x01000001, 0xFF000001],
    64: [0, 1, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF,
         0x0020000000000001, 0xFFE0000000000001, 0x00000000FFFFFFFF],
}


def int_operand(w: int) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(INT_SPECIALS[w]), st.integers(0, (1 << w) - 1))


def _nearest_bits(fmt: str, v: float) -> int:
    """Bits of v rounded to `fmt` (to nearest; bf16 by truncating an f32: any nearby value)."""
    if fmt == "f64":
        return f64(v)
    if fmt == "f32":
        return int(np.array([v], dtype=np.float32).view(np.uint32)[0])
    if fmt == "f16":
        with np.errstate(over="ignore"):
            return int(np.array([v], dtype=np.float16).view(np.uint16)[0])
    return int(np.array([v], dtype=np.float32).view(np.uint32)[0]) >> 16


def integral_edge(fmt: str) -> st.SearchStrategy[int]:
    """Values near the integer ranges' edges (±2^k + j/2): where float -> int clamps, and
    halves, where the integer roundings differ."""
    return st.builds(lambda k, j, neg: _nearest_bits(fmt, (-1) ** neg * (2.0 ** k + j / 2)),
                     st.sampled_from([0, 1, 7, 8, 15, 16, 31, 32, 63, 64]),
                     st.integers(-6, 6), st.booleans())
