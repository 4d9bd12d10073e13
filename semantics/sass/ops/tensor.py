"""Tensor-core SASS instructions: HMMA (warp-level mma), LDSM (ldmatrix) and MOVM
(movmatrix), each the PTX instruction it implements, run through the PTX semantics
(`ptxcall.call`): the fragment layouts, the tensor-core arithmetic model and the
`.sync.aligned` convergence rule are PTX's.

| SASS | PTX |
|---|---|
| HMMA.16816.F32 d, a, b, c | mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 |
| HMMA.16816.F32.BF16 | mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 |
| HMMA.16816.F16 | mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 |
| HMMA.1688.F32 / .F32.BF16 / .F16 | the same with m16n8k8 |
| LDSM.16.M88{,.2,.4} d, [a] | ldmatrix.sync.aligned.m8n8.{x1,x2,x4}.shared.b16 |
| LDSM.16.MT88{,.2,.4} d, [a] | ldmatrix.sync.aligned.m8n8.{x1,x2,x4}.trans.shared.b16 |
| MOVM.16.MT88 d, a | movmatrix.sync.aligned.m8n8.trans.b16 |

Register operands name the first register of a range: PTX's vector `{a0, a1, a2, a3}` is
a..a+3, in that order (ptxas assigns a PTX vector operand to consecutive registers; the
corpus's translation-validation tests check it kernel by kernel). Ranges: A 4 registers
(k16) or 2 (k8), B 2 or 1, C and D 4 (f32: one element each) or 2 (f16: .f16x2). `RZ` as C
is a zero accumulator (every register of the range reads 0). Each HMMA shape is exactly the
PTX mma of that shape: an m16n8k16 mma that ptxas splits into two HMMA.1688 is a chain of two
m16n8k8 mmas here, and translation validation decides whether the chain computes the PTX
mma (under keq's tensor-core model it need not: docs/tensor-cores.md).

Any other HMMA form (TF32, .SP sparse, .8816, .884, ...) and LDSM of another element size or
shape (.U8, .M816, .M168) has no semantics here: refused by name.
"""

from __future__ import annotations

from semantics.sass.operands import SassReg
from semantics.sass.ops import register
from semantics.sass.ops.access import fail, parts, reg_value, set_reg
from semantics.sass.ops.memory import shared_addr
from semantics.sass.ops.ptxcall import Address, Out, Vector, call

_SHAPES = {"16816": ("m16n8k16", 4, 2), "1688": ("m16n8k8", 2, 1)}   # (PTX, A regs, B regs)
_ACCS = {"F32": ("f32", 4), "F16": ("f16", 2)}                     # (PTX type, C/D regs)


def _range(x, i: int, count: int) -> list:
    """The values of registers r..r+count-1 of operand i (`RZ`: count zeros)."""
    base, src = parts(x.ins.operands[i])
    if not isinstance(base, SassReg) or base.kind not in ("R", "RZ"):
        fail(x, f"operand '{x.ins.operands[i]}' must be a register")
    if src is not None and (src.neg or src.absolute or src.invert or src.mods):
        fail(x, f"operand '{x.ins.operands[i]}': no modifier is modelled on a register range")
    if base.kind == "RZ":
        return [x.d.const(0, 32)] * count
    return [reg_value(x, SassReg("R", base.index + j)) for j in range(count)]


def _write_range(x, i: int, values: list) -> None:
    base, src = parts(x.ins.operands[i])
    if not isinstance(base, SassReg) or base.kind not in ("R", "RZ") or src is not None:
        fail(x, f"destination '{x.ins.operands[i]}' must be a plain register")
    if base.kind == "RZ":
        return
    for j, v in enumerate(values):
        if v is None:
            fail(x, "the PTX semantics wrote no value to a destination register (a keq bug)")
        set_reg(x, SassReg("R", base.index + j), v)


def _hmma(ptx_name: str, a_regs: int, b_regs: int, acc_regs: int):
    def sem(x) -> None:
        if len(x.ins.operands) != 4:
            fail(x, "expected HMMA d, a, b, c")
        a, b, c = _range(x, 1, a_regs), _range(x, 2, b_regs), _range(x, 3, acc_regs)
        # (every source read before D is written: D may be C's or A's registers)
        (out,) = call(x, ptx_name, [Out(acc_regs), Vector(tuple(a)), Vector(tuple(b)),
                                    Vector(tuple(c))])
        _write_range(x, 0, out)
    return sem


@register("HMMA")
def _resolve_hmma(form):
    mods = list(form.mods)
    if len(mods) not in (2, 3) or mods[0] not in _SHAPES or mods[1] not in _ACCS:
        return None
    if len(mods) == 3 and (mods[2] != "BF16" or mods[1] != "F32"):
        return None                      # (bf16 inputs take f32 accumulators only, in PTX)
    shape, a_regs, b_regs = _SHAPES[mods[0]]
    acc, acc_regs = _ACCS[mods[1]]
    elem = "bf16" if len(mods) == 3 else "f16"
    name = f"mma.sync.aligned.{shape}.row.col.{acc}.{elem}.{elem}.{acc}"
    return _hmma(name, a_regs, b_regs, acc_regs)


_COUNTS = {None: 1, "2": 2, "4": 4}


def _ldsm(count: int, trans: bool):
    name = f"ldmatrix.sync.aligned.m8n8.x{count}{'.trans' if trans else ''}.shared.b16"

    def sem(x) -> None:
        if len(x.ins.operands) != 2:
            fail(x, "expected LDSM d, [a]")
        (out,) = call(x, name, [Out(count), Address(shared_addr(x, 1))])
        _write_range(x, 0, [out] if count == 1 else out)
    return sem


@register("LDSM")
def _resolve_ldsm(form):
    mods = list(form.mods)
    if len(mods) not in (2, 3) or mods[0] != "16" or mods[1] not in ("M88", "MT88"):
        return None
    count = _COUNTS.get(mods[2] if len(mods) == 3 else None)
    return None if count is None else _ldsm(count, mods[1] == "MT88")


def _movm(x) -> None:
    """MOVM.16.MT88 d, a: `movmatrix.sync.aligned.m8n8.trans.b16 d, a`."""
    if len(x.ins.operands) != 2:
        fail(x, "expected MOVM d, a")
    (out,) = call(x, "movmatrix.sync.aligned.m8n8.trans.b16", [Out(1), _range(x, 1, 1)[0]])
    _write_range(x, 0, [out])


@register("MOVM")
def _resolve_movm(form):
    return _movm if list(form.mods) == ["16", "MT88"] else None
