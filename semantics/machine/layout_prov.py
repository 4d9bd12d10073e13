"""The lattice of the pointer-provenance analysis (`semantics.machine.layout_taint`, whose
docstring has the rules): a register's `Prov`, its join, the findings and confined accesses the
analysis reports, and the instruction classes its transfer function (`layout_transfer`) uses.
Both modules import this one, so the analysis and its transfer function import one way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from semantics.errors import SourceLoc
from semantics.ir.nodes import Instruction
from semantics.ir.operands import Pair, Reg, Sink, Vec

BUFFER_ALIGN = 256          # cudaMalloc's guarantee: a stated assumption of every claim


@dataclass(frozen=True, slots=True)
class Prov:
    bases: frozenset = frozenset()
    mangled: bool = False
    narrow: bool = False
    partial: bool = False       # an address on some paths only (a join with a non-address)


NONE = Prov()


@dataclass(frozen=True, slots=True)
class Finding:
    function: str
    index: int            # into the function's instructions
    loc: SourceLoc
    message: str          # what the address reaches: "a store to memory ('st.global.u32', ..)"


@dataclass(frozen=True, slots=True)
class Access:
    """A load, store or atomic whose address derives from `bases` alone (each "param:NAME",
    "global:NAME" or "shared:NAME"): it must stay inside one of them, whatever lies next to
    them in one layout (`semantics.machine.memory.ConcreteMemory.confined`)."""

    function: str
    index: int
    bases: frozenset


def join(a: Prov | None, b: Prov | None) -> Prov | None:
    """Either value (None: never written on that path)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    maybe = bool(a.bases) != bool(b.bases)     # an address on one path only
    return Prov(a.bases | b.bases, a.mangled or b.mangled or maybe, a.narrow or b.narrow,
                a.partial or b.partial or maybe)


def mangled(*ps: Prov) -> Prov:
    bases = frozenset().union(*(p.bases for p in ps))
    return Prov(bases, True, any(p.narrow for p in ps), any(p.partial for p in ps)) \
        if bases else NONE


def single(a: Prov, b: Prov) -> bool:
    """Both derive from the same one base by additions only."""
    return len(a.bases) == 1 and a.bases == b.bases and not (
        a.mangled or b.mangled or a.narrow or b.narrow)


NO_DEST = frozenset({"st", "red", "bar", "barrier", "membar", "fence", "bra", "brx", "ret",
                      "exit", "trap", "call", "prefetch", "prefetchu", "cp", "griddepcontrol",
                      "nanosleep", "pmevent", "discard", "applypriority", "wmma", "stmatrix"})
EXCHANGE = frozenset({"shfl", "vote", "match", "redux", "activemask"})
MANGLE = frozenset({"mul", "mul24", "mad24", "sad", "shl", "shr", "or", "xor", "not", "neg",
                     "cnot", "abs", "bfe", "bfi", "prmt", "shf", "popc", "clz", "brev", "bfind",
                     "rem", "div", "lop3", "bmsk", "szext", "fma", "addc", "subc", "madc",
                     "fns", "dp4a", "dp2a", "testp", "copysign", "rcp", "sqrt", "rsqrt",
                     "ex2", "lg2", "sin", "cos", "tanh"})


def dests(op) -> Iterable[Reg]:
    if isinstance(op, Reg):
        yield op
    elif isinstance(op, Vec):
        for e in op.elems:
            yield from dests(e)
    elif isinstance(op, Pair):
        yield from dests(op.first)
        yield from dests(op.second)


def has_dest(ins: Instruction) -> bool:
    return ins.opcode not in NO_DEST and bool(ins.operands) and \
        isinstance(ins.operands[0], (Reg, Vec, Pair, Sink))


__all__ = ["BUFFER_ALIGN", "Prov", "NONE", "Finding", "Access", "join", "mangled", "single",
           "NO_DEST", "EXCHANGE", "MANGLE", "dests", "has_dest"]
