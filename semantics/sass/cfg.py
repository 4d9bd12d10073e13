"""Control-flow graph of a SASS function, with its BSSY/BSYNC reconvergence points.

Same blocks, successors and immediate post-dominators as `semantics.ir.cfg` (its
`BasicBlock`/`Cfg` types and post-dominator algorithm are reused), built from SASS control
flow: BRA/JMP to a target offset, EXIT/RET/KILL leave the function, CALL returns to the next
instruction. A guard `@PT` is no guard and `@!PT` never executes. Volta+ hardware does not
reconverge at the post-dominator by itself: the compiler brackets divergent regions with
`BSSY Bn, target` ... `BSYNC Bn`, so those pairs are recorded as the SASS reconvergence points.
"""

from __future__ import annotations

from dataclasses import dataclass

from semantics.errors import UnsupportedError
from semantics.ir.cfg import EXIT, BasicBlock, Cfg, post_dominators
from semantics.sass import registry
from semantics.sass.lexer import SassSyntaxError
from semantics.sass.nodes import SassFunction, SassInstruction
from semantics.sass.operands import SassReg, SassTarget

_BRANCHES = frozenset(("BRA", "JMP"))


@dataclass(frozen=True, slots=True)
class Reconvergence:
    """`BSSY barrier, target` at instruction `bssy`: the threads that enter the region wait
    at a `BSYNC barrier` (instruction indices `bsyncs`) in front of `block`."""

    bssy: int
    barrier: str
    target: int          # byte offset
    block: int           # the block that starts at the target
    bsyncs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SassCfg:
    cfg: Cfg
    reconvergence: tuple[Reconvergence, ...]

    @property
    def blocks(self) -> tuple[BasicBlock, ...]:
        return self.cfg.blocks

    @property
    def ipdom(self) -> tuple[int | None, ...]:
        return self.cfg.ipdom


def always_runs(ins: SassInstruction) -> bool:
    g = ins.guard
    return g is None or (g.reg == SassReg("PT") and not g.negated) or (
        g.reg == SassReg("UPT") and not g.negated)


def never_runs(ins: SassInstruction) -> bool:
    g = ins.guard
    return g is not None and g.negated and g.reg in (SassReg("PT"), SassReg("UPT"))


def _target(ins: SassInstruction, index_of: dict[int, int], fn: SassFunction) -> int:
    t = ins.operands[-1] if ins.operands else None
    if not isinstance(t, SassTarget):
        raise SassSyntaxError(f"{ins.opcode} needs a code address as its last operand", ins.loc)
    if t.offset not in index_of:
        raise SassSyntaxError(f"{ins.opcode} target {t} ({t.offset:#x}) is outside function "
                              f"'{fn.name}'", ins.loc)
    return index_of[t.offset]


def build_sass_cfg(fn: SassFunction) -> SassCfg:
    instrs = fn.instructions
    index_of = {ins.offset: k for k, ins in enumerate(instrs)}
    leaders = {0} if instrs else set()
    leaders.update(fn.labels.values())
    for k, ins in enumerate(instrs):
        op = ins.opcode
        if op in registry.INDIRECT:
            raise UnsupportedError(f"indirect branch '{ins.form.name}' is not supported",
                                   ins.loc)
        if never_runs(ins):
            continue
        if op in _BRANCHES or op == "BSSY":
            leaders.add(_target(ins, index_of, fn))
        if op in _BRANCHES or op in registry.TERMINATORS:
            leaders.add(k + 1)
    leaders_sorted = sorted(x for x in leaders if x < len(instrs))
    start_to_block = {s: b for b, s in enumerate(leaders_sorted)}
    labels_of: dict[int, list[str]] = {}
    for name, at in fn.labels.items():
        if at in start_to_block:
            labels_of.setdefault(start_to_block[at], []).append(name)

    def block_at(index: int) -> int:
        return start_to_block[index] if index < len(instrs) else EXIT

    blocks: list[BasicBlock] = []
    for b, start in enumerate(leaders_sorted):
        end = leaders_sorted[b + 1] if b + 1 < len(leaders_sorted) else len(instrs)
        last = instrs[end - 1]
        fall: int | None = block_at(end)
        target = None
        if never_runs(last):
            succs: tuple[int, ...] = (fall,)
        elif last.opcode in _BRANCHES:
            target = block_at(_target(last, index_of, fn))
            # BRA.DIV ~URZ, `(L) and similar take a condition operand besides the target
            conditional = not always_runs(last) or len(last.operands) > 1
            if conditional:
                succs = (target,) if target == fall else (target, fall)
            else:
                succs, fall = (target,), None
        elif last.opcode in registry.TERMINATORS:
            if always_runs(last):
                succs, fall = (EXIT,), None
            else:
                succs = (EXIT, fall)
        else:
            succs = (fall,)
        blocks.append(BasicBlock(b, tuple(sorted(labels_of.get(b, []))), start, end,
                                 tuple(dict.fromkeys(succs)), target, fall))
    preds: list[list[int]] = [[] for _ in blocks]
    for blk in blocks:
        for s in blk.succs:
            if s != EXIT:
                preds[s].append(blk.index)
    cfg = Cfg(tuple(blocks), post_dominators(blocks), tuple(tuple(p) for p in preds))
    return SassCfg(cfg, _reconvergence(fn, index_of, start_to_block))


def _reconvergence(fn: SassFunction, index_of: dict[int, int],
                   start_to_block: dict[int, int]) -> tuple[Reconvergence, ...]:
    instrs = fn.instructions
    out = []
    for k, ins in enumerate(instrs):
        if ins.opcode != "BSSY" or never_runs(ins):
            continue
        if len(ins.operands) != 2 or not isinstance(ins.operands[0], SassReg) \
                or ins.operands[0].kind != "B":
            raise SassSyntaxError("BSSY takes a barrier register and a target", ins.loc)
        barrier = ins.operands[0]
        t = _target(ins, index_of, fn)
        lo, hi = (k, t) if t > k else (t, k)
        syncs = tuple(j for j in range(lo, hi + 1) if instrs[j].opcode == "BSYNC"
                      and instrs[j].operands[:1] == (barrier,))
        out.append(Reconvergence(k, str(barrier), instrs[t].offset, start_to_block[t], syncs))
    return tuple(out)
