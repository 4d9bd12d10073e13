"""Which loops are spin waits (semantics/machine/spin_waits.py): a block of one strong load of
a loop-invariant address, one integer setp of the loaded value and a branch on it (plus a
nanosleep), whose registers are dead after it; anything more is an ordinary loop."""

from __future__ import annotations

from typing import NamedTuple

import pytest
import z3

from semantics.machine.kernel import prepare
from semantics.machine.spin_counters import counter_of, precedes, undecided
from semantics.machine.spin_waits import spin_waits
from semantics.machine.symbolic_spins import SpinRead
from semantics.ptx.parser import parse_ptx

HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
"""


def _waits(body: str) -> dict:
    return spin_waits(prepare(parse_ptx(HEAD + body + "\n}\n"), "k"))


WAIT = """
$L_spin:
    ld.volatile.global.u32 %r1, [%rd2];
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra $L_spin;
    st.global.u32 [%rd2+4], 7;
    ret;"""


def test_the_plain_wait_is_one():
    (w,) = _waits(WAIT).values()
    assert (w.cmp, w.exit_when) == ("eq", False)
    assert w.exits(0, 0) is False and w.exits(5, 0) is True


def test_a_peeled_test_and_a_backoff_are_waits_with_one_continuation():
    waits = _waits("""
$L_first:
    ld.acquire.gpu.b32 %r1, [%rd2];
    setp.gt.s32 %p1, %r1, 0;
    @%p1 bra $L_go;
$L_spin:
    mov.u32 %r2, 20;
    nanosleep.u32 %r2;
    ld.acquire.gpu.b32 %r3, [%rd2];
    setp.lt.s32 %p2, %r3, 1;
    @%p2 bra $L_spin;
$L_go:
    ret;""")
    peeled, loop = sorted(waits.values(), key=lambda w: w.load)
    assert peeled.continuation == loop.continuation
    assert peeled.exits(1, 0) is True and peeled.exits(0, 0) is False
    assert loop.exits(1, 1) is True and loop.exits(0, 1) is False


PEELED = """
$L_first:
    ld.acquire.gpu.b32 %r1, [%rd2];
    setp.gt.s32 %p1, %r1, 0;
    @%p1 bra $L_go;
$L_spin:
    ld.acquire.gpu.b32 %r3, [%rd2];
    setp.lt.s32 %p2, %r3, 1;
    @%p2 bra $L_spin;
$L_go:
    ret;"""


@pytest.mark.parametrize("old,new", [
    ("setp.gt.s32 %p1, %r1, 0;", "setp.gt.s32 %p1, %r1, 1;"),     # ends on other values
    ("ld.acquire.gpu.b32 %r1, [%rd2];", "ld.acquire.gpu.b32 %r1, [%rd2+4];"),   # another flag
])
def test_a_peeled_test_that_waits_otherwise_than_its_loop_is_no_wait(old, new):
    assert len(_waits(PEELED)) == 2
    assert len(_waits(PEELED.replace(old, new))) == 1          # the loop alone


@pytest.mark.parametrize("change", [
    # the loaded value is used after the wait: which store ended it shows
    ("st.global.u32 [%rd2+4], 7;", "st.global.u32 [%rd2+4], %r1;"),
    # a weak load: no wait (its value need not change)
    ("ld.volatile.global.u32", "ld.global.u32"),
    # a store in the loop
    ("setp.eq.s32 %p1, %r1, 0;", "setp.eq.s32 %p1, %r1, 0;\n    st.global.u32 [%rd2+8], 1;"),
    # a counter: each pass changes state
    ("setp.eq.s32 %p1, %r1, 0;", "setp.eq.s32 %p1, %r1, 0;\n    add.s32 %r5, %r5, 1;"),
    # a predicate that combines another
    ("setp.eq.s32 %p1, %r1, 0;", "setp.eq.and.s32 %p1, %r1, 0, %p3;"),
])
def test_anything_more_is_an_ordinary_loop(change):
    old, new = change
    assert old in WAIT
    assert _waits(WAIT.replace(old, new)) == {}


# -- counters (semantics/machine/spin_counters.py), on logged accesses made by hand ---------

class _Acc(NamedTuple):
    kind: str
    tid: int
    step: int
    value: object = None
    cond: object = True
    epoch: int = 0
    spin: object = None


def _counter_wait(loop: str, bound: int, adds: int, initial=0):
    """A read at a wait `while (flag <loop> bound)` and `adds` arrivals of 1 by other CTAs."""
    src = WAIT.replace("setp.eq.s32 %p1, %r1, 0;", f"setp.{loop}.s32 %p1, %r1, {bound};")
    (wait,) = _waits(src).values()
    read = _Acc("r", 0, 10, spin=SpinRead(wait, bound, initial, True, ("global", 0, 4)))
    arrivals = [_Acc("a", 64 * (k + 1), k + 1, value=1) for k in range(adds)]
    c = counter_of(read, arrivals, lambda a, b: False, lambda c: c)
    return c, read, arrivals


def _holds(c) -> bool:
    s = z3.Solver()
    s.add(c)
    return s.check() == z3.sat


@pytest.mark.parametrize("loop,bound,adds,ends", [
    ("lt", 2, 2, True),        # wait for 2 of 2 arrivals: ends
    ("lt", 3, 2, False),       # 3 of 2: never
    ("ne", 2, 2, True),        # == 2 after 2 arrivals: ends (2 is the last value)
    ("ne", 2, 3, False),       # == 2 with 3 arrivals: the value may pass 2 unseen
])
def test_a_counter_wait_ends_when_its_final_value_ends_it(loop, bound, adds, ends):
    c, read, _ = _counter_wait(loop, bound, adds)
    assert _holds(undecided(c, read, lambda x: x)) != ends


@pytest.mark.parametrize("loop,bound,ordered", [
    ("lt", 2, True),           # every arrival is needed to reach 2
    ("lt", 1, False),          # one arrival of two ends it: neither is needed
    ("ne", 2, True),
])
def test_an_arrival_precedes_the_end_when_no_value_without_it_ends_the_wait(loop, bound,
                                                                           ordered):
    c, read, arrivals = _counter_wait(loop, bound, 2)
    assert all(_holds(z3.Not(precedes(c, read, a, lambda x: x))) != ordered
               for a in arrivals)


def test_an_unspecified_start_leaves_a_counter_undecided():
    c, read, _ = _counter_wait("lt", 2, 2, initial=None)
    assert _holds(undecided(c, read, lambda x: x))
