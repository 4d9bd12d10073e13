"""SASS operands.

nvdisasm prints a small, regular operand language; each shape is one frozen dataclass so the
semantics can match on it and the printer can reproduce it. Register identity (`SassReg`) is
kept apart from the decorations a source operand may carry (`Src`: `-R1`, `|R1|`, `~R1`,
`!P0`, `R1.reuse`, `R1.H1`), so `R1` and `R1.reuse` name the same register. Hex immediates
are integers; decimal ones are floats whose width only the opcode knows, so they keep their
text (`FloatLit`). Source locations are not stored in operands at all: the instruction has one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

from semantics.ir.operands import IntImm, SpecialReg

# Register kinds. Numbered: R UR P UP B (convergence barriers). Fixed names: the zero
# registers RZ/URZ, the true predicates PT/UPT, and PR/UPR (all predicates as one value).
NUMBERED_KINDS = ("R", "UR", "P", "UP", "B")
NAMED_REGS = frozenset(("RZ", "URZ", "PT", "UPT", "PR", "UPR", "SRZ"))
PREDICATE_KINDS = frozenset(("P", "UP", "PT", "UPT"))


@dataclass(frozen=True, slots=True)
class SassReg:
    """A register: `kind` R/UR/P/UP/B with `index`, or a fixed name (RZ, PT, ...) with None."""

    kind: str
    index: int | None = None

    @property
    def is_predicate(self) -> bool:
        return self.kind in PREDICATE_KINDS

    @property
    def is_uniform(self) -> bool:
        return self.kind in ("UR", "UP", "URZ", "UPT", "UPR")

    @property
    def is_zero(self) -> bool:
        """RZ/URZ read as 0; PT/UPT read as true (writes to any of them are discarded)."""
        return self.index is None and self.kind in ("RZ", "URZ", "PT", "UPT", "SRZ")

    def __str__(self) -> str:
        return self.kind if self.index is None else f"{self.kind}{self.index}"


@dataclass(frozen=True, slots=True)
class Src:
    """A decorated operand: negation, absolute value, bit/predicate inversion, suffixes.

    `mods` keeps suffixes other than `.reuse` in source order (`H0_H0`, `H1`, `B1`, ...);
    `reuse` is the operand-reuse-cache hint, which changes no value.
    """

    operand: "Operand"
    neg: bool = False
    absolute: bool = False
    invert: bool = False
    mods: tuple[str, ...] = ()
    reuse: bool = False

    def __str__(self) -> str:
        text = op_text(self.operand)
        if self.absolute:
            text = f"|{text}|"
        if self.invert:
            pred = isinstance(self.operand, SassReg) and self.operand.is_predicate
            text = ("!" if pred else "~") + text
        if self.neg:
            text = "-" + text
        for m in self.mods:
            text += f".{m}"
        if self.reuse:
            text += ".reuse"
        return text


@dataclass(frozen=True, slots=True)
class FloatLit:
    """A decimal floating immediate as nvdisasm printed it (`1.4426950216293334961`, `-126`,
    `+INF`, `-QNAN`): nvdisasm prints enough digits to be exact, and whether it is an f16,
    f32 or f64 depends on the opcode, so the text is the value."""

    text: str

    @property
    def value(self) -> float:
        t = self.text
        sign = -1.0 if t.startswith("-") else 1.0
        body = t.lstrip("+-")
        if body == "INF":
            return sign * math.inf
        if body in ("QNAN", "NAN", "SNAN"):
            return math.copysign(math.nan, sign)
        return float(t)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class ConstBank:
    """`c[bank][offset]`, `c[bank][R1+0x10]`, `c[bank][RZ]`: a constant-bank load address.

    Kernel parameters live in bank 0 from the function's `param_cbank` base (0x210 on sm_90,
    0x160 on sm_80); `SassFunction.param_at` maps an operand to its parameter."""

    bank: int
    offset: int = 0
    reg: SassReg | None = None

    def __str__(self) -> str:
        if self.reg is None:
            inner = _hex(self.offset)
        elif self.offset == 0:
            inner = str(self.reg)
        else:
            inner = f"{self.reg}+{_hex(self.offset)}"
        return f"c[{_hex(self.bank)}][{inner}]"


@dataclass(frozen=True, slots=True)
class SassAddr:
    """A memory address `[R2.64+UR4+0x10]`, optionally behind a descriptor `desc[UR4][...]`.

    `reg_mods` are the suffixes of the base register: `64` (a 64-bit register pair), `X4`
    (index scaled by 4), `U32`, ...; `ureg` is a uniform register added to it."""

    reg: SassReg | None = None
    reg_mods: tuple[str, ...] = ()
    ureg: SassReg | None = None
    offset: int = 0
    desc: SassReg | None = None

    @property
    def wide(self) -> bool:
        return "64" in self.reg_mods

    @property
    def scale(self) -> int:
        for m in self.reg_mods:
            if m.startswith("X") and m[1:].isdigit():
                return int(m[1:])
        return 1

    def __str__(self) -> str:
        parts: list[str] = []
        if self.reg is not None:
            parts.append(str(self.reg) + "".join(f".{m}" for m in self.reg_mods))
        if self.ureg is not None:
            parts.append(str(self.ureg))
        if self.offset or not parts:
            parts.append(_hex(self.offset))
        inner = "[" + "+".join(parts) + "]"
        return f"desc[{self.desc}]{inner}" if self.desc is not None else inner


@dataclass(frozen=True, slots=True)
class SassTarget:
    """A branch, call or BSSY target: a label or symbol (`` `(.L_x_0) ``) or a raw address
    (cuobjdump's `BRA 0x140`). `offset` is the byte offset it resolves to in the text section
    (filled in once the section's labels are known)."""

    label: str | None
    offset: int = 0

    def __str__(self) -> str:
        return f"`({self.label})" if self.label is not None else _hex(self.offset)


def _hex(v: int) -> str:
    return f"-{-v:#x}" if v < 0 else f"{v:#x}"


def op_text(op: "Operand") -> str:
    """An operand as nvdisasm writes it (integers in hex, unlike the PTX `IntImm.__str__`)."""
    return _hex(op.value) if isinstance(op, IntImm) else str(op)


Operand = Union[SassReg, SpecialReg, IntImm, FloatLit, ConstBank, SassAddr, SassTarget, Src]


def register_of(op: Operand) -> SassReg | None:
    """The register an operand reads, through its decorations (None for non-registers)."""
    while isinstance(op, Src):
        op = op.operand
    return op if isinstance(op, SassReg) else None
