"""Memory SASS instructions: LDC/ULDC (constant bank), LDG/STG (global), LDS/STS (shared),
RED/REDG (global reductions), ATOMS (shared atomics). Loads and stores go through the
executor's memory port, so bounds, alignment, race and uninitialized-read checks are the
emulator's (the same as for PTX `ld`/`st`); atomics reuse the PTX `atom` update functions.

ASSUMPTIONS:
- `desc[URx]` memory descriptors are the default global descriptor (c[0x0][0x208] on sm_90,
  c[0x0][0x118] on sm_80): they select caching policy, not the address.
- `.E` is a 64-bit address from a register pair; global accesses without `.E` are refused.
- Shared addresses on sm_90 count from the CTA's shared window, whose user part starts at
  0x400 (ptxas forms them as `(SR_CgaCtaId << 24) + 0x400 + offset`); on sm_80 from 0.
- Ordering/caching qualifiers (.CONSTANT .STRONG.GPU .SYS .EF .EL .LU .NA ...) change no
  value in keq's sequentially consistent lockstep model.
- ATOMS.POPC.INC.32 RZ, [a]: every active thread adds 1 to the word at a (the hardware sums
  the lanes that hit the same address; the final value is the same).
"""

from __future__ import annotations

from semantics.ir.types import TYPES
from semantics.ops.memory import atom_update
from semantics.sass.operands import ConstBank, SassReg
from semantics.sass.ops import register
from semantics.sass.ops.access import (
    address,
    cbank,
    fail,
    int_src,
    parts,
    reg_value,
    set_reg,
    set_wide,
)

_SIZES = {"U8": (1, False), "S8": (1, True), "U16": (2, False), "S16": (2, True),
          "32": (4, False), "64": (8, False), "128": (16, False)}
_QUALS = frozenset(["E", "CONSTANT", "STRONG", "GPU", "SYS", "SM", "CTA", "WEAK", "EF", "EL", "LU", "EU", "NA", "PRIVATE", "LTC64B", "LTC128B", "LTC256B"])


def _size(form) -> tuple[int, bool] | None:
    sizes = [m for m in form.mods if m in _SIZES]
    if len(sizes) > 1:
        return None
    return _SIZES[sizes[0]] if sizes else (4, False)


def _quals_ok(form) -> bool:
    return set(form.mods) - set(_SIZES) <= _QUALS


def shared_addr(x, i: int):
    a = address(x, i, wide=False)
    base = x.k.shared_base
    return x.d.sub(a, x.d.const(base, 64), 64) if base else a


def _load_into(x, dst, space: str, addr, nbytes: int, signed: bool) -> None:
    d = x.d
    if nbytes <= 4:
        v = x.load(space, addr, nbytes, align=nbytes)
        if nbytes < 4:
            v = (d.sext if signed else d.zext)(v, nbytes * 8, 32)
        set_reg(x, dst, v)
        return
    base, _ = parts(dst)
    for k in range(nbytes // 4):
        a = d.add(addr, d.const(4 * k, 64), 64) if k else addr
        v = x.load(space, a, 4, align=nbytes if k == 0 else 4)
        if base.kind != "RZ":
            set_reg(x, SassReg(base.kind, base.index + k), v)


def _store_from(x, src, space: str, addr, nbytes: int) -> None:
    d = x.d
    base, _ = parts(src)
    if nbytes <= 4:
        v = reg_value(x, base)
        if nbytes < 4:
            v = d.extract(v, nbytes * 8 - 1, 0, 32)
        x.store(space, addr, nbytes, v, align=nbytes)
        return
    for k in range(nbytes // 4):
        a = d.add(addr, d.const(4 * k, 64), 64) if k else addr
        reg = base if base.kind == "RZ" else SassReg(base.kind, base.index + k)
        x.store(space, a, 4, reg_value(x, reg), align=nbytes if k == 0 else 4)


def _ld(space: str, nbytes: int, signed: bool):
    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) != 2:
            fail(x, "expected a destination and an address")
        addr = address(x, 1, wide=True) if space == "global" else shared_addr(x, 1)
        _load_into(x, ops[0], space, addr, nbytes, signed)
    return sem


def _st(space: str, nbytes: int):
    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) != 2:
            fail(x, "expected an address and a source")
        addr = address(x, 0, wide=True) if space == "global" else shared_addr(x, 0)
        _store_from(x, ops[1], space, addr, nbytes)
    return sem


@register("LDG")
def _resolve_ldg(form):
    s = _size(form)
    if s is None or "E" not in form.mods or not _quals_ok(form):
        return None
    return _ld("global", *s)


@register("STG")
def _resolve_stg(form):
    s = _size(form)
    if s is None or "E" not in form.mods or not _quals_ok(form) or "CONSTANT" in form.mods:
        return None
    return _st("global", s[0])


@register("LDS")
def _resolve_lds(form):
    s = _size(form)
    if s is None or set(form.mods) - set(_SIZES):
        return None
    return _ld("shared", *s)


@register("STS")
def _resolve_sts(form):
    s = _size(form)
    if s is None or set(form.mods) - set(_SIZES) or s[1]:
        return None
    return _st("shared", s[0])


def _ldc(x) -> None:
    """LDC[.64|.U8|.S8|.U16|.S16] d, c[b][off] (and ULDC): a constant-bank word (pair)."""
    ops = x.ins.operands
    c, _ = parts(ops[1])
    if len(ops) != 2 or not isinstance(c, ConstBank):
        fail(x, "expected a destination and a constant-bank address")
    nbytes, signed = _size(x.form)
    v = cbank(x, c, nbytes)
    if nbytes < 4:
        v = (x.d.sext if signed else x.d.zext)(v, nbytes * 8, 32)
        nbytes = 4
    set_wide(x, ops[0], v, nbytes * 8)


@register("LDC", "ULDC")
def _resolve_ldc(form):
    s = _size(form)
    if s is None or set(form.mods) - set(_SIZES) or s[0] > 8:
        return None
    return _ldc


# -- reductions and atomics --------------------------------------------------------------------

_RED_OPS = {"ADD": "add", "MIN": "min", "MAX": "max", "AND": "and", "OR": "or", "XOR": "xor",
            "INC": "inc", "DEC": "dec", "EXCH": "exch", "CAS": "cas"}


def _red_form(form):
    ops = [m for m in form.mods if m in _RED_OPS]
    types = [m for m in form.mods if m in ("S32", "U32", "32")]
    rest = set(form.mods) - set(ops) - set(types) - _QUALS
    if len(ops) != 1 or rest or len(types) > 1:
        return None
    t = TYPES["s32"] if types == ["S32"] else TYPES["u32"]
    return _RED_OPS[ops[0]], t


def _red(op: str, t):
    def sem(x) -> None:
        """RED[G].E.op [addr], b: the PTX `red.global.op` update, per active thread."""
        ops = x.ins.operands
        if len(ops) != 2:
            fail(x, "expected RED [addr], b")
        addr = address(x, 0, wide=True)
        b = int_src(x, 1)
        x.atomic("global", addr, 4, atom_update(x, op, t, b, None), discarded=True)
    return sem


@register("RED", "REDG")
def _resolve_red(form):
    r = _red_form(form)
    if r is None or "E" not in form.mods:
        return None
    return _red(*r)


def _is_rz(op) -> bool:
    """The zero register as a destination: the old value is discarded."""
    return str(op) == "RZ"


def _atoms_popc_inc(x) -> None:
    ops = x.ins.operands
    if len(ops) != 2:
        fail(x, "expected ATOMS.POPC.INC.32 d, [addr]")
    d = x.d
    old = x.atomic("shared", shared_addr(x, 1), 4,
                   atom_update(x, "add", TYPES["u32"], d.const(1, 32), None),
                   discarded=_is_rz(ops[0]))
    set_reg(x, ops[0], old)


def _atoms(op: str, t):
    def sem(x) -> None:
        """ATOMS.op d, [addr], b: the PTX `atom.shared.op` update; d gets the old value."""
        ops = x.ins.operands
        if len(ops) != 3:
            fail(x, "expected ATOMS d, [addr], b")
        old = x.atomic("shared", shared_addr(x, 1), 4,
                       atom_update(x, op, t, int_src(x, 2), None), discarded=_is_rz(ops[0]))
        set_reg(x, ops[0], old)
    return sem


@register("ATOMS")
def _resolve_atoms(form):
    if set(form.mods) == {"POPC", "INC", "32"}:
        return _atoms_popc_inc
    r = _red_form(form)
    if r is None or set(form.mods) & (_QUALS - {"STRONG", "CTA"}):
        return None
    return _atoms(*r)


def _atomg(op: str, t):
    def sem(x) -> None:
        """ATOMG.E.op PT, d, [addr], b[, c]: the PTX `atom.global.op` update per active
        thread; d gets the old value. CAS: b is the compare value, c the new one (PTX order).
        The leading predicate output must be PT (its meaning is not modelled)."""
        ops = x.ins.operands
        n = 5 if op == "cas" else 4
        if len(ops) != n or str(ops[0]) != "PT":
            fail(x, "expected ATOMG PT, d, [addr], b[, c]")
        addr = address(x, 2, wide=True, implicit_pair=True)
        b = int_src(x, 3)
        c = int_src(x, 4) if op == "cas" else None
        old = x.atomic("global", addr, 4, atom_update(x, op, t, b, c),
                       discarded=_is_rz(ops[1]))
        set_reg(x, ops[1], old)
    return sem


@register("ATOMG", "ATOM")
def _resolve_atomg(form):
    r = _red_form(form)
    if r is None or "E" not in form.mods:
        return None
    return _atomg(*r)
