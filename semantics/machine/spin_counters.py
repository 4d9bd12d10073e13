"""Counters that spin waits wait on (`semantics.machine.symbolic_spins`): a flag that, after its
start value, only atomic adds of positive constants change (`red.release.gpu.add 1`: CUTLASS's
stream-K barrier, split-k arrivals, a software grid barrier), waited for until it reaches a
bound (`while (ld.acquire(flag) < k)`, `!= k`).

The start value is the flag's launch contents, or a store that happens before every add and
before the wait. Every value the flag holds is then the start plus the increments of some set
of adds, so it lies between the start and the start plus all of them, and it only grows (the
obligations exclude a wrap in the comparison's order). Hence:
- the wait ends in every schedule iff the final value (every add done) ends it, because the
  waiting thread eventually reads it and no value after an ending one is ever lower; where that
  may fail the wait is *undecided* (it may hang; Inconclusive, named);
- the value that ends it comes after add P in the flag's order whenever no value reachable
  without P ends it, that is, no value in [start, start + the other adds] does: its ends
  decide that for every comparison but equality, which also needs the bound outside the
  interval (`SpinWait.none_between`). Then the ending read reads from P's add or a later
  atomic of the flag, which continues the release sequence P's release heads: P's writes
  happen before the waiter's acquire (PTX ISA, Memory Consistency Model: release sequence).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import z3

WIDE = 32          # extra bits: the sum of a launch's increments never wraps there


class Counter(NamedTuple):
    start: Any          # the value before any add: a term of the flag's width, or None
    start_known: Any    # the condition under which `start` is that value (else unspecified)
    adds: tuple         # the adds' logged accesses (`.value`: the increment)


def counter_of(r, sources: list, before: Callable, term: Callable) -> Counter | None:
    """The counter spin read `r` waits on, from the logged accesses `sources` that it may
    read from (`before(a, b)`: a certainly happens before b), or None when the flag is not
    one (an atomic that is not an add of a positive constant, a store after an add)."""
    adds = tuple(a for a in sources if a.kind == "a")
    stores = [a for a in sources if a.kind == "w"]
    if not adds or any(a.value is None for a in adds):
        return None
    if any(not before(s, r) or not all(before(s, a) for a in adds) for s in stores):
        return None
    bits = 8 * r.spin.place[2]
    initial = r.spin.initial
    start = None if initial is None else _bv(initial, bits)
    known = initial is not None
    if stores:
        last = [s for s in stores if all(before(o, s) for o in stores if o is not s)]
        if len(last) != 1 or last[0].value is None:
            return None
        s = last[0]
        value = _bv(s.value, bits)
        start = value if start is None else z3.If(term(s.cond), value, start)
        known = True if initial is not None else term(s.cond)
    return Counter(start, known, adds)


def undecided(c: Counter, r, term: Callable):
    """The condition (a term) under which `r`'s wait on counter `c` may not end or the counter
    may wrap in the comparison's order."""
    if c.start is None:
        return term(r.cond)
    final = _sum(c, r, None, term)
    bad = z3.Or(_wraps(final, r), z3.Not(_as_bool(r.spin.wait.exits(_narrow(final, r),
                                                                         r.spin.bound))))
    return z3.And(term(r.cond), z3.Or(z3.Not(_as_bool(c.start_known)), bad))


def precedes(c: Counter, r, add, term: Callable):
    """The condition under which the read ending `r`'s wait comes after `add` in the flag's
    order: no value reachable without it ends the wait."""
    if c.start is None:
        return False
    lo = _wide(c.start, r)
    hi = _sum(c, r, add, term)
    return z3.And(_as_bool(c.start_known),
                  _as_bool(r.spin.wait.none_between(_narrow(lo, r), _narrow(hi, r),
                                                    r.spin.bound)))


def _sum(c: Counter, r, left_out, term: Callable):
    """The start plus every add of `c` but `left_out` that happens, as a wide term."""
    total = _wide(c.start, r)
    wide = total.size()
    for a in c.adds:
        if a is left_out:
            continue
        step = z3.BitVecVal(int(a.value), wide)
        cond = term(a.cond)
        total = total + (step if cond is True else z3.If(cond, step, z3.BitVecVal(0, wide)))
    return total


def _wide(v, r):
    signed = r.spin.wait.signed_order
    return (z3.SignExt if signed else z3.ZeroExt)(WIDE, v)


def _narrow(v, r):
    return z3.Extract(8 * r.spin.place[2] - 1, 0, v)


def _wraps(total, r):
    """Is the wide `total` past the largest value of the comparison's order?"""
    bits = 8 * r.spin.place[2]
    top = (1 << (bits - 1)) - 1 if r.spin.wait.signed_order else (1 << bits) - 1
    return total > z3.BitVecVal(top, bits + WIDE)


def _bv(v, bits: int):
    return z3.BitVecVal(int(v), bits) if isinstance(v, int) or hasattr(v, "__index__") \
        else v


def _as_bool(c):
    return z3.BoolVal(bool(c)) if not isinstance(c, z3.ExprRef) else c


__all__ = ["Counter", "counter_of", "undecided", "precedes"]
