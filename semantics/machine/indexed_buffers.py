"""Global buffers addressed at symbolic offsets without splitting the offsets by value.

A transpose over symbolic `rows` and `cols` reads `in[y * cols + x]`: one lane's offset takes
a value per shape, and splitting every lane's access by value (`SymbolicPort._resolve`) is
quadratic. For buffers that one kernel only reads (`in`) or only writes (`out`) there is an
exact representation that needs no split (docs/launch-shapes.md, "Two symbolic dimensions"):

- a load from a read-only buffer at a symbolic offset is `Select(A, offset)` on an SMT array
  that stands for the buffer's unchanging contents (one array per access width), indexed by
  the byte offset from the buffer's start. The verifier reads `Select(A, o)` at a shape as
  the input element at byte `o` (`verifier.indexed`), the same element a load at a concrete
  address gets as a term;
- every store to a write-only buffer, at a concrete or a symbolic offset, is appended to a
  *write log* `(condition, offset, value)` in program order, and the buffer itself is left
  untouched; the verifier replays the log at every allowed shape with numpy.

Anything else on such a buffer (a load from the write-only one, a store to the read-only one,
an atomic) is refused by name: the representation would no longer be exact. Bounds, alignment
and two writers of one element are checked by the verifier on the logged accesses, shape by
shape; the port does not see these accesses in its own checks or race log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import z3

from semantics.domains import z3raw
from semantics.errors import UnsupportedError


@dataclass(frozen=True)
class IndexedBuffer:
    """A buffer in this mode: PTX parameter `name` occupies bytes [base, end); `access` is
    "in" (the kernel only reads it) or "out" (only writes it); `label` names its arrays and
    accesses (the pair spec's parameter name, so that both kernels share the arrays)."""

    name: str
    base: int
    end: int
    access: str
    label: str


@dataclass(frozen=True)
class IndexedAccess:
    """One lane's access to an indexed buffer: `offset` is the byte offset from the buffer's
    start (an int or a 64-bit term), `cond` when it happens (True or a z3 Bool, the CTA's
    existence included), `value` the stored value (writes) or the `Select` term (reads)."""

    kind: str            # "r" | "w"
    buffer: str          # the buffer's label
    offset: Any
    nbytes: int
    align: int
    cond: Any
    value: Any
    lane: int
    what: str            # e.g. "'st.global.f32' by thread (3,0,0) of CTA (1,0,0)"
    loc: Any


ARRAY_PREFIX = "keq!indexed!"
_ARRAYS: dict[tuple[str, int], Any] = {}


def array(buffer: str, nbytes: int):
    """The SMT array standing for `buffer`'s contents read `nbytes` at a time."""
    key = (buffer, nbytes)
    a = _ARRAYS.get(key)
    if a is None:
        a = _ARRAYS[key] = z3.Array(f"{ARRAY_PREFIX}{buffer}!{nbytes}", z3.BitVecSort(64),
                                    z3.BitVecSort(8 * nbytes))
    return a


def array_buffer(decl_name: str) -> tuple[str, int] | None:
    """(buffer, nbytes) of an array made by `array`, from its name; None for other names."""
    if not decl_name.startswith(ARRAY_PREFIX):
        return None
    buffer, _, nbytes = decl_name[len(ARRAY_PREFIX):].rpartition("!")
    return buffer, int(nbytes)


def _constant_part(a, cond, split, assuming, memo: dict) -> tuple[int, Any]:
    """(constant, rest) of a symbolic address: the numeral addends of its tree of additions
    as built (no simplification: the rest is only ever evaluated), else by simplifying the
    address where the lane's condition holds; `rest` is an int when the address is.
    `memo` maps an addition's AST id to its (constant, rest or None): a pointer bumped in a
    loop is one more addition on the last one, so each load adds one step, not a walk."""
    if z3.is_app_of(a, z3.Z3_OP_BADD):
        const, rest = _additions(a, memo)
        if const and rest is not None:
            return const, rest
    if z3.is_bv_value(a):
        return a.as_long(), 0
    base, off = split(assuming(a, cond))
    return base, off.as_long() if z3.is_bv_value(off) else off


def _additions(a, memo: dict) -> tuple[int, Any]:
    """(sum of the numerals, sum of the other addends or None) of the additions under `a`."""
    stack = [a]
    while stack:
        t = stack[-1]
        if t.get_id() in memo:
            stack.pop()
            continue
        kids = t.children()
        pending = [k for k in kids if z3.is_app_of(k, z3.Z3_OP_BADD) and k.get_id() not in memo]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        const, rest = 0, None
        for k in kids:
            if z3.is_app_of(k, z3.Z3_OP_BADD):
                kc, kr = memo[k.get_id()][1]
            elif z3.is_bv_value(k):
                kc, kr = k.as_long(), None
            else:
                kc, kr = 0, k
            const += kc
            if kr is not None:
                rest = kr if rest is None else z3raw.BvAdd(rest, kr)
        # the AST is kept so its id is not reused while the memo lives
        memo[t.get_id()] = (t, (const & 0xFFFF_FFFF_FFFF_FFFF, rest))
    return memo[a.get_id()][1]


_CONCRETE = (int, bool, np.integer, np.bool_)


def _bool(c):
    return z3.BoolVal(bool(c)) if isinstance(c, _CONCRETE) else c


def _bv64(offset):
    return z3.BitVecVal(offset, 64) if isinstance(offset, int) else offset


class IndexedBuffers:
    """The indexed buffers of one launch and the accesses logged to them."""

    # A symbolic address belongs to the buffer whose base is the nearest at or below its
    # constant part, when that part lies inside the buffer or the guard gap after it.
    SLACK = 0x1000

    def __init__(self, buffers: list[IndexedBuffer]) -> None:
        self.buffers = sorted(buffers, key=lambda b: b.base)
        self.accesses: list[IndexedAccess] = []
        self._additions: dict[int, tuple] = {}     # see `_constant_part`
        self._possible = lambda cond: True           # see `divert`

    def _inside(self, address: int) -> IndexedBuffer | None:
        return next((b for b in self.buffers if b.base <= address < b.end), None)

    def _owner(self, base: int) -> IndexedBuffer | None:
        below = [b for b in self.buffers if b.base <= base < b.end + self.SLACK]
        return below[-1] if below else None

    def _locate(self, x, lane: int, a, c, split, assuming) -> tuple[IndexedBuffer, Any] | None:
        """(buffer, byte offset: an int or a 64-bit term) of address `a`; None when no indexed
        buffer owns it. A selection between addresses in one buffer (a pointer carried
        around a loop with a symbolic trip count) is that selection between their offsets."""
        if isinstance(a, _CONCRETE):
            b = self._inside(int(a))
            return None if b is None else (b, int(a) - b.base)
        if z3.is_app_of(a, z3.Z3_OP_ITE):
            sel = a.arg(0)
            then = self._locate(x, lane, a.arg(1), c, split, assuming)
            other = self._locate(x, lane, a.arg(2), c, split, assuming)
            if then is not None and other is not None and then[0] is other[0]:
                return then[0], z3raw.If(sel, _bv64(then[1]), _bv64(other[1]))
            # One branch only where the lane's condition holds (a register merged with 0 on
            # an outer branch): that branch, when the other cannot happen there.
            if then is not None and not self._possible(z3raw.And(_bool(c), z3raw.Not(sel))):
                return then
            if other is not None and not self._possible(z3raw.And(_bool(c), sel)):
                return other
            return None
        base, off = _constant_part(a, c, split, assuming, self._additions)
        if isinstance(off, int):
            return self._locate(x, lane, (base + off) & 0xFFFF_FFFF_FFFF_FFFF, c, split,
                                assuming)
        b = self._owner(base)
        if b is None:
            return None
        if off.size() != 64:
            raise UnsupportedError(f"'{x.form.name}' by {x.thread_name(lane)}: a "
                                   f"{off.size()}-bit global address", x.ins.loc)
        return b, (off if base == b.base else z3raw.BvAdd(off, z3.BitVecVal(base - b.base, 64)))

    def divert(self, x, kind: str, addr: list, cond: list, value, nbytes: int, align,
               split, assuming, possible=None) -> dict[int, Any]:
        """Take the lanes that access an indexed buffer out of `addr`/`cond` (in place: their
        condition becomes False) and log them. Returns {lane: loaded term} for reads.
        `split(address) -> (constant part, offset term)`; `assuming(value, cond)` is the
        value where the lane's condition holds; `possible(condition)` is False only when the
        condition never holds (see `SymbolicPort`)."""
        self._possible = possible or (lambda cond: True)
        loaded: dict[int, Any] = {}
        for lane, (a, c) in enumerate(zip(addr, cond)):
            if isinstance(c, _CONCRETE) and not c:
                continue
            found = self._locate(x, lane, a, c, split, assuming)
            if found is None:
                continue
            b, offset = found
            if isinstance(offset, int) and b.access == "in" and kind == "r":
                continue              # the ordinary path: a term per input element
            what = f"'{x.form.name}' by {x.thread_name(lane)}"
            if (b.access, kind) not in (("in", "r"), ("out", "w")):
                verb = {"r": "reads", "w": "writes", "a": "updates (atomically)"}[kind]
                raise UnsupportedError(f"{what} {verb} '{b.label}', declared access = "
                                       f"\"{b.access}\": an indexed buffer follows only "
                                       f"{'loads from' if b.access == 'in' else 'stores to'} "
                                       f"it", x.ins.loc)
            if kind == "r":
                v = z3.Select(array(b.label, nbytes), _bv64(offset))
                loaded[lane] = v
            else:
                v = assuming(value[lane], c)
            self.accesses.append(IndexedAccess(kind, b.label, offset, nbytes, align or nbytes,
                                               c, v, lane, what, x.ins.loc))
            cond[lane] = False
            addr[lane] = 0
        return loaded

    def guard(self, x, kind: str, addresses) -> None:
        """The ordinary path must not touch an indexed buffer but to read an `in` one (its
        stores would bypass the write log): refused by name, a keq limitation."""
        for a in addresses:
            b = self._inside(int(a))
            if b is not None and (b.access, kind) != ("in", "r"):
                raise UnsupportedError(f"'{x.form.name}' accesses '{b.label}' at an address "
                                       f"the indexed-buffer mode does not follow", x.ins.loc)
