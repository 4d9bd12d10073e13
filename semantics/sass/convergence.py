"""Warp convergence in SASS, for the race checks.

In PTX two lanes of one warp that touch one byte race unless a `bar.warp.sync` orders them
(independent thread scheduling). ptxas deletes a `bar.warp.sync` of a warp it knows to be
converged (`__syncwarp()` after a fragment store becomes nothing): a converged warp issues
each instruction for all its lanes at once and its instructions in order, so an access of
any lane is performed before the warp's next memory instruction. SASS kernels are run with
that ordering here, where keq can be certain the hardware warp is converged:

- a warp starts converged; it stops being so when it runs a block with some of its live
  (not exited) lanes and not all of them: it diverged, and the hardware need not reconverge
  where keq's PDOM scheduler does;
- it is converged again after a `WARPSYNC` that all its live lanes execute, or a `BSYNC Bn`
  they all execute whose `BSSY Bn` they all executed converged (the hardware reconverges
  at a BSYNC the threads its BSSY recorded: docs/sass.md, "BSSY/BSYNC");
- before a memory instruction that all live lanes of a converged warp execute (their
  guards may still differ: predication is no divergence), their earlier accesses are
  ordered before it, as a `bar.warp.sync` of the whole warp would order them
  (`Executor.warp_sync`: the concrete detector's happens-before, the symbolic log's warp
  intervals).

Where a mask is symbolic, nothing is certain and nothing is ordered: more races, never
fewer; `semantics.machine.kernel.ONE_WARP_IN_SASS` keeps those from refuting.

Switched off for now (`semantics.sass.machine.SassKernel.convergence` returns None): the
ordering goes through the concrete detector's happens-before, a whole-warp join per memory
instruction, which made `keq tv` of a 256-thread kernel run past 10 minutes (docs/sass.md).
"""

from __future__ import annotations

import numpy as np

from semantics.sass.registry import FAMILIES

_ACCESSES = FAMILIES["memory"] | {"LDSM", "STSM"}
_RECONVERGE = {"BSSY", "BSYNC", "WARPSYNC"}


def _certain(p) -> np.ndarray:
    if isinstance(p, np.ndarray):
        return p.astype(bool)
    return np.array([isinstance(v, (bool, np.bool_)) and bool(v) for v in p], dtype=bool)


def _possible(p) -> np.ndarray:
    if isinstance(p, np.ndarray):
        return p.astype(bool)
    return np.array([not (isinstance(v, (bool, np.bool_)) and not v) for v in p], dtype=bool)


class Convergence:
    """Per warp of the batch (by its first lane), whether the hardware warp is certainly
    converged; `block` and `instruction` are called by the executor of a SASS kernel."""

    def __init__(self, warp_base: np.ndarray) -> None:
        self.warp_base = warp_base
        self.converged = {int(b): True for b in np.unique(warp_base).tolist()}
        # (warp, barrier register) -> its last BSSY was run by the whole warp, converged
        self.recorded: dict[tuple[int, str], bool] = {}

    def _whole(self, x, mask) -> tuple[list[int], list[int]]:
        """(warps all of whose live lanes are certainly in `mask`, warps that `mask` may
        hold only some of)."""
        live = ~_certain(x._threads_exited())      # (a lane that may have exited counts)
        sure, maybe = _certain(mask), _possible(mask)
        whole, partial = [], []
        for base in np.unique(self.warp_base[maybe]).tolist():
            warp = (self.warp_base == base) & live
            (whole if (sure[warp].all() and warp.any()) else partial).append(base)
        return whole, partial

    def block(self, x, mask) -> None:
        for base in self._whole(x, mask)[1]:
            self.converged[base] = False

    def instruction(self, x, opcode: str, mask) -> None:
        """Before `opcode` runs under the block's `mask` (before its guard)."""
        if opcode not in _ACCESSES and opcode not in _RECONVERGE:
            return
        whole, partial = self._whole(x, mask)
        barrier = str(x.ins.operands[0]) if opcode in ("BSSY", "BSYNC") else ""
        for base in partial:
            if opcode == "BSSY":
                self.recorded[base, barrier] = False
        for base in whole:
            if opcode == "BSSY":
                self.recorded[base, barrier] = self.converged[base]
            elif opcode == "BSYNC":
                self.converged[base] = self.recorded.get((base, barrier), False)
            elif opcode == "WARPSYNC":
                self.converged[base] = True
            elif self.converged[base]:
                lanes = np.flatnonzero((self.warp_base == base) & _certain(mask))
                x.warp_sync(lanes, whole_warp=True)
