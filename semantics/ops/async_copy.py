"""Asynchronous copies from global to shared memory: `cp.async.{ca,cg}.shared{::cta}.global`
with cp-size 4, 8 or 16, the `src-size` (zero-fill) and `ignore-src` forms, and
`cp.async.commit_group`, `cp.async.wait_group N`, `cp.async.wait_all` (PTX ISA,
"cp.async", "cp.async.commit_group", "cp.async.wait_group / wait_all").

- The copy writes cp-size bytes at `dst` (shared) from `src` (global), both aligned to
  cp-size; with `src-size` below cp-size only that many bytes are read and the rest are
  zero (more than cp-size: undefined); with `ignore-src` true nothing is read and all are
  zero. `.ca`/`.cg` and the `.L2::` hints choose caches, not values (`.cg` takes cp-size 16).
- When it happens is the point: asynchronously, at some moment before the wait of its thread
  that covers it. keq performs it here and tells race detection its bytes are in flight until
  that wait (`semantics.machine.async_copies`): reading the destination, or writing the
  source, before the wait is a race, and so is reading it in another thread without a
  barrier after the wait. `cp.async.bulk`, `cp.async.mbarrier.arrive` and the other forms are
  refused by name.
"""

from __future__ import annotations

from semantics.errors import UnsupportedError
from semantics.ir.operands import IntImm, Neg, Reg
from semantics.ir.types import TYPES
from semantics.ops import register

U32 = TYPES["u32"]
_COPY_FLAGS = frozenset({"async", "ca", "cg", "shared", "shared::cta", "global", "L2::cache_hint",
                         "L2::64B", "L2::128B", "L2::256B"})


def _source_limit(x):
    """What limits the bytes read: ("all",), ("ignore", pred) or ("size", u32 value)."""
    extra = list(x.ins.operands[3:])
    if x.form.has("L2::cache_hint") and extra:
        extra = extra[:-1]                  # the cache policy: a hint, no value
    if not extra:
        return ("all",)
    op = extra[0]
    if isinstance(op, Neg) or (isinstance(op, Reg) and x.k.reg_type(op).kind == "pred"):
        return ("ignore", x.read_pred(3))
    return ("size", x.read(3, U32))


def _word(x, src, o: int, limit, align: int):
    """The 4 bytes at `src + o` as the copy reads them (zero where it reads nothing)."""
    d = x.d
    addr = d.add(src, d.const(o, 64), 64) if o else src
    if limit[0] == "all":
        return x.load("global", addr, 4, align=align)
    if limit[0] == "ignore":
        read = d.pnot(limit[1])
        return d.ite(read, x.load("global", addr, 4, d.pand(x.mask, read), align),
                     d.const(0, 32), 32)
    size = limit[1]
    whole = d.ule(d.const(o + 4, 32), size, 32)
    out = d.ite(whole, x.load("global", addr, 4, d.pand(x.mask, whole), align),
                d.const(0, 32), 32)
    part = d.pand(d.pnot(whole), d.ult(d.const(o, 32), size, 32))
    if not d.may_any(d.pand(x.mask, part)):
        return out
    for j in range(4):
        has = d.pand(part, d.ult(d.const(o + j, 32), size, 32))
        b = x.load("global", d.add(addr, d.const(j, 64), 64) if j else addr, 1,
                   d.pand(x.mask, has), 1)
        out = d.ite(has, d.bor(out, d.shl(d.zext(b, 8, 32), d.const(8 * j, 32), 32), 32),
                    out, 32)
    return out


def _cp_async(x) -> None:
    size_op = x.ins.operands[2]
    size = size_op.value if isinstance(size_op, IntImm) else None
    if size not in (4, 8, 16) or (x.form.has("cg") and size != 16):
        raise UnsupportedError(f"'{x.form.name}' with cp-size {size_op} (4, 8 or 16; .cg: "
                               f"16)", x.ins.loc)
    d = x.d
    limit = _source_limit(x)
    if limit[0] == "size":
        x.undefined_if(d.ult(d.const(size, 32), limit[1], 32),
                       f"'{x.form.name}' with src-size larger than cp-size {size}")
    dst, src = x.address(0), x.address(1)
    x.async_copy = x.async_copies.issue(x.maybe_lanes(), x.mask)
    try:
        words = [_word(x, src, o, limit, size if o == 0 else 4) for o in range(0, size, 4)]
        for k, w in enumerate(words):
            x.store("shared", d.add(dst, d.const(4 * k, 64), 64) if k else dst, 4, w,
                    align=size if k == 0 else 4)
    finally:
        x.async_copy = None


def _counting(x):
    return x.async_copies.counting(x.maybe_lanes(), x.mask)


def _commit_group(x) -> None:
    x.async_copies.commit(_counting(x))


def _wait_group(x) -> None:
    keep = x.ins.operands[0]
    if not isinstance(keep, IntImm):
        raise UnsupportedError(f"'{x.form.name}' needs an integer constant", x.ins.loc)
    x.complete_async(x.async_copies.wait(_counting(x), keep.value))


def _wait_all(x) -> None:
    lanes = _counting(x)
    x.async_copies.commit(lanes)
    x.complete_async(x.async_copies.wait(lanes, 0))


@register("cp")
def _resolve_cp(form):
    flags = form.flags
    if "async" not in flags:
        return None
    if flags == {"async", "commit_group"}:
        return _commit_group
    if flags == {"async", "wait_group"}:
        return _wait_group
    if flags == {"async", "wait_all"}:
        return _wait_all
    if flags <= _COPY_FLAGS and "global" in flags and len(flags & {"ca", "cg"}) == 1 \
            and flags & {"shared", "shared::cta"}:
        return _cp_async
    return None
