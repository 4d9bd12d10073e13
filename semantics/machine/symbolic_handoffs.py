"""Happens-before through a release sequence of contending atomics, for the symbolic race log
(`semantics.machine.symbolic_races`); the emulator's counterpart is
`semantics.machine.happens_before`.

The case decided here is the *last-block* handoff (the CUDA Programming Guide's
`__threadfence` example, split-k and stream-K fix-ups with an atomic ticket): a thread P
writes, runs a fence, then an atomic on a location F; a thread C's atomic on F comes later in
F's order, then C runs a fence and reads what P wrote (or a thread of C's CTA reads it after
a barrier that follows C's fence). P's fence and atomic are a release pattern, C's atomic
and fence an acquire pattern, and C's atomic reads from the release sequence P's atomic
heads (every atomic of F reads the word the one before it wrote): P's write happens before
C's read (PTX ISA, Memory Consistency Model; C++ [atomics.fences]).

Both atomics must be lanes of one execution of one `atom` contending for F: their order is
then the order of their keys (`semantics.machine.atomic_order`), a term, and so is the
handoff: `ordered(w, r)` is the condition under which it orders two logged accesses
(both atomics and both fences run, P's key is before C's), which the race log subtracts
from the pair's race condition. Anything else orders nothing here, and the pair stays a
possible race (Inconclusive unless the emulator shows one): handoffs through different
instructions (`st.release` and an `ld.acquire` spin loop), fences or atomics of .cta scope
across CTAs, and a barrier between C's fence and the read that may or may not run.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import z3

from semantics.machine.atomic_order import before


class _Fence(NamedTuple):
    step: int          # the race log's step count when it ran (accesses up to it are before)
    epoch: int         # its CTA's barrier epoch
    cond: Any          # True or a z3 Bool: the lane runs it
    cta_scope: bool


class _Rmw(NamedTuple):
    step: int
    group: int         # one execution of one atom: `Handoffs.groups`
    position: int      # the lane's place in the group (for `atomic_order.before`)
    cond: Any
    cta_scope: bool
    reads: bool        # an `atom` (a `red` writes the sequence on, but reads nothing back)


def _bool(c):
    return z3.BoolVal(bool(c)) if isinstance(c, bool) else c


class Handoffs:
    def __init__(self, threads_per_cta: int) -> None:
        self.t = threads_per_cta
        self.fences: dict[int, list[_Fence]] = {}     # per global thread, in program order
        self.rmws: dict[int, list[_Rmw]] = {}
        self.groups: list[tuple[Any, ...]] = []        # per group: its lanes' order keys

    def fence(self, tid: int, step: int, epoch: int, cond, cta_scope: bool) -> None:
        self.fences.setdefault(tid, []).append(_Fence(step, epoch, cond, cta_scope))

    def contending(self, step: int, tids: list[int], conds: list, keys: list,
                   cta_scope: bool, reads: bool) -> None:
        """One execution of an atomic by lanes that contend for one location, in the order
        `atomic_order.contended` numbers them."""
        g = len(self.groups)
        self.groups.append(tuple(keys))
        for position, (tid, cond) in enumerate(zip(tids, conds)):
            self.rmws.setdefault(tid, []).append(_Rmw(step, g, position, cond, cta_scope,
                                                      reads))

    def ordered(self, w, r) -> Any:
        """The condition under which access `w` happens before access `r` (both logged by the
        race log: `.tid`, `.step`, `.epoch`) through a handoff, or None when none can."""
        if not self.groups or w.tid not in self.fences:
            return None
        across = w.tid // self.t != r.tid // self.t
        out = []
        for release, head in self._releases(w, across):
            for acquire, tail in self._acquires(r, head.group, across):
                out.append(z3.And(_bool(release.cond), _bool(head.cond), _bool(tail.cond),
                                  _bool(acquire.cond),
                                  before(self.groups[head.group], head.position,
                                         tail.position)))
        if not out:
            return None
        return out[0] if len(out) == 1 else z3.Or(out)

    def _releases(self, w, across: bool):
        """(fence, atomic) pairs of `w`'s thread after `w`: the first fence after it, each
        atomic after that fence (a later fence releases `w` too, but only with more)."""
        fence = next((f for f in self.fences.get(w.tid, ()) if f.step >= w.step), None)
        if fence is None or (across and fence.cta_scope):
            return
        for rmw in self.rmws.get(w.tid, ()):
            if rmw.step > fence.step and not (across and rmw.cta_scope):
                yield fence, rmw

    def _acquires(self, r, group: int, across: bool):
        """(fence, atomic) pairs that acquire for `r`: an atomic of `group` followed by a
        fence before `r` in `r`'s thread, or in another thread of its CTA with a barrier
        between that fence and `r`."""
        cta = r.tid // self.t
        for tid in self._cta_threads(cta):
            for rmw in self.rmws.get(tid, ()):
                if rmw.group != group or not rmw.reads or (across and rmw.cta_scope):
                    continue
                for fence in self.fences.get(tid, ()):
                    if fence.step < rmw.step or (across and fence.cta_scope):
                        continue
                    if (tid == r.tid and fence.step < r.step) or \
                            (tid != r.tid and fence.epoch < r.epoch):
                        yield fence, rmw
                    break           # (the first fence after the atomic: later ones add nothing)

    def _cta_threads(self, cta: int):
        lo = cta * self.t
        return [tid for tid in self.rmws if lo <= tid < lo + self.t]


__all__ = ["Handoffs"]
