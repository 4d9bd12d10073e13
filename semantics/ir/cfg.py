"""Control-flow graph of a function, with immediate post-dominators.

The SIMT executor reconverges a divergent warp at the immediate post-dominator of the branch
(the classic stack-based reconvergence of pre-Volta GPUs, which is also the schedule Volta+
hardware produces for structured code). Blocks are numbered in layout order; block -1 is the
virtual exit that every `ret`/`exit` (and falling off the end) flows to.
"""

from __future__ import annotations

from dataclasses import dataclass

from semantics.errors import PtxSyntaxError
from semantics.ir.nodes import Function, Instruction, Label
from semantics.ir.operands import Sym

EXIT = -1
_TERMINATORS = frozenset(("ret", "exit", "trap"))


@dataclass(frozen=True, slots=True)
class BasicBlock:
    index: int
    labels: tuple[str, ...]
    start: int                       # index into Function.instructions
    end: int                         # one past the last instruction
    succs: tuple[int, ...]           # EXIT for the virtual exit
    branch_target: int | None        # successor taken by the block's branch, if any
    fallthrough: int | None          # successor when not taken (or unconditional fall-through)


@dataclass(frozen=True, slots=True)
class Cfg:
    blocks: tuple[BasicBlock, ...]
    ipdom: tuple[int | None, ...]    # per block; EXIT, or None if the block never reaches exit
    preds: tuple[tuple[int, ...], ...]

    def block_of_label(self, name: str) -> int:
        for b in self.blocks:
            if name in b.labels:
                return b.index
        raise KeyError(name)


def _branch_label(ins: Instruction) -> str:
    op = ins.operands[0] if ins.operands else None
    if not isinstance(op, Sym):
        raise PtxSyntaxError("bra needs a label operand", ins.loc)
    return op.name


def build_cfg(fn: Function) -> Cfg:
    instrs = fn.instructions
    # Labels attach to the index of the next instruction.
    label_at: dict[str, int] = {}
    pos = 0
    for s in fn.body or ():
        if isinstance(s, Instruction):
            pos += 1
        elif isinstance(s, Label):
            label_at[s.name] = pos
    leaders = {0} if instrs else set()
    leaders.update(label_at.values())
    for i, ins in enumerate(instrs):
        if ins.opcode == "bra" or ins.opcode == "brx" or ins.opcode in _TERMINATORS:
            leaders.add(i + 1)
    leaders = sorted(x for x in leaders if x <= len(instrs))
    if leaders and leaders[-1] == len(instrs):
        leaders.pop()
    start_to_block = {s: k for k, s in enumerate(leaders)}
    labels_of: dict[int, list[str]] = {}
    for name, at in label_at.items():
        if at in start_to_block:
            labels_of.setdefault(start_to_block[at], []).append(name)

    def block_at(index: int) -> int:
        return start_to_block[index] if index < len(instrs) else EXIT

    blocks: list[BasicBlock] = []
    for k, start in enumerate(leaders):
        end = leaders[k + 1] if k + 1 < len(leaders) else len(instrs)
        last = instrs[end - 1]
        fall = block_at(end)
        target = None
        if last.opcode == "bra":
            name = _branch_label(last)
            if name not in label_at:
                raise PtxSyntaxError(f"branch to undefined label '{name}'", last.loc)
            target = block_at(label_at[name])
            if last.guard is None:
                succs = (target,)
                fall = None
            else:
                succs = (target,) if target == fall else (target, fall)
        elif last.opcode == "brx":
            raise PtxSyntaxError("indirect branch 'brx.idx' is not supported", last.loc)
        elif last.opcode in _TERMINATORS:
            # A guarded ret/exit falls through for the lanes whose guard is false.
            succs = (EXIT,) if last.guard is None else (EXIT, fall)
            if last.guard is None:
                fall = None
        else:
            succs = (fall,)
        blocks.append(BasicBlock(k, tuple(sorted(labels_of.get(k, []))), start, end,
                                 tuple(dict.fromkeys(succs)), target, fall))
    preds: list[list[int]] = [[] for _ in blocks]
    for b in blocks:
        for s in b.succs:
            if s != EXIT:
                preds[s].append(b.index)
    return Cfg(tuple(blocks), post_dominators(blocks), tuple(tuple(p) for p in preds))


def post_dominators(blocks: list[BasicBlock]) -> tuple[int | None, ...]:
    """Immediate post-dominators by iterating to a fixed point over post-dominator sets.

    Functions are small (hundreds of blocks at most), so the simple set-based algorithm is
    clear and fast enough; blocks from which the exit is unreachable get None.
    """
    top = None  # "every node": the start value of the fixed-point iteration
    pdom: list[frozenset[int] | None] = [top] * len(blocks)
    changed = True
    while changed:
        changed = False
        for b in reversed(blocks):
            sets = [frozenset({EXIT}) if s == EXIT else pdom[s] for s in b.succs]
            known = [x for x in sets if x is not top]
            new = frozenset.intersection(*known) | {b.index} if known else top
            if new != pdom[b.index]:
                pdom[b.index] = new
                changed = True
    ipdom: list[int | None] = []
    for b in blocks:
        mine = pdom[b.index]
        if mine is None or EXIT not in mine:
            ipdom.append(None)
            continue
        strict = mine - {b.index}
        # The immediate one is the strict post-dominator that all others post-dominate.
        best = None
        for c in strict:
            others = strict - {c}
            cset = frozenset({EXIT}) if c == EXIT else pdom[c]
            if cset is not None and others <= cset:
                best = c
                break
        ipdom.append(best)
    return tuple(ipdom)
