"""The copies `cp.async` has started and not yet completed, per thread (PTX ISA 9.7.9.25,
"Data Movement and Conversion Instructions: cp.async", and its commit_group / wait_group /
wait_all).

A `cp.async` copies from global to shared memory *asynchronously*: the source is read and the
destination written at some moment between the instruction and the `cp.async.wait_group` (or
`wait_all`) of its thread that covers it. keq performs the copy's values at the instruction
(what a race-free kernel sees is the same at any moment of that interval) and makes the
interval visible to race detection: each copy gets a serial number, the memory ports' race
detectors mark its bytes as in flight while the executor's `async_copy` names it, and the
wait that covers it completes it (`Executor.complete_async`). Any access to bytes in flight
(the destination: by any thread, its own included; the source: any write) is a race, and so
is an access the completion is not ordered with (`semantics.machine.races`,
`semantics.machine.symbolic_races`). A copy never waited for stays in flight to the end.

Groups, per thread: the copies since its last `commit_group` form its next group; `wait_group
N` waits until at most the N most recent groups are pending. Lanes run in lockstep, so each
lane counts its own commits. Under a symbolic mask (a lane that runs the instruction only
under a condition, e.g. a CTA of the symbolic launch that exists for some shapes) a commit or
a wait counts for the lane only when its condition is the one every copy of that lane so far
was issued under (the same term): where it does not hold, none of those copies exists either,
and a commit before a copy only shifts the copy's group and the count alike. Otherwise it
does not count, and copies complete later than on the GPU, never earlier (more races, never
fewer).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class PendingCopy:
    """One `cp.async` in flight: its serial, the lanes that may have issued it, and each
    lane's group number (its count of commits when it issued the copy)."""
    serial: int
    lanes: np.ndarray
    group: np.ndarray


MIXED = object()         # a lane whose copies were issued under different conditions


def _certain(c) -> bool:
    return isinstance(c, (bool, np.bool_)) and bool(c)


def _same(a, b) -> bool:
    if _certain(a) or _certain(b):
        return _certain(a) and _certain(b)
    return a is b or (hasattr(a, "eq") and a.eq(b))


@dataclass
class AsyncCopies:
    """Every lane's commit count and the copies in flight, for one launch batch; per lane,
    the one condition its copies were issued under (`MIXED` when not one)."""
    committed: np.ndarray
    pending: list[PendingCopy] = field(default_factory=list)
    serials: int = 0
    conds: dict[int, object] = field(default_factory=dict)

    @classmethod
    def for_lanes(cls, n: int) -> "AsyncCopies":
        return cls(np.zeros(n, dtype=np.int64))

    def issue(self, lanes: np.ndarray, mask) -> int:
        """A new copy by `lanes` (each under its entry of `mask`); its serial."""
        for lane in lanes.tolist():
            c = mask[lane]
            known = self.conds.get(lane)
            if known is None:
                self.conds[lane] = c
            elif known is not MIXED and not _same(known, c):
                self.conds[lane] = MIXED
        self.serials += 1
        self.pending.append(PendingCopy(self.serials, lanes.copy(),
                                        self.committed[lanes].copy()))
        return self.serials

    def counting(self, lanes: np.ndarray, mask) -> np.ndarray:
        """The lanes of `lanes` (those that may run it) for which a commit or wait under
        `mask` counts (the module docstring)."""
        out = [lane for lane in lanes.tolist()
               if _certain(mask[lane]) or self.conds.get(lane) is None
               or (self.conds[lane] is not MIXED and _same(self.conds[lane], mask[lane]))]
        return np.array(out, dtype=np.int64)

    def commit(self, lanes: np.ndarray) -> None:
        self.committed[lanes] += 1

    def wait(self, lanes: np.ndarray, keep: int) -> list[tuple[int, np.ndarray]]:
        """`wait_group keep` by `lanes`: (serial, lanes) of each copy that completes, in
        issue order; they leave the pending list."""
        waiting = np.zeros(self.committed.size, dtype=bool)
        waiting[lanes] = True
        done: list[tuple[int, np.ndarray]] = []
        for copy in self.pending:
            finished = waiting[copy.lanes] & (copy.group < self.committed[copy.lanes] - keep)
            if finished.any():
                done.append((copy.serial, copy.lanes[finished]))
                copy.lanes, copy.group = copy.lanes[~finished], copy.group[~finished]
        self.pending = [c for c in self.pending if c.lanes.size]
        return done


__all__ = ["AsyncCopies", "PendingCopy"]
