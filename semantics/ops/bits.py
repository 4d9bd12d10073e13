"""Bit operations: and or xor not cnot, shl shr shf, popc clz brev bfind, bfe bfi prmt lop3,
bmsk fns.

Each follows the pseudo-code of the PTX ISA ("Integer Arithmetic" and "Logic and Shift"
sections) and is written from Domain primitives only: Python branches on the static form
(type, mode), never on a value. Loops in the ISA pseudo-code become fixed-shape bit tricks
(SWAR population count, binary-search leading-zero count, masks built with shifts) so one
definition serves the numpy and the z3 domain.
"""

from __future__ import annotations

from semantics.ir.types import TYPES
from semantics.ops import register

U32 = TYPES["u32"]
B32 = TYPES["b32"]
_B = {16: TYPES["b16"], 32: TYPES["b32"], 64: TYPES["b64"]}


def _ones(w: int) -> int:
    return (1 << w) - 1


def _resize(d, v, have: int, want: int):
    if have == want:
        return v
    return d.zext(v, have, want) if want > have else d.extract(v, want - 1, 0, have)


# -- and or xor not cnot ------------------------------------------------------------------

def _logic(op: str):
    def sem(x) -> None:
        t = x.form.type
        d = x.d
        if t.kind == "pred":
            if op == "not":
                x.write_pred(0, d.pnot(x.read_pred(1)))
                return
            f = {"and": d.pand, "or": d.por, "xor": d.pxor}[op]
            x.write_pred(0, f(x.read_pred(1), x.read_pred(2)))
            return
        w = t.bits
        if op == "not":
            x.write(0, d.bnot(x.read(1, t), w), t)
            return
        f = {"and": d.band, "or": d.bor, "xor": d.bxor}[op]
        x.write(0, f(x.read(1, t), x.read(2, t), w), t)
    return sem


def _cnot(x) -> None:
    t = x.form.type
    d, w = x.d, t.bits
    z = d.eq(x.read(1, t), d.const(0, w), w)
    x.write(0, d.ite(z, d.const(1, w), d.const(0, w), w), t)


# -- shifts ----------------------------------------------------------------------------------

def _shift_amount(x, i: int, w: int):
    """Operand i, an unsigned 32-bit shift amount, clamped to w and given as a w-bit value
    (amounts >= w all act like w: the domain's shifts give 0 / the sign fill for it)."""
    d = x.d
    s = x.read(i, U32)
    s = d.ite(d.ult(s, d.const(w, 32), 32), s, d.const(w, 32), 32)
    return _resize(d, s, 32, w)


def _shl(x) -> None:
    t = x.form.type
    w = t.bits
    x.write(0, x.d.shl(x.read(1, t), _shift_amount(x, 2, w), w), t)


def _shr(x) -> None:
    t = x.form.type
    w = t.bits
    a, s = x.read(1, t), _shift_amount(x, 2, w)
    x.write(0, x.d.ashr(a, s, w) if t.is_signed else x.d.lshr(a, s, w), t)


def _shf(x) -> None:
    """Funnel shift of the 64-bit {b, a} by n = min(c, 32) (.clamp) or c & 31 (.wrap)."""
    d = x.d
    a, b, c = x.read(1, B32), x.read(2, B32), x.read(3, U32)
    if x.form.has("clamp"):
        n = d.ite(d.ult(c, d.const(32, 32), 32), c, d.const(32, 32), 32)
    else:
        n = d.band(c, d.const(31, 32), 32)
    v = d.concat(b, a, 32, 32)
    n64 = d.zext(n, 32, 64)
    if x.form.has("l"):
        r = d.extract(d.shl(v, n64, 64), 63, 32, 64)
    else:
        r = d.extract(d.lshr(v, n64, 64), 31, 0, 64)
    x.write(0, r, B32)


# -- counting ----------------------------------------------------------------------------------

def popcount(d, a, w: int):
    """Number of one bits of a (SWAR), as a w-bit value."""
    c = lambda v: d.const(v, w)  # noqa: E731
    rep = lambda byte: int.from_bytes(bytes([byte]) * (w // 8), "little")  # noqa: E731
    v = d.sub(a, d.band(d.lshr(a, c(1), w), c(rep(0x55)), w), w)
    v = d.add(d.band(v, c(rep(0x33)), w), d.band(d.lshr(v, c(2), w), c(rep(0x33)), w), w)
    v = d.band(d.add(v, d.lshr(v, c(4), w), w), c(rep(0x0F)), w)
    return d.lshr(d.mul(v, c(rep(0x01)), w), c(w - 8), w)


def leading_zeros(d, a, w: int):
    """Number of leading zero bits of a (w for a == 0), as a w-bit value."""
    n = d.const(0, w)
    v = a
    k = w // 2
    while k >= 1:
        top_zero = d.eq(d.lshr(v, d.const(w - k, w), w), d.const(0, w), w)
        n = d.ite(top_zero, d.add(n, d.const(k, w), w), n, w)
        v = d.ite(top_zero, d.shl(v, d.const(k, w), w), v, w)
        k //= 2
    is_zero = d.eq(a, d.const(0, w), w)
    return d.ite(is_zero, d.const(w, w), n, w)


def _popc(x) -> None:
    t = x.form.type
    x.write(0, _resize(x.d, popcount(x.d, x.read(1, t), t.bits), t.bits, 32), U32)


def _clz(x) -> None:
    t = x.form.type
    x.write(0, _resize(x.d, leading_zeros(x.d, x.read(1, t), t.bits), t.bits, 32), U32)


def _brev(x) -> None:
    t = x.form.type
    d, w = x.d, t.bits
    v = x.read(1, t)
    k = 1
    while k < w:
        # swap adjacent k-bit groups
        pattern = 0
        for i in range(0, w, 2 * k):
            pattern |= _ones(k) << i
        lo = d.band(v, d.const(pattern, w), w)
        hi = d.band(d.lshr(v, d.const(k, w), w), d.const(pattern, w), w)
        v = d.bor(d.shl(lo, d.const(k, w), w), hi, w)
        k *= 2
    x.write(0, v, t)


def _bfind(x) -> None:
    t = x.form.type
    d, w = x.d, t.bits
    a = x.read(1, t)
    if t.is_signed:
        a = d.ite(d.slt(a, d.const(0, w), w), d.bnot(a, w), a, w)
    lz = leading_zeros(d, a, w)
    pos = lz if x.form.has("shiftamt") else d.sub(d.const(w - 1, w), lz, w)
    none = d.eq(a, d.const(0, w), w)
    x.write(0, d.ite(none, d.const(0xFFFFFFFF, 32), _resize(d, pos, w, 32), 32), U32)


# -- bit fields ---------------------------------------------------------------------------------

def _low_mask(d, n, w: int):
    """Bits 0..n-1 set (all bits when n >= w)."""
    return d.sub(d.shl(d.const(1, w), n, w), d.const(1, w), w)


def _byte_operand(x, i: int, w: int):
    """Operand i read as .u32 and restricted to 0..255, as a w-bit value."""
    d = x.d
    return _resize(d, d.band(x.read(i, U32), d.const(0xFF, 32), 32), 32, w)


def _bfe(x) -> None:
    t = x.form.type
    d, w = x.d, t.bits
    a = x.read(1, t)
    pos, ln = _byte_operand(x, 2, w), _byte_operand(x, 3, w)
    # bit i is taken from a when i < len and pos + i <= msb
    valid = d.band(_low_mask(d, ln, w), d.lshr(d.const(_ones(w), w), pos, w), w)
    field = d.band(d.lshr(a, pos, w), valid, w)
    if not t.is_signed:
        x.write(0, field, t)
        return
    top = d.add(pos, d.sub(ln, d.const(1, w), w), w)       # pos + len - 1 (len > 0 below)
    top = d.ite(d.ult(top, d.const(w - 1, w), w), top, d.const(w - 1, w), w)
    bit = d.band(d.lshr(a, top, w), d.const(1, w), w)
    sbit = d.pand(d.pnot(d.eq(ln, d.const(0, w), w)), d.eq(bit, d.const(1, w), w))
    fill = d.ite(sbit, d.bnot(valid, w), d.const(0, w), w)
    x.write(0, d.bor(field, fill, w), t)


def _bfi(x) -> None:
    t = x.form.type
    d, w = x.d, t.bits
    a, b = x.read(1, t), x.read(2, t)
    pos, ln = _byte_operand(x, 3, w), _byte_operand(x, 4, w)
    m = d.shl(_low_mask(d, ln, w), pos, w)
    x.write(0, d.bor(d.band(b, d.bnot(m, w), w), d.band(d.shl(a, pos, w), m, w), w), t)


# prmt modes: for c[1:0] = 0..3, the source byte of each destination byte (b0, b1, b2, b3).
_PRMT_MODES = {
    "f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
    "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
    "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)),
}


def _prmt(x) -> None:
    d = x.d
    a, b, c = x.read(1, B32), x.read(2, B32), x.read(3, B32)
    src = d.concat(b, a, 32, 32)                         # bytes b7..b4 b3..b0
    mode = next((m for m in _PRMT_MODES if x.form.has(m)), None)
    out = d.const(0, 32)
    if mode is None:
        for k in range(4):
            ctl = d.band(d.lshr(c, d.const(4 * k, 32), 32), d.const(0xF, 32), 32)
            sel = d.band(ctl, d.const(7, 32), 32)
            byte = d.band(d.lshr(src, d.zext(d.shl(sel, d.const(3, 32), 32), 32, 64), 64),
                          d.const(0xFF, 64), 64)
            byte = d.extract(byte, 31, 0, 64)
            sign = d.eq(d.band(byte, d.const(0x80, 32), 32), d.const(0x80, 32), 32)
            rep = d.eq(d.band(ctl, d.const(8, 32), 32), d.const(8, 32), 32)
            byte = d.ite(d.pand(rep, sign), d.const(0xFF, 32),
                         d.ite(rep, d.const(0, 32), byte, 32), 32)
            out = d.bor(out, d.shl(byte, d.const(8 * k, 32), 32), 32)
        x.write(0, out, B32)
        return
    sel = d.band(c, d.const(3, 32), 32)
    choices = []
    for idx in _PRMT_MODES[mode]:
        v = d.const(0, 32)
        for k, j in enumerate(idx):
            byte = d.extract(src, 8 * j + 7, 8 * j, 64)
            v = d.bor(v, d.shl(d.zext(byte, 8, 32), d.const(8 * k, 32), 32), 32)
        choices.append(v)
    out = choices[3]
    for i in (2, 1, 0):
        out = d.ite(d.eq(sel, d.const(i, 32), 32), choices[i], out, 32)
    x.write(0, out, B32)


def _lop3(x) -> None:
    """d = LUT[a, b, c]: minterm i (a = bit 2, b = bit 1, c = bit 0 of i) when bit i of immLut
    is set (immLut = F(0xF0, 0xCC, 0xAA))."""
    d = x.d
    a, b, c = x.read(1, B32), x.read(2, B32), x.read(3, B32)
    lut = x.read(4, B32)
    ones = d.const(_ones(32), 32)
    out = d.const(0, 32)
    for i in range(8):
        term = ones
        for bit, v in ((4, a), (2, b), (1, c)):
            term = d.band(term, v if i & bit else d.bnot(v, 32), 32)
        on = d.eq(d.band(lut, d.const(1 << i, 32), 32), d.const(1 << i, 32), 32)
        out = d.bor(out, d.ite(on, term, d.const(0, 32), 32), 32)
    x.write(0, out, B32)


def _bmsk(x) -> None:
    d = x.d
    a, b = x.read(1, U32), x.read(2, U32)
    k = lambda v: d.const(v, 32)  # noqa: E731
    ones = k(_ones(32))
    a1, b1 = d.band(a, k(31), 32), d.band(b, k(31), 32)
    mask0 = d.shl(ones, a1, 32)
    s = d.add(a1, b1, 32)
    overflow = d.ule(k(32), s, 32)
    if x.form.has("clamp"):
        pos_over = d.ule(k(32), a, 32)
        mask0 = d.ite(pos_over, k(0), mask0, 32)
        overflow = d.por(overflow, d.por(pos_over, d.ule(k(32), b, 32)))
    mask1 = d.shl(ones, s, 32)
    mask1 = d.ite(overflow, k(0), d.ite(d.eq(b1, k(0), 32), ones, mask1, 32), 32)
    x.write(0, d.band(mask0, d.bnot(mask1, 32), 32), B32)


def _fns(x) -> None:
    """Position of the |offset|-th set bit of mask counting up (offset > 0) or down
    (offset < 0) from base, or base itself when offset == 0 and mask[base]; else 0xffffffff.
    base > 31 is undefined (recorded)."""
    d = x.d
    k = lambda v: d.const(v, 32)  # noqa: E731
    mask, base, off = x.read(1, B32), x.read(2, U32), x.read(3, TYPES["s32"])
    x.effect("undefined", "fns with base > 31", d.ult(k(31), base, 32))
    neg = d.slt(off, k(0), 32)
    n = d.ite(neg, d.sub(k(0), off, 32), off, 32)          # |offset| (2^31 never matches)
    up = d.band(mask, d.shl(k(_ones(32)), base, 32), 32)     # bits >= base
    down = d.band(mask, _low_mask(d, d.add(base, k(1), 32), 32), 32)   # bits <= base
    none = k(0xFFFFFFFF)
    res_up, res_down = none, none
    for p in range(32):
        bit = k(1 << p)
        # up: the n-th set bit of `up` from below is p when bit p is set and popc(up[p:0]) = n
        has_up = d.eq(d.band(up, bit, 32), bit, 32)
        cnt_up = popcount(d, d.band(up, k(_ones(p + 1)), 32), 32)
        res_up = d.ite(d.pand(has_up, d.eq(cnt_up, n, 32)), k(p), res_up, 32)
        has_dn = d.eq(d.band(down, bit, 32), bit, 32)
        cnt_dn = popcount(d, d.band(down, k(_ones(32) ^ _ones(p)), 32), 32)
        res_down = d.ite(d.pand(has_dn, d.eq(cnt_dn, n, 32)), k(p), res_down, 32)
    at_base = d.eq(d.band(d.lshr(mask, base, 32), k(1), 32), k(1), 32)
    zero = d.ite(at_base, base, none, 32)
    r = d.ite(d.eq(off, k(0), 32), zero, d.ite(neg, res_down, res_up, 32), 32)
    x.write(0, r, B32)


# -- resolvers ------------------------------------------------------------------------------------

def _one_type(form, names: set[str]):
    return len(form.types) == 1 and form.type.name in names


_BITS = {"b16", "b32", "b64"}


@register("and", "or", "xor", "not")
def _resolve_logic(form):
    if form.flags or not _one_type(form, _BITS | {"pred"}):
        return None
    return _logic(form.opcode)


@register("cnot")
def _resolve_cnot(form):
    return _cnot if not form.flags and _one_type(form, _BITS) else None


@register("shl")
def _resolve_shl(form):
    return _shl if not form.flags and _one_type(form, _BITS) else None


@register("shr")
def _resolve_shr(form):
    ok = _BITS | {"u16", "u32", "u64", "s16", "s32", "s64"}
    return _shr if not form.flags and _one_type(form, ok) else None


@register("shf")
def _resolve_shf(form):
    if not _one_type(form, {"b32"}):
        return None
    if form.flags in ({"l", "clamp"}, {"l", "wrap"}, {"r", "clamp"}, {"r", "wrap"}):
        return _shf
    return None


@register("popc")
def _resolve_popc(form):
    return _popc if not form.flags and _one_type(form, {"b32", "b64"}) else None


@register("clz")
def _resolve_clz(form):
    return _clz if not form.flags and _one_type(form, {"b32", "b64"}) else None


@register("brev")
def _resolve_brev(form):
    return _brev if not form.flags and _one_type(form, {"b32", "b64"}) else None


@register("bfind")
def _resolve_bfind(form):
    ok = form.flags <= {"shiftamt"} and _one_type(form, {"u32", "s32", "u64", "s64"})
    return _bfind if ok else None


@register("bfe")
def _resolve_bfe(form):
    return _bfe if not form.flags and _one_type(form, {"u32", "s32", "u64", "s64"}) else None


@register("bfi")
def _resolve_bfi(form):
    return _bfi if not form.flags and _one_type(form, {"b32", "b64"}) else None


@register("prmt")
def _resolve_prmt(form):
    if not _one_type(form, {"b32"}) or len(form.flags) > 1:
        return None
    return _prmt if form.flags <= set(_PRMT_MODES) else None


@register("lop3")
def _resolve_lop3(form):
    # The predicate-producing form (lop3.or.b32 d|p, a, b, c, immLut, q) is not covered.
    ok = not form.flags and form.boolop is None and _one_type(form, {"b32"})
    return _lop3 if ok else None


@register("bmsk")
def _resolve_bmsk(form):
    ok = _one_type(form, {"b32"}) and form.flags in ({"clamp"}, {"wrap"})
    return _bmsk if ok else None


@register("fns")
def _resolve_fns(form):
    return _fns if not form.flags and _one_type(form, {"b32"}) else None
