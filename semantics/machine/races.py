"""Dynamic data-race detection for the concrete emulator.

Lockstep execution is one legal schedule, and it hides races: a missing `__syncthreads()`
gives the "right" answer in lockstep and a wrong one on silicon. So the emulator can record, per
byte of shared and global memory, the last writer and the readers since then, and report a race
when two accesses meet with:
- different threads, at least one a write, not morally strong relative to each other (PTX
  memory model, `semantics.machine.memory_model`: atomics, volatile and relaxed/acquire/release
  accesses of a scope that covers both threads do not race), and
- the same barrier interval of one CTA (no `bar.sync` between them), or different CTAs
  (nothing orders threads of different CTAs within a launch).
Two threads storing the same value race too (the claim says "free of data races"), unless the
claim allows it by name (`allow = ["benign-write-races"]`). Morally strong conflicting
accesses do not race, but which comes first is the scheduler's choice: recorded as a
"nondeterministic" effect, so testing tries other schedules.
Shadow state is byte-exact and vectorized like the memory itself. It is opt-in (it multiplies
memory use), used by fuzzing and available to any `run_kernel` caller.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semantics.machine.happens_before import HappensBefore
from semantics.machine.kernel import ONE_WARP_IN_SASS, one_warp_in_sass
from semantics.machine.memory import UndefinedBehavior
from semantics.machine.memory_model import (cta_scoped_fence, incoherent_after_writes,
                                             non_coherent, strength)


@dataclass
class _Readers:
    tid: np.ndarray        # a reader since the last write, -1: none, -2: several
    ep: np.ndarray
    multi_cta: np.ndarray
    ins: np.ndarray
    clk: np.ndarray        # the reader's release clock (`happens_before`)

    @classmethod
    def of_size(cls, n: int) -> "_Readers":
        return cls(np.full(n, -1, np.int64), np.zeros(n, np.int64), np.zeros(n, bool),
                   np.zeros(n, np.int32), np.zeros(n, np.int64))


@dataclass
class _Shadow:
    w_tid: np.ndarray      # last writer (global thread id), -1: none
    w_ep: np.ndarray       # its CTA's barrier epoch
    w_strong: np.ndarray   # a strong write (atomic, volatile, relaxed...)
    w_cta: np.ndarray      # ... of .cta scope
    w_ins: np.ndarray      # instruction index, for the report
    weak: _Readers         # weak reads since the last write
    strong: _Readers       # strong reads since the last write (and whether of .cta scope)
    strong_cta: np.ndarray
    # For `.nc` loads (global memory): the first writer of each byte in the whole launch
    # and the first `ld.global.nc` of it (thread, instruction), -1: none
    first_w: np.ndarray
    first_nc: np.ndarray
    w_clk: np.ndarray      # the last writer's release clock (`happens_before`)
    w_tok: np.ndarray      # the release the last (strong) write heads, -1: none

    @classmethod
    def of_size(cls, n: int) -> "_Shadow":
        return cls(np.full(n, -1, np.int64), np.zeros(n, np.int64), np.zeros(n, bool),
                   np.zeros(n, bool), np.zeros(n, np.int32), _Readers.of_size(n),
                   _Readers.of_size(n), np.zeros(n, bool), np.full((n, 2), -1, np.int64),
                   np.full((n, 2), -1, np.int64), np.zeros(n, np.int64),
                   np.full(n, -1, np.int64))


@dataclass
class _Flight:
    """One access of a `cp.async` in flight: recorded again, as its copy's instruction, by the
    lanes whose wait completes it (`RaceDetector.complete`)."""
    region: str
    size: int
    kind: str
    flat: np.ndarray
    nbytes: int
    lanes: np.ndarray
    addr: np.ndarray
    loc: object


class RaceDetector:
    def __init__(self, threads_per_cta: int, benign_writes: bool = False) -> None:
        self.t = threads_per_cta
        self.benign_writes = benign_writes      # the claim allows equal-value store races
        self.shadows: dict[str, _Shadow] = {}
        self.reported: set[tuple] = set()
        # Instructions by id: accesses may come from the kernel or any function it calls.
        self.locs: list = []
        self._loc_ids: dict = {}
        self.hb = HappensBefore(threads_per_cta)
        # `cp.async` (`semantics.machine.async_copies`): per region, the serial of the copy
        # each byte is in flight for (0: none); per serial, what its accesses were, to record
        # them again where the copy completes; and where an access recorded now comes from
        # (the copy's instruction, at its completion), when not the executing instruction.
        self.in_flight: dict[str, np.ndarray] = {}
        self.flights: dict[int, list[_Flight]] = {}
        self.origin = None

    def _here(self, x):
        return self.origin if self.origin is not None else x.ins.loc

    def _loc_id(self, loc) -> int:
        i = self._loc_ids.get(loc)
        if i is None:
            i = self._loc_ids[loc] = len(self.locs)
            self.locs.append(loc)
        return i

    def new_batch(self) -> None:
        self.shadows.pop("shared", None)   # shared memory is per CTA: a new batch, new memory
        self.in_flight.pop("shared", None)
        for serial in list(self.flights):
            self.flights[serial] = [f for f in self.flights[serial] if f.region != "shared"]

    def access(self, x, region: str, size: int, flat: np.ndarray, nbytes: int,
               lanes: np.ndarray, kind: str, addr: np.ndarray,
               values: np.ndarray | None = None) -> None:
        """Record an access of `nbytes` at `flat` offsets by `lanes`; kind r | w | a (its
        strength comes from the instruction's form: `memory_model.strength`). `values`
        (stores) let lanes of one instruction that store the same bytes pass when the
        claim allows benign write races."""
        if region not in ("global", "shared") or not lanes.size:
            return
        sh = self.shadows.get(region)
        if sh is None or sh.w_tid.size != size:
            sh = self.shadows[region] = _Shadow.of_size(size)
        idx = (flat[:, None] + np.arange(nbytes)).reshape(-1)
        lane_of = np.repeat(lanes, nbytes)
        tid = x.global_tid[lane_of]
        ep = x.cta_epoch[x.cta_of_lane[lane_of]]
        power = strength(x.form)
        clk = self.hb.clock_of(tid)
        here = (region, addr, lane_of, tid, ep, kind, power, clk)
        writes = kind in ("w", "a")
        self._against_flights(x, region, idx, kind, lane_of, addr)
        if region == "global":
            self._noncoherent(x, sh, idx, tid, kind == "r" and non_coherent(x.form), writes,
                              kind == "r" and incoherent_after_writes(x.form))
        if power.strong and kind == "a":
            self._atomic_sequence(x, sh, idx, nbytes, tid, ep, power)
        elif power.strong and kind == "r":
            self._acquire(x, sh, idx, nbytes, tid, ep, power)
        self._against_writes(x, sh, idx, here)
        if writes:
            self._against_reads(x, sh.weak, idx, here, False)
            self._against_reads(x, sh.strong, idx, here, True, sh.strong_cta)
            if kind == "w" and not power.strong:
                self._within(x, idx, here, nbytes, values)
            if not power.strong:
                sh.w_tok[idx] = -1
            elif kind != "a":
                self._release(x, sh, idx, nbytes, tid, ep, kind, power)
            sh.w_tid[idx] = tid
            sh.w_ep[idx] = ep
            sh.w_clk[idx] = clk
            sh.w_strong[idx] = power.strong
            sh.w_cta[idx] = power.scope == "cta"
            sh.w_ins[idx] = self._loc_id(self._here(x))
            sh.weak.tid[idx] = -1
            sh.strong.tid[idx] = -1
        else:
            self._read(x, sh.strong if power.strong else sh.weak, idx, tid, ep, clk)
            if power.strong:
                sh.strong_cta[idx] = power.scope == "cta"
        if getattr(x, "async_copy", None) is not None and self.origin is None:
            self._take_off(x, region, size, idx, flat, nbytes, lanes, kind, addr)

    # -- cp.async: bytes in flight (`semantics.machine.async_copies`) --------------------------
    def _take_off(self, x, region: str, size: int, idx, flat, nbytes: int, lanes, kind: str,
                  addr) -> None:
        """The access just recorded belongs to the copy `x.async_copy`: its bytes are in
        flight until the copy completes."""
        fl = self.in_flight.get(region)
        if fl is None or fl.size != size:
            fl = self.in_flight[region] = np.zeros(size, np.int64)
        fl[idx] = x.async_copy
        self.flights.setdefault(x.async_copy, []).append(
            _Flight(region, size, kind, flat.copy(), nbytes, lanes.copy(), addr, x.ins.loc))

    def _against_flights(self, x, region: str, idx, kind: str, lane_of, addr) -> None:
        """An access to bytes a copy still has in flight races with it: any access of its
        destination (the issuing thread's own too), a write of its source."""
        fl = self.in_flight.get(region)
        if fl is None or fl.size <= int(idx.max(initial=0)):
            return
        hit = fl[idx] > 0
        if region == "global" and kind == "r":
            return
        if not hit.any():
            return
        k = int(np.flatnonzero(hit)[0])
        serial = int(fl[idx[k]])
        copy = next((f for f in self.flights.get(serial, ()) if f.region == region), None)
        lane = int(lane_of[k])
        key = ("flight", region, serial if copy is None else str(copy.loc),
               self._loc_id(self._here(x)))
        if key in self.reported:
            return
        self.reported.add(key)
        names = {"r": "read", "w": "write", "a": "atomic"}
        what = "destination" if region == "shared" else "source"
        at = f" at {copy.loc}" if copy is not None else ""
        a = int(addr[lane]) if lane < len(addr) else 0
        x.effect("race", f"data race on {region} memory near address {a:#x}: {names[kind]} by "
                         f"{x.thread_name(lane)} at {self._here(x)} of the {what} of a "
                         f"cp.async{at} still in flight (no cp.async.wait_group of its thread "
                         f"covers the copy before this access)")

    def complete(self, x, serial: int, lanes: np.ndarray) -> None:
        """The copy `serial` completes for `lanes` (their wait covers it): its bytes land, and
        its accesses are recorded again here, as the copy's, so that an access the wait is not
        ordered with (another thread's, with no barrier after the wait) races with it."""
        rest = []
        for f in self.flights.get(serial, ()):
            mine = np.isin(f.lanes, lanes)
            if mine.any():
                fl = self.in_flight.get(f.region)
                if fl is not None and fl.size == f.size:
                    idx = (f.flat[mine][:, None] + np.arange(f.nbytes)).reshape(-1)
                    fl[idx[fl[idx] == serial]] = 0
                self.origin = f.loc
                try:
                    self.access(x, f.region, f.size, f.flat[mine], f.nbytes, f.lanes[mine],
                                "w" if f.kind == "w" else "r", f.addr)
                finally:
                    self.origin = None
            if not mine.all():
                rest.append(_Flight(f.region, f.size, f.kind, f.flat[~mine], f.nbytes,
                                    f.lanes[~mine], f.addr, f.loc))
        if rest:
            self.flights[serial] = rest
        else:
            self.flights.pop(serial, None)

    # -- release and acquire patterns (`semantics.machine.happens_before`) -------------------
    def fence(self, x, lanes: np.ndarray) -> None:
        """`fence`/`membar` by `lanes`: a release of what each thread did before, and the
        completion of the acquires its strong reads began."""
        if not lanes.size:
            return
        cta_scope = cta_scoped_fence(x.form)
        self.hb.fence(x.global_tid[lanes], x.cta_epoch[x.cta_of_lane[lanes]], cta_scope)

    def warp_sync(self, x, lanes: np.ndarray) -> None:
        """`bar.warp.sync` by `lanes`, all of one warp: they are ordered with one another."""
        if lanes.size > 1:
            self.hb.warp_sync(x.global_tid[lanes], x.cta_epoch[x.cta_of_lane[lanes]])

    def _acquire(self, x, sh: _Shadow, idx, nbytes: int, tid, ep, power) -> None:
        """A strong read of bytes a release wrote: acquired at once by an `.acquire` read,
        else at the thread's next fence (one entry per lane: its first byte)."""
        first = idx[::nbytes]
        tokens = sh.w_tok[first]
        hit = np.flatnonzero(tokens >= 0)
        if not hit.size:
            return
        acquire_op = x.form.has("acquire") or x.form.has("acq_rel")
        for k in hit.tolist():
            writer = int(sh.w_tid[first[k]])
            if writer == int(tid[k * nbytes]):
                continue
            same_cta = writer // self.t == int(tid[k * nbytes]) // self.t
            if not same_cta and (power.scope == "cta" or sh.w_cta[first[k]]):
                continue          # not morally strong: observing it synchronizes nothing
            self.hb.read_token(int(tid[k * nbytes]), int(ep[k * nbytes]), int(tokens[k]),
                               acquire_op, power.scope == "cta")

    def _atomic_sequence(self, x, sh: _Shadow, idx, nbytes: int, tid, ep, power) -> None:
        """Atomics, lane by lane in the order they take effect (the port passes them so):
        each reads the release token its location holds (acquired at its thread's next
        fence, or at once for `.acquire`) and continues the sequence, so a later lane reads
        what the earlier ones released (the last-block handoff)."""
        release_op = x.form.has("release") or x.form.has("acq_rel")
        if not (release_op or self.hb.fenced or (sh.w_tok[idx] >= 0).any()):
            sh.w_tok[idx] = -1          # (no release anywhere yet: nothing to carry)
            return
        for k in range(idx.size // nbytes):
            part = slice(k * nbytes, (k + 1) * nbytes)
            self._acquire(x, sh, idx[part], nbytes, tid[part], ep[part], power)
            self._release(x, sh, idx[part], nbytes, tid[part], ep[part], "a", power)

    def _release(self, x, sh: _Shadow, idx, nbytes: int, tid, ep, kind: str, power) -> None:
        """The release a strong write heads (its thread's fence before it, or its own
        `.release`; an atomic continues the sequence it read from), on every byte."""
        release_op = x.form.has("release") or x.form.has("acq_rel")
        if not (release_op or self.hb.fenced or (kind == "a" and (sh.w_tok[idx] >= 0).any())):
            sh.w_tok[idx] = -1
            return
        first = idx[::nbytes]
        for k in range(first.size):
            before = int(sh.w_tok[first[k]]) if kind == "a" else -1
            token = self.hb.write_token(int(tid[k * nbytes]), int(ep[k * nbytes]), release_op,
                                        power.scope == "cta", before)
            sh.w_tok[idx[k * nbytes:(k + 1) * nbytes]] = token

    def _synced(self, clash, other_tid, other_clk, other_ep, tid, ep) -> np.ndarray:
        """`clash` less the pairs a release/acquire pattern orders."""
        if not self.hb.active or not clash.any():
            return clash
        at = np.flatnonzero(clash)
        out = clash.copy()
        out[at] = ~self.hb.ordered_lanes(other_tid[at], other_clk[at], other_ep[at], tid[at],
                                         ep[at])
        return out

    def _noncoherent(self, x, sh: _Shadow, idx, tid, nc: bool, writes: bool,
                     after_writes: bool = False) -> None:
        """An `ld.global.nc` or `tex` (`non_coherent`) of bytes the kernel writes, before or
        after, by any thread: undefined behaviour (PTX ISA, ld.global.nc: the data must be
        read-only for the lifetime of the kernel), raised as a fault of the kernel. A `suld`
        (`after_writes`) of bytes already written in this execution: the same (a write this
        run makes before it is ordered before it, or races with it); one after it is fine."""
        if not (nc or writes or after_writes):
            return
        me = np.stack([tid, np.full(tid.shape, self._loc_id(self._here(x)))], axis=1)
        mine, other = (sh.first_nc, sh.first_w) if nc or after_writes else \
            (sh.first_w, sh.first_nc)
        if not after_writes:
            fresh = mine[idx, 0] < 0
            mine[idx[fresh]] = me[fresh]
        clash = np.flatnonzero(other[idx, 0] >= 0)
        if not clash.size:
            return
        k = int(clash[0])
        o_tid, o_ins = (int(v) for v in other[idx[k]])
        lane = int(np.flatnonzero(x.global_tid == tid[k])[0])
        if after_writes:
            what = (f"{x.form.name} (a surface read) of memory written before it in the "
                    f"launch (by {x.thread_name_of(o_tid)} at {self.locs[o_ins]})")
        elif nc:
            what = (f"{x.form.name} (non-coherent) of memory the kernel writes (written by "
                    f"{x.thread_name_of(o_tid)} at {self.locs[o_ins]})")
        else:
            what = (f"a write to memory the kernel reads non-coherently (ld.global.nc, tex; by "
                    f"{x.thread_name_of(o_tid)} at {self.locs[o_ins]})")
        raise UndefinedBehavior(f"undefined behaviour: {what}", x.ins.loc, x.k.name,
                                x.thread_name(lane), 0)

    def _same_interval(self, tid, other_tid, ep, other_ep):
        same_cta = (other_tid // self.t) == (tid // self.t)
        return ~same_cta | (other_ep == ep)

    def _strong_pair(self, power, other_strong, other_cta, tid, other_tid):
        """Morally strong pairs (vectorized): both strong, scopes covering both threads."""
        if not power.strong:
            return np.zeros(tid.shape, bool)
        same_cta = (other_tid // self.t) == (tid // self.t)
        return other_strong & (same_cta | (~other_cta & (power.scope != "cta")))

    def _against_writes(self, x, sh: _Shadow, idx, here) -> None:
        region, addr, lane_of, tid, ep, kind, power, _ = here
        pw = sh.w_tid[idx]
        clash = (pw >= 0) & (pw != tid) & self._same_interval(tid, pw, ep, sh.w_ep[idx])
        clash = self._synced(clash, pw, sh.w_clk[idx], sh.w_ep[idx], tid, ep)
        strong = self._strong_pair(power, sh.w_strong[idx], sh.w_cta[idx], tid, pw)
        self._order(x, clash & strong & ~((kind == "a") & sh.w_strong[idx]))
        clash &= ~strong
        if clash.any():
            k = int(np.nonzero(clash)[0][0])
            other = "atomic" if sh.w_strong[idx[k]] else "write"
            self._report(x, region, addr, lane_of, k, int(pw[k]), int(sh.w_ins[idx[k]]), other,
                         kind)

    def _against_reads(self, x, readers: _Readers, idx, here, strong_readers: bool,
                       reader_cta=None) -> None:
        region, addr, lane_of, tid, ep, kind, power, _ = here
        pr = readers.tid[idx]
        one = (pr >= 0) & (pr != tid) & self._same_interval(tid, np.maximum(pr, 0), ep,
                                                             readers.ep[idx])
        one = self._synced(one, pr, readers.clk[idx], readers.ep[idx], tid, ep)
        many = (pr == -2) & ((readers.ep[idx] == ep) | readers.multi_cta[idx])
        clash = one | many
        if strong_readers and power.strong:
            ok = self._strong_pair(power, np.ones(idx.shape, bool), reader_cta[idx], tid,
                                   np.where(pr >= 0, pr, tid))
            self._order(x, clash & ok)
            clash &= ~ok
        if clash.any():
            k = int(np.nonzero(clash)[0][0])
            other = int(pr[k]) if pr[k] >= 0 else -1
            self._report(x, region, addr, lane_of, k, other, int(readers.ins[idx[k]]), "read",
                         kind)

    def _within(self, x, idx, here, nbytes: int, values) -> None:
        """Two lanes of this very instruction writing one byte: a race (equal values only
        when the claim allows benign write races)."""
        region, addr, lane_of, tid, ep, kind, power, _ = here
        order = np.argsort(idx, kind="stable")
        dup = np.nonzero(idx[order][1:] == idx[order][:-1])[0]
        if dup.size and values is not None and self.benign_writes:
            vb = values.astype(f"<u{nbytes}").view(np.uint8).reshape(-1)
            dup = dup[vb[order][dup] != vb[order][dup + 1]]
        if dup.size:
            a, b = order[dup[0]], order[dup[0] + 1]
            if tid[a] != tid[b]:
                self._report(x, region, addr, lane_of, int(b), int(tid[a]),
                             self._loc_id(self._here(x)), "write", kind)

    def _read(self, x, readers: _Readers, idx, tid, ep, clk) -> None:
        ins = self._loc_id(self._here(x))
        pr = readers.tid[idx]
        fresh = (pr == -1) | ((readers.ep[idx] != ep) & ((pr // self.t) == (tid // self.t)))
        first = np.where(fresh, tid, np.where(pr == tid, pr, -2))
        readers.multi_cta[idx] = np.where(fresh, False,
                                          readers.multi_cta[idx] | ((np.maximum(pr, 0) // self.t)
                                                                    != (tid // self.t)))
        readers.tid[idx] = first
        readers.ep[idx] = ep
        readers.clk[idx] = np.where(fresh | (pr == tid), clk, readers.clk[idx])
        readers.ins[idx] = np.where(fresh, ins, readers.ins[idx])

    def _order(self, x, which: np.ndarray) -> None:
        """Morally strong conflicting accesses: no race, but the scheduler's order."""
        if which.any():
            x.effect("nondeterministic", "morally strong accesses (volatile, relaxed, "
                                         "atomic) whose order is the scheduler's choice")

    def _report(self, x, region, addr, lane_of, k, other_tid, other_ins, other_kind, kind):
        lane = int(lane_of[k])
        key = (region, other_ins, self._loc_id(self._here(x)))
        if key in self.reported:
            return
        self.reported.add(key)
        names = {"r": "read", "w": "write", "a": "atomic"}
        other_loc = self.locs[other_ins]
        who = x.thread_name_of(other_tid) if other_tid >= 0 else "another thread"
        a = int(addr[lane]) if lane < len(addr) else 0
        warp = f" {ONE_WARP_IN_SASS}" if other_tid >= 0 and one_warp_in_sass(
            x, int(x.global_tid[lane]), int(other_tid)) else ""
        x.effect("race", f"data race on {region} memory near address {a:#x}: "
                         f"{names[kind]} by {x.thread_name(lane)} at {self._here(x)} and "
                         f"{other_kind} by {who} at {other_loc}, with no barrier between "
                         f"them{warp}")
