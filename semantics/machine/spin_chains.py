"""Chains of spin waits (`semantics.machine.symbolic_spins`): a store or atomic of a flag made
after a wait on that same flag (CTA b waits for status b, then stores b + 1: serial split-k;
stream-K peers waiting for their turn on a counter) can only happen once that wait has ended,
so it comes after the store that ended it. This module decides waits and their handoffs with
that causal order, where everything about the flag is concrete (a fixed launch shape: every
condition, value, bound and the launch contents known); elsewhere the rules of
`symbolic_spins` and `spin_counters` apply, which treat every writer as free.

- A *guard* of a writer W is a wait on the flag that happens before W (its thread's earlier
  wait, or its CTA's before a barrier).
- `possible(r, without)`: the writers that may happen before wait `r` ends (and without
  writer `without` ever happening): the least set closed under "a writer not after `r` whose
  guards can each end on the writers of the set" (for a flag: one of their values, or the
  launch contents, ends it; for a counter: a value between the start and the start plus their
  increments does). Every writer that really happens before `r` ends is in it.
- `b` comes before `a` in the flag's order when `b` happens before `a`, or `a` cannot happen
  at all without `b` (`a` is not possible without `b`: its guards needed `b`'s value, or a
  value written after it).
A flag wait is decided when exactly one possible writer (or the launch contents) ends it and
every other comes before that one; a counter wait when the largest value its possible adds
reach ends it; an add is needed by a counter wait when no value its possible adds reach
without it ends the wait. The handoffs that follow (the ending store's release, or every
needed add's) order accesses transitively: a release covers what its thread did before (its
CTA before a barrier), an acquire what follows, and an acquire may precede the next release.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

_INIT = None


class Point(NamedTuple):
    """A program point of a thread, as a logged access has one."""
    tid: int
    step: int
    epoch: int


def _concrete(v) -> bool:
    return isinstance(v, (bool, np.bool_, int, np.integer))


class Chain:
    """The writers of one flag, with the waits on it, when all of it is concrete."""

    def __init__(self, writers: list, reads: list, before: Callable) -> None:
        self.writers = writers        # every one happens (conditions True)
        self.reads = reads            # the spin reads of the flag
        self.before = before
        self.counter = any(w.kind == "a" for w in writers)
        self.guards = {id(w): [g for g in reads if before(g, w)] for w in writers}
        self.start = None
        if self.counter:
            stores = [w for w in writers if w.kind == "w"]
            initial = reads[0].spin.initial if reads else None
            self.start = stores[-1].value if stores else initial
        self._memo: dict = {}

    @staticmethod
    def of(accesses: list, reads: list, before: Callable) -> "Chain | None":
        """The chain of one flag's logged accesses and spin reads, or None when something
        about it is not concrete (or a store comes after an add, or an atomic is not an add
        of a constant)."""
        writers = []
        for a in accesses:
            if a.kind not in ("w", "a"):
                continue
            if not _concrete(a.cond):
                return None
            if a.cond and (a.value is None or not _concrete(a.value)):
                return None
            if a.cond:
                writers.append(a)
        if any(not _concrete(r.cond) or not _concrete(r.spin.bound) or
               not (r.spin.initial is None or _concrete(r.spin.initial)) for r in reads):
            return None
        stores = [w for w in writers if w.kind == "w"]
        adds = [w for w in writers if w.kind == "a"]
        if adds and any(not all(before(s, a) for a in adds) for s in stores):
            return None
        if adds and len(stores) > 1 and any(not before(a, b) for a, b in zip(stores, stores[1:])):
            return None
        if adds and stores and not all(before(stores[-1], r) for r in reads):
            return None            # (a read might see the launch contents before the start)
        return Chain(writers, reads, before)

    # -- which writers may come first ---------------------------------------------------------
    def possible(self, r, without=None) -> tuple:
        """The writers that may happen before wait `r` ends (r None: at all), none of them
        `without` (the module docstring)."""
        key = (id(r), id(without))
        if key in self._memo:
            return self._memo[key]
        cands = [w for w in self.writers if w is not without and
                 (r is None or not self.before(r, w))]
        poss: list = []
        grown = True
        while grown:
            grown = False
            for w in cands:
                if any(p is w for p in poss):
                    continue
                if all(self._can_end(g, poss) for g in self.guards[id(w)] if g is not r):
                    poss.append(w)
                    grown = True
        self._memo[key] = out = tuple(poss)
        return out

    def _can_end(self, g, poss) -> bool:
        if self.counter:
            if self.start is None:
                return True
            lo, hi = self._range(poss)
            return not bool(g.spin.wait.none_between(lo, hi, g.spin.bound))
        values = [w.value for w in poss]
        if not any(self.before(w, g) for w in self.writers):
            if g.spin.initial is None:
                return True
            values.append(g.spin.initial)
        return any(bool(g.spin.wait.exits(v, g.spin.bound)) for v in values)

    def _range(self, adds) -> tuple[int, int]:
        total = int(self.start) + sum(int(a.value) for a in adds if a.kind == "a")
        return int(self.start), total

    def comes_before(self, b, a) -> bool:
        """Does writer `b` come before writer `a` in the flag's order in every schedule?"""
        if b is _INIT:
            return True
        if a is _INIT:
            return False
        return self.before(b, a) or not any(w is a for w in self.possible(None, without=b))

    # -- the questions ----------------------------------------------------------------------
    def undecided(self, r) -> bool:
        """May wait `r` not end, or end on a writer that is not always the same one?"""
        if not r.cond:
            return False
        poss = self.possible(r)
        if self.counter:
            if self.start is None:
                return True
            lo, hi = self._range(poss)
            bits = 8 * r.spin.place[2]
            top = (1 << (bits - 1)) - 1 if r.spin.wait.signed_order else (1 << bits) - 1
            return hi > top or not bool(r.spin.wait.exits(_wrap(hi, bits), r.spin.bound))
        sources = list(poss)
        if not any(self.before(w, r) for w in self.writers):
            sources.append(_INIT)
        ends = {id(s): self._ends(r, s) for s in sources}
        for a in sources:
            if not ends[id(a)]:
                continue
            if any(b is not a and (ends[id(b)] or not self.comes_before(b, a))
                   for b in sources):
                return True
        return False

    def _ends(self, r, source) -> bool:
        value = r.spin.initial if source is _INIT else source.value
        return True if value is None else bool(r.spin.wait.exits(value, r.spin.bound))

    def reads_from(self, r, writer) -> bool:
        """Does decided wait `r` end on a value in the release sequence `writer` heads?"""
        poss = self.possible(r)
        if not any(w is writer for w in poss):
            return False
        if not self.counter:
            return writer.kind == "w" and self._ends(r, writer)
        if writer.kind != "a" or self.start is None:
            return False
        lo, hi = self._range(self.possible(r, without=writer))
        return bool(r.spin.wait.none_between(lo, _wrap(hi, 8 * r.spin.place[2]),
                                             r.spin.bound))


def transitively_ordered(w, r, handoffs: list, released: Callable, acquired: Callable,
                         covered: Callable) -> bool:
    """Is access `w` ordered before access `r` through a chain of handoffs? `released(h, x)`:
    does handoff h's release cover access or point x; `acquired(h)`: the point where its
    acquire completes (None: it acquires nothing); `covered(point, x)`: does an acquire
    completed there cover x. A breadth-first search over the handoffs."""
    frontier = [h for h in handoffs if released(h, w)]
    seen = {id(h) for h in frontier}
    while frontier:
        nxt = []
        for h in frontier:
            point = acquired(h)
            if point is None:
                continue
            if covered(point, r):
                return True
            for g in handoffs:
                if id(g) not in seen and released(g, point):
                    seen.add(id(g))
                    nxt.append(g)
        frontier = nxt
    return False


def _wrap(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


__all__ = ["Chain", "Point", "transitively_ordered"]
