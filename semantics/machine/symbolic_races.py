"""Race detection on the symbolic domain: every access is logged with the condition under which
it happens, and a race is a pair of conflicting accesses whose conditions can both hold.

The rule is the concrete detector's (`semantics.machine.races`): two accesses to one byte of
shared or global memory conflict when they come from different threads, at least one writes,
and they are in the same barrier interval of one CTA or in different CTAs; two threads of one
warp are also ordered by a `bar.warp.sync` the whole warp runs between their accesses (a
warp interval), or one run by a group of the warp both belong to (`warp_group`: half-warp
tiles; order through chains of groups is not followed: more races, never fewer). Lockstep
execution visits every access of every lane (under symbolic conditions when control depends
on symbolic values), so the log holds every access any allowed input or launch shape makes; `pairs()`
turns the conflicting ones into conditions a solver must refute, each of one kind:
- "race": not morally strong relative to each other (PTX memory model,
  `semantics.machine.memory_model`); two stores of the same term by lanes of one execution of
  one instruction are exempt only when the claim allows benign write races;
- "order": morally strong (atomics, volatile, relaxed...) and so no race, but which comes
  first is the scheduler's choice and may change the outputs (two atomics of one execution
  of one instruction are left out: their order is modelled, `atomic_order`; so are atomics
  whose order cannot show, the same commutative update with no old value read);
- "undefined": an `ld.global.nc` of bytes the kernel also writes, by any thread, at any time
  (the non-coherent path requires memory read-only for the kernel's lifetime); a `suld` of
  bytes a write ordered before it wrote (`memory_model.incoherent_after_writes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import z3

from semantics.domains import z3raw
from semantics.errors import UnsupportedError
from semantics.machine.memory_model import (Strength, cta_scoped_fence,
                                             incoherent_after_writes, morally_strong,
                                             non_coherent, strength)
from semantics.machine.spin_waits import spin_waits
from semantics.machine.symbolic_handoffs import Handoffs
from semantics.machine.symbolic_spins import SpinHandoffs, increment, spin_read


class Conjunction(NamedTuple):
    """`lane and test`, built as a term only when something needs one (`condition_term`).
    A lane whose address is split by the values it may take (`SymbolicPort._resolve`) has
    this condition at each place: a histogram's atomic increment uses the two parts as they
    are, and its race log entries rarely meet a conflicting access, so most of these
    conjunctions (one per lane and per bin) are never built."""
    lane: Any
    test: Any


def condition_term(c):
    """`c` as a term (or a concrete truth value): a `Conjunction` is built here."""
    return z3raw.And(c.lane, c.test) if isinstance(c, Conjunction) else c


class _Access(NamedTuple):
    """One logged access (a named tuple, not a frozen dataclass: a histogram logs one per lane
    and per value its index may take, hundreds of thousands, and a tuple is built in a tenth
    of the time)."""
    tid: int
    epoch: int
    kind: str            # r | w | a
    cond: Any            # True, a z3 Bool or a `Conjunction`
    loc: Any
    lane_name: str
    value: Any = None    # writes: the stored word (int or term); atomics: a counter's
    #                      increment (an integer `add` of a positive constant), else None
    step: int = 0        # which dynamic access (one call of `access`: one instruction, once)
    passed: int = 0      # how many possible (symbolic) barriers its CTA had passed
    at: int = 0          # its first byte (an offset in its region) ...
    nbytes: int = 1      # ... and how many
    strong: bool = False     # a strong access (`memory_model.strength`) ...
    cta_scope: bool = False  # ... of .cta scope
    order: str = ""          # an atomic's update when its order cannot show (`add`...), or "*"
    wepoch: int = 0          # its warp's count of whole-warp `bar.warp.sync`s so far
    # A `cp.async`'s access (`semantics.machine.async_copies`) lasts from its step to the
    # step `done` of the wait that completes it, through barrier intervals epoch..until, warp
    # intervals wepoch..until_w and possible barriers passed..until_p (IN_FLIGHT while no
    # wait has); until -1: not a copy's.
    until: int = -1
    until_w: int = 0
    done: int = 0
    until_p: int = 0
    release: bool = False    # a `.release` store (a release pattern by itself)
    spin: Any = None         # a read at a spin wait: its `symbolic_spins.SpinRead`


IN_FLIGHT = 1 << 62         # a copy no wait completes: in flight to the end

# `_new(_Access, fields)`: the named tuple without its Python-level `__new__` (every field
# given, in order).
_new = tuple.__new__


@dataclass(frozen=True)
class RacePair:
    """`cond` (True or a z3 Bool): the two accesses described by `what` both happen; `kind`
    says what that means (the module docstring)."""

    what: str
    cond: Any
    kind: str = "race"          # race | order | undefined


class SymbolicRaceLog:
    PAIR_LIMIT = 4_000_000      # pairs of accesses examined, over the whole log

    def __init__(self, threads_per_cta: int, benign_writes: bool = False) -> None:
        self.t = threads_per_cta
        self.benign_writes = benign_writes
        # Accesses by place (region, first byte, bytes): a histogram logs one per lane and
        # per bin, a quarter of a million, so not one entry per byte; places that share
        # bytes without being the same are paired in `pairs`.
        self.events: dict[tuple[str, int, int], list[_Access]] = {}
        self.steps = 0
        # per CTA (by global id): its possible barriers' conditions, the executor's own list
        self.barriers: dict[int, list] = {}
        # fences and contending atomics: handoffs that order accesses of different threads
        self.handoffs = Handoffs(threads_per_cta)
        self.spins = SpinHandoffs(threads_per_cta, condition_term)
        # per `cp.async` serial: where its accesses are logged (place, index, lane)
        self.flights: dict[int, list[tuple[tuple, int, int]]] = {}
        # `bar.warp.sync`s by part of a warp, per (CTA, warp): (step, their threads)
        self.warp_groups: dict[tuple[int, int], list[tuple[int, frozenset[int]]]] = {}

    def access(self, x, region: str, flat, nbytes: int, lanes, kind: str, conds: list,
               values: list | None = None) -> None:
        if region not in ("global", "shared"):
            return
        self.steps += 1
        # A lane whose address is split into one access per value it may take (a histogram's
        # `bins[data[i]]`) comes once per value: what depends on the lane alone is found once.
        per_lane: dict[int, tuple] = {}
        loc, where = x.ins.loc, np.asarray(flat).tolist()
        power = strength(x.form)
        if kind == "r" and non_coherent(x.form):
            kind = "n"
        elif kind == "r" and incoherent_after_writes(x.form):
            kind = "s"
        order = getattr(x, "atomic_class", "*") if kind == "a" else ""
        serial = getattr(x, "async_copy", None)
        flight = (-1, 0, 0, 0) if serial is None else (IN_FLIGHT,) * 4
        release = kind in ("w", "a") and (x.form.has("release") or x.form.has("acq_rel"))
        if kind == "a":
            values = [increment(x, lane, 8 * nbytes) for lane in np.asarray(lanes).tolist()]
        wait = spin_waits(x.k).get(x.instr_index) if kind == "r" and power.strong else None
        bounds = None if wait is None else x.read(wait.bound, wait.type)
        for j, lane in enumerate(np.asarray(lanes).tolist()):
            c = conds[j]
            if isinstance(c, (bool, np.bool_)) and not c:
                continue
            facts = per_lane.get(lane)
            if facts is None:
                facts = per_lane[lane] = self._lane_facts(x, region, lane)
            tid, key_region, epoch, name, passed, wepoch = facts
            f = where[j]
            spin = None if wait is None else spin_read(x, wait, bounds[lane], region,
                                                       (key_region, f, nbytes))
            acc = _new(_Access, (tid, epoch, kind,
                                 True if isinstance(c, (bool, np.bool_)) else c, loc, name,
                                 None if values is None else values[j], self.steps, passed, f,
                                 nbytes, power.strong, power.scope == "cta", order, wepoch)
                       + flight + (release, spin))
            if spin is not None:
                self.spins.read(acc)
            place = self.events.setdefault((key_region, f, nbytes), [])
            if serial is not None:
                self.flights.setdefault(serial, []).append(((key_region, f, nbytes),
                                                            len(place), lane))
            place.append(acc)

    def fence(self, x) -> None:
        """A `fence`/`membar` by the lanes that may run it (with their conditions)."""
        cta_scope = cta_scoped_fence(x.form)
        for lane in x.maybe_lanes().tolist():
            cta = int(x.cta_of_lane[lane])
            self.handoffs.fence(int(x.global_tid[lane]), self.steps, int(x.cta_epoch[cta]),
                                x.mask[lane], cta_scope)

    def contending(self, x, lanes: list, conds: list, keys: list) -> None:
        """Lanes of one atomic that contend for one location, in their order's numbering:
        the heads and tails of handoffs (`Handoffs.contending`)."""
        self.handoffs.contending(self.steps, [int(x.global_tid[lane]) for lane in lanes],
                                 conds, keys, strength(x.form).scope == "cta",
                                 x.form.opcode == "atom")

    def warp_group(self, x, lanes) -> None:
        """`bar.warp.sync` by `lanes`, part of one warp, each naming all of them: their
        accesses before it are ordered before their accesses after it."""
        tids = frozenset(int(x.global_tid[lane]) for lane in np.asarray(lanes).tolist())
        self.warp_groups.setdefault(self._warp_of(next(iter(tids))), []).append(
            (self.steps, tids))

    def _warp_of(self, tid: int) -> tuple[int, int]:
        return tid // self.t, (tid % self.t) // 32

    def _group_synced(self, a: _Access, b: _Access) -> bool:
        """Did a `bar.warp.sync` of part of their warp that both threads took part in run
        between `a` and `b`?"""
        groups = self.warp_groups.get(self._warp_of(a.tid))
        if not groups or self._warp_of(b.tid) != self._warp_of(a.tid):
            return False
        lo, hi = sorted((a.step, b.step))
        return any(lo <= step < hi and a.tid in tids and b.tid in tids
                   for step, tids in groups)

    def complete(self, x, serial: int, lanes) -> None:
        """The copy `serial` completes for `lanes` here: its accesses end at this step, in
        their lanes' current barrier and warp intervals."""
        done = set(np.asarray(lanes).tolist())
        rest = []
        for place, i, lane in self.flights.get(serial, ()):
            if lane not in done:
                rest.append((place, i, lane))
                continue
            cta = int(x.cta_of_lane[lane])
            self.events[place][i] = self.events[place][i]._replace(
                until=int(x.cta_epoch[cta]), until_w=int(x.warp_epoch[lane]), done=self.steps,
                until_p=len(x.cta_barriers[cta]))
        if rest:
            self.flights[serial] = rest
        else:
            self.flights.pop(serial, None)

    def _lane_facts(self, x, region: str, lane: int) -> tuple:
        """(global thread id, region key, CTA epoch, thread name, barriers passed, warp
        epoch)."""
        tid = int(x.global_tid[lane])
        # shared memory is per CTA: keyed by the CTA too
        key_region = f"shared:{tid // self.t}" if region == "shared" else region
        cta = int(x.cta_of_lane[lane])
        self.barriers.setdefault(tid // self.t, x.cta_barriers[cta])
        return (tid, key_region, int(x.cta_epoch[cta]), x.thread_name(lane),
                len(x.cta_barriers[cta]), int(x.warp_epoch[lane]))

    def _conflict(self, a: _Access, b: _Access) -> str | None:
        """The kind of pair two accesses to shared bytes make (the module docstring), or
        None when they do not."""
        if "s" in (a.kind, b.kind):
            r, w = (a, b) if a.kind == "s" else (b, a)
            if w.kind in ("w", "a") and self._ordered_before(w, r):
                return "undefined"
            # otherwise an ordinary read: a write after it is fine, one unordered races
            a, b = (x._replace(kind="r") if x.kind == "s" else x for x in (a, b))
        if "n" in (a.kind, b.kind):
            return "undefined" if {a.kind, b.kind} & {"w", "a"} else None
        if a.until >= 0 or b.until >= 0:
            return self._copy_conflict(a, b)
        if a.tid == b.tid or (a.kind == "r" and b.kind == "r"):
            return None
        if a.tid // self.t == b.tid // self.t and a.epoch != b.epoch:
            return None
        if a.tid // 32 == b.tid // 32 and a.wepoch != b.wepoch and self.t % 32 == 0:
            return None           # (a whole-warp bar.warp.sync between: ordered)
        if self.warp_groups and self._group_synced(a, b):
            return None           # (a bar.warp.sync of part of the warp, both in it)
        if morally_strong(Strength(a.strong, "cta" if a.cta_scope else "gpu"),
                          Strength(b.strong, "cta" if b.cta_scope else "gpu"),
                          a.tid // self.t == b.tid // self.t,
                          a.at == b.at and a.nbytes == b.nbytes):
            if a.kind == "a" and b.kind == "a" and (
                    a.step == b.step or (a.order == b.order and a.order != "*")):
                return None
            return "order"
        if self.benign_writes and a.kind == "w" and b.kind == "w" and a.step == b.step \
                and a.value is not None and b.value is not None and _same(a.value, b.value):
            return None
        return "race"

    def _ordered_before(self, w: _Access, r: _Access) -> bool:
        """Is write `w` ordered before read `r`: earlier in one thread's program order, or
        in an earlier barrier interval of their CTA? (A barrier that may or may not run
        between them, under a data-dependent condition, is not counted: a `suld` after one
        is taken as ordinary; docs/semantics.md.)"""
        if w.tid == r.tid:
            return w.step < r.step
        return w.tid // self.t == r.tid // self.t and w.epoch < r.epoch

    def _copy_conflict(self, a: _Access, b: _Access) -> str | None:
        """A pair with a `cp.async`'s access, which lasts from its issue to its completion:
        anything between the two in lockstep races with it (its own thread's too); outside,
        the other thread's access must be in an earlier or later barrier (or whole-warp)
        interval. (cp.async is a weak access: never morally strong.)"""
        if a.kind == "r" and b.kind == "r":
            return None
        for p, q in ((a, b), (b, a)):
            if p.until >= 0 and p.step < q.step <= p.done:
                return "race"
        if a.tid == b.tid:
            return None                 # program order: before the issue, or after the wait
        if a.tid // self.t == b.tid // self.t and _apart(a.epoch, _end(a, a.epoch, a.until),
                                                         b.epoch, _end(b, b.epoch, b.until)):
            return None
        if a.tid // 32 == b.tid // 32 and self.t % 32 == 0 and _apart(
                a.wepoch, _end(a, a.wepoch, a.until_w), b.wepoch, _end(b, b.wepoch, b.until_w)):
            return None
        return "race"

    def _not_handed_off(self, a: _Access, b: _Access, unordered):
        """`unordered` and no handoff through contending atomics orders `a` and `b` either
        way (`semantics.machine.symbolic_handoffs`)."""
        fences, events = self.handoffs.fences, self.events
        sync = [h for h in (self.handoffs.ordered(a, b), self.handoffs.ordered(b, a),
                            self.spins.ordered(a, b, fences, events),
                            self.spins.ordered(b, a, fences, events))
                if h is not None]
        if not sync:
            return unordered
        if any(h is True for h in sync):
            return False                  # (ordered whatever the inputs)
        apart = z3.Not(sync[0]) if len(sync) == 1 else z3.Not(z3.Or(sync))
        return apart if unordered is True else z3.And(unordered, apart)

    def _no_barrier_between(self, a: _Access, b: _Access):
        """True, or the condition that none of the possible barriers their CTA passed between
        `a` and `b` runs (the accesses are then in one barrier interval)."""
        if a.tid // self.t != b.tid // self.t:
            return True
        if a.until >= 0 or b.until >= 0:
            # a copy's access: from the end of the earlier one (a copy's completion) to the
            # start of the later one (an access between is a race already: `_copy_conflict`)
            first, second = (a, b) if a.step <= b.step else (b, a)
            lo = first.until_p if first.until >= 0 else first.passed
            hi = second.passed
            if lo >= hi:
                return True
        elif a.passed == b.passed:
            return True
        else:
            lo, hi = sorted((a.passed, b.passed))
        ran = self.barriers[a.tid // self.t][lo:hi]
        return z3.And([z3.Not(m) for m in ran]) if len(ran) > 1 else z3.Not(ran[0])

    def pairs(self) -> list[RacePair]:
        """Conflicting pairs, one condition per pair of instructions (a disjunction over the
        bytes and threads where they meet). Every conflicting pair is kept: dropping one whose
        condition happens to be the only satisfiable one would hide a race, so the work is
        bounded by skipping what cannot conflict (atomic-atomic, read-read) instead."""
        by_site: dict[tuple, tuple[str, dict]] = {}
        checked = 0
        # (first: deciding the spin waits finds their flags' chains, which the pairs use)
        out = [RacePair(what, cond, "spin")
               for what, cond in self.spins.obligations(self.events)]
        for region, logged, mixed in self._overlapping():
            for accs in self._intervals(region, logged):
                checked = self._pairs_in(region, accs, checked, by_site, mixed)
        for (_, _, _, _, kind), (what, conds) in by_site.items():
            if True in conds:
                out.append(RacePair(what, True, kind))
                continue
            if not conds:
                continue                  # (every pair of the site is ordered: a handoff)
            # one condition per byte of a word: keep each distinct condition once
            unique = list({c.get_id(): c for c in conds.values()}.values())
            out.append(RacePair(what, z3.Or(unique) if len(unique) > 1 else unique[0], kind))
        return out

    def _overlapping(self):
        """(region, accesses, mixed) for each group of places of one region whose bytes
        overlap, transitively: a place alone (`mixed` False: every two of its accesses
        share every byte), or places of different starts or sizes (`mixed`: two accesses
        of the group conflict only where their bytes meet). Groups of one access are
        left out."""
        by_region: dict[str, list[tuple[int, int, list[_Access]]]] = {}
        for (region, at, nbytes), accs in self.events.items():
            by_region.setdefault(region, []).append((at, nbytes, accs))
        for region, places in by_region.items():
            places.sort(key=lambda p: (p[0], p[1]))
            group: list = []
            end = -1
            for at, nbytes, accs in places + [(None, 0, [])]:
                if group and (at is None or at >= end):
                    # (several places: merged in program order, as one byte's log was)
                    logged = group[0][2] if len(group) == 1 else \
                        sorted((a for _, _, g in group for a in g), key=lambda a: a.step)
                    if len(logged) > 1:
                        yield region, logged, len(group) > 1
                    group = []
                if at is None:
                    break
                group.append((at, nbytes, accs))
                end = max(end, at + nbytes)

    @staticmethod
    def _intervals(region: str, accs: list[_Access]) -> list[list[_Access]]:
        """The accesses to overlapping bytes that may conflict among themselves: shared
        memory belongs to one CTA, whose accesses in different barrier intervals (epochs)
        never conflict (`_conflict`), so each epoch's are paired apart (a privatized
        histogram's bin is zeroed, counted and merged in three). Global memory: all."""
        if not region.startswith("shared:") or any(a.kind == "n" for a in accs):
            return [accs]
        by_epoch: dict[int, list[_Access]] = {}
        copies = []
        for a in accs:
            by_epoch.setdefault(a.epoch, []).append(a)
            if a.until > a.epoch:
                copies.append(a)
        for a in copies:            # (a copy meets every interval it lasts through)
            for e, group in by_epoch.items():
                if a.epoch < e <= a.until:
                    group.append(a)
        return [group for group in by_epoch.values() if len(group) > 1]

    def _pairs_in(self, region: str, accs: list[_Access], checked: int,
                  by_site: dict, mixed: bool = False) -> int:
        """Add the conflicting pairs among `accs` to `by_site`: accesses to one place, or
        (`mixed`) to overlapping places, of which only pairs that share a byte are kept;
        returns `checked` plus the pairs examined."""
        names = {"r": "read", "w": "write", "a": "atomic",
                 "n": "non-coherent read (ld.global.nc, tex)", "s": "surface read (suld)"}
        writes = [a for a in accs if a.kind == "w"]
        atomics = [a for a in accs if a.kind == "a"]
        reads = [a for a in accs if a.kind in ("r", "n", "s")]
        # (atomics whose order may show: any, when they are not all the same commutative
        # update; the set of updates is computed once, not per atomic)
        mixed_updates = len({b.order for b in atomics}) > 1
        ordered = [a for a in atomics if a.order == "*" or mixed_updates]
        checked += len(writes) * (len(accs) - 1) + len(atomics) * len(reads) + \
            len(ordered) * len(atomics)
        if checked > self.PAIR_LIMIT:
            # Dropping pairs could hide a race; refusing is sound (Inconclusive, named).
            raise UnsupportedError(f"more than {self.PAIR_LIMIT} pairs of accesses to "
                                   f"check for races (e.g. {accs[0].loc})", accs[0].loc)
        candidates = [(a, b) for j, a in enumerate(writes)
                      for b in writes[j + 1:] + atomics + reads]
        candidates += [(a, b) for a in atomics for b in reads]
        candidates += [(a, b) for j, a in enumerate(ordered) for b in atomics
                       if b is not a and (b not in ordered or ordered.index(b) > j)]
        for a, b in candidates:
            if mixed and (a.at >= b.at + b.nbytes or b.at >= a.at + a.nbytes):
                continue                      # (different bytes of the group)
            kind = self._conflict(a, b)
            if kind is None or (kind == "order" and (
                    _spin_and_store(a, b) or self.spins.fixed_order(a, b, self.events))):
                continue          # (a spin wait and its flag's stores: `symbolic_spins`)
            site = (a.loc, b.loc, a.kind, b.kind, kind)
            entry = by_site.get(site)
            if entry is None:
                tail = {"race": "with no barrier between them",
                        "order": "morally strong, in an order the scheduler chooses",
                        "undefined": "a surface read of memory written before it in the "
                                     "launch" if "s" in (a.kind, b.kind) else
                                     "a non-coherent load of memory the kernel writes"}[kind]
                what = (f"{names[a.kind]} by {a.lane_name} at {a.loc} and "
                        f"{names[b.kind]} by {b.lane_name} at {b.loc} "
                        f"({region.split(':')[0]} memory), {tail}")
                entry = by_site[site] = (what, {})
            conds = entry[1]
            if True in conds:
                continue                  # this site already races for certain
            key = (_key(a.cond), _key(b.cond), a.tid // self.t, a.passed, b.passed, a.until_p,
                   b.until_p)
            if kind == "race" and (self.handoffs.groups or self.spins.reads):
                key += (a.tid, b.tid, a.step, b.step)    # (a handoff is the pair's own)
            if key not in conds:
                unordered = True if kind == "undefined" else self._no_barrier_between(a, b)
                if kind == "race":
                    unordered = self._not_handed_off(a, b, unordered)
                both = False if unordered is False else _both(_both(a.cond, b.cond), unordered)
                if both is not False:
                    conds[True if both is True else key] = both
        return checked


def _spin_and_store(a: _Access, b: _Access) -> bool:
    """A read at a spin wait and a store or atomic (the wait's obligations decide their
    order)."""
    return (a.spin is not None and b.kind in ("w", "a")) or \
        (b.spin is not None and a.kind in ("w", "a"))


def _end(a: _Access, start: int, until: int) -> int:
    return until if a.until >= 0 else start


def _apart(lo_a: int, hi_a: int, lo_b: int, hi_b: int) -> bool:
    """Do the intervals [lo_a, hi_a] and [lo_b, hi_b] not meet?"""
    return hi_a < lo_b or hi_b < lo_a


def _key(c):
    if isinstance(c, Conjunction):
        return (c.lane.get_id(), c.test.get_id())
    return True if c is True else c.get_id()


def _both(a, b):
    if a is True:
        return condition_term(b)
    if b is True:
        return condition_term(a)
    return z3.And(condition_term(a), condition_term(b))


def _same(a, b) -> bool:
    concrete = (int, np.integer)
    if isinstance(a, concrete) and isinstance(b, concrete):
        return int(a) == int(b)
    if isinstance(a, concrete) or isinstance(b, concrete):
        return False
    return a.eq(b)


__all__ = ["RacePair", "SymbolicRaceLog"]
