"""Imports every instruction family so each registers its semantics. One module per family;
a new family is one new module and one line here."""

from semantics.ops import control, data_movement, int_arith, compare  # noqa: F401
from semantics.ops import bits, float_arith, convert, convert_fp8, memory, warp  # noqa: F401
from semantics.ops import async_copy, matrix, mma, texture, texture_query, wmma  # noqa: F401
