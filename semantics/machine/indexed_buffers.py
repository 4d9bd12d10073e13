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
    raw = a.as_ast()
    kind = _kind(raw)
    if kind == z3.Z3_OP_BADD:
        const, rest = _additions(raw, memo)
        if const and rest is not None:
            return const, rest
    elif kind is None and _R.ast_kind(_ctx(), raw) == z3.Z3_NUMERAL_AST:
        return a.as_long(), 0
    base, off = split(assuming(a, cond))
    return base, off.as_long() if z3.is_bv_value(off) else off


_MAIN = z3.main_ctx()


def _ctx():
    return _MAIN.ctx        # (the context keq builds every term in; per lane and access)


def _kind(raw):
    """The operation of a raw AST that is an application, else None (raw reads: these run
    once per lane and access)."""
    ctx = _ctx()
    if _R.ast_kind(ctx, raw) != z3.Z3_APP_AST:
        return None
    return _R.decl_kind(ctx, _R.app_decl(ctx, raw))


def _additions(a, memo: dict) -> tuple[int, Any]:
    """(sum of the numerals, sum of the other addends or None) of the additions under raw
    AST `a` (a bit-vector)."""
    ctx, z3ctx = _ctx(), z3.main_ctx()
    stack = [a]
    while stack:
        t = stack[-1]
        tid = _R.ast_id(ctx, t)
        if tid in memo:
            stack.pop()
            continue
        kids = [_R.app_arg(ctx, t, j) for j in range(_R.num_args(ctx, t))]
        pending = [k for k in kids if _kind(k) == z3.Z3_OP_BADD and _R.ast_id(ctx, k) not in memo]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        const, rest = 0, None
        for k in kids:
            if _kind(k) == z3.Z3_OP_BADD:
                kc, kr = memo[_R.ast_id(ctx, k)][1]
            elif _R.ast_kind(ctx, k) == z3.Z3_NUMERAL_AST:
                kc, kr = int(_R.numeral(ctx, k)), None
            else:
                kc, kr = 0, z3.BitVecRef(k, z3ctx)
            const += kc
            if kr is not None:
                rest = kr if rest is None else z3raw.BvAdd(rest, kr)
        # the AST is kept so its id is not reused while the memo lives
        memo[tid] = (z3.BitVecRef(t, z3ctx), (const & 0xFFFF_FFFF_FFFF_FFFF, rest))
    return memo[_R.ast_id(ctx, a)][1]


_CONCRETE = (int, bool, np.integer, np.bool_)
_R = z3raw.read


def where_holds(t, cond, memo: dict, laid_out: dict | None = None):
    """`t` where `cond` holds: each literal of `cond` (`z3raw.literals`) replaced by its truth
    value, without simplifying. A loop counter merged on the lane's own condition,
    `If(exists and k < K, k + 1, k)`, is then `If(True, ...)` in the address of an access
    under that condition, which the verifier evaluates over the K axis alone instead of
    every launch shape. Sound as `SymbolicPort._assuming` is: the access, and so its offset
    and the value it loads, matter only where `cond` holds.

    `laid_out` (optional) keeps each condition's substitution by the condition's id, with the
    condition itself (so the id is not reused while the entry lives): a naive matmul's lane
    loads two elements under one condition per step."""
    key = _R.ast_id(_ctx(), cond.as_ast())
    hit = None if laid_out is None else laid_out.get(key)
    if hit is None:
        pairs = z3raw.literals(cond.as_ast(), memo)
        hit = (cond, z3raw.Substitution(pairs) if pairs else None)
        if laid_out is not None:
            laid_out[key] = hit
    return t if hit[1] is None else hit[1].apply(t)


def _bool(c):
    return z3.BoolVal(bool(c)) if isinstance(c, _CONCRETE) else c


def _bv64(offset):
    return _u64(offset) if isinstance(offset, int) else offset


_NUMERALS: dict[int, Any] = {}


def _u64(v: int):
    """A 64-bit numeral (interned: a buffer's offsets recur lane after lane)."""
    v &= 0xFFFF_FFFF_FFFF_FFFF
    t = _NUMERALS.get(v)
    if t is None:
        t = z3.BitVecVal(v, 64)
        if len(_NUMERALS) < 65536:
            _NUMERALS[v] = t
    return t


class IndexedBuffers:
    """The indexed buffers of one launch and the accesses logged to them."""

    # A symbolic address belongs to the buffer whose base is the nearest at or below its
    # constant part, when that part lies inside the buffer or the guard gap after it.
    SLACK = 0x1000

    def __init__(self, buffers: list[IndexedBuffer]) -> None:
        self.buffers = sorted(buffers, key=lambda b: b.base)
        self.accesses: list[IndexedAccess] = []
        self._additions: dict[int, tuple] = {}     # see `_constant_part`
        self._literals: dict[int, list] = {}       # see `where_holds` (logged conditions)
        self._laid_out: dict[int, tuple] = {}      # see `where_holds`
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
        if _kind(a.as_ast()) == z3.Z3_OP_ITE:
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
        size = _R.bv_size(_ctx(), _R.sort(_ctx(), off.as_ast()))
        if size != 64:
            raise UnsupportedError(f"'{x.form.name}' by {x.thread_name(lane)}: a "
                                   f"{size}-bit global address", x.ins.loc)
        return b, (off if base == b.base else z3raw.BvAdd(off, _u64(base - b.base)))

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
            if not isinstance(offset, int) and not isinstance(c, _CONCRETE):
                offset = where_holds(offset, c, self._literals, self._laid_out)
            what = f"'{x.form.name}' by {x.thread_name(lane)}"
            if (b.access, kind) not in (("in", "r"), ("out", "w")):
                verb = {"r": "reads", "w": "writes", "a": "updates (atomically)"}[kind]
                raise UnsupportedError(f"{what} {verb} '{b.label}', declared access = "
                                       f"\"{b.access}\": an indexed buffer follows only "
                                       f"{'loads from' if b.access == 'in' else 'stores to'} "
                                       f"it", x.ins.loc)
            if kind == "r":
                v = z3raw.Select(array(b.label, nbytes), _bv64(offset))
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
