"""Memory port of the concrete emulator: whole-vector loads, stores and atomics on
`ConcreteMemory`, with compute-sanitizer-style faults."""

from __future__ import annotations

import numpy as np

from semantics.machine.memory import ConcreteMemory, MemoryFault
from semantics.machine.races import RaceDetector


class ConcretePort:
    def __init__(self, mem: ConcreteMemory, *, track_uninitialized: bool = True,
                 races: RaceDetector | None = None) -> None:
        self.mem = mem
        self.track_uninitialized = track_uninitialized
        self.races = races
        # what the launch touches in global memory, for programmatic dependent launch
        # (`semantics.machine.grid_dependency`); None unless asked for
        self.global_log = None
        self.writes_done = 0          # stores and atomics so far (a spinning loop makes none)
        self.shared_reads = 0         # loads of memory another thread may write

    def write_count(self) -> int:
        return self.writes_done

    def _track(self, x, arr, flat, nbytes, active, kind, addr, values=None) -> None:
        if self.global_log is not None and arr is self.mem.g:
            self.global_log.access(x, flat, nbytes, active, kind)
        if self.races is None:
            return
        region = "global" if arr is self.mem.g else \
            "shared" if arr.base is self.mem.shared or arr is self.mem.shared else "other"
        self.races.access(x, region, arr.size, flat, nbytes, active, kind, addr, values)

    def _locate(self, x, space, addr, nbytes, mask, align=None):
        arr, flat, init, bad, reason = self.mem.locate(space, addr, nbytes, mask)
        if bad is not None and bad.any():
            lane = int(np.nonzero(bad)[0][0])
            a = int(addr[lane])
            raise MemoryFault(f"invalid {nbytes}-byte {space} access at address {a:#x}: {reason}",
                              x.ins.loc, x.k.name, x.thread_name(lane), a)
        misaligned = mask & ((addr % np.uint64(align or nbytes)) != 0)
        if misaligned.any():
            lane = int(np.nonzero(misaligned)[0][0])
            a = int(addr[lane])
            raise MemoryFault(f"misaligned {align or nbytes}-byte {space} access at address {a:#x}",
                              x.ins.loc, x.k.name, x.thread_name(lane), a)
        return arr, flat, init

    def check_writable(self, x, arr, flat, lanes: np.ndarray, addr) -> None:
        """A write by `lanes` into a buffer the launch declares read-only faults."""
        hit, name = self.mem.written_read_only(arr, flat, lanes)
        if hit.any():
            lane = int(np.flatnonzero(hit)[0])
            a = int(addr[lane])
            raise MemoryFault(f"write into buffer '{name}' at address {a:#x}, which the launch "
                              f"declares read-only (an `in` buffer of the claim)",
                              x.ins.loc, x.k.name, x.thread_name(lane), a)

    def fence(self, x, lanes: np.ndarray) -> None:
        if self.races is not None:
            self.races.fence(x, lanes)

    def warp_sync(self, x, lanes: np.ndarray, whole_warp: bool) -> None:
        if self.races is not None:
            self.races.warp_sync(x, lanes)

    def grid_wait(self, x, lanes: np.ndarray) -> None:
        """`griddepcontrol.wait` by `lanes` (`semantics.machine.grid_dependency`)."""
        if self.global_log is not None:
            self.global_log.wait(x, lanes)

    def complete_async(self, x, serial: int, lanes: np.ndarray) -> None:
        """A `cp.async` completes for `lanes` (`semantics.machine.async_copies`)."""
        if self.races is not None:
            self.races.complete(x, serial, lanes)

    def load(self, x, space, addr, nbytes, mask, align=None):
        arr, flat, init = self._locate(x, space, addr, nbytes, mask, align)
        active = np.nonzero(mask)[0]
        out = np.zeros(addr.shape, np.uint64)
        if active.size:
            f = flat[active]
            out[active] = self.mem.gather(arr, f, nbytes)
            if self.mem.others_may_write(arr, flat, np.asarray(mask, dtype=bool)):
                self.shared_reads += 1
            self._track(x, arr, f, nbytes, active, "r", addr)
            if init is not None and init is not self.mem.g_init and self.track_uninitialized:
                ok = init[f[:, None] + np.arange(nbytes)].all(axis=1)
                if not ok.all():
                    # (what the bytes hold is the launch's fill: `semantics.choices`)
                    lane = int(active[np.nonzero(~ok)[0][0]])
                    what = "local" if arr.base is self.mem.local else "shared"
                    x.effect("uninitialized", f"read of never-written {what} memory by "
                                              f"{x.thread_name(lane)}")
        return out

    def store(self, x, space, addr, nbytes, value, mask, align=None):
        self.writes_done += 1
        arr, flat, init = self._locate(x, space, addr, nbytes, mask, align)
        self.check_writable(x, arr, flat, mask, addr)
        active = np.nonzero(mask)[0]
        if active.size:
            f = flat[active]
            self._track(x, arr, f, nbytes, active, "w", addr, value[active])
            self.mem.scatter(arr, f, nbytes, value[active])
            if init is not None:
                init[f[:, None] + np.arange(nbytes)] = True

    def atomic(self, x, space, addr, nbytes, update, mask):
        """Apply `update(domain, old, lanes) -> new` to the lanes of each address in the
        order the choices give them (`x.atomic_site`, `Choices.order`: lane order by
        default, or a model's order keys); `domain` has one lane per entry of `lanes`.
        Returns each lane's old value."""
        self.writes_done += 1
        arr, flat, init = self._locate(x, space, addr, nbytes, mask)
        self.check_writable(x, arr, flat, mask, addr)
        active = np.nonzero(mask)[0]
        out = np.zeros(addr.shape, np.uint64)
        if not active.size:
            return out
        f = flat[active]
        uniq, inverse = np.unique(f, return_inverse=True)
        if uniq.size == f.size:
            self._track(x, arr, f, nbytes, active, "a", addr)
            old = self.mem.gather(arr, f, nbytes)
            new = update(x.d.__class__(active.size), old, active)
            self.mem.scatter(arr, f, nbytes, new)
            out[active] = old
        else:
            # Conflicting lanes: serialize rounds, each round at most one lane per address,
            # the lanes of an address in the order of their keys (ties: lane order).
            name, keys = x.atomic_site
            if not (x.atomic_unread and getattr(update, "order_free", False)):
                x.effect("nondeterministic", "contending atomics whose order can change "
                                             "their outcome")
            okeys = x.choices.order(name, keys, np.arange(x.geom.lanes))[active]
            order = np.lexsort((np.arange(active.size), okeys, inverse))
            rank = np.empty_like(order)
            counts = np.bincount(inverse)
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
            rank[order] = np.arange(order.size) - np.repeat(starts, counts)
            # (race detection sees the lanes in the order they take effect: each atomic
            # reads the release sequence the ones before it continued, a last-block
            # ticket included; `RaceDetector.access`)
            self._track(x, arr, f[order], nbytes, active[order], "a", addr)
            for r in range(int(rank.max()) + 1):
                sel = np.nonzero(rank == r)[0]
                fs = f[sel]
                old = self.mem.gather(arr, fs, nbytes)
                new = update(x.d.__class__(sel.size), old, active[sel])
                self.mem.scatter(arr, fs, nbytes, new)
                out[active[sel]] = old
        if init is not None:
            init[f[:, None] + np.arange(nbytes)] = True
        return out
