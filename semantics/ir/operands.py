"""Instruction operands.

Register names are resolved at parse time: a name declared by `.reg` in an enclosing scope is a
`Reg` (with the id of the scope that declared it, so inline-asm blocks may shadow outer names);
any other identifier is a `Sym` (a variable, parameter, function or label).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True, slots=True)
class Reg:
    name: str
    scope: int = 0

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class SpecialReg:
    """%tid.x, %ntid.y, %laneid, %lanemask_lt, %clock64, ... (name includes the component)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Sym:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class IntImm:
    value: int

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class FloatImm:
    """A floating immediate, kept as its exact bit pattern (`0f...` is 32-bit, `0d...` 64-bit)."""

    bits: int
    width: int

    def __str__(self) -> str:
        return f"0f{self.bits:08X}" if self.width == 32 else f"0d{self.bits:016X}"


@dataclass(frozen=True, slots=True)
class Sink:
    """The `_` placeholder for an unused vector element or destination."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, slots=True)
class Neg:
    """A negated predicate operand, `!%p`."""

    operand: "Operand"

    def __str__(self) -> str:
        return f"!{self.operand}"


@dataclass(frozen=True, slots=True)
class Pair:
    """Two destinations written by one instruction, `%r|%p` (setp, shfl)."""

    first: "Operand"
    second: "Operand"

    def __str__(self) -> str:
        return f"{self.first}|{self.second}"


@dataclass(frozen=True, slots=True)
class Vec:
    elems: tuple["Operand", ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elems)) + "}"


@dataclass(frozen=True, slots=True)
class Addr:
    """`[base+offset]`; base is a register, a symbol or absent (absolute address)."""

    base: Union[Reg, Sym, SpecialReg, None]
    offset: int = 0

    def __str__(self) -> str:
        if self.base is None:
            return f"[{self.offset}]"
        if self.offset == 0:
            return f"[{self.base}]"
        sign = "+" if self.offset > 0 else "+-"
        return f"[{self.base}{sign}{abs(self.offset)}]"


@dataclass(frozen=True, slots=True)
class BracketList:
    """A bracketed list such as a texture operand `[tex, {%r1, %r2}]`."""

    items: tuple["Operand", ...]

    def __str__(self) -> str:
        return "[" + ", ".join(map(str, self.items)) + "]"


@dataclass(frozen=True, slots=True)
class OperandList:
    """A parenthesized list, as in `call (retval0), f, (param0, param1);`."""

    items: tuple["Operand", ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


Operand = Union[Reg, SpecialReg, Sym, IntImm, FloatImm, Sink, Neg, Pair, Vec, Addr, BracketList,
                OperandList]
