"""The SASS convergence model (semantics/sass/convergence.py): which warp instructions order
the earlier accesses of all the warp's lanes, as ptxas assumes when it deletes a converged
warp's bar.warp.sync."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import z3

from semantics.sass.convergence import Convergence

N = 64                                   # two warps
BASE = (np.arange(N) // 32) * 32


class _Warps:
    """The executor surface the model uses: exited lanes, the instruction, warp_sync."""

    def __init__(self) -> None:
        self.exited = np.zeros(N, dtype=bool)
        self.ins = SimpleNamespace(operands=["B0"])
        self.synced: list[tuple[int, bool]] = []

    def _threads_exited(self):
        return self.exited

    def warp_sync(self, lanes, whole_warp: bool) -> None:
        self.synced.append((int(lanes[0]) // 32 * 32, len(lanes), whole_warp))


def _lanes(*ranges) -> np.ndarray:
    m = np.zeros(N, dtype=bool)
    for lo, hi in ranges:
        m[lo:hi] = True
    return m


def test_a_converged_warp_orders_its_lanes_before_each_memory_instruction():
    x, c = _Warps(), Convergence(BASE)
    c.block(x, _lanes((0, 64)))
    c.instruction(x, "IMAD", _lanes((0, 64)))          # (not an access: nothing to order)
    c.instruction(x, "LDS", _lanes((0, 64)))
    assert x.synced == [(0, 32, True), (32, 32, True)]


def test_a_warp_that_diverged_orders_nothing_until_it_reconverges_at_its_bsync():
    x, c = _Warps(), Convergence(BASE)
    c.instruction(x, "BSSY", _lanes((0, 64)))          # recorded by the converged warps
    c.block(x, _lanes((0, 10)))                        # warp 0 diverges
    c.block(x, _lanes((10, 64)))
    c.instruction(x, "STS", _lanes((0, 64)))           # (PDOM has them together again)
    assert x.synced == [(32, 32, True)]
    c.instruction(x, "BSYNC", _lanes((0, 64)))
    x.synced.clear()
    c.instruction(x, "LDS", _lanes((0, 64)))
    assert x.synced == [(0, 32, True), (32, 32, True)]


def test_a_bsync_whose_bssy_ran_diverged_does_not_reconverge():
    x, c = _Warps(), Convergence(BASE)
    c.block(x, _lanes((0, 5)))                         # warp 0 diverged
    c.instruction(x, "BSSY", _lanes((0, 32)))          # its BSSY, not converged
    c.instruction(x, "BSYNC", _lanes((0, 32)))
    c.instruction(x, "LDS", _lanes((0, 32)))
    assert x.synced == []
    c.instruction(x, "WARPSYNC", _lanes((0, 32)))      # WARPSYNC 0xffffffff does
    c.instruction(x, "LDS", _lanes((0, 32)))
    assert x.synced == [(0, 32, True)]


def test_exited_lanes_do_not_count_and_lanes_that_may_have_exited_do():
    x, c = _Warps(), Convergence(BASE)
    x.exited = _lanes((16, 32))
    c.instruction(x, "LDS", _lanes((0, 16)))
    assert x.synced == [(0, 16, True)]
    x.synced.clear()
    x.exited = [bool(v) for v in _lanes((16, 31))[:31]] + [z3.Bool("gone")] + [False] * 32
    c.instruction(x, "LDS", _lanes((0, 16)))           # lane 31 may still be live
    assert x.synced == []


def test_a_symbolic_mask_orders_nothing_and_counts_as_divergence():
    x, c = _Warps(), Convergence(BASE)
    mask = [True] * 31 + [z3.Bool("p")] + [True] * 32
    c.block(x, mask)
    c.instruction(x, "LDS", _lanes((0, 64)))
    assert x.synced == [(32, 32, True)]
