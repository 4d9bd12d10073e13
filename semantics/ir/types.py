"""PTX fundamental types.

`kind` is the interpretation: ``s`` signed int, ``u`` unsigned int, ``b`` untyped bits,
``f`` IEEE binary float, ``bf`` bfloat16, ``pred`` predicate, ``fp8``/``tf32`` formats that
only `cvt` and tensor cores use. Packed types (f16x2, bf16x2) have ``lanes`` = 2.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PtxType:
    name: str
    kind: str
    bits: int
    lanes: int = 1

    @property
    def lane_bits(self) -> int:
        return self.bits // self.lanes

    @property
    def is_int(self) -> bool:
        return self.kind in ("s", "u", "b")

    @property
    def is_signed(self) -> bool:
        return self.kind == "s"

    @property
    def is_float(self) -> bool:
        return self.kind in ("f", "bf")

    def __str__(self) -> str:
        return self.name


def _t(name: str, kind: str, bits: int, lanes: int = 1) -> PtxType:
    return PtxType(name, kind, bits, lanes)


TYPES: dict[str, PtxType] = {t.name: t for t in (
    _t("s8", "s", 8), _t("s16", "s", 16), _t("s32", "s", 32), _t("s64", "s", 64),
    _t("u8", "u", 8), _t("u16", "u", 16), _t("u32", "u", 32), _t("u64", "u", 64),
    _t("b8", "b", 8), _t("b16", "b", 16), _t("b32", "b", 32), _t("b64", "b", 64),
    _t("b128", "b", 128),
    _t("f16", "f", 16), _t("f16x2", "f", 32, 2), _t("f32", "f", 32), _t("f64", "f", 64),
    _t("bf16", "bf", 16), _t("bf16x2", "bf", 32, 2),
    _t("tf32", "tf32", 32),
    _t("e4m3", "fp8", 8), _t("e5m2", "fp8", 8), _t("e4m3x2", "fp8", 16, 2),
    _t("e5m2x2", "fp8", 16, 2), _t("e2m1x2", "fp4", 8, 2), _t("e2m3x2", "fp6", 16, 2),
    _t("e3m2x2", "fp6", 16, 2), _t("ue8m0x2", "ue8m0", 16, 2),
    _t("s4", "s", 4), _t("u4", "u", 4), _t("s2", "s", 2),
    _t("pred", "pred", 1),
)}


def type_named(name: str) -> PtxType | None:
    return TYPES.get(name)
