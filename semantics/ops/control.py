"""Control flow: bra, ret, exit, trap, call. The executor acts on bra/ret/exit/trap at the end of
a basic block (divergence, reconvergence, thread exit); their semantic functions only mark them
supported. `call` runs the callee for the active lanes in a frame of its own: arguments and
results travel through .param variables, as nvcc emits them."""

from __future__ import annotations

from semantics.ir.operands import OperandList, Sym
from semantics.ops import register


def _terminator(x) -> None:  # pragma: no cover - the executor never calls it
    raise AssertionError("control instructions are executed by the SIMT loop")


@register("bra", "ret", "exit", "trap")
def _resolve(form):
    if form.opcode == "bra" and not form.flags <= {"uni"}:
        return None
    return _terminator


def _call(x) -> None:
    lists = [op for op in x.ins.operands if isinstance(op, OperandList)]
    before = x.ins.operands.index(next(op for op in x.ins.operands if isinstance(op, Sym)))
    rets = list(lists[0].items) if lists and before > 0 else []
    args = list(lists[-1].items) if lists and x.ins.operands[-1] is lists[-1] and \
        len(x.ins.operands) - 1 > before else []
    callee = x.ins.operands[before]
    x.call(callee.name, rets, args)


@register("call")
def _resolve_call(form):
    return _call if form.flags <= {"uni"} else None
