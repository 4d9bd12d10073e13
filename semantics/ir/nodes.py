"""Module, function and statement nodes of the IR."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Union

from semantics.errors import SourceLoc
from semantics.ir.operands import Operand, Reg
from semantics.ir.types import PtxType

_NOWHERE = SourceLoc("<ir>", 0, 0)


@dataclass(frozen=True, slots=True)
class Form:
    """The static shape of an instruction: opcode and its typed modifiers.

    ``mods`` keeps every modifier in source order (without dots) so the printer reproduces the
    text; the other fields are the same modifiers, classified. Semantics may branch in Python
    on a Form (it is static), never on a value.
    """

    opcode: str
    mods: tuple[str, ...] = ()
    types: tuple[PtxType, ...] = ()
    rounding: str | None = None      # rn rz rm rp rna rs | rni rzi rmi rpi
    cmp: str | None = None           # eq ne lt le gt ge lo ls hi hs equ neu ltu leu gtu geu num nan
    boolop: str | None = None        # and or xor (setp/set combiners)
    space: str | None = None         # global shared local const param generic(None) ...
    vec: int = 1                     # v2 v4 v8
    flags: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return ".".join((self.opcode, *self.mods))

    @property
    def type(self) -> PtxType:
        """The single (or destination) type of the instruction."""
        return self.types[0]

    def has(self, flag: str) -> bool:
        return flag in self.flags

    def generic_name(self) -> str:
        """The opcode with type modifiers replaced by `.T`, as in PTX-COVERAGE.md."""
        type_names = {t.name for t in self.types}
        parts = [self.opcode] + ["T" if m in type_names else m for m in self.mods]
        return ".".join(parts)


@dataclass(frozen=True, slots=True)
class Guard:
    reg: Reg
    negated: bool = False

    def __str__(self) -> str:
        return f"@{'!' if self.negated else ''}{self.reg}"


@dataclass(frozen=True, slots=True)
class DebugLoc:
    """A `.loc` directive in force for an instruction: file index, line, column, extras."""

    file: int
    line: int
    col: int
    extra: str = ""

    def __str__(self) -> str:
        tail = f", {self.extra}" if self.extra else ""
        return f".loc\t{self.file} {self.line} {self.col}{tail}"


@dataclass(frozen=True, slots=True)
class Instruction:
    form: Form
    operands: tuple[Operand, ...]
    guard: Guard | None = None
    debug: DebugLoc | None = None
    loc: SourceLoc = field(default=_NOWHERE, compare=False)

    @property
    def opcode(self) -> str:
        return self.form.opcode

    def __str__(self) -> str:
        guard = f"{self.guard} " if self.guard else ""
        ops = ", ".join(map(str, self.operands))
        return f"{guard}{self.form.name}{' ' if ops else ''}{ops};"


@dataclass(frozen=True, slots=True)
class Label:
    name: str
    loc: SourceLoc = field(default=_NOWHERE, compare=False)


@dataclass(frozen=True, slots=True)
class RegDecl:
    """`.reg .b32 %r<20>;` (count=20: %r0..%r19) or `.reg .pred %p;` (count=None)."""

    type: PtxType
    name: str
    count: int | None = None
    vec: int = 1
    scope: int = 0
    loc: SourceLoc = field(default=_NOWHERE, compare=False)

    def names(self) -> list[str]:
        if self.count is None:
            return [self.name]
        return [f"{self.name}{i}" for i in range(self.count)]


@dataclass(frozen=True, slots=True)
class Variable:
    """A `.global/.shared/.const/.local/.param` variable, module- or function-level."""

    space: str
    type: PtxType
    name: str
    dims: tuple[int | None, ...] = ()    # None: unsized (`.extern .shared .b8 x[];`)
    align: int | None = None
    linkage: str | None = None           # visible extern weak common
    init: str | None = None              # initializer text, normalized
    ptr_attrs: tuple[str, ...] = ()
    vec: int = 1
    loc: SourceLoc = field(default=_NOWHERE, compare=False)

    @property
    def size_bytes(self) -> int | None:
        n = self.type.bits // 8 * self.vec
        for d in self.dims:
            if d is None:
                return None
            n *= d
        return n


Param = Variable  # parameters are `.param` variables


@dataclass(frozen=True, slots=True)
class ScopeBegin:
    scope: int
    loc: SourceLoc = field(default=_NOWHERE, compare=False)


@dataclass(frozen=True, slots=True)
class ScopeEnd:
    scope: int
    loc: SourceLoc = field(default=_NOWHERE, compare=False)


@dataclass(frozen=True, slots=True)
class Pragma:
    text: str
    loc: SourceLoc = field(default=_NOWHERE, compare=False)


@dataclass(frozen=True, slots=True)
class PerfDirective:
    """.maxntid 256, 1, 1 / .reqntid / .minnctapersm / .maxnreg / .noreturn / ..."""

    name: str
    values: tuple[int, ...] = ()


Stmt = Union[Instruction, Label, RegDecl, Variable, ScopeBegin, ScopeEnd, Pragma]


@dataclass(frozen=True)
class Function:
    name: str
    kind: str                               # "entry" | "func"
    params: tuple[Param, ...] = ()
    returns: tuple[Param, ...] = ()
    linkage: str | None = None
    directives: tuple[PerfDirective, ...] = ()
    body: tuple[Stmt, ...] | None = None    # None: a declaration without a body
    loc: SourceLoc = field(default=_NOWHERE, compare=False)

    @cached_property
    def instructions(self) -> tuple[Instruction, ...]:
        return tuple(s for s in (self.body or ()) if isinstance(s, Instruction))

    @cached_property
    def reg_decls(self) -> tuple[RegDecl, ...]:
        return tuple(s for s in (self.body or ()) if isinstance(s, RegDecl))

    @cached_property
    def local_vars(self) -> tuple[Variable, ...]:
        return tuple(s for s in (self.body or ()) if isinstance(s, Variable))

    def register_count(self) -> dict[str, int]:
        """Declared registers per type name (the sum over `.reg` declarations)."""
        out: dict[str, int] = {}
        for d in self.reg_decls:
            out[d.type.name] = out.get(d.type.name, 0) + (d.count if d.count is not None else 1)
        return out


@dataclass(frozen=True, slots=True)
class FileDirective:
    index: int
    path: str
    extra: str = ""


@dataclass(frozen=True, slots=True)
class Section:
    """A `.section` (DWARF debug data): kept verbatim, it carries no semantics."""

    name: str
    text: str


ModuleItem = Union[Variable, Function, FileDirective, Section, Pragma]


@dataclass(frozen=True)
class Module:
    version: str
    target: tuple[str, ...]
    address_size: int
    items: tuple[ModuleItem, ...]
    path: str = field(default="<ptx>", compare=False)

    @cached_property
    def functions(self) -> dict[str, Function]:
        return {i.name: i for i in self.items if isinstance(i, Function) and i.body is not None}

    @cached_property
    def declarations(self) -> dict[str, Function]:
        """Functions declared without a body (`.extern .func vprintf(...)`)."""
        return {i.name: i for i in self.items if isinstance(i, Function) and i.body is None}

    @cached_property
    def entries(self) -> dict[str, Function]:
        return {n: f for n, f in self.functions.items() if f.kind == "entry"}

    @cached_property
    def variables(self) -> dict[str, Variable]:
        return {i.name: i for i in self.items if isinstance(i, Variable)}
