"""Handoffs through spin waits, for the symbolic race log (`semantics.machine.symbolic_races`):
a thread P writes data, runs a release pattern (a fence then a strong store of a flag, or a
`st.release`), and a thread C spins on the flag (`semantics.machine.spin_waits`) and then
runs an acquire pattern (the spin's strong read then a fence, or an `ld.acquire`) before it
reads the data. When the read that ends the wait reads from P's store, P's write happens
before C's read (PTX ISA, Memory Consistency Model: release and acquire patterns,
synchronizes-with); a barrier extends either side to the rest of the CTA, as in the
emulator's detector (`semantics.machine.happens_before`).

Which store the ending read reads from is the scheduler's choice, so the log proves it is one
store in every schedule. The *sources* a spin read R may read from are the initial contents
of the flag (unless a store to it certainly happens before R) and every logged access to the
flag that does not happen after R. R's wait is *decided* when no two sources a, b both happen
with a ending the wait and either b ending it too or b not happening before a (then b may come
later in the flag's coherence order and hide a: the wait could miss a). A decided wait ends,
in every schedule, by reading the one source that ends it, which is also the last store to
the flag before it ends; so the registers after it are the same (its own are dead there,
`spin_waits`), its strong accesses' order cannot show, and P's store orders the handoff.
A flag that atomic adds change is a counter instead (`semantics.machine.spin_counters`): its
own rules decide the wait and which arrivals it orders. Where everything about a flag is
concrete, its *chain* decides instead, with the causal order of writers made after waits
(`semantics.machine.spin_chains`), and orders accesses through handoffs transitively.
`obligations` are the conditions under which a wait is not decided (the verifier must refute
them, else the claim is Inconclusive, named); `ordered` the handoff's condition for a pair of
accesses.

A wait in global memory with more than one CTA also assumes that the CTA it waits for runs
(co-resident, or launched before it): the PTX ISA gives CTAs no forward-progress guarantee
with respect to one another. The executor records that as a `progress` effect, which the
claim prints.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np
import z3

from semantics.machine import spin_counters
from semantics.machine.spin_chains import Chain, Point, transitively_ordered
from semantics.machine.spin_waits import SpinWait


class SpinRead(NamedTuple):
    """What the race log keeps of one lane's read at a spin wait."""

    wait: SpinWait
    bound: Any          # the value the read is compared with, in this lane
    initial: Any        # the flag's contents at launch, or None: unspecified (shared memory)
    acquire: bool       # an `ld.acquire` (else a fence after it acquires)
    place: tuple        # the race log's key of the flag's bytes


def increment(x, lane: int, bits: int) -> int | None:
    """The increment of the `bits`-wide atomic `x` runs, in `lane`, when it is an integer add
    of a positive constant (a counter's: `spin_counters`), else None."""
    update = getattr(x, "atomic_update", None)
    operand = getattr(update, "operand", None)
    if getattr(update, "op", None) != "add" or getattr(update, "float_add", True) or \
            operand is None:
        return None
    v = operand[lane]
    if not _concrete(v) or not 0 < int(v) < 1 << (bits - 1):
        return None
    return int(v)


def spin_read(x, wait: SpinWait, bound, region: str, place: tuple) -> SpinRead:
    """A lane's read at a spin wait (`x`: the executor running it); one in global memory of a
    launch with several CTAs assumes they make progress (a `progress` effect, printed in the
    claim)."""
    initial = None
    if region == "global":
        initial = x.port.initial_word(place[1], place[2])
        if len(x.geom.ctas) > 1:
            x.effect("progress", f"the spin wait at {x.ins.loc} ends once the store it waits "
                     f"for is made: the CTA that makes it runs (co-resident with the waiting "
                     f"one, or launched before it)")
    return SpinRead(wait, bound, initial, x.form.has("acquire") or x.form.has("acq_rel"), place)


_INIT = None           # the initial contents, as a source


def _concrete(v) -> bool:
    return isinstance(v, (bool, np.bool_, int, np.integer))


def _and(*xs):
    terms = []
    for x in xs:
        if _concrete(x):
            if not x:
                return False
            continue
        terms.append(x)
    if not terms:
        return True
    return terms[0] if len(terms) == 1 else z3.And(terms)


def _or(xs):
    terms = []
    for x in xs:
        if _concrete(x):
            if x:
                return True
            continue
        terms.append(x)
    if not terms:
        return False
    return terms[0] if len(terms) == 1 else z3.Or(terms)


def _not(x):
    return (not x) if _concrete(x) else z3.Not(x)


class SpinHandoffs:
    def __init__(self, threads_per_cta: int, term: Callable) -> None:
        self.t = threads_per_cta
        self.term = term                   # a logged condition as a term
        self.reads: list = []              # logged accesses with their `.spin`
        self.counters: dict[int, Any] = {}     # per spin read (id): its counter, or None
        self.chains: dict[tuple, Any] = {}     # per flag (place): its `Chain`, or None
        self.handoffs: list | None = None      # concrete (store, spin, across) handoffs

    def read(self, acc) -> None:
        self.reads.append(acc)

    # -- the obligations -----------------------------------------------------------------
    def obligations(self, events: dict) -> list[tuple[str, Any]]:
        """(what, condition) per spin wait site: the condition under which some read there
        is not decided (the module docstring)."""
        by_site: dict[Any, list] = {}
        for r in self.reads:
            by_site.setdefault(r.loc, []).append(self._undecided(r, events))
        out = []
        for loc, conds in by_site.items():
            c = _or(conds)
            if isinstance(c, z3.ExprRef):
                c = z3.simplify(c)
                c = True if z3.is_true(c) else False if z3.is_false(c) else c
            if c is not False:
                out.append((f"the spin wait at {loc} may end on a value more than one store "
                            f"of its flag gives, or on one a later store may hide (which one "
                            f"it reads is the scheduler's choice)", c))
        return out

    def _undecided(self, r, events: dict):
        if self._overlapped(r.spin.place, events):
            return self.term(r.cond)         # (stores to part of the flag: not decided here)
        chain = self._chain(r.spin.place, events)
        if chain is not None:
            return chain.undecided(r)
        sources = self._sources(r, events)
        if any(a.kind == "a" for a in sources):
            c = self._counter(r, events)
            return self.term(r.cond) if c is None else spin_counters.undecided(c, r, self.term)
        before_r = [a for a in sources if self._before(a, r)]
        init_cond = _and(*[_not(self.term(a.cond)) for a in before_r])
        ends = {}
        for a in [_INIT] + sources:
            ends[id(a)] = self._ends(r, a)
        bad = []
        for a in [_INIT] + sources:
            ca = init_cond if a is _INIT else self.term(a.cond)
            first = _and(ca, ends[id(a)])
            if first is False:
                continue
            others = []
            for b in [_INIT] + sources:
                if b is a:
                    continue
                cb = init_cond if b is _INIT else self.term(b.cond)
                hides = ends[id(b)] if self._before(b, a) else True
                others.append(_and(cb, hides))
            bad.append(_and(first, _or(others)))
        return _and(self.term(r.cond), _or(bad))

    @staticmethod
    def _overlapped(place: tuple, events: dict) -> bool:
        region = place[0]
        return any(k[0] == region and k != place and k[1] < place[1] + place[2]
                   and place[1] < k[1] + k[2] for k in events)

    def _chain(self, place: tuple, events: dict):
        """The flag's `Chain` where all of it is concrete, else None (`spin_chains`)."""
        if place not in self.chains:
            reads = [r for r in self.reads if r.spin.place == place]
            self.chains[place] = None if self._overlapped(place, events) else \
                Chain.of(list(events.get(place, ())), reads, self._before)
        return self.chains[place]

    def _sources(self, r, events: dict) -> list:
        """The logged stores and atomics of `r`'s flag that do not happen after it."""
        return [a for a in events.get(r.spin.place, ()) if a.kind in ("w", "a")
                and a is not r and not self._before(r, a)]

    def _counter(self, r, events: dict):
        key = id(r)
        if key not in self.counters:
            self.counters[key] = spin_counters.counter_of(r, self._sources(r, events),
                                                          self._before, self.term)
        return self.counters[key]

    def _ends(self, r, source):
        """Does reading `source` end `r`'s wait (True, False or a term)?"""
        if source is _INIT:
            value = r.spin.initial
        elif source.kind != "w":
            value = None                      # (an atomic: its value is the order's)
        else:
            value = source.value
        if value is None:
            return True
        ended = r.spin.wait.exits(value, r.spin.bound)
        return bool(ended) if _concrete(ended) else ended

    def _before(self, a, b) -> bool:
        """Does access `a` certainly happen before access `b` (the initial contents come
        first): program order, or a barrier of their CTA between them?"""
        if a is _INIT:
            return True
        if b is _INIT:
            return False
        if a.tid == b.tid:
            return a.step < b.step
        return a.tid // self.t == b.tid // self.t and a.epoch < b.epoch

    # -- the handoff -----------------------------------------------------------------------
    def ordered(self, w, r, fences: dict, events: dict):
        """The condition under which access `w` happens before access `r` through a spin
        wait's handoff (the module docstring), or None when none can order them."""
        if self._chained(w, r, fences, events):
            return True
        out = []
        for spin in self.reads:
            if spin.tid // self.t != r.tid // self.t or \
                    self._chain(spin.spin.place, events) is not None:
                continue                     # (a concrete chain's handoffs: `_chained`)
            acquire = self._acquire(spin, r, fences)
            if acquire is None:
                continue
            for store in events.get(spin.spin.place, ()):
                if store.kind not in ("w", "a") or not store.strong or store.tid == spin.tid \
                        or store.value is None:
                    continue
                across = store.tid // self.t != spin.tid // self.t
                if across and (store.cta_scope or spin.cta_scope or acquire[1]):
                    continue
                release = self._release(store, w, fences, across)
                if release is None:
                    continue
                if store.kind == "w":
                    reads_it = self._ends(spin, store)
                else:
                    c = self._counter(spin, events)
                    if c is None:
                        continue
                    reads_it = spin_counters.precedes(c, spin, store, self.term)
                out.append(_and(self.term(spin.cond), self.term(store.cond), reads_it,
                                release, acquire[0]))
        c = _or(out)
        return None if c is False else c

    def fixed_order(self, a, b, events: dict) -> bool:
        """Are two stores of a flag with a concrete chain in one order in every schedule (one
        cannot happen without the other before it, `spin_chains`)?"""
        for place, chain in self.chains.items():
            if chain is not None and any(w is a for w in chain.writers) and \
                    any(w is b for w in chain.writers):
                return chain.comes_before(a, b) or chain.comes_before(b, a)
        return False

    def _chained(self, w, r, fences: dict, events: dict) -> bool:
        """Is `w` ordered before `r` through the handoffs of concrete chains, transitively
        (`spin_chains.transitively_ordered`)?"""
        if self.handoffs is None:
            self.handoffs = []
            for spin in self.reads:
                chain = self._chain(spin.spin.place, events)
                if chain is None or not spin.cond:
                    continue
                for store in chain.writers:
                    across = store.tid // self.t != spin.tid // self.t
                    if store.tid != spin.tid and store.strong and chain.reads_from(spin, store) \
                            and not (across and (store.cta_scope or spin.cta_scope)):
                        self.handoffs.append((store, spin, across))
        if not self.handoffs:
            return False

        def released(h, x) -> bool:
            c = self._release(h[0], x, fences, h[2])
            return c is not None and _concrete(c) and bool(c)

        def acquired(h):
            point = self._acquire_point(h[1], fences)
            if point is None or not (_concrete(point[1]) and point[1]) or \
                    (h[2] and point[2]):
                return None
            return point[0]

        def covered(point, x) -> bool:
            if x.tid == point.tid:
                return x.step > point.step
            return x.tid // self.t == point.tid // self.t and x.epoch > point.epoch
        return transitively_ordered(w, r, self.handoffs, released, acquired, covered)

    def _acquire_point(self, spin, fences: dict):
        """(where `spin`'s acquire completes, its condition, confined to its CTA), or None."""
        if spin.spin.acquire:
            return Point(spin.tid, spin.step, spin.epoch), True, False
        fence = next((f for f in fences.get(spin.tid, ()) if f.step >= spin.step), None)
        if fence is None:
            return None
        return Point(spin.tid, fence.step, fence.epoch), fence.cond, fence.cta_scope

    def _release(self, store, w, fences: dict, across: bool):
        """The condition under which `store` heads a release that covers `w`, or None."""
        if store.release:
            step, epoch, cond = store.step - 1, store.epoch, True
        else:
            fence = next((f for f in reversed(fences.get(store.tid, ()))
                          if f.step < store.step), None)
            if fence is None or (across and fence.cta_scope):
                return None
            step, epoch, cond = fence.step, fence.epoch, fence.cond
        if w.tid == store.tid:
            covered = w.step <= step
        else:
            covered = w.tid // self.t == store.tid // self.t and w.epoch < epoch
        return cond if covered else None

    def _acquire(self, spin, r, fences: dict):
        """(condition, confined to its CTA) under which `spin`'s read acquires for `r`, or
        None."""
        found = self._acquire_point(spin, fences)
        if found is None:
            return None
        (_, step, epoch), cond, cta_scope = found
        if r.tid == spin.tid:
            covered = r.step > step
        else:
            covered = r.epoch > epoch
        return (cond, cta_scope) if covered else None


__all__ = ["SpinHandoffs", "SpinRead", "increment", "spin_read"]
