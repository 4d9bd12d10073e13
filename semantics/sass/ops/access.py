"""Reading and writing SASS operands from a semantic function (the executor is `x`).

SASS operands are registers (R/UR 32-bit, P/UP predicates, RZ/URZ = 0, PT/UPT = true),
64-bit register pairs (`R2` as the low half of R2:R3), constant-bank words `c[0x0][0x210]`,
integer and floating immediates, and decorated sources (`-R1`, `~R1`, `|R1|`, `!P0`). The
decorations mean different things to integer and float operations (`-` is a two's-complement
negation for IADD3/IMAD, a sign flip for FADD), so there is one reader per kind.

Register state lives in the executor's `regs` dict, keyed by `SassReg`, as PTX registers are
keyed by `Reg`: the executor's masked-commit rules apply unchanged. Writes to uniform registers
(UR/UP) apply to every lane of each warp that has an active lane: the uniform datapath holds
one value per warp (ASSUMPTION, from the ISA's description of uniform registers).

numpy is used in one place (`warp_mask`, grouping lanes by warp, like PTX's `ops/warp.py`);
values are built from Domain primitives only.
"""

from __future__ import annotations

import struct
from typing import NoReturn

import numpy as np

from semantics.errors import UnsupportedError
from semantics.ir.operands import IntImm, Reg, SpecialReg
from semantics.sass.operands import ConstBank, FloatLit, SassAddr, SassReg, Src

ZERO_REGS = ("RZ", "URZ", "SRZ")
TRUE_PREDS = ("PT", "UPT")
# Predicates are kept under PTX `Reg` keys in this scope, because the executor reads guard
# predicates itself (`Executor.read_pred` takes a `Reg`).
SASS_SCOPE = -0x5A55


def pkey(reg: SassReg) -> Reg:
    """The executor's register-map key of a SASS predicate register."""
    return Reg(str(reg), SASS_SCOPE)


def fail(x, message: str) -> NoReturn:
    """Refuse the current instruction by name and location."""
    raise UnsupportedError(f"'{x.ins.form.name}': {message}", x.ins.loc)


def parts(op) -> tuple[object, Src | None]:
    """(the operand under its decorations, the decorations or None)."""
    return (op.operand, op) if isinstance(op, Src) else (op, None)


def plain(x, i: int):
    """Operand i without its `.reuse` hint; other decorations are the caller's to handle."""
    return parts(x.ins.operands[i])[0]


# -- registers ---------------------------------------------------------------------------------

def reg_value(x, reg: SassReg, w: int = 32):
    """A 32-bit register, or (w=64) the pair reg:reg+1 with reg as the low half."""
    d = x.d
    if reg.kind in ZERO_REGS:
        return d.const(0, w)
    if reg.kind not in ("R", "UR"):
        fail(x, f"'{reg}' is not a general-purpose register")
    lo = x.regs.get(reg)
    lo = d.const(0, 32) if lo is None else lo
    if w == 32:
        return lo
    if w != 64:
        fail(x, f"a {w}-bit register read")
    hi = x.regs.get(SassReg(reg.kind, reg.index + 1))
    hi = d.const(0, 32) if hi is None else hi
    return d.concat(hi, lo, 32, 32)


def _write_mask(x, reg: SassReg):
    return warp_mask(x) if reg.is_uniform else x.mask


def warp_mask(x):
    """The active mask widened to whole warps (uniform-datapath writes)."""
    m = x.mask
    arr = m if isinstance(m, np.ndarray) else None
    if arr is None:
        if not all(isinstance(v, (bool, np.bool_)) for v in m):
            return m            # a data-dependent mask: per-lane (documented in docs/sass.md)
        arr = np.array(m, dtype=bool)
    base = x.warp_base
    anyw = np.zeros(arr.size, dtype=bool)
    np.logical_or.at(anyw, base, arr)
    out = anyw[base]
    return out if isinstance(m, np.ndarray) else [bool(v) for v in out]


def set_reg(x, reg, v) -> None:
    """Write a 32-bit value to a register under the active mask (RZ/URZ: discarded)."""
    reg, _ = parts(reg)
    if not isinstance(reg, SassReg):
        fail(x, f"cannot write to '{reg}'")
    if reg.kind in ZERO_REGS:
        return
    if reg.kind not in ("R", "UR"):
        fail(x, f"'{reg}' is not a general-purpose register")
    d = x.d
    m = _write_mask(x, reg)
    if d.must_all(m):
        x.regs[reg] = v
        return
    old = x.regs.get(reg)
    x.regs[reg] = d.ite(m, v, d.const(0, 32) if old is None else old, 32)


def set_wide(x, reg, v, w: int) -> None:
    """Write a w-bit value (w = 32k) to reg, reg+1, ... low word first."""
    reg, _ = parts(reg)
    d = x.d
    for k in range(w // 32):
        word = d.extract(v, 32 * k + 31, 32 * k, w) if w > 32 else v
        if reg.kind in ZERO_REGS:
            return
        set_reg(x, SassReg(reg.kind, reg.index + k), word)


# -- predicates --------------------------------------------------------------------------------

def pred_value(x, op):
    """A predicate operand: P/UP registers, PT/UPT (true), `!P`."""
    base, src = parts(op)
    d = x.d
    if not isinstance(base, SassReg) or not base.is_predicate:
        fail(x, f"'{op}' is not a predicate")
    if src is not None and (src.neg or src.absolute or src.mods):
        fail(x, f"predicate operand '{op}'")
    if base.kind in TRUE_PREDS:
        p = d.pconst(True)
    else:
        p = x.regs.get(pkey(base))
        p = d.pconst(False) if p is None else p
    return d.pnot(p) if src is not None and src.invert else p


def set_pred(x, op, p) -> None:
    """Write a predicate (PT/UPT destinations are discarded)."""
    base, _ = parts(op)
    if not isinstance(base, SassReg) or not base.is_predicate:
        fail(x, f"'{op}' is not a predicate destination")
    if base.kind in TRUE_PREDS:
        return
    x.write_pred(pkey(base), p, mask=_write_mask(x, base))


# -- integer sources ---------------------------------------------------------------------------

def int_raw(x, i: int, w: int = 32):
    """Operand i's value before negation/inversion: (value, '-' | '~' | '')."""
    op = x.ins.operands[i]
    base, src = parts(op)
    d = x.d
    if src is not None and (src.absolute or src.mods):
        fail(x, f"integer operand '{op}'")
    if isinstance(base, SassReg):
        v = reg_value(x, base, w)
    elif isinstance(base, IntImm):
        v = d.const(base.value, w)
    elif isinstance(base, ConstBank):
        v = cbank(x, base, w // 8)
    elif isinstance(base, SpecialReg):
        v = special(x, base.name, w)
    else:
        fail(x, f"operand '{op}' as an integer")
    kind = "-" if src is not None and src.neg else "~" if src is not None and src.invert else ""
    return v, kind


def int_src(x, i: int, w: int = 32):
    """Operand i as a w-bit integer: `-a` is the two's-complement negation, `~a` the bitwise
    inversion."""
    v, kind = int_raw(x, i, w)
    d = x.d
    if kind == "-":
        return d.sub(d.const(0, w), v, w)
    if kind == "~":
        return d.bnot(v, w)
    return v


def is_imm(x, i: int) -> bool:
    return isinstance(x.ins.operands[i], IntImm)


def imm(x, i: int) -> int:
    op = x.ins.operands[i]
    if not isinstance(op, IntImm):
        fail(x, f"operand {i} must be an immediate, found '{op}'")
    return op.value


# -- float sources -----------------------------------------------------------------------------

_SIGN = {16: 1 << 15, 32: 1 << 31, 64: 1 << 63}


def float_bits(text: FloatLit, w: int) -> int:
    """The bit pattern of a decimal immediate in a w-bit float format. nvdisasm prints the
    exact value; QNAN is the default quiet NaN with the printed sign (ASSUMPTION: the text
    does not show a payload)."""
    v = text.value
    if w == 32:
        return struct.unpack("<I", struct.pack("<f", v))[0]
    if w == 16:
        return struct.unpack("<H", struct.pack("<e", v))[0]
    if w == 64:
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    raise ValueError(w)


def float_src(x, i: int, w: int = 32):
    """Operand i as a w-bit float pattern; `|a|` clears and `-a` flips the sign bit (no
    rounding, no NaN canonicalization: the ISA applies them as input modifiers)."""
    op = x.ins.operands[i]
    base, src = parts(op)
    d = x.d
    if src is not None and (src.invert or src.mods):
        fail(x, f"float operand '{op}'")
    if isinstance(base, SassReg):
        v = reg_value(x, base, w if w == 64 else 32)
        if w == 16:
            fail(x, "a 16-bit register operand")
    elif isinstance(base, FloatLit):
        v = d.const(float_bits(base, w), w)
    elif isinstance(base, IntImm):
        v = d.const(base.value, w)
    elif isinstance(base, ConstBank):
        v = cbank(x, base, w // 8)
    else:
        fail(x, f"operand '{op}' as a float")
    if src is not None and src.absolute:
        v = d.band(v, d.const(_SIGN[w] - 1, w), w)
    if src is not None and src.neg:
        v = d.bxor(v, d.const(_SIGN[w], w), w)
    return v


# -- constant bank, special registers ---------------------------------------------------------

def cbank(x, c: ConstBank, nbytes: int):
    """`c[bank][offset]`: kernel parameters and the driver's launch constants (the kernel
    object's `cbank_read`)."""
    if c.reg is not None and c.reg.kind not in ZERO_REGS:
        fail(x, f"register-indexed constant-bank address '{c}'")
    return x.k.cbank_read(x, c.bank, c.offset, nbytes)


# SASS special register -> the executor's PTX special register of the same meaning.
_SPECIAL = {
    "SR_TID.X": "%tid.x", "SR_TID.Y": "%tid.y", "SR_TID.Z": "%tid.z",
    "SR_CTAID.X": "%ctaid.x", "SR_CTAID.Y": "%ctaid.y", "SR_CTAID.Z": "%ctaid.z",
    "SR_LANEID": "%laneid", "SR_LTMASK": "%lanemask_lt", "SR_LEMASK": "%lanemask_le",
    "SR_GTMASK": "%lanemask_gt", "SR_GEMASK": "%lanemask_ge", "SR_EQMASK": "%lanemask_eq",
    "SR_CLOCKLO": "%clock", "SR_CLOCKHI": "%clock_hi", "SR_GLOBALTIMERLO": "%globaltimer_lo",
    "SR_GLOBALTIMERHI": "%globaltimer_hi",
}


def special(x, name: str, w: int = 32):
    """S2R/S2UR/CS2R sources. SR_CgaCtaId (the CTA's rank in its cluster) is 0: keq launches
    without clusters, so every cluster is one CTA (ASSUMPTION, sm_90)."""
    if name in ("SR_CgaCtaId", "SRZ"):
        return x.d.const(0, w)
    ptx = _SPECIAL.get(name)
    if ptx is None:
        fail(x, f"special register {name} is not modelled")
    from semantics.ir.types import TYPES
    return x.special(ptx, TYPES[f"b{w}"])


# -- addresses ---------------------------------------------------------------------------------

def address(x, i: int, *, wide: bool, implicit_pair: bool = False):
    """The address of operand i `[R2.64+UR4+0x10]` as a 64-bit value. `wide`: a 64-bit
    (global) address from register pairs; otherwise 32-bit (shared), zero-extended, with the
    base register scaled by `.X4`/`.X8`/`.X16`. `implicit_pair`: a wide address whose base
    register nvdisasm prints without `.64` (ATOMG.E.CAS `[R10+0x8]`) is still a pair."""
    a = x.ins.operands[i]
    if not isinstance(a, SassAddr):
        fail(x, f"expected an address, found '{a}'")
    d = x.d
    w = 64 if wide else 32
    total = d.const(a.offset, w)
    if a.reg is not None:
        mods = set(a.reg_mods)
        if wide != ("64" in mods) and not (wide and implicit_pair):
            fail(x, f"address '{a}': a {'64' if wide else '32'}-bit base register is expected")
        extra = mods - {"64", "X4", "X8", "X16", "U32"}
        if extra or "U32" in mods:
            fail(x, f"address register modifier(s) {sorted(mods - {'64'})}")
        base = reg_value(x, a.reg, w)
        if a.scale != 1:
            base = d.mul(base, d.const(a.scale, w), w)
        total = d.add(total, base, w)
    if a.ureg is not None:
        total = d.add(total, reg_value(x, a.ureg, w), w)
    total = total if wide else d.zext(total, 32, 64)
    # Lanes that do not execute may hold stale (even symbolic) register values; the memory
    # ports look at every lane's address, so give inactive lanes address 0 (never used).
    return total if d.must_all(x.mask) else d.ite(x.mask, total, d.const(0, 64), 64)
