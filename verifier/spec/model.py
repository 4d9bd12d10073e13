"""The loaded spec as frozen dataclasses (`PairSpec`, `Side`, `ParamSpec`), the closed sets of
values the format accepts (modes, expectations, access kinds, types) and the type helpers
mapping a spec type to numpy and to its bit width and integer bounds."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from semantics.errors import KeqError
from verifier.spec.expressions import Expr

MODES = ("bitexact", "real")
EXPECTS = ("equivalent", "not-equivalent", "inconclusive")
ACCESS = ("in", "out", "inout", "scratch")
TYPES = ("f16", "bf16", "f32", "f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64")

_DTYPES = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
           "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
           "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


def dtype_of(type_name: str) -> np.dtype:
    """The numpy dtype holding values of a spec type (bf16: uint16 bit patterns)."""
    return np.dtype(_DTYPES[type_name])


def type_bits(type_name: str) -> int:
    return 16 if type_name == "bf16" else int(type_name[1:])


def int_bounds(type_name: str) -> tuple[int, int]:
    bits = type_bits(type_name)
    if type_name[0] == "s":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def is_float_type(type_name: str) -> bool:
    return type_name[0] in "fb"


@dataclass(frozen=True)
class ParamSpec:
    name: str
    kind: str                          # "buffer" | "scalar"
    type: str                          # element type (buffer) or scalar type
    length: Expr | None = None         # buffers
    access: str | None = None          # buffers: in | out | inout | scratch
    range: tuple | None = None         # scalars: inclusive (lo, hi)
    values: tuple | None = None        # scalars: allowed values

    @property
    def is_buffer(self) -> bool:
        return self.kind == "buffer"

    @property
    def is_scalar(self) -> bool:
        return self.kind == "scalar"

    @property
    def dtype(self) -> np.dtype:
        return dtype_of(self.type)

    @property
    def is_float(self) -> bool:
        return is_float_type(self.type)

    def length_of(self, scalars: Mapping[str, int]) -> int:
        if self.length is None:
            raise KeqError(f"param {self.name!r} is a scalar, it has no length")
        n = self.length.eval(scalars)
        if n < 0:
            raise self.length._error(f"length of {self.name!r} is {n} (negative) at "
                                     + ", ".join(f"{k}={scalars[k]}" for k in sorted(self.length.names)))
        return n

    def allows(self, value) -> bool:
        """Whether a scalar value is in this param's range/values (and its type)."""
        if self.is_float:
            v = float(value)
            if self.values is not None:
                return any(v == float(x) or (v != v and x != x) for x in self.values)
            if self.range is not None:
                return self.range[0] <= v <= self.range[1]
            return True
        if isinstance(value, (float, np.floating)) or not isinstance(value, (int, np.integer)):
            return False
        v = int(value)
        lo, hi = int_bounds(self.type)
        if not lo <= v <= hi:
            return False
        if self.values is not None:
            return v in self.values
        if self.range is not None:
            return self.range[0] <= v <= self.range[1]
        return True

    def describe_domain(self) -> str:
        if self.values is not None:
            return f"one of {list(self.values)}"
        if self.range is not None:
            return f"in [{self.range[0]}, {self.range[1]}]"
        if self.is_float:
            return f"any {self.type}"
        lo, hi = int_bounds(self.type)
        return f"in [{lo}, {hi}] ({self.type})"


@dataclass(frozen=True)
class Side:
    role: str                           # "reference" | "candidate"
    ptx: Path                           # resolved against the TOML's directory
    kernel: str
    grid: tuple[Expr, ...]
    block: tuple[Expr, ...]
    args: tuple[str, ...] | None = None
    sass: Path | None = None
    dynamic_shared: int = 0             # bytes of dynamic (extern .shared) memory per CTA
    arg_names: tuple[str, ...] = ()     # spec param names in .entry order (args or all)
    module: Any = field(default=None, repr=False, compare=False)   # the parsed PTX Module
    # "ptx", or "sass"/"cubin" for a side given as SASS (then `ptx` is that file's path and
    # `module` the parsed `semantics.sass.SassModule`)
    isa: str = "ptx"
    param_types: tuple[str, ...] = ()   # SASS sides: each kernel parameter's type, in order

    def launch(self, scalars: Mapping[str, int]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        def dims(exprs: tuple[Expr, ...], what: str) -> tuple[int, int, int]:
            vals = [e.eval(scalars) for e in exprs]
            for e, v in zip(exprs, vals):
                if v < 1:
                    env = ", ".join(f"{k}={scalars[k]}" for k in sorted(e.names))
                    raise e._error(f"[{self.role}] {what} dimension {e.text!r} is {v} "
                                   f"(must be >= 1)" + (f" at {env}" if env else ""))
            return tuple(vals + [1] * (3 - len(vals)))  # type: ignore[return-value]
        return dims(self.grid, "grid"), dims(self.block, "block")

    def kernel_args(self, values: Mapping[str, Any]) -> list:
        """Values (by spec param name) in this kernel's .entry parameter order."""
        return [values[n] for n in self.arg_names]


@dataclass(frozen=True)
class PairSpec:
    path: Path
    name: str
    mode: str
    expect: str
    assume: tuple[Expr, ...]
    description: str
    reference: Side
    candidate: Side
    params: tuple[ParamSpec, ...]

    def side(self, role: str) -> Side:
        if role not in ("reference", "candidate"):
            raise KeqError(f"no side {role!r} (reference or candidate)")
        return self.reference if role == "reference" else self.candidate

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def scalars(self) -> tuple[ParamSpec, ...]:
        return tuple(p for p in self.params if p.is_scalar)

    @property
    def buffers(self) -> tuple[ParamSpec, ...]:
        return tuple(p for p in self.params if p.is_buffer)

    def check_assumptions(self, scalars: Mapping[str, Any]) -> bool:
        """True when every scalar is in its range/values and every `assume` holds."""
        for p in self.scalars:
            if p.name in scalars and not p.allows(scalars[p.name]):
                return False
        return all(a.eval(scalars) for a in self.assume)

    def failed_assumption(self, scalars: Mapping[str, Any]) -> Expr | None:
        for a in self.assume:
            if not a.eval(scalars):
                return a
        return None
