"""SASS module, function and instruction nodes.

Instructions reuse `semantics.ir`'s `Form` (opcode + modifiers in source order), `Guard` and
`Label`; a SASS instruction adds its byte offset in the text section, since branch targets,
BSSY reconvergence points and EIATTR_EXIT_INSTR_OFFSETS are all offsets. Source locations are
excluded from equality, so `parse(print(m)) == m` compares meaning, not layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Union

from semantics.errors import SourceLoc
from semantics.ir.nodes import Instruction, Label
from semantics.sass.operands import ConstBank, op_text

_NOWHERE = SourceLoc("<sass>", 0, 0)


@dataclass(frozen=True, slots=True)
class SassInstruction(Instruction):
    """One SASS instruction; `offset` is its byte offset in the function's text section."""

    offset: int = 0

    def __str__(self) -> str:
        guard = f"{self.guard} " if self.guard else ""
        ops = ""
        for k, op in enumerate(self.operands):
            # `RET.REL.NODEC R20 `(kernel)`: nvdisasm puts no comma before RET's target.
            sep = " " if k == 0 or (self.opcode == "RET" and k == len(self.operands) - 1) \
                else ", "
            ops += sep + op_text(op)
        return f"{guard}{self.form.name}{ops} ;"


@dataclass(frozen=True, slots=True)
class KParam:
    """One kernel parameter from EIATTR_KPARAM_INFO: `offset` is relative to the parameter
    base of the constant bank (see `ParamCbank`), `size` in bytes, `flags` the raw last word
    (alignment, space, and the size itself in bits 18..31)."""

    ordinal: int
    offset: int
    size: int
    flags: int = 0


@dataclass(frozen=True, slots=True)
class ParamCbank:
    """EIATTR_PARAM_CBANK: parameters occupy `size` bytes of constant bank `bank` from
    `base` (0x210 on sm_90, 0x160 on sm_80)."""

    bank: int
    base: int
    size: int


SassStmt = Union[SassInstruction, Label]


@dataclass(frozen=True)
class SassFunction:
    """A function symbol of a text section: a kernel (`kind` "entry") or a subroutine that
    kernels CALL ("func"). Metadata comes from the `.nv.info*` and `.nv.shared.*` sections;
    it is None when the listing has none (cuobjdump -sass prints code only)."""

    name: str
    kind: str
    section: str
    body: tuple[SassStmt, ...]
    params: tuple[KParam, ...] = ()
    param_cbank: ParamCbank | None = None
    regcount: int | None = None
    shared_bytes: int | None = None
    loc: SourceLoc = field(default=_NOWHERE, compare=False)

    @cached_property
    def instructions(self) -> tuple[SassInstruction, ...]:
        return tuple(s for s in self.body if isinstance(s, SassInstruction))

    @cached_property
    def labels(self) -> dict[str, int]:
        """Label name -> index into `instructions` of the instruction it precedes."""
        out: dict[str, int] = {}
        pos = 0
        for s in self.body:
            if isinstance(s, SassInstruction):
                pos += 1
            else:
                out[s.name] = pos
        return out

    def cbank_offset(self, p: KParam) -> int | None:
        """The constant-bank byte offset of parameter `p` (`c[0x0][this]`)."""
        return None if self.param_cbank is None else self.param_cbank.base + p.offset

    def param_at(self, c: ConstBank) -> tuple[KParam, int] | None:
        """The parameter a constant-bank operand reads and the byte offset inside it, or None
        (another bank, a register-indexed address, or the driver's part of bank 0)."""
        pc = self.param_cbank
        if pc is None or c.reg is not None or c.bank != pc.bank:
            return None
        for p in self.params:
            start = pc.base + p.offset
            if start <= c.offset < start + p.size:
                return p, c.offset - start
        return None


@dataclass(frozen=True)
class SassModule:
    """A disassembled cubin. `arch` is the `.target` (sm_90, sm_80, sm_90a); `source` says
    which tool printed the text ("nvdisasm" or "cuobjdump") and is not part of equality."""

    arch: str
    functions: tuple[SassFunction, ...]
    source: str = field(default="nvdisasm", compare=False)
    path: str = field(default="<sass>", compare=False)

    @cached_property
    def by_name(self) -> dict[str, SassFunction]:
        return {f.name: f for f in self.functions}

    @cached_property
    def entries(self) -> dict[str, SassFunction]:
        return {f.name: f for f in self.functions if f.kind == "entry"}
