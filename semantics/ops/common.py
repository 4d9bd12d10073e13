"""Helpers shared by the instruction families: formats, NaN handling, .ftz, saturation.

Everything here is written over the Domain primitives, like the semantics themselves.
"""

from __future__ import annotations

from semantics.ir.nodes import Form
from semantics.ir.types import PtxType

# The NaN NVIDIA GPUs return from arithmetic on NaN (PTX ISA: "canonical NaN").
CANONICAL_NAN = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}
SIGN_BIT = {"f16": 1 << 15, "bf16": 1 << 15, "f32": 1 << 31, "f64": 1 << 63}
EXP_MASK = {"f16": 0x7C00, "bf16": 0x7F80, "f32": 0x7F800000, "f64": 0x7FF0000000000000}
MANT_MASK = {"f16": 0x03FF, "bf16": 0x007F, "f32": 0x007FFFFF, "f64": 0x000FFFFFFFFFFFFF}


def fmt_of(t: PtxType) -> str:
    """The IEEE format of a float type (per lane for packed types)."""
    if t.kind == "bf":
        return "bf16"
    return f"f{t.lane_bits}"


def only(form: Form, allowed: set[str] | frozenset[str]) -> bool:
    """True when the form's flags are all within `allowed` (else: not covered -> unsupported)."""
    return form.flags <= allowed


def is_nan(d, fmt: str, a, w: int):
    return d.pand(d.eq(d.band(a, d.const(EXP_MASK[fmt], w), w), d.const(EXP_MASK[fmt], w), w),
                  d.pnot(d.eq(d.band(a, d.const(MANT_MASK[fmt], w), w), d.const(0, w), w)))


def is_subnormal(d, fmt: str, a, w: int):
    return d.pand(d.eq(d.band(a, d.const(EXP_MASK[fmt], w), w), d.const(0, w), w),
                  d.pnot(d.eq(d.band(a, d.const(MANT_MASK[fmt], w), w), d.const(0, w), w)))


def flush(d, fmt: str, a, w: int):
    """.ftz: a subnormal becomes a zero of the same sign."""
    return d.ite(is_subnormal(d, fmt, a, w), d.band(a, d.const(SIGN_BIT[fmt], w), w), a, w)


def canonicalize(d, fmt: str, a, w: int):
    return d.ite(is_nan(d, fmt, a, w), d.const(CANONICAL_NAN[fmt], w), a, w)


def sign_of(d, fmt: str, a, w: int):
    return d.pnot(d.eq(d.band(a, d.const(SIGN_BIT[fmt], w), w), d.const(0, w), w))


def int_min(t: PtxType) -> int:
    return -(1 << (t.bits - 1)) if t.is_signed else 0


def int_max(t: PtxType) -> int:
    return (1 << (t.bits - 1)) - 1 if t.is_signed else (1 << t.bits) - 1
