"""Dynamic data-race detection for the concrete emulator.

Lockstep execution is one legal schedule, and it hides races: a missing `__syncthreads()`
gives the "right" answer in lockstep and a wrong one on silicon. So the emulator can record, per
byte of shared and global memory, the last writer and the readers since then, and report a race
when two accesses meet with:
- different threads, at least one a write, not both atomic, and
- the same barrier interval of one CTA (no `bar.sync` between them), or different CTAs
  (nothing orders threads of different CTAs within a launch).
Shadow state is byte-exact and vectorized like the memory itself. It is opt-in (it multiplies
memory use), used by fuzzing and available to any `run_kernel` caller.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class _Shadow:
    w_tid: np.ndarray      # last writer (global thread id), -1: none
    w_ep: np.ndarray       # its CTA's barrier epoch
    w_atomic: np.ndarray
    w_ins: np.ndarray      # instruction index, for the report
    r_tid: np.ndarray      # a reader since, -1: none, -2: several
    r_ep: np.ndarray
    r_multi_cta: np.ndarray
    r_ins: np.ndarray

    @classmethod
    def of_size(cls, n: int) -> "_Shadow":
        return cls(np.full(n, -1, np.int64), np.zeros(n, np.int64), np.zeros(n, bool),
                   np.zeros(n, np.int32), np.full(n, -1, np.int64), np.zeros(n, np.int64),
                   np.zeros(n, bool), np.zeros(n, np.int32))


class RaceDetector:
    def __init__(self, threads_per_cta: int) -> None:
        self.t = threads_per_cta
        self.shadows: dict[str, _Shadow] = {}
        self.reported: set[tuple] = set()
        # Instructions by id: accesses may come from the kernel or any function it calls.
        self.locs: list = []
        self._loc_ids: dict = {}

    def _loc_id(self, loc) -> int:
        i = self._loc_ids.get(loc)
        if i is None:
            i = self._loc_ids[loc] = len(self.locs)
            self.locs.append(loc)
        return i

    def new_batch(self) -> None:
        self.shadows.pop("shared", None)   # shared memory is per CTA: a new batch, new memory

    def access(self, x, region: str, size: int, flat: np.ndarray, nbytes: int,
               lanes: np.ndarray, kind: str, addr: np.ndarray,
               values: np.ndarray | None = None) -> None:
        """Record an access of `nbytes` at `flat` offsets by `lanes`; kind r | w | a.
        `values` (stores) lets lanes of one instruction that store the *same* bytes to one
        location pass: PTX lets one of them win, and every choice leaves the same memory."""
        if region not in ("global", "shared") or not lanes.size:
            return
        sh = self.shadows.get(region)
        if sh is None or sh.w_tid.size != size:
            sh = self.shadows[region] = _Shadow.of_size(size)
        idx = (flat[:, None] + np.arange(nbytes)).reshape(-1)
        lane_of = np.repeat(lanes, nbytes)
        tid = x.global_tid[lane_of]
        ep = x.cta_epoch[x.cta_of_lane[lane_of]]
        ins = self._loc_id(x.ins.loc)
        atomic = kind == "a"
        writes = kind in ("w", "a")

        def same_interval(other_tid, other_ep):
            same_cta = (other_tid // self.t) == (tid // self.t)
            return ~same_cta | (other_ep == ep)

        # against the last write
        pw = sh.w_tid[idx]
        clash = (pw >= 0) & (pw != tid) & same_interval(pw, sh.w_ep[idx]) & \
            ~(sh.w_atomic[idx] & atomic)
        if clash.any():
            k = int(np.nonzero(clash)[0][0])
            other = "atomic" if sh.w_atomic[idx[k]] else "write"
            self._report(x, region, addr, lane_of, k, int(pw[k]), int(sh.w_ins[idx[k]]), other,
                         kind)
        if writes:
            # against reads since the last write
            pr = sh.r_tid[idx]
            one = (pr >= 0) & (pr != tid) & same_interval(np.maximum(pr, 0), sh.r_ep[idx])
            many = (pr == -2) & ((sh.r_ep[idx] == ep) | sh.r_multi_cta[idx])
            clash = (one | many) & ~atomic
            if clash.any():
                k = int(np.nonzero(clash)[0][0])
                other = int(pr[k]) if pr[k] >= 0 else -1
                self._report(x, region, addr, lane_of, k, other, int(sh.r_ins[idx[k]]), "read",
                             kind)
            # two lanes of this very instruction writing one byte
            if not atomic:
                order = np.argsort(idx, kind="stable")
                dup = np.nonzero(idx[order][1:] == idx[order][:-1])[0]
                if dup.size and values is not None:
                    vb = values.astype(f"<u{nbytes}").view(np.uint8).reshape(-1)
                    dup = dup[vb[order][dup] != vb[order][dup + 1]]
                if dup.size:
                    a, b = order[dup[0]], order[dup[0] + 1]
                    if tid[a] != tid[b]:
                        self._report(x, region, addr, lane_of, int(b), int(tid[a]), ins,
                                     "write", kind)
            sh.w_tid[idx] = tid
            sh.w_ep[idx] = ep
            sh.w_atomic[idx] = atomic
            sh.w_ins[idx] = ins
            sh.r_tid[idx] = -1
        else:
            pr = sh.r_tid[idx]
            fresh = (pr == -1) | ((sh.r_ep[idx] != ep) & ((pr // self.t) == (tid // self.t)))
            first = np.where(fresh, tid, np.where(pr == tid, pr, -2))
            sh.r_multi_cta[idx] = np.where(fresh, False,
                                           sh.r_multi_cta[idx] | ((np.maximum(pr, 0) // self.t)
                                                                  != (tid // self.t)))
            sh.r_tid[idx] = first
            sh.r_ep[idx] = ep
            sh.r_ins[idx] = np.where(fresh, ins, sh.r_ins[idx])

    def _report(self, x, region, addr, lane_of, k, other_tid, other_ins, other_kind, kind):
        lane = int(lane_of[k])
        key = (region, other_ins, self._loc_id(x.ins.loc))
        if key in self.reported:
            return
        self.reported.add(key)
        names = {"r": "read", "w": "write", "a": "atomic"}
        other_loc = self.locs[other_ins]
        who = x.thread_name_of(other_tid) if other_tid >= 0 else "another thread"
        a = int(addr[lane]) if lane < len(addr) else 0
        x.effect("race", f"data race on {region} memory near address {a:#x}: "
                         f"{names[kind]} by {x.thread_name(lane)} at {x.ins.loc} and "
                         f"{other_kind} by {who} at {other_loc}, with no barrier between them")
