"""Which registers hold elements of a `wmma` fragment, so that nothing keq decides depends on
the fragment layout the PTX ISA leaves unspecified (`semantics.ops.wmma_fragments`).

A `wmma.load` or `wmma.mma` tags each register it writes, per lane, with the fragment's
instance (one per execution) and the register's place in the vector. Then:

- an element-wise map (`acc.x[i] = alpha * acc.x[i] + beta * c.x[i]`, the ISA's own
  example) keeps the tags: pure arithmetic on one slot of fragments of one kind, its other
  operands one value across the warp, run by whole warps, makes that slot of a derived
  fragment named by its recipe (the form, the fragments, the values). Every slot mapped alike
  lands in the same derived fragment, so a later wmma sees it whole; a map that treats slots
  differently (`acc.x[0] = 0`, another scale per slot) gives slots of different fragments,
  which a wmma reports as mixed (below);
- any other instruction that reads a tagged register (a `mov` of one element into another
  fragment is caught at its use, a spill, a branch, a conversion to another type) records a
  "fragment" effect: what it computes depends on which element that register holds, which
  the ISA does not say. The verdict is Inconclusive, named, and an emulator run under keq's
  layout proves nothing (`verifier.testing.proves_nothing`);
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
from semantics.ir.operands import Addr, FloatImm, IntImm, Pair, Reg, Vec
from semantics.machine.layout_prov import dests, has_dest

_UNDECIDED = -1           # tag of a lane whose register a conditional write may have changed
# pure element-wise arithmetic: the result is a function of the operands alone
_POINTWISE = frozenset("""mov add sub mul fma mad neg abs min max div rcp sqrt rsqrt ex2 lg2
    tanh copysign""".split())


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


def _one_element(ins: Instruction, kind) -> bool:
    """Does `ins` act on one element per register: a register of one element and arithmetic
    of its width, or a `mov` of the whole register? (Arithmetic on a register of two packed
    halves would tie together two elements that another layout pairs differently.)"""
    bits = ins.form.types[0].bits if ins.form.types else 0
    if ins.opcode == "mov":
        return bits == kind.reg_bits
    return kind.per_reg == 1 and bits == kind.elem_bits


class FragmentTags:
    def __init__(self) -> None:
        self.tags: dict[Reg, np.ndarray] = {}         # per lane: 0 none, else tag
        self.kinds: dict[int, object] = {}            # instance -> its `Fragment`
        self.instances = 0
        self.derived: dict[tuple, int] = {}           # element-wise map recipe -> instance

    # -- every instruction but wmma ---------------------------------------------------------
    def plain(self, x, ins: Instruction) -> None:
        """A non-wmma instruction runs under `x.mask`: its reads of fragment elements are
        effects, its writes clear the tags."""
        if not self.tags:
            return
        maybe = _lanes(x, False)
        read = [r for r in _reads(ins) if r in self.tags and (self.tags[r][maybe] != 0).any()]
        if read and self._pointwise(x, ins, maybe):
            return
        if read:
            x.effect("fragment", f"'{ins.form.name}' reads {read[0].name}, which holds an "
                                 f"element of a wmma fragment")
        if has_dest(ins):
            for reg in dests(ins.operands[0]):
                self._overwrite(x, reg, maybe)

    def _pointwise(self, x, ins: Instruction, maybe: np.ndarray) -> bool:
        """Is `ins` one step of an element-wise map over fragments (`acc.x[i] *= alpha`):
        pure arithmetic on one slot of fragments of one kind, the other operands one value
        for the whole warp, run by whole warps? Then its result is that slot of a derived
        fragment, named by the recipe (the form, the fragments, the values), the same for
        every slot the kernel maps alike. A map that treats slots differently gives each a
        different instance, which a later wmma sees as mixed (layout-dependent)."""
        if ins.opcode not in _POINTWISE or ins.guard is not None or not has_dest(ins) or \
                not isinstance(ins.operands[0], Reg) or \
                any(t.lanes > 1 for t in ins.form.types):
            return False
        sure = _lanes(x, True)
        bases = x.warp_base
        if not np.array_equal(sure, maybe) or not sure[np.isin(bases, bases[sure])].all():
            return False
        recipe, place, kind = [ins.form.name], None, None
        for op in ins.operands[1:]:
            t = self.tags.get(op) if isinstance(op, Reg) else None
            if t is None or not t[sure].any():
                key = self._uniform_key(x, op, sure)
                if key is None:
                    return False
                recipe.append(key)
                continue
            tags = t[sure]
            if (tags <= 0).any() or len(np.unique(tags)) != 1:
                return False
            inst, p = int(tags[0]) >> 8, int(tags[0]) & 0xFF
            if (place is not None and p != place) or (kind is not None and
                                                      self.kinds[inst] != kind):
                return False
            if not _one_element(ins, self.kinds[inst]):
                return False
            place, kind = p, self.kinds[inst]
            recipe.append(("fragment", inst))
        inst = self.derived.get(tuple(recipe))
        if inst is None:
            self.instances += 1
            inst = self.derived[tuple(recipe)] = self.instances
            self.kinds[inst] = kind
        dest = ins.operands[0]
        t = self.tags.get(dest)
        if t is None:
            t = self.tags[dest] = np.zeros(x.geom.lanes, dtype=np.int64)
        t[sure] = (inst << 8) | place
        return True

    @staticmethod
    def _uniform_key(x, op, lanes: np.ndarray):
        """A key for an operand that holds one value in every lane of `lanes`, else None."""
        if isinstance(op, IntImm):
            return ("imm", op.value)
        if isinstance(op, FloatImm):
            return ("imm", op.bits, op.width)
        if not isinstance(op, Reg) or op not in x.regs or op in x.undef:
            return None
        v = x.regs[op]
        idx = np.flatnonzero(lanes).tolist()
        first = np.full(x.geom.lanes, idx[0])
        if not x.d.same_values([v], idx, first):
            return None
        one = v[idx[0]]
        return ("value", int(one)) if isinstance(one, (int, np.integer)) else \
            ("term", one.get_id())

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
