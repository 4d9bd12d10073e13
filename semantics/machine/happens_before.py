"""Happens-before through flags, for the concrete race detector (`semantics.machine.races`).

Barriers order the threads of one CTA; the PTX memory model (PTX ISA 8, "Memory Consistency
Model") also orders two accesses of different threads through a *release pattern* and an
*acquire pattern* on one location:
- release: a `fence`/`membar` followed in program order by a strong write (`st.volatile`,
  `.relaxed`, an atomic), or a `.release` write itself;
- acquire: a strong read followed in program order by a fence, or an `.acquire` read itself;
- when the acquire's read observes the release's write (or a later atomic of the same
  location: a release sequence), everything before the release happens before everything
  after the acquire (and transitively, through further patterns and barriers).
A flag handoff (`data = v; __threadfence(); flag = 1` against `while (!flag); __threadfence();
use(data)`) is then no data race, as on silicon.

The emulator runs one schedule; in it this module tracks, per thread, its *clock* (how many
releases it made: an access made at clock c is covered by a release at a later clock) and what
it has acquired (a `Covered`: per thread a clock bound, per CTA a barrier-epoch bound). A race
the detector sees in this execution is real only if the two accesses are not ordered this way,
which `ordered` answers. Threads that never fence cost nothing: every check is skipped until
some release happens.

What this does not do: decide reads-from over every schedule (the symbolic race log does not
use it; a pair it flags is replayed here, and one that does not reproduce leaves the claim
Inconclusive, named).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Covered:
    """Accesses ordered before some point: by thread, those made at a clock below the bound;
    by CTA, those made in a barrier epoch below the bound (a barrier orders them)."""

    threads: dict[int, int] = field(default_factory=dict)
    ctas: dict[int, int] = field(default_factory=dict)

    def join(self, other: "Covered") -> None:
        for t, c in other.threads.items():
            if self.threads.get(t, -1) < c:
                self.threads[t] = c
        for a, e in other.ctas.items():
            if self.ctas.get(a, -1) < e:
                self.ctas[a] = e

    def copy(self) -> "Covered":
        return Covered(dict(self.threads), dict(self.ctas))

    def covers(self, tid: int, clock: int, cta: int, epoch: int) -> bool:
        return self.threads.get(tid, 0) > clock or self.ctas.get(cta, 0) > epoch


@dataclass(frozen=True)
class Release:
    """What a release makes visible, the threads that released it (several along a release
    sequence of atomics), and the CTA its scope is confined to (None: `.gpu`, `.sys` and
    wider: every thread of the launch)."""

    covered: Covered
    origins: frozenset[int]
    cta_only: int | None


class HappensBefore:
    def __init__(self, threads_per_cta: int) -> None:
        self.t = threads_per_cta
        self.clocks = np.zeros(0, np.int64)         # per global thread id (grown on demand)
        self.releases: list[Release] = []          # by token (the race shadow stores tokens)
        self.fenced: dict[int, int] = {}           # thread -> token of its latest fence
        self.known: dict[int, Covered] = {}        # thread -> what it has acquired
        self.pending: dict[int, list[int]] = {}    # thread -> tokens read, awaiting a fence
        self.cta_known: dict[int, list[tuple[int, Covered]]] = {}   # acquired, by epoch

    @property
    def active(self) -> bool:
        """Has any release happened (else nothing is ordered but by barriers)?"""
        return bool(self.releases)

    def clock_of(self, tids: np.ndarray) -> np.ndarray:
        if not self.clocks.size:
            return np.zeros(tids.shape, np.int64)
        inside = tids < self.clocks.size
        return np.where(inside, self.clocks[np.where(inside, tids, 0)], 0)

    # -- events -----------------------------------------------------------------------------
    def fence(self, tids, epochs, cta_scope: bool) -> None:
        """Threads `tids` (in barrier epochs `epochs` of their CTAs) run a fence: it completes
        their pending acquires and is a release of everything before it."""
        for tid, ep in zip(np.asarray(tids).tolist(), np.asarray(epochs).tolist()):
            self._acquire_pending(tid, ep, cta_scope)
            self.fenced[tid] = self._release(tid, ep, cta_scope)

    def warp_sync(self, tids, epochs) -> None:
        """`bar.warp.sync` by `tids` (threads of one warp, each naming all of them in its
        membermask): PTX ISA 9.7.13.2, it "guarantees memory ordering among threads
        participating in barrier". Each releases what it did before, and each acquires all
        of those releases."""
        pairs = list(zip(np.asarray(tids).tolist(), np.asarray(epochs).tolist()))
        tokens = [self._release(tid, ep, True) for tid, ep in pairs]
        for tid, ep in pairs:
            for token in tokens:
                self._join(tid, ep, token, True)

    def write_token(self, tid: int, ep: int, release_op: bool, cta_scope: bool,
                    before: int = -1) -> int:
        """The release a strong write by `tid` heads (-1: none): its own `.release`, or its
        latest fence's; an atomic (`before`: the token its location held) continues the
        release sequence it reads from."""
        own = self._release(tid, ep, cta_scope) if release_op else self.fenced.get(tid, -1)
        if before < 0 or own < 0:
            return own if own >= 0 else before
        a, b = self.releases[own], self.releases[before]
        merged = a.covered.copy()
        merged.join(b.covered)
        # (a sequence is as narrow as its narrowest member: joined only where both reach)
        scope = a.cta_only if a.cta_only is not None else b.cta_only
        self.releases.append(Release(merged, a.origins | b.origins, scope))
        return len(self.releases) - 1

    def read_token(self, tid: int, ep: int, token: int, acquire_op: bool,
                   cta_scope: bool) -> None:
        """A strong read by `tid` observed a write heading release `token`: acquired now
        (an `.acquire` read), or at the thread's next fence."""
        if token < 0:
            return
        if acquire_op:
            self._join(tid, ep, token, cta_scope)
        else:
            self.pending.setdefault(tid, []).append(token)

    # -- the question -----------------------------------------------------------------------
    def ordered(self, before_tid: int, before_clock: int, before_ep: int, tid: int,
                ep: int) -> bool:
        """Is an access by `before_tid` (at its clock and epoch) ordered before the current
        access of `tid` (in epoch `ep` of its CTA) by release/acquire patterns?"""
        other_cta = before_tid // self.t
        mine = self.known.get(tid)
        if mine is not None and mine.covers(before_tid, before_clock, other_cta, before_ep):
            return True
        for at, cov in self.cta_known.get(tid // self.t, ()):
            if at < ep and cov.covers(before_tid, before_clock, other_cta, before_ep):
                return True
        return False

    def ordered_lanes(self, before_tid, before_clock, before_ep, tid, ep) -> np.ndarray:
        """`ordered`, element-wise over arrays (the few pairs that would otherwise race)."""
        out = np.zeros(np.shape(tid), bool)
        if not self.active:
            return out
        for i in range(out.size):
            out[i] = before_tid[i] >= 0 and self.ordered(
                int(before_tid[i]), int(before_clock[i]), int(before_ep[i]), int(tid[i]),
                int(ep[i]))
        return out

    # -- inside -----------------------------------------------------------------------------
    def _release(self, tid: int, ep: int, cta_scope: bool) -> int:
        if tid >= self.clocks.size:
            grown = np.zeros(max(2 * self.clocks.size, tid + 1), np.int64)
            grown[:self.clocks.size] = self.clocks
            self.clocks = grown
        cov = self._visible(tid, ep)
        cov.threads[tid] = int(self.clocks[tid]) + 1
        cta = tid // self.t
        cov.ctas[cta] = max(cov.ctas.get(cta, 0), ep)
        self.clocks[tid] += 1
        self.releases.append(Release(cov, frozenset({tid}), cta if cta_scope else None))
        return len(self.releases) - 1

    def _visible(self, tid: int, ep: int) -> Covered:
        """Everything ordered before `tid`'s current point (what it and, before the last
        barrier, its CTA acquired)."""
        cov = self.known[tid].copy() if tid in self.known else Covered()
        for at, acquired in self.cta_known.get(tid // self.t, ()):
            if at < ep:
                cov.join(acquired)
        return cov

    def _acquire_pending(self, tid: int, ep: int, cta_scope: bool) -> None:
        for token in self.pending.pop(tid, ()):
            self._join(tid, ep, token, cta_scope)

    def _join(self, tid: int, ep: int, token: int, cta_scope: bool) -> None:
        rel = self.releases[token]
        cta = tid // self.t
        if rel.cta_only is not None and rel.cta_only != cta:
            return            # the release's scope does not include this thread
        if cta_scope and any(t // self.t != cta for t in rel.origins):
            return            # (an acquire of .cta scope synchronizes within its CTA only)
        self.known.setdefault(tid, Covered()).join(rel.covered)
        self.cta_known.setdefault(cta, []).append((ep, rel.covered))


__all__ = ["HappensBefore", "Covered", "Release"]
