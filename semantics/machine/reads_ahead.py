"""Which registers a lane may still read from a given block on: every register an instruction
of that block, or of any block reachable from it, mentions (as operand or guard).

The executor uses it to avoid `If(mask, new, old)` register merges that no lane can observe:
a write under a symbolic mask must keep `old` only for lanes that are not on the current path
and may read the register later, and those lanes resume at the pc of a pending entry of the
reconvergence stack (exited lanes read nothing). Mentions over-approximate reads (writes are
counted too and nothing is killed), so a register missing from the set is certainly unread.

Only PTX operands are understood; for anything else (SASS, whose register pairs are implicit)
`mentions_from` returns None and every merge is kept.
"""

from __future__ import annotations

from semantics.ir.cfg import EXIT, Cfg
from semantics.ir.nodes import Instruction
from semantics.ir.operands import (Addr, BracketList, FloatImm, IntImm, Neg, Pair, Reg, Sink,
                                   SpecialReg, Sym, Vec)

_LEAVES = (SpecialReg, Sym, IntImm, FloatImm, Sink)


def _regs(op, out: set) -> bool:
    """Add the registers in `op` to `out`; False for an operand this module does not know."""
    if isinstance(op, Reg):
        out.add(op)
    elif isinstance(op, _LEAVES) or op is None:
        pass
    elif isinstance(op, Neg):
        return _regs(op.operand, out)
    elif isinstance(op, Pair):
        return _regs(op.first, out) and _regs(op.second, out)
    elif isinstance(op, (Vec, BracketList)):
        items = op.elems if isinstance(op, Vec) else op.items
        return all(_regs(e, out) for e in items)
    elif isinstance(op, Addr):
        return _regs(op.base, out)
    else:
        return False
    return True


def mentions_from(cfg: Cfg, instrs) -> list[frozenset] | None:
    """Per block, the registers mentioned in it or in any block reachable from it."""
    own: list[set] = []
    for b in cfg.blocks:
        regs: set = set()
        for ins in instrs[b.start:b.end]:
            if type(ins) is not Instruction:
                return None
            if ins.guard is not None and not _regs(ins.guard.reg, regs):
                return None
            if not all(_regs(op, regs) for op in ins.operands):
                return None
        own.append(regs)
    return _reachable(cfg, [set(r) for r in own])


def dead_destinations(instrs) -> frozenset[int] | None:
    """Indices of the instructions whose first operand is a register no instruction mentions
    but that one, in no other operand (an atomic's unused old value: `atom` whose result is
    never read). None when an operand is not understood (SASS)."""
    count: dict = {}
    for ins in instrs:
        if type(ins) is not Instruction:
            return None
        regs: set = set()
        if ins.guard is not None and not _regs(ins.guard.reg, regs):
            return None
        if not all(_regs(op, regs) for op in ins.operands):
            return None
        for r in regs:
            count[r] = count.get(r, 0) + 1
    out = set()
    for i, ins in enumerate(instrs):
        if not ins.operands or not isinstance(ins.operands[0], Reg):
            continue
        dest = ins.operands[0]
        rest: set = set()
        for op in ins.operands[1:]:
            _regs(op, rest)
        if ins.guard is not None:
            _regs(ins.guard.reg, rest)
        if count.get(dest) == 1 and dest not in rest:
            out.add(i)
    return frozenset(out)


def opcodes_from(cfg: Cfg, instrs) -> list[frozenset]:
    """Per block, the opcodes of the instructions in it or in any block reachable from it
    (may a thread waiting there still meet a warp-synchronous operation?)."""
    return _reachable(cfg, [set(ins.opcode for ins in instrs[b.start:b.end])
                            for b in cfg.blocks])


def _reachable(cfg: Cfg, reach: list[set]) -> list[frozenset]:
    """Per block, the union of `reach` over it and every block reachable from it (a
    backward fixpoint; blocks are few). `reach` is updated in place."""
    changed = True
    while changed:
        changed = False
        for b in reversed(cfg.blocks):
            acc = reach[b.index]
            before = len(acc)
            for s in b.succs:
                if s != EXIT:
                    acc |= reach[s]
            changed |= len(acc) != before
    return [frozenset(r) for r in reach]

