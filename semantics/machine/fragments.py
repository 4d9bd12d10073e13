"""Which registers hold elements of a `wmma` fragment, so that nothing keq decides depends on
the fragment layout the PTX ISA leaves unspecified (`semantics.ops.wmma_fragments`).

A `wmma.load` or `wmma.mma` tags each register it writes, per lane, with the fragment's
instance (one per execution) and the register's place in the vector. Then:

- any other instruction that reads a tagged register (arithmetic on `frag.x[i]`, a `mov` of
  one element, a spill) records a "fragment" effect: what it computes depends on which element
  that register holds, which the ISA does not say. The verdict is Inconclusive, named, and an
  emulator run under keq's layout proves nothing (`verifier.testing.proves_nothing`);
- a `wmma.mma` or `wmma.store` operand must be one fragment of the right kind, each register
  in its own place, or hold one value in every register and lane of the warp (what
  `wmma::fill_fragment` gives): a uniform fragment is the same matrix under every layout.
  Anything else (registers of two fragments, a fragment of another shape or layout, values
  written element by element) records the effect too;
- any other write clears the tag (a write under a symbolic condition leaves it undecided:
  such a register is no fragment for a later `wmma`, and still one for a plain read).

Under these rules a kernel's stores are the same matrices whatever layout the hardware uses,
so keq's choice is invisible. Tags live per executor frame; a kernel without `wmma` has none.
"""

from __future__ import annotations

import numpy as np

from semantics.ir.nodes import Instruction
from semantics.ir.operands import Addr, Reg, Vec, Pair
from semantics.machine.layout_prov import dests, has_dest

_UNDECIDED = -1           # tag of a lane whose register a conditional write may have changed


def _reads(ins: Instruction):
    ops = ins.operands[1:] if has_dest(ins) else ins.operands
    for op in ops:
        if isinstance(op, Addr):
            if isinstance(op.base, Reg):
                yield op.base
        elif isinstance(op, (Reg, Vec, Pair)):
            yield from dests(op)


def _lanes(x, certain: bool) -> np.ndarray:
    """The lanes where `x.mask` certainly (or possibly) holds, as a bool array."""
    out = np.zeros(x.geom.lanes, dtype=bool)
    out[x.certain_lanes() if certain else x.maybe_lanes()] = True
    return out


class FragmentTags:
    def __init__(self) -> None:
        self.tags: dict[Reg, np.ndarray] = {}         # per lane: 0 none, else tag
        self.kinds: dict[int, object] = {}            # instance -> its `Fragment`
        self.instances = 0

    # -- every instruction but wmma ---------------------------------------------------------
    def plain(self, x, ins: Instruction) -> None:
        """A non-wmma instruction runs under `x.mask`: its reads of fragment elements are
        effects, its writes clear the tags."""
        if not self.tags:
            return
        maybe = _lanes(x, False)
        for reg in _reads(ins):
            t = self.tags.get(reg)
            if t is not None and (t[maybe] != 0).any():
                x.effect("fragment", f"'{ins.form.name}' reads {reg.name}, which holds an "
                                     f"element of a wmma fragment")
                break
        if has_dest(ins):
            for reg in dests(ins.operands[0]):
                self._overwrite(x, reg, maybe)

    def _overwrite(self, x, reg: Reg, maybe: np.ndarray) -> None:
        t = self.tags.get(reg)
        if t is None:
            return
        sure = _lanes(x, True)
        t[sure] = 0
        t[maybe & ~sure & (t != 0)] = _UNDECIDED
        if not t.any():
            del self.tags[reg]

    # -- wmma --------------------------------------------------------------------------------
    def define(self, x, regs: tuple, kind) -> None:
        """`regs` now hold a fresh fragment of `kind` (written under `x.mask`)."""
        self.instances += 1
        inst = self.instances
        self.kinds[inst] = kind
        sure, maybe = _lanes(x, True), _lanes(x, False)
        n = x.geom.lanes
        for place, reg in enumerate(regs):
            t = self.tags.get(reg)
            if t is None:
                t = self.tags[reg] = np.zeros(n, dtype=np.int64)
            t[maybe & ~sure] = _UNDECIDED
            t[sure] = (inst << 8) | place

    def check(self, x, regs: tuple, values: list, kind, what: str) -> None:
        """Operand `what` of a wmma (its registers and their values) must be one fragment of
        `kind`, register i in place i, or one value everywhere in the warp; else an effect."""
        lanes = _lanes(x, False)
        tags = [self.tags.get(r) for r in regs]
        if all(t is None or not t[lanes].any() for t in tags):
            idx = np.flatnonzero(lanes).tolist()
            if x.d.same_values(values, idx, x.warp_base):
                return
            problem = "holds values written element by element (not one value everywhere)"
        else:
            problem = self._mismatch(tags, lanes, kind)
            if problem is None:
                return
        x.effect("fragment", f"the {what} operand of '{x.form.name}' {problem}")

    def _mismatch(self, tags: list, lanes: np.ndarray, kind) -> str | None:
        if any(t is None for t in tags):
            return "mixes fragment elements with other values"
        first = tags[0][lanes]
        if (first <= 0).any():
            return "mixes fragment elements with other values"
        for place, t in enumerate(tags):
            if not np.array_equal(t[lanes], (first & ~0xFF) | place):
                return "mixes the registers of different fragments, or reorders them"
        for inst in np.unique(first >> 8).tolist():
            got = self.kinds[inst]
            if got != kind:
                return f"is a {got.describe()} fragment, not {kind.describe()}"
        return None


__all__ = ["FragmentTags"]
