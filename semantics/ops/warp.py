"""Warp- and block-level operations: shfl.sync, vote.sync, activemask, redux.sync,
bar/barrier.sync, bar.warp.sync, membar/fence.

Cross-lane reads use concrete lane indices (lane ids, offsets and clamps are static or
thread-id derived in real kernels); a symbolic lane index is refused as unsupported.
"""

from __future__ import annotations

import numpy as np

from semantics.errors import UnsupportedError
from semantics.ir.operands import Pair
from semantics.ir.types import TYPES
from semantics.ops import register

B32 = TYPES["b32"]


def _concrete_ints(x, v, what: str) -> np.ndarray:
    if isinstance(v, np.ndarray):
        return v.astype(np.int64)
    if all(isinstance(e, int) for e in v):
        return np.array(v, dtype=np.int64)
    raise UnsupportedError(f"{what} of '{x.form.name}' depends on symbolic data", x.ins.loc)


def _mask_array(x, m) -> np.ndarray:
    if isinstance(m, np.ndarray):
        return m.astype(bool)
    return np.array([bool(e) if isinstance(e, bool) else True for e in m], dtype=bool)


def _shfl(x) -> None:
    d = x.d
    mode = next(f for f in ("up", "down", "bfly", "idx") if x.form.has(f))
    dst = x.operand(0)
    a = x.read(1, B32)
    b = _concrete_ints(x, x.read(2, B32), "the lane operand") & 0x1F
    c = _concrete_ints(x, x.read(3, B32), "the clamp operand")
    lane = x.lane_in_cta % 32
    cval, segmask = c & 0x1F, (c >> 8) & 0x1F
    max_lane = (lane & segmask) | (cval & ~segmask)
    min_lane = lane & segmask
    if mode == "up":
        j = lane - b
        pval = j >= max_lane
    elif mode == "down":
        j = lane + b
        pval = j <= max_lane
    elif mode == "bfly":
        j = lane ^ b
        pval = j <= max_lane
    else:
        j = min_lane | (b & ~segmask & 0x1F)
        pval = j <= max_lane
    j = np.where(pval, j, lane)
    src = x.warp_base + j
    n = len(x.lane_in_cta)
    in_range = src < n
    src = np.where(in_range, src, np.arange(n))
    # Reading a lane that is not executing this shfl gives an undefined value. Under a
    # symbolic mask (a symbolic launch shape) the source lane may take part in some shapes
    # and not in others: the effect is recorded whenever it may happen.
    source_in = d.pnot(d.eq(d.gather(d.bool_to_bv(x.mask, 1), src, 1), d.const(0, 1), 1))
    x.effect("undefined", "shfl.sync reads a lane that does not take part",
             d.pnot(d.pand(source_in, _pred_from(d, in_range))))
    x.write(dst.first if isinstance(dst, Pair) else dst, d.gather(a, src, 32), B32)
    if isinstance(dst, Pair):
        x.write_pred(dst.second, d.pnot(d.eq(d.from_ints(pval.astype(np.int64), 1),
                                             d.const(0, 1), 1)))


def _vote(x) -> None:
    d = x.d
    mode = next(f for f in ("all", "any", "uni", "ballot") if x.form.has(f))
    active = _mask_array(x, x.mask)
    n = active.size
    base = x.warp_base
    if mode == "ballot":
        p = x.read_pred(1)
        lane = x.lane_in_cta % 32
        bit = d.ite(d.pand(p, x.mask), d.from_ints(np.left_shift(1, lane), 32), d.const(0, 32), 32)
        acc = d.const(0, 32)
        for k in range(32):
            idx = np.minimum(base + k, n - 1)
            valid = (base + k < n) & (x.cta_of_lane[idx] == x.cta_of_lane)
            contrib = d.gather(bit, idx, 32)
            contrib = d.ite(_pred_from(d, valid), contrib, d.const(0, 32), 32)
            acc = d.bor(acc, contrib, 32)
        x.write(0, acc, B32)
        return
    p = x.read_pred(1)
    res_all, res_any = d.pconst(True), d.pconst(False)
    mask_bits = d.bool_to_bv(x.mask, 1)      # membership is the (possibly symbolic) mask
    for k in range(32):
        idx = np.minimum(base + k, n - 1)
        member = d.pand(_pred_from(d, (base + k < n) & (x.cta_of_lane[idx] == x.cta_of_lane)),
                        d.pnot(d.eq(d.gather(mask_bits, idx, 1), d.const(0, 1), 1)))
        pk = d.gather(p, idx, 1)
        res_all = d.pand(res_all, d.por(d.pnot(member), pk))
        res_any = d.por(res_any, d.pand(member, pk))
    r = {"all": res_all, "any": res_any,
         "uni": d.por(res_all, d.pnot(res_any))}[mode]
    x.write_pred(0, r)


def _pred_from(d, arr: np.ndarray):
    """A concrete boolean lane vector as a domain predicate."""
    return d.pnot(d.eq(d.from_ints(arr.astype(np.int64), 1), d.const(0, 1), 1))


def _activemask(x) -> None:
    d = x.d
    active = _mask_array(x, x.mask)
    n = active.size
    acc = np.zeros(n, dtype=np.int64)
    for k in range(32):
        idx = x.warp_base + k
        ok = idx < n
        idx = np.minimum(idx, n - 1)
        acc |= np.where(ok & active[idx] & (x.cta_of_lane[idx] == x.cta_of_lane), 1 << k, 0)
    x.write(0, d.from_ints(acc, 32), B32)


def _barrier(x) -> None:
    if len(x.ins.operands) > 1:
        raise UnsupportedError("bar.sync with a thread count is not supported", x.ins.loc)
    x.barrier()


def _noop(x) -> None:
    """Fences and warp syncs order memory; keq's lockstep model is already sequentially
    consistent and keeps every warp converged between instructions."""


@register("shfl")
def _resolve_shfl(form):
    return _shfl if form.has("sync") and form.type.bits == 32 and \
        form.flags <= {"sync", "up", "down", "bfly", "idx"} else None


@register("vote")
def _resolve_vote(form):
    ok = form.has("sync") and form.flags <= {"sync", "all", "any", "uni", "ballot"}
    return _vote if ok else None


@register("activemask")
def _resolve_activemask(form):
    return _activemask


@register("bar", "barrier")
def _resolve_bar(form):
    if form.has("warp"):
        return _noop if form.flags <= {"warp", "sync"} else None
    if form.flags <= {"sync", "aligned", "cta"} and not form.types:
        return _barrier
    return None


@register("membar", "fence")
def _resolve_fence(form):
    if form.opcode == "membar":
        return _noop
    return _noop if form.flags <= {"sc", "acq_rel", "cta", "gpu", "sys", "cluster"} else None


def _members(x, mask_operand: int):
    """Per source lane k of each lane's warp: (gather index, predicate 'k takes part')."""
    d = x.d
    member_mask = _concrete_ints(x, x.read(mask_operand, B32), "the member mask")
    active = _mask_array(x, x.mask)
    n = active.size
    out = []
    for k in range(32):
        idx = np.minimum(x.warp_base + k, n - 1)
        ok = (x.warp_base + k < n) & (x.cta_of_lane[idx] == x.cta_of_lane) & active[idx] \
            & (((member_mask >> k) & 1) == 1)
        out.append((idx, _pred_from(d, ok)))
    return out


def _redux(x) -> None:
    d = x.d
    t = x.form.type
    op = next(f for f in ("add", "min", "max", "and", "or", "xor") if x.form.has(f))
    a = x.read(1, t)
    identity = {"add": 0, "and": -1, "or": 0, "xor": 0,
                "min": (1 << 31) - 1 if t.is_signed else -1,
                "max": -(1 << 31) if t.is_signed else 0}[op]
    acc = d.const(identity, 32)
    for idx, member in _members(x, 2):
        v = d.ite(member, d.gather(a, idx, 32), d.const(identity, 32), 32)
        if op in ("min", "max"):
            lt = d.slt(v, acc, 32) if t.is_signed else d.ult(v, acc, 32)
            acc = d.ite(lt, v, acc, 32) if op == "min" else d.ite(lt, acc, v, 32)
        else:
            acc = {"add": d.add, "and": d.band, "or": d.bor, "xor": d.bxor}[op](acc, v, 32)
    x.write(0, acc, t)


def _match(x) -> None:
    d = x.d
    t = x.form.type
    w = t.bits
    a = x.read(1, t)
    same = d.const(0, 32)
    for k, (idx, member) in enumerate(_members(x, 2)):
        hit = d.pand(member, d.eq(d.gather(a, idx, w), a, w))
        same = d.bor(same, d.ite(hit, d.const(1 << k, 32), d.const(0, 32), 32), 32)
    dst = x.operand(0)
    if x.form.has("any"):
        x.write(dst, same, B32)
        return
    members = d.const(0, 32)
    for k, (idx, member) in enumerate(_members(x, 2)):
        members = d.bor(members, d.ite(member, d.const(1 << k, 32), d.const(0, 32), 32), 32)
    all_same = d.eq(same, members, 32)
    x.write(dst.first if isinstance(dst, Pair) else dst,
            d.ite(all_same, members, d.const(0, 32), 32), B32)
    if isinstance(dst, Pair):
        x.write_pred(dst.second, all_same)


@register("redux")
def _resolve_redux(form):
    ops = {"add", "min", "max", "and", "or", "xor"}
    if not form.has("sync") or not form.flags <= ops | {"sync"} or len(form.flags & ops) != 1:
        return None
    t = form.type
    bitwise = bool(form.flags & {"and", "or", "xor"})
    ok = (t.name == "b32") if bitwise else t.name in ("u32", "s32")
    return _redux if ok else None


@register("match")
def _resolve_match(form):
    ok = form.has("sync") and form.flags <= {"sync", "any", "all"} and \
        len(form.flags & {"any", "all"}) == 1 and form.type.name in ("b32", "b64")
    return _match if ok else None
