"""Warp- and block-level operations: shfl.sync, vote.sync, activemask, redux.sync,
bar/barrier.sync, bar.red (`__syncthreads_count/and/or`), bar.warp.sync, membar/fence,
nanosleep, griddepcontrol.

Cross-lane reads use concrete lane indices (lane ids, offsets and clamps are static or
thread-id derived in real kernels); a symbolic lane index is refused as unsupported.

What the PTX ISA leaves open here (PTX ISA 9.7.9.6 shfl.sync, 9.7.13.x vote/match/redux/
bar.warp.sync, 9.7.13.11 activemask):
- a `*.sync` operation executed by a thread its membermask leaves out is undefined
  behaviour: a fault of the kernel (`Executor.undefined_if`), with the lane and the line;
- a `shfl` reading a lane that is not executing it, or that its membermask leaves out, reads
  an unspecified value, chosen afresh (`Executor.open_value`); so does a vote, match or
  redux whose membermask names a lane that is neither executing it nor exited (on sm_70 and
  later that lane may meet it from another path, which lockstep does not model);
- `activemask` is the set of threads the scheduler happens to run together: an open value,
  any subset of the warp's non-exited threads that contains the executing one.
"""

from __future__ import annotations

import numpy as np

from semantics.choices import KeySpace
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
    member_mask = _concrete_ints(x, x.read(4, B32), "the member mask")
    x.undefined_if(_pred_from(d, ((member_mask >> lane) & 1) == 0),
                   "shfl.sync executed by a lane its membermask leaves out")
    # A source lane that does not execute this shfl, or that the membermask leaves out:
    # its value is unspecified (under a symbolic mask, where it may not take part).
    named = _pred_from(d, (((member_mask >> j) & 1) == 1) & in_range)
    source_in = d.pand(named, d.pnot(d.eq(d.gather(d.bool_to_bv(x.mask, 1), src, 1),
                                           d.const(0, 1), 1)))
    value = d.gather(a, src, 32)
    absent = d.pnot(source_in)
    if d.may_any(d.pand(x.mask, absent)):
        value = d.ite(absent, x.open_value("shfl from a lane that does not take part", 32),
                      value, 32)
    x.write(dst.first if isinstance(dst, Pair) else dst, value, B32)
    if isinstance(dst, Pair):
        x.write_pred(dst.second, d.pnot(d.eq(d.from_ints(pval.astype(np.int64), 1),
                                             d.const(0, 1), 1)))


def _membership(x, mask_operand: int, what: str):
    """The membermask of a warp-synchronous operation (concrete): undefined behaviour where
    it leaves the executing lane out. Returns (mask per lane, the lanes whose result is open:
    the mask names a lane of their warp that neither executes this nor has exited)."""
    d = x.d
    member_mask = _concrete_ints(x, x.read(mask_operand, B32), "the member mask")
    lane = x.lane_in_cta % 32
    x.undefined_if(_pred_from(d, ((member_mask >> lane) & 1) == 0),
                   f"{what} executed by a lane its membermask leaves out")
    executing = _mask_array(x, x.mask) & ~_maybe_exited(x)
    n = executing.size
    open_lanes = np.zeros(n, dtype=bool)
    if not x.may_meet_later(x.ins.opcode):
        # lanes not here will exit without one: the operation completes without them
        return member_mask, open_lanes
    for k in range(32):
        idx = x.warp_base + k
        ok = (idx < n)
        idx = np.minimum(idx, n - 1)
        named = ok & (((member_mask >> k) & 1) == 1) & (x.cta_of_lane[idx] == x.cta_of_lane)
        live = ~_maybe_exited(x)[idx]
        open_lanes |= named & live & ~executing[idx] & _certainly_not(x.mask, idx)
    return member_mask, open_lanes


def _maybe_exited(x) -> np.ndarray:
    return _mask_array(x, x._threads_exited())


def _certainly_not(mask, idx: np.ndarray) -> np.ndarray:
    """Lanes `idx` certainly not in `mask` (a concrete False)."""
    if isinstance(mask, np.ndarray):
        return ~mask.astype(bool)[idx]
    return np.array([isinstance(mask[i], (bool, np.bool_)) and not mask[i] for i in idx],
                    dtype=bool)


def _opened(x, value, open_lanes: np.ndarray, w: int, what: str):
    """`value` with the lanes whose result is open (`_membership`) unspecified."""
    if not open_lanes.any():
        return value
    d = x.d
    return d.ite(_pred_from(d, open_lanes), x.open_value(what, w, lanes=open_lanes), value, w)


def _vote(x) -> None:
    d = x.d
    mode = next(f for f in ("all", "any", "uni", "ballot") if x.form.has(f))
    _, open_lanes = _membership(x, 2, f"vote.sync.{mode}")
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
        x.write(0, _opened(x, acc, open_lanes, 32, "vote.sync.ballot with absent members"),
                B32)
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
    if open_lanes.any():
        bit = _opened(x, d.bool_to_bv(r, 1), open_lanes, 1,
                      f"vote.sync.{mode} with absent members")
        r = d.pnot(d.eq(bit, d.const(0, 1), 1))
    x.write_pred(0, r)


def _pred_from(d, arr: np.ndarray):
    """A concrete boolean lane vector as a domain predicate."""
    return d.pnot(d.eq(d.from_ints(arr.astype(np.int64), 1), d.const(0, 1), 1))


def _activemask(x) -> None:
    """Any subset of the warp's threads that have not exited, containing the executing
    one: an open value per lane and read, whose natural value (the emulator's default) is
    the lanes running this instruction together in lockstep."""
    d = x.d
    active = _mask_array(x, x.mask)
    n = active.size
    together = np.zeros(n, dtype=np.int64)
    live = np.zeros(n, dtype=np.int64)
    for k in range(32):
        idx = x.warp_base + k
        ok = (idx < n)
        idx = np.minimum(idx, n - 1)
        same = ok & (x.cta_of_lane[idx] == x.cta_of_lane)
        together |= np.where(same & active[idx], 1 << k, 0)
        live |= np.where(same & ~_certain_array(x._threads_exited())[idx], 1 << k, 0)
    own = np.left_shift(1, x.lane_in_cta % 32)
    keys = x.lane_keys(KeySpace.THREAD).counted(x.read_count(("activemask",)))
    raw = d.unspecified(f"{x.tag}/activemask@{x.site}", 32, keys, x.choices,
                        natural=together)
    x.effect("nondeterministic", "activemask (which threads run together is the "
                                 "scheduler's choice)")
    mask = d.bor(d.band(raw, d.from_ints(live, 32), 32), d.from_ints(own, 32), 32)
    x.write(0, mask, B32)


def _certain_array(p) -> np.ndarray:
    """The lanes where a (concrete or symbolic) predicate certainly holds."""
    if isinstance(p, np.ndarray):
        return p.astype(bool)
    return np.array([isinstance(v, (bool, np.bool_)) and bool(v) for v in p], dtype=bool)


def _barrier(x) -> None:
    if len(x.ins.operands) > 1:
        raise UnsupportedError("bar.sync with a thread count is not supported", x.ins.loc)
    x.barrier()


def _cta_total(x, v, w: int):
    """Each lane gets the sum of `v` over the lanes of its CTA, added in thread order (the
    order a loop or a chain of atomics adds them in: z3's simplifier then gives the same
    flat sum, and no solver is needed to see two such counts equal)."""
    d = x.d
    t = x.geom.threads_per_cta
    base = x.cta_of_lane * t
    acc = d.const(0, w)
    for k in range(t):
        acc = d.add(acc, d.gather(v, base + k, w), w)
    return acc


def _bar_red(x) -> None:
    """bar.red.{popc.u32, and.pred, or.pred} d, a, {!}c (PTX ISA 9.7.13.1 bar): a barrier,
    then the CTA-wide reduction of the predicate c over the threads that reach it (those
    that have exited take no part). The barrier comes first, with its divergence checks."""
    if len(x.ins.operands) > 3:
        raise UnsupportedError("bar.red with a thread count is not supported", x.ins.loc)
    x.barrier()
    d = x.d
    c = d.pand(x.read_pred(2), x.mask)
    op = next(f for f in ("popc", "and", "or") if x.form.has(f))
    if op == "popc":
        x.write(0, _cta_total(x, d.bool_to_bv(c, 32), 32), B32)
        return
    # and: no reaching thread has c false; or: some reaching thread has c true.
    counted = c if op == "or" else d.pand(x.mask, d.pnot(x.read_pred(2)))
    total = _cta_total(x, d.bool_to_bv(counted, 32), 32)
    some = d.pnot(d.eq(total, d.const(0, 32), 32))
    x.write_pred(0, some if op == "or" else d.pnot(some))


def _nanosleep(x) -> None:
    """nanosleep.u32 t: a delay of at most about t ns; nothing a value can observe. (Its
    operand is read: a register read before any write is still flagged.)"""
    x.read(0, B32)


def _griddepcontrol(x) -> None:
    """griddepcontrol.wait / .launch_dependents (programmatic dependent launch, PTX ISA
    `griddepcontrol`): an ordering with the grids launched before or after this one. Values
    see nothing here (a launch's inputs are the buffers the launch before left); `wait` is
    where a programmatic launch's accesses become ordered after the launch before, which the
    emulator's race detection checks (`semantics.machine.grid_dependency`). A trigger
    (`launch_dependents`) orders nothing keq counts on: only the wait makes memory visible."""
    if x.form.has("wait"):
        x.grid_wait()


def _fence(x) -> None:
    """A fence: values need nothing (the lockstep run is sequentially consistent), but the
    race detector orders accesses through it (release and acquire patterns:
    `semantics.machine.happens_before`)."""
    x.fence()


def _warp_sync(x) -> None:
    """bar.warp.sync: keq's lockstep keeps every warp converged between instructions; a
    membermask that leaves the executing lane out is undefined behaviour. It orders memory
    among the threads that take part (PTX ISA 9.7.13.2: each waits for the threads its
    membermask names, which run `bar.warp.sync` with the same membermask): per warp, the
    executing lanes that give one membermask form a group when that membermask names all of
    them and no executing lane that gives another one (half-warp tiles sync as two groups;
    anything else orders nothing: more races, never fewer)."""
    member_mask, _ = _membership(x, 0, "bar.warp.sync")
    executing = _certain_array(x.mask) & ~_maybe_exited(x)
    gone = _certain_array(x._threads_exited())
    for base in np.unique(x.warp_base[executing]).tolist():
        warp = x.warp_base == base
        lanes = np.flatnonzero(executing & warp)
        masks = np.array([int(member_mask[i]) & 0xFFFFFFFF for i in lanes.tolist()], np.int64)
        bit = np.left_shift(np.int64(1), x.lane_in_cta[lanes] % 32)
        for m in np.unique(masks).tolist():
            group = masks == m
            bits = int(np.bitwise_or.reduce(bit[group]))
            named = (bit & m) != 0
            if (m & bits) == bits and not (named & ~group).any():
                whole = bool(group.all() and (executing | gone)[warp].all())
                x.warp_sync(lanes[group], whole_warp=whole)


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
        return _warp_sync if form.flags <= {"warp", "sync"} else None
    if form.flags <= {"sync", "aligned", "cta"} and not form.types:
        return _barrier
    if form.has("red") and form.flags <= {"red", "popc", "and", "or", "aligned", "cta"}:
        want = "u32" if form.has("popc") else "pred"
        ops = [f for f in ("popc", "and", "or") if form.has(f)]
        if len(ops) == 1 and len(form.types) == 1 and form.type.name == want:
            return _bar_red
    return None


@register("nanosleep")
def _resolve_nanosleep(form):
    return _nanosleep if form.types and form.type.name == "u32" else None


@register("griddepcontrol")
def _resolve_griddepcontrol(form):
    return _griddepcontrol if form.flags in ({"wait"}, {"launch_dependents"}) else None


@register("membar", "fence")
def _resolve_fence(form):
    if form.opcode == "membar":
        return _fence
    return _fence if form.flags <= {"sc", "acq_rel", "cta", "gpu", "sys", "cluster"} else None


def _members(x, mask_operand: int, member_mask: np.ndarray):
    """Per source lane k of each lane's warp: (gather index, predicate 'k takes part')."""
    d = x.d
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
    member_mask, open_lanes = _membership(x, 2, f"redux.sync.{op}")
    for idx, member in _members(x, 2, member_mask):
        v = d.ite(member, d.gather(a, idx, 32), d.const(identity, 32), 32)
        if op in ("min", "max"):
            lt = d.slt(v, acc, 32) if t.is_signed else d.ult(v, acc, 32)
            acc = d.ite(lt, v, acc, 32) if op == "min" else d.ite(lt, acc, v, 32)
        else:
            acc = {"add": d.add, "and": d.band, "or": d.bor, "xor": d.bxor}[op](acc, v, 32)
    x.write(0, _opened(x, acc, open_lanes, 32, f"redux.sync.{op} with absent members"), t)


def _match(x) -> None:
    d = x.d
    t = x.form.type
    w = t.bits
    a = x.read(1, t)
    same = d.const(0, 32)
    member_mask, open_lanes = _membership(x, 2, "match.sync")
    members_of = _members(x, 2, member_mask)
    for k, (idx, member) in enumerate(members_of):
        hit = d.pand(member, d.eq(d.gather(a, idx, w), a, w))
        same = d.bor(same, d.ite(hit, d.const(1 << k, 32), d.const(0, 32), 32), 32)
    dst = x.operand(0)
    if x.form.has("any"):
        x.write(dst, _opened(x, same, open_lanes, 32, "match.sync with absent members"), B32)
        return
    members = d.const(0, 32)
    for k, (idx, member) in enumerate(members_of):
        members = d.bor(members, d.ite(member, d.const(1 << k, 32), d.const(0, 32), 32), 32)
    all_same = d.eq(same, members, 32)
    x.write(dst.first if isinstance(dst, Pair) else dst,
            _opened(x, d.ite(all_same, members, d.const(0, 32), 32), open_lanes, 32,
                    "match.sync with absent members"), B32)
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
