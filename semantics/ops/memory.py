"""Memory: ld, ldu, st (every state space and vector width), atom and red.

Ordering and caching qualifiers (.volatile .relaxed .nc .ca .cg .cs .L2::...) do not change
the value a race-free kernel reads in keq's sequentially consistent lockstep model; they are
accepted and documented here rather than ignored silently.
"""

from __future__ import annotations

from semantics.errors import UnsupportedError
from semantics.ir.operands import Addr, Sym, Vec
from semantics.ir.types import TYPES, PtxType
from semantics.ops import register
from semantics.ops.common import flush, fmt_of
from semantics.ops.nan_results import nan_result

_QUALIFIERS = frozenset("""volatile relaxed acquire release weak mmio sc cta cluster gpu sys nc
    ca cg cs lu cv wb wt L1::evict_normal L1::evict_unchanged L1::evict_first L1::evict_last
    L1::no_allocate L2::evict_normal L2::evict_first L2::evict_last L2::64B L2::128B L2::256B
    shared::cta""".split())
_SPACES = {"global", "shared", "local", "const", "param", None}


def _space(x) -> str:
    return x.form.space or "generic"


def _param_source(x, i: int):
    """`[name+offset]` of a .param access: a kernel parameter or a .param variable."""
    op = x.operand(i)
    if isinstance(op, Addr) and isinstance(op.base, Sym):
        return op.base.name, op.offset
    return None


def _ld(x) -> None:
    t: PtxType = x.form.type
    nbytes = max(t.bits // 8, 1)
    dst = x.operand(0)
    elems = dst.elems if isinstance(dst, Vec) else (dst,)
    space = _space(x)
    param = _param_source(x, 1) if space == "param" else None
    addr = None if param else x.address(1)
    d = x.d
    for k, e in enumerate(elems):
        if param:
            v = x.param_read(param[0], param[1] + k * nbytes, nbytes)
        else:
            a = d.add(addr, d.const(k * nbytes, 64), 64) if k else addr
            v = x.load(space, a, nbytes, align=nbytes * len(elems) if k == 0 else nbytes)
        x.write(e, v, t)


def _st(x) -> None:
    t: PtxType = x.form.type
    nbytes = max(t.bits // 8, 1)
    src = x.operand(1)
    elems = src.elems if isinstance(src, Vec) else (src,)
    space = _space(x)
    if space == "param":
        target = _param_source(x, 0)
        if target is None:
            raise UnsupportedError(f"'{x.form.name}' to a computed .param address", x.ins.loc)
        for k, e in enumerate(elems):
            x.param_write(target[0], target[1] + k * nbytes, nbytes, x.read(e, t))
        return
    addr = x.address(0)
    d = x.d
    for k, e in enumerate(elems):
        a = d.add(addr, d.const(k * nbytes, 64), 64) if k else addr
        x.store(space, a, nbytes, x.read(e, t), align=nbytes * len(elems) if k == 0 else nbytes)


@register("ld", "ldu")
def _resolve_ld(form):
    if form.space not in _SPACES or not form.flags <= _QUALIFIERS or len(form.types) != 1:
        return None
    if form.type.bits > 64 or form.type.kind == "pred":
        return None
    return _ld


@register("st")
def _resolve_st(form):
    if form.space not in _SPACES - {"const"} or not form.flags <= _QUALIFIERS:
        return None
    if len(form.types) != 1 or form.type.bits > 64 or form.type.kind == "pred":
        return None
    return _st


# -- atomics ----------------------------------------------------------------------------------
_ATOM_OPS = ("add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec")


def atom_update(x, op: str, t: PtxType, b, c):
    """update(domain, old, lanes) -> new, written over the Domain like every semantics."""
    w = t.bits
    fmt = fmt_of(t) if t.is_float else None

    def update(d, old, lanes):
        bb = x.d.take(b, lanes)
        if op == "add":
            if fmt is not None and t.lanes == 2:     # f16x2 / bf16x2: each half on its own
                halves = []
                for hi_bit in (31, 15):
                    o, v = d.extract(old, hi_bit, hi_bit - 15, 32), d.extract(bb, hi_bit,
                                                                          hi_bit - 15, 32)
                    halves.append(nan_result(x, fmt, "atom.add", d.fadd(fmt, "rn", o, v),
                                             [o, v], 16, d))
                return d.concat(halves[0], halves[1], 16, 16)
            if fmt is not None:
                ftz = fmt == "f32" and not x.form.has("noftz")
                o, v = (flush(d, fmt, old, w), flush(d, fmt, bb, w)) if ftz else (old, bb)
                r = nan_result(x, fmt, "atom.add", d.fadd(fmt, "rn", o, v), [o, v], w, d)
                return flush(d, fmt, r, w) if ftz else r
            return d.add(old, bb, w)
        if op in ("min", "max"):
            lt = d.slt(old, bb, w) if t.is_signed else d.ult(old, bb, w)
            return d.ite(lt, old, bb, w) if op == "min" else d.ite(lt, bb, old, w)
        if op == "exch":
            return bb
        if op == "cas":
            cc = x.d.take(c, lanes)
            return d.ite(d.eq(old, bb, w), cc, old, w)
        if op in ("and", "or", "xor"):
            return {"and": d.band, "or": d.bor, "xor": d.bxor}[op](old, bb, w)
        if op == "inc":
            return d.ite(d.ule(bb, old, w), d.const(0, w), d.add(old, d.const(1, w), w), w)
        if op == "dec":
            zero_or_big = d.por(d.eq(old, d.const(0, w), w), d.ult(bb, old, w))
            return d.ite(zero_or_big, bb, d.sub(old, d.const(1, w), w), w)
        raise ValueError(op)
    # Updates whose final word is the same in every order when nobody reads the old values
    # (the order of contending atomics is then invisible: `semantics.machine.atomic_order`).
    update.order_free = fmt is None and op in ("add", "and", "or", "xor", "min", "max")
    update.float_add = fmt is not None and op == "add"      # order-free as real numbers
    update.op = op
    update.operand = b          # per lane (a counter's increment: `symbolic_spins`)
    return update


def _atomic(has_dest: bool):
    def sem(x) -> None:
        form = x.form
        t = form.type
        op = next(f for f in form.flags if f in _ATOM_OPS)
        first = 1 if has_dest else 0
        addr = x.address(first)
        b = x.read(first + 1, t)
        c = x.read(first + 2, t) if op == "cas" else None
        old = x.atomic(_space(x), addr, t.bits // 8, atom_update(x, op, t, b, c),
                       discarded=not has_dest)
        if has_dest:
            x.write(0, old, t)
    return sem


def _resolve_atomic(has_dest: bool):
    def resolve(form):
        ops = [f for f in form.flags if f in _ATOM_OPS]
        rest = form.flags - set(ops) - {"noftz", "acq_rel"}     # (atomics only: .acq_rel)
        if len(ops) != 1 or not rest <= _QUALIFIERS or form.space not in ("global", "shared", None):
            return None
        if form.vec != 1 or len(form.types) != 1:
            return None
        t = form.type
        if t.is_float:
            if ops[0] != "add":
                return None
            half = t.lane_bits == 16
            # PTX: 16-bit float atomics exist only as .noftz; f32/f64 never take it.
            if half != form.has("noftz") or (not half and t.bits not in (32, 64)):
                return None
        elif t.bits not in (32, 64):
            return None
        return _atomic(has_dest)
    return resolve


register("atom")(_resolve_atomic(True))
register("red")(_resolve_atomic(False))
_ = TYPES
