"""Spin waits: loops that only wait for a flag, recognized in the control-flow graph, so the
symbolic race log can decide the handoffs they make (`semantics.machine.symbolic_spins`).

A *spin block* holds nothing but one strong load of a loop-invariant address (`ld.volatile`,
`.relaxed`, `.acquire`), one integer `setp` of the loaded value against an immediate or a
loop-invariant register, a conditional branch on that predicate, and optionally a
`nanosleep` with the `mov` of its immediate. A *spin wait* is such a block that branches to
itself (nvcc's `while (flag == 0) {}`), and a spin block whose successors are that loop and
the loop's own continuation (the first test nvcc peels off a `while` with a body, such as
`__nanosleep`). What makes it a wait and nothing more:
- no register the block writes is mentioned from the continuation on (`reads_ahead`), so
  after the wait nothing depends on *which* value ended it, only on its having ended;
- a pass through the block that does not leave writes only those registers, so it changes
  nothing: however many times a read sees a value that does not end the wait, the state at
  the continuation is the same.
The wait then means "wait until a read of the flag sees a value that ends it" (`exits`), and
what it synchronizes is decided with the writes that can give such a value (the module
above). Anything else that loops on memory stays a loop of the ordinary kind, whose strong
accesses the scheduler orders (Inconclusive where that may show).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import z3

from semantics.domains.symbolic import SymbolicDomain
from semantics.ir.cfg import EXIT
from semantics.ir.nodes import Instruction
from semantics.ir.operands import Addr, IntImm, Reg
from semantics.ir.types import PtxType
from semantics.machine.memory_model import strength
from semantics.machine.reads_ahead import mentions_from
from semantics.ops.compare import int_compare

_ONE_LANE = SymbolicDomain(1)
_QUIET = frozenset({"nanosleep", "mov"})


@dataclass(frozen=True)
class SpinWait:
    """One spin block: its load (instruction index), the comparison that decides whether
    control goes on to `continuation`, and the operand the loaded value is compared with."""

    load: int
    block: int
    continuation: int
    cmp: str
    type: PtxType          # the setp's
    bound: Reg | IntImm
    exit_when: bool        # control goes on when the comparison is this

    @property
    def signed_order(self) -> bool:
        """Is the comparison's order the signed one (`lo/ls/hi/hs` are unsigned whatever the
        type; equality takes the type's)?"""
        return self.cmp not in ("lo", "ls", "hi", "hs") and self.type.is_signed

    def none_between(self, lo: Any, hi: Any, bound: Any) -> Any:
        """Does no value from `lo` to `hi` (in the comparison's order, `lo <= hi`) end the
        wait? Every comparison but equality is monotone there, or (`!=`) true at all points
        but one, so its two ends decide it; equality also needs the bound outside."""
        d = _ONE_LANE
        out = d.pand(d.pnot([self.exits(lo, bound)]), d.pnot([self.exits(hi, bound)]))
        if (self.cmp == "eq") == self.exit_when and self.cmp in ("eq", "ne"):
            bits, signed = self.type.bits, self.signed_order
            inside = d.pand(int_compare(d, "lt", [lo], [bound], bits, signed),
                            int_compare(d, "lt", [bound], [hi], bits, signed))
            out = d.pand(out, d.pnot(inside))
        return out[0]

    def exits(self, value: Any, bound: Any) -> Any:
        """Does a read of `value` end the wait (True, False or a z3 Bool), with the bound
        operand's value `bound` in the waiting lane? The `setp` semantics decide it."""
        t = self.type
        p = int_compare(_ONE_LANE, self.cmp, [value], [bound], t.bits, t.is_signed)[0]
        return p if self.exit_when else _ONE_LANE.pnot([p])[0]


def spin_waits(kernel) -> dict[int, SpinWait]:
    """The spin blocks of `kernel` (a PreparedKernel), by the index of their load; computed
    once per kernel."""
    cached = kernel.analyses.get("spin-waits")
    if cached is None:
        cached = kernel.analyses["spin-waits"] = _find(kernel.cfg, kernel.instrs)
    return cached


def _find(cfg, instrs) -> dict[int, SpinWait]:
    if not all(type(ins) is Instruction for ins in instrs):
        return {}                  # (SASS: its waits are not recognized; ordinary loops)
    shapes = {b.index: s for b in cfg.blocks if (s := _shape(b, instrs)) is not None}
    if not shapes:
        return {}
    ahead = mentions_from(cfg, instrs)
    if ahead is None:
        return {}
    out: dict[int, SpinWait] = {}
    loops = {i for i in shapes if cfg.blocks[i].branch_target == i}
    # (the loops first: a test before a loop counts only as the same wait as its loop)
    for index in sorted(shapes, key=lambda i: i not in loops):
        load, setp, on_target, written = shapes[index]
        b = cfg.blocks[index]
        loop = index
        if index in loops:
            after = b.fallthrough
            exit_when = not on_target
        else:                                             # a test before a loop
            loop = next((s for s in (b.fallthrough, b.branch_target) if s in loops), None)
            if loop is None:
                continue
            after = cfg.blocks[loop].fallthrough
            if after not in (b.fallthrough, b.branch_target) or after == loop:
                continue
            exit_when = on_target if b.branch_target == after else not on_target
        if after is None or after == EXIT or written & ahead[after]:
            continue
        wait = SpinWait(load, index, after, setp.form.cmp, setp.form.types[-1],
                        setp.operands[2], exit_when)
        if loop != index:
            inner = out.get(shapes[loop][0])
            if inner is None or not _same_wait(instrs[load], wait, instrs[inner.load], inner):
                continue
        out[load] = wait
    return out


def _same_wait(ld_a: Instruction, a: SpinWait, ld_b: Instruction, b: SpinWait) -> bool:
    """Do two spin blocks wait alike: the same load of the same address, and the same values
    ending them? (Nothing between them writes the registers they read.) The race log treats
    a peeled test and its loop as one wait, whose every read ends on the same store; a test
    that ended on values its loop does not would order what the loop never acquires."""
    if ld_a.form != ld_b.form or ld_a.operands[1] != ld_b.operands[1] or \
            a.type.bits != b.type.bits:
        return False
    if isinstance(a.bound, IntImm) and isinstance(b.bound, IntImm):
        bounds = (a.bound.value, b.bound.value)
    elif a.bound == b.bound:
        bounds = (z3.BitVec("bound", a.type.bits),) * 2
    else:
        return False
    v = z3.BitVec("value", a.type.bits)
    differ = z3.Xor(_as_bool(a.exits(v, bounds[0])), _as_bool(b.exits(v, bounds[1])))
    solver = z3.Solver()
    solver.add(differ)
    return solver.check() == z3.unsat


def _as_bool(p) -> Any:
    return z3.BoolVal(bool(p)) if not isinstance(p, z3.ExprRef) else p


def _shape(b, instrs) -> tuple[int, Instruction, bool, set] | None:
    """(load index, setp, whether the branch is taken when the setp is true, registers
    written) when block `b` is a spin block, else None."""
    body = instrs[b.start:b.end]
    if b.branch_target is None or b.fallthrough is None or not body:
        return None
    bra = body[-1]
    if bra.opcode != "bra" or bra.guard is None:
        return None
    loads = [i for i in range(b.start, b.end - 1) if instrs[i].opcode == "ld"]
    setps = [ins for ins in body[:-1] if ins.opcode == "setp"]
    if len(loads) != 1 or len(setps) != 1:
        return None
    ld, setp = instrs[loads[0]], setps[0]
    written = {ld.operands[0], setp.operands[0]}
    for ins in body[:-1]:
        if ins is ld or ins is setp:
            continue
        if ins.opcode not in _QUIET or ins.guard is not None:
            return None
        if ins.opcode == "mov":
            if not isinstance(ins.operands[1], IntImm):
                return None
            written.add(ins.operands[0])
    if not _strong_scalar_load(ld) or not _compares_loaded(setp, ld):
        return None
    if not all(isinstance(r, Reg) for r in written):
        return None
    base = ld.operands[1].base if isinstance(ld.operands[1], Addr) else None
    if base in written or setp.operands[2] in written or bra.guard.reg != setp.operands[0]:
        return None
    return loads[0], setp, not bra.guard.negated, written


def _strong_scalar_load(ld: Instruction) -> bool:
    f = ld.form
    return (f.vec == 1 and ld.guard is None and strength(f).strong and len(ld.operands) == 2
            and isinstance(ld.operands[0], Reg) and isinstance(ld.operands[1], Addr)
            and bool(f.types) and f.types[-1].is_int)


def _compares_loaded(setp: Instruction, ld: Instruction) -> bool:
    f = setp.form
    if f.boolop is not None or setp.guard is not None or len(setp.operands) != 3:
        return False
    t = f.types[-1] if f.types else None
    return (t is not None and t.is_int and setp.operands[1] == ld.operands[0]
            and isinstance(setp.operands[0], Reg)
            and isinstance(setp.operands[2], (Reg, IntImm))
            and t.bits == ld.form.types[-1].bits)


__all__ = ["SpinWait", "spin_waits"]
