"""Control and warp SASS instructions: BRA, EXIT, RET, CALL, BSSY/BSYNC, BAR.SYNC, SHFL,
WARPSYNC, NOP.

BRA/EXIT/RET are the executor's branch, exit and return (the SASS kernel object gives them the
executor's opcodes `bra`/`exit`/`ret`; see `semantics.sass.machine`), so their semantic
functions are never called. BSSY/BSYNC carry no value: the executor reconverges a divergent
warp at the branch's immediate post-dominator, and the BSYNC of a BSSY region is a
post-dominator of every branch inside it (ptxas places it at the region's single exit), so
PDOM reconvergence happens at or before the BSYNC; for the warp-synchronous instructions
inside (SHFL, BAR) both give the same set of participating threads (docs/sass.md).
"""

from __future__ import annotations

from semantics.sass.operands import SassTarget
from semantics.sass.ops import register
from semantics.sass.ops.access import fail, imm, int_src, pred_value, set_pred, set_reg
from semantics.sass.ops.ptxcall import ptx


def _nothing(x) -> None:
    return None


@register("NOP", "BSSY", "BSYNC")
def _resolve_nop(form):
    return _nothing if not form.mods else None


@register("WARPSYNC")
def _resolve_warpsync(form):
    """WARPSYNC 0xffffffff / WARPSYNC.ALL: lockstep execution already has the warp together."""
    if set(form.mods) <= {"ALL"}:
        def sem(x) -> None:
            ops = x.ins.operands
            if ops and not (len(ops) == 1 and imm(x, 0) == 0xFFFFFFFF):
                fail(x, "a partial warp mask")
        return sem
    return None


@register("BRA")
def _resolve_bra(form):
    return _nothing if not form.mods else None      # BRA.DIV/.U/.CONV: not modelled


@register("EXIT")
def _resolve_exit(form):
    return _nothing if not form.mods else None


@register("RET")
def _resolve_ret(form):
    """RET.REL.NODEC Rk `(kernel): back to the caller. ASSUMPTION: Rk holds the address of the
    instruction after the CALL (ptxas sets it with `MOV Rk, <next>` right before)."""
    return _nothing if set(form.mods) <= {"REL", "NODEC", "ABS"} else None


def _bar(x) -> None:
    """BAR.SYNC[.DEFER_BLOCKING] 0x0: the CTA barrier (PTX bar.sync 0 with every thread)."""
    ops = x.ins.operands
    if len(ops) != 1 or imm(x, 0) != 0:
        fail(x, "barriers other than 0, or with a thread count")
    x.barrier()


@register("BAR")
def _resolve_bar(form):
    return _bar if form.mods in (("SYNC",), ("SYNC", "DEFER_BLOCKING")) else None


def _shfl(mode: str):
    name = f"shfl.sync.{mode}.b32"

    def sem(x) -> None:
        """SHFL.mode p, d, a, b, c: PTX shfl.sync.mode.b32 d|p, a, b, c, 0xffffffff (c packs
        the segment mask and clamp as in PTX)."""
        ops = x.ins.operands
        if len(ops) != 5:
            fail(x, "expected SHFL p, d, a, b, c")
        v, p = ptx(x, name, [int_src(x, 2), int_src(x, 3), int_src(x, 4), 0xFFFFFFFF],
                   pair=True)
        set_reg(x, ops[1], v)
        set_pred(x, ops[0], p)
    return sem


@register("SHFL")
def _resolve_shfl(form):
    modes = {"DOWN": "down", "UP": "up", "BFLY": "bfly", "IDX": "idx"}
    if len(form.mods) == 1 and form.mods[0] in modes:
        return _shfl(modes[form.mods[0]])
    return None


def _call(x) -> None:
    """CALL.REL[.NOINC] `(f): run f for the active threads on the same register file (a SASS
    subroutine shares the caller's registers; arguments and results are in registers)."""
    from semantics.machine.executor import Executor
    target = x.ins.operands[-1] if x.ins.operands else None
    if not isinstance(target, SassTarget) or target.label is None:
        fail(x, "an indirect or unnamed call target")
    callee = x.k.callees.get(target.label)
    if callee is None:
        fail(x, f"call of '{target.label}', which is not a function of this listing")
    sub = Executor(callee, x.d, x.port, x.geom, x.params, max_steps=x.max_steps,
                   dynamic_shared=x.dynamic_shared, unroll=x.unroll, caller=x)
    sub.regs = x.regs
    sub.run()
    x.exited = x.d.por(x.exited, sub.thread_exits)
    x.thread_exits = x.d.por(x.thread_exits, sub.thread_exits)
    for e in sub.effects:
        key = (e.kind, e.what, e.loc)
        if key not in x.effect_keys:
            x.effect_keys.add(key)
            x.effects.append(e)
    x.symbolic_control |= sub.symbolic_control
    x.thread_instrs += sub.thread_instrs


@register("CALL")
def _resolve_call(form):
    return _call if set(form.mods) <= {"REL", "NOINC", "ABS"} else None


def _vote(mode: str):
    def sem(x) -> None:
        """VOTE.ANY [Rd,] Pd, Ps / VOTE.ALL Pd, Ps: Rd is the ballot of Ps over the warp's
        active threads (PTX vote.sync.ballot), Pd the any/all of it (vote.sync.any/all)."""
        ops = x.ins.operands
        if len(ops) == 3:
            if mode != "any":
                fail(x, "a ballot register with VOTE.ALL")
            set_reg(x, ops[0], ptx(x, "vote.sync.ballot.b32", [pred_value(x, ops[2]),
                                                                0xFFFFFFFF]))
            ops = ops[1:]
        if len(ops) != 2:
            fail(x, "expected VOTE [Rd,] Pd, Ps")
        set_pred(x, ops[0], ptx(x, f"vote.sync.{mode}.pred", [pred_value(x, ops[1]),
                                                             0xFFFFFFFF]))
    return sem


@register("VOTE")
def _resolve_vote(form):
    modes = {"ANY": "any", "ALL": "all"}
    if len(form.mods) == 1 and form.mods[0] in modes:
        return _vote(modes[form.mods[0]])
    return None
