"""Memory port of the symbolic domain.

Addresses stay concrete in a bounded launch (DESIGN.md), so memory is a map from concrete byte
locations to byte values that may be z3 terms. A word stored and loaded back at the same place
and size comes back as the very term stored (no extract/concat noise for the solver). Bounds
and alignment are checked by the concrete memory's address map, the same code the emulator
uses, so both domains fault on exactly the same accesses.

Refused by name, not approximated: a symbolic address, and an access whose lane is active only
under a symbolic condition while its address is invalid (the verifier turns such cases into
proof obligations; the executor alone cannot decide them).

Symbolic launch shapes (`LaunchShape`): the verifier runs one *maximal* launch that stands for
every launch the claim allows. A CTA beyond the actual grid does not exist, so its global
accesses happen only under its existence condition, and a buffer is only as long as its
symbolic length. The port then turns "this lane may access memory it must not" into
*obligations* (violation conditions that must be unsatisfiable) instead of refusing: an access
outside every buffer under a symbolic condition, and an access past a buffer's symbolic length.
A lane whose access is invalid is dropped from the access (if the obligation holds it never
runs; if it fails the verifier replays the model and reports the fault).
Optionally every access (symbolic conditions counted as happening) goes to a race detector:
an over-approximation, so "no race reported" proves race freedom for every shape and input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from typing import Any

import numpy as np
import z3

from semantics.choices import KeySpace, constant_name
from semantics.domains import z3raw
from semantics.domains.symbolic import SymbolicDomain
from semantics.errors import ShapeMachineryNeeded, UnsupportedError
from semantics.machine.atomic_order import contended
from semantics.machine.concrete_port import ConcretePort
from semantics.machine.indexed_buffers import IndexedBuffer, IndexedBuffers
from semantics.machine.memory import ConcreteMemory
from semantics.machine.pending_sums import PendingSum, SumParts
from semantics.machine.symbolic_races import Conjunction, SymbolicRaceLog, condition_term


@dataclass(frozen=True)
class LaunchShape:
    """A maximal launch standing for many: `exists[c]` (True or a z3 Bool) says CTA `c` (launch
    order) is launched; `limits[param]` is a buffer's byte length (int or 64-bit z3 term)."""

    exists: tuple[Any, ...]
    limits: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ShapeObligation:
    """`violation` (a z3 Bool) must be unsatisfiable: else the kernel faults for some shape.

    A bounds obligation is kept in parts, `length < end` under any of `conds` for each
    `(conds, end)` of `reaches`, so that the verifier can evaluate it over every shape with
    numpy; the z3 term is only built when a solver needs it."""

    kind: str      # "invalid address" | "out of bounds" | "undefined behaviour" | "trap"
    #                | "read-only buffer"
    what: str
    loc: Any
    violation_term: Any = None
    length: Any = None                               # the buffer's byte length (z3 term)
    reaches: tuple[tuple[tuple, int], ...] = ()      # ((lane conditions, end offset), ...)

    @cached_property
    def violation(self):
        if self.violation_term is not None:
            return self.violation_term
        return z3.Or([z3.And(z3.Or([_bool(c) for c in conds]),
                             z3.ULT(self.length, z3.BitVecVal(end, 64)))
                      for conds, end in self.reaches])


def undefined_obligation(what: str, loc, conds: list,
                         kind: str = "undefined behaviour") -> "ShapeObligation":
    """Undefined behaviour (or, `kind` "trap", a trap) that happens where any of `conds`
    holds: must be unsatisfiable."""
    return ShapeObligation(kind, what, loc,
                           z3.Or([_bool(c) for c in conds]) if len(conds) > 1
                           else _bool(conds[0]))


class AddressBudget(UnsupportedError):
    """Symbolic addresses that take too many values to split access by access: the verifier
    may run the launch again with indexed buffers (`semantics.machine.indexed_buffers`)."""


@dataclass(frozen=True)
class _SplitLane:
    """One lane's access at a symbolic offset, split by the offset's values: `places` are
    (k, region array, flat offset, condition `cond and tests[k]` (a term, or a `Conjunction`
    built by `condition_term` where needed), init map or None)."""

    lane: int
    off: Any
    cond: Any                      # the lane's own condition (True or a z3 Bool)
    places: list
    tests: dict                    # k -> the test `off == k` (as the resolver stated it)


def _region(arr: np.ndarray) -> int:
    """A stable key for a memory region: `locate` may hand out a fresh view of the same
    array (shared memory is reshaped per call), so key by the array that owns the bytes."""
    return id(arr.base if arr.base is not None else arr)


def _concrete(x) -> bool:
    return isinstance(x, (int, bool, np.integer, np.bool_))


_PER_CTA_SPACES = ("shared", "local", "param", "const")
# A named tuple built without its Python-level `__new__` (`_CONJUNCTION(Conjunction, (a, b))`):
# a histogram builds one per lane and bin.
_CONJUNCTION = tuple.__new__


def _term(v, w: int):
    return z3.BitVecVal(int(v), w) if _concrete(v) else v


def _bool(c):
    return z3.BoolVal(bool(c)) if _concrete(c) else c


def _split_address(t) -> tuple[int, Any]:
    """address = constant + offset term (z3's simplifier puts a constant addend first)."""
    t = z3.simplify(t)
    base = 0
    if z3.is_app_of(t, z3.Z3_OP_BADD):
        consts = [c for c in t.children() if z3.is_bv_value(c)]
        if consts:
            base = sum(c.as_long() for c in consts)
    off = z3.simplify(t - z3.BitVecVal(base, t.size())) if base else t
    return base, off


def _raw_conjuncts(mask, ctx) -> list:
    """The conjuncts of raw Boolean `mask`: its nested `And`s flattened (a stack: the last
    argument first), the rest as they are."""
    R = z3raw.read
    out, stack = [], [mask]
    while stack:
        t = stack.pop()
        if R.ast_kind(ctx, t) == z3.Z3_APP_AST and \
                R.decl_kind(ctx, R.app_decl(ctx, t)) == z3.Z3_OP_AND:
            stack.extend(R.app_arg(ctx, t, j) for j in range(R.num_args(ctx, t)))
        else:
            out.append(t)
    return out


def _peeled(value, mask, ctx) -> tuple[Any, list]:
    """(raw `value` less its merges `If(lit, new, old)` on a conjunct `lit` of `mask`, the
    raw conjuncts of `mask`): a register merged at this very mask is `new` where it holds."""
    R = z3raw.read
    lits = _raw_conjuncts(mask.as_ast(), ctx)
    ids = {R.ast_id(ctx, lit) for lit in lits}
    v = value.as_ast()
    while R.ast_kind(ctx, v) == z3.Z3_APP_AST and \
            R.decl_kind(ctx, R.app_decl(ctx, v)) == z3.Z3_OP_ITE and \
            R.ast_id(ctx, R.app_arg(ctx, v, 0)) in ids:
        v = R.app_arg(ctx, v, 1)
    return v, lits


def _result(raw, like):
    """A raw term of `like`'s sort as the port's value: an int when it is a numeral."""
    ctx = like.ctx_ref()
    if z3raw.read.ast_kind(ctx, raw) == z3.Z3_NUMERAL_AST:
        return int(z3raw.read.numeral(ctx, raw))
    return z3raw.wrap(raw, like)


def _assuming(value, mask, extra: tuple = ()):
    """`value` where the lane's `mask` holds (and the `extra` substitutions, e.g. a symbolic
    address offset := one of its values): registers written under a symbolic condition are
    `If(cond, new, old)`, and an access under that very condition uses `new`. Returns an int
    when that makes the value concrete (else the term). Sound because the access only happens
    where `mask` holds. (On raw ASTs: this runs once per lane and place of a split access.)"""
    if _concrete(value):
        return value
    ctx = value.ctx_ref()
    R = z3raw.read
    if _concrete(mask):
        v, lits = value.as_ast(), []
    else:
        # The common case, a register merged at this very mask: If(lit, new, old) is `new`.
        v, lits = _peeled(value, mask, ctx)
        if R.ast_kind(ctx, v) == z3.Z3_NUMERAL_AST:
            return int(R.numeral(ctx, v))
    pairs = [(a.as_ast(), b.as_ast()) for a, b in extra]
    # A concrete mask assumes nothing (an inactive lane's value is never used).
    true, false = _TRUE.as_ast(), _FALSE.as_ast()
    for lit in lits:
        kind = R.decl_kind(ctx, R.app_decl(ctx, lit)) \
            if R.ast_kind(ctx, lit) == z3.Z3_APP_AST else None
        if kind == z3.Z3_OP_TRUE:
            continue
        if kind == z3.Z3_OP_NOT:
            pairs.append((R.app_arg(ctx, lit, 0), false))
        pairs.append((lit, true))
    if not pairs:
        return _result(v, value)
    t = z3raw.substitute_raw(v, pairs)
    if t.value == v.value:
        # Nothing to fold: the value as built, as a lane with a concrete mask gets it (z3's
        # simplifier would rewrite NaN wrappers and shifts that mode real reads by shape).
        return _result(v, value)
    return _result(z3raw.simplify_raw(t), value)


_TRUE, _FALSE = z3.BoolVal(True), z3.BoolVal(False)


def _merged_new(value, mask):
    """`value` less its merges `If(lit, new, old)` on a literal of `mask` (the value where
    `mask` holds; `_assuming` without its substitution and simplification)."""
    if _concrete(value):
        return value
    if _concrete(mask) or not z3.is_app_of(value, z3.Z3_OP_ITE):
        # (a loop's mask has a conjunct per iteration: not walked for a value that is no merge)
        return value.as_long() if z3.is_bv_value(value) else value
    v, _ = _peeled(value, mask, value.ctx_ref())
    return _result(v, value)


def _unless_zero(m, d):
    """`m` less its conjuncts `d != 0`: an increment by `d` under `m and d != 0` is the
    increment by `d` under `m` (adding zero changes nothing), the common `if (count)
    atomicAdd(p, count)`. True when nothing else is left. (On raw ASTs: a histogram asks
    this for every lane of every atomic.)"""
    ctx, R = m.ctx_ref(), z3raw.read
    d_id = R.ast_id(ctx, d.as_ast())

    def is_zero(t) -> bool:
        return R.ast_kind(ctx, t) == z3.Z3_NUMERAL_AST and R.numeral(ctx, t) == b"0"

    def is_nonzero(lit) -> bool:
        kind = z3raw.app_kind(ctx, lit)
        if kind == z3.Z3_OP_NOT:
            lit = R.app_arg(ctx, lit, 0)
            if z3raw.app_kind(ctx, lit) != z3.Z3_OP_EQ:
                return False
        elif kind != z3.Z3_OP_DISTINCT or R.num_args(ctx, lit) != 2:
            return False
        a, b = R.app_arg(ctx, lit, 0), R.app_arg(ctx, lit, 1)
        return (R.ast_id(ctx, a) == d_id and is_zero(b)) or \
            (R.ast_id(ctx, b) == d_id and is_zero(a))

    lits = _raw_conjuncts(m.as_ast(), ctx)
    keep = [lit for lit in lits if not is_nonzero(lit)]
    if len(keep) == len(lits):
        return m
    kept = [z3raw.wrap(lit, m) for lit in keep]
    return True if not kept else kept[0] if len(kept) == 1 else z3.And(kept)


_ZEROS: dict[int, Any] = {}
_PROBES: dict[int, tuple] = {}


def _zero(w: int):
    z = _ZEROS.get(w)
    if z is None:
        z = _ZEROS[w] = z3.BitVecVal(0, w)
    return z


def _probes(w: int) -> tuple:
    """Two fresh constants of `w` bits that `SymbolicPort._delta` applies an update to."""
    hit = _PROBES.get(w)
    if hit is None:
        hit = _PROBES[w] = (z3.BitVec(f"keq!atomic-old-{w}", w),
                            z3.BitVec(f"keq!atomic-other-old-{w}", w))
    return hit


def _difference(new, probe):
    """`new - probe` as a term: the other argument when `new` is the add `probe + v` (the
    term a guard on v mentions), else simplified; None when `new` is a number."""
    if _concrete(new):
        return None
    ctx, R = new.ctx_ref(), z3raw.read
    raw = new.as_ast()
    if z3raw.app_kind(ctx, raw) == z3.Z3_OP_BADD and R.num_args(ctx, raw) == 2:
        probe_id = R.ast_id(ctx, probe.as_ast())
        for i in (0, 1):
            if R.ast_id(ctx, R.app_arg(ctx, raw, i)) == probe_id:
                return z3raw.wrap(R.app_arg(ctx, raw, 1 - i), new)
    return z3.simplify(new - probe)


def _guarded(m, new, old, delta, w: int):
    """The word after an update to `new` that happens where `m` holds. An update that adds a
    term independent of the old word (`delta`: atomic add, sub) is kept as `old + If(m,
    delta, 0)`: the same value as If(m, new, old), but successive increments of one word
    stay one flat sum, which z3 orders canonically, so two kernels that add the same terms
    in another order build the same term and need no solver."""
    if _concrete(m):
        if not m:
            return old
        return new if new is not None else _term(old, w) + delta
    if delta is None:
        return z3raw.If(m, _term(new, w), _term(old, w))
    m = _unless_zero(m, delta)
    if _concrete(m):
        return _term(old, w) + delta
    return _term(old, w) + z3raw.If(m, delta, z3.BitVecVal(0, w))


def _and(m, e):
    """Conjunction that keeps concrete operands concrete."""
    if _concrete(m):
        return e if bool(m) else False
    if _concrete(e):
        return m if bool(e) else False
    return z3raw.And(m, e)


class SymbolicPort:
    RESOLVE_BUDGET = 1 << 18   # values of symbolic addresses, summed over one access's lanes
    DATA_SHARE = 32            # a value over launch shapes counts this much (8192 at most)
    def __init__(self, mem: ConcreteMemory, *, races: SymbolicRaceLog | None = None) -> None:
        self.mem = mem
        self.checker = ConcretePort(mem, track_uninitialized=False)
        self.races = races
        # Symbolic launch shapes (set by `use_shape`): existence per lane, limits per buffer.
        self.exists_of_lane: list | None = None
        self.limits: list[tuple[int, int, str, Any]] = []     # (base, end, name, length)
        self.obligations: list[ShapeObligation] = []
        # `resolver(offset term, condition) -> set of values | None`: what a symbolic address
        # offset can be (the verifier evaluates it over every allowed shape).
        self.resolver = None
        self.symbolic_lanes: list = []
        # (region id, flat offset) -> (word key, byte index); word key -> (nbytes, value)
        self.bytes: dict[tuple[int, int], tuple[tuple[int, int, int], int]] = {}
        # Loads at a symbolic offset: chain term id -> (chain, offset term, {value: word},
        # the last word). A store through the same offset picks the word for each value
        # directly instead of re-simplifying the whole chain (see `_picked`).
        self.chains: dict[int, tuple[Any, Any, dict[int, Any], Any]] = {}
        self.words: dict[tuple[int, int, int], object] = {}
        # Sums of atomic increments as built, by node (`semantics.machine.pending_sums`).
        self.sums: dict[int, SumParts] = {}
        self.writes: dict[int, int] = {}        # region id -> `_write`s to it (see `_add`)
        self.atomics_done = 0
        # Buffers read or written at symbolic offsets without splitting (`use_indexed`).
        self.indexed: IndexedBuffers | None = None
        self.indexed_loaded: dict[int, Any] = {}
        # Shared-memory bytes written only under symbolic conditions: (region, flat) -> the
        # disjunction of those conditions. A read is of written memory when the verifier's
        # `possible` shows that it cannot happen where none of them held.
        self.init_conds: dict[tuple[int, int], Any] = {}
        self.possible = None
        self.presets: dict[int, tuple[int, Any]] = {}   # global flat offset -> (bytes, word)
        self.shared_reads = 0          # loads of memory another thread may write

    def write_count(self) -> int:
        """Writes so far, every region (a spinning loop makes none)."""
        return sum(self.writes.values()) + self.atomics_done

    def use_shape(self, shape: LaunchShape, cta_of_lane: np.ndarray,
                  allocs: dict[str, Any]) -> None:
        self.exists_of_lane = [shape.exists[c] for c in cta_of_lane.tolist()]
        for name, length in shape.limits.items():
            a = allocs[name]
            self.limits.append((a.base, a.base + a.size, name, length))

    def use_indexed(self, access: dict[str, tuple[str, str]], allocs: dict[str, Any]) -> None:
        """Address the buffers in `access` (PTX parameter -> ("in" | "out", label)) as
        indexed buffers (`semantics.machine.indexed_buffers`)."""
        self.indexed = IndexedBuffers([IndexedBuffer(name, allocs[name].base,
                                                     allocs[name].base + allocs[name].size,
                                                     a, label)
                                       for name, (a, label) in access.items()])

    # -- addressing ------------------------------------------------------------------------
    def _places(self, x, space, addr, nbytes, mask, align, kind="r", value=None):
        """Where each lane accesses, and under which condition: (arr, flat, maybe lanes,
        shared-memory init map or None, per-lane condition)."""
        self.symbolic_lanes = []
        cond = list(mask)
        if self.exists_of_lane is not None and space not in _PER_CTA_SPACES:
            # Only global memory outlives a CTA: a CTA that is not launched must leave no
            # trace there, while its shared memory is its own (and concrete masks keep the
            # shared-memory initialization tracking exact).
            cond = [_and(m, e) for m, e in zip(cond, self.exists_of_lane)]
        self.indexed_loaded = {}
        if self.indexed is not None and space not in _PER_CTA_SPACES:
            # (before `_assuming`: an indexed offset is evaluated at every shape, where a merge
            # on the lane's own mask picks the new value by itself; no simplification needed)
            addr, cond = list(addr), list(cond)
            self.indexed_loaded = self.indexed.divert(x, kind, addr, cond, value, nbytes, align,
                                                      _split_address, _merged_new,
                                                      self.possible)
        if not all(_concrete(a) for a in addr):
            addr = [a if _concrete(a) or (_concrete(m) and not m) else _assuming(a, m)
                    for a, m in zip(addr, mask)]
        if not all(_concrete(a) for a in addr):
            sym = [i for i, v in enumerate(addr) if not _concrete(v)]
            self.symbolic_lanes = self._resolve(x, space, addr, nbytes, cond, sym, align, kind)
            addr = [0 if i in set(sym) else v for i, v in enumerate(addr)]
            cond = [False if i in set(sym) else c for i, c in enumerate(cond)]
        a = np.array([int(v) for v in addr], dtype=np.uint64)
        certain = np.array([bool(m) if _concrete(m) else False for m in cond], dtype=bool)
        maybe = np.array([(not _concrete(m)) or bool(m) for m in cond], dtype=bool)
        # Faults are decided on lanes that certainly execute; lanes active only under a
        # symbolic condition must have valid addresses too, or we cannot go on soundly.
        arr, flat, init = self.checker._locate(x, space, a, nbytes, certain, align)
        if (maybe & ~certain).any():
            _, _, _, bad, _ = self.mem.locate(space, a, nbytes, maybe)
            if bad is not None and bad.any():
                if self.exists_of_lane is None:
                    raise ShapeMachineryNeeded(f"'{x.form.name}' may access invalid memory "
                                               f"under a data-dependent condition", x.ins.loc)
                lanes = np.nonzero(bad)[0].tolist()
                self.obligations.append(ShapeObligation(
                    "invalid address", f"'{x.form.name}' accesses no buffer "
                    f"(first: {x.thread_name(lanes[0])}, address {int(a[lanes[0]]):#x})",
                    x.ins.loc, z3.Or([cond[i] for i in lanes])))
                maybe &= ~bad
            arr, flat, init = self.checker._locate(x, space, a, nbytes, maybe, align)
        if kind != "r":
            self._writable(x, arr, flat, a, certain, maybe, cond)
        if self.indexed is not None and arr is self.mem.g:
            self.indexed.guard(x, kind, a[maybe].tolist())
        if self.limits and arr is self.mem.g:
            self._bounds(x, a, nbytes, maybe, cond)
        if self.races is not None:
            lanes = np.nonzero(maybe)[0]
            self.races.access(x, self._region(arr), flat[lanes], nbytes, lanes, kind,
                              [cond[i] for i in lanes.tolist()],
                              None if value is None else [value[i] for i in lanes.tolist()])
        return arr, flat, maybe, (init if init is not None and init is not self.mem.g_init
                                  else None), cond

    def _resolve(self, x, space, addr, nbytes, cond, lanes, align, kind) -> list:
        """Lanes whose address is a symbolic term: each becomes one access per value the
        address can take (`resolver`, from the verifier, lists them over every allowed
        shape and the few input bits the address may depend on), under `cond and offset ==
        k`. Returns [(lane, offset term, [(k, arr, flat, condition, init map or None)],
        {k: the test `offset == k`})]; the offset term is the address less its constant part,
        so a load and a store indexed alike share it (see `_chains_in`). The resolver may
        restate each test on the one input the offset reads (`data[i] == 3` for `4 *
        zext(data[i]) == 12`), so kernels that compute one index differently test alike."""
        if self.resolver is None:
            raise ShapeMachineryNeeded(f"'{x.form.name}' uses a data-dependent (symbolic) "
                                       f"address", x.ins.loc)
        out = []
        budget = self.RESOLVE_BUDGET
        for lane in lanes:
            c = cond[lane]
            if _concrete(c) and not bool(c):
                continue
            base, off = _split_address(addr[lane])
            values = self.resolver(off, c)
            if values is None:
                raise AddressBudget(f"'{x.form.name}' uses an address that depends on input "
                                       f"data or takes too many values ({x.thread_name(lane)})",
                                       x.ins.loc)
            # Offsets over shape scalars (a set) that take thousands of values are the 2-D
            # blow-up (`row * cols + col`), better refused early; offsets over a byte of
            # input (a dict) take at most 256 per lane, and every lane may use them.
            budget -= len(values) * (1 if isinstance(values, dict) else self.DATA_SHARE)
            if budget < 0:
                raise AddressBudget(f"'{x.form.name}' uses symbolic addresses that take too "
                                       f"many values over its lanes (at most "
                                       f"{self.RESOLVE_BUDGET // self.DATA_SHARE} over launch "
                                       f"shapes, {self.RESOLVE_BUDGET} over input data)",
                                       x.ins.loc)
            ks = sorted(values)
            if not ks:
                out.append(_SplitLane(lane, off, c, [], {}))
                continue
            where = np.array([(base + k) & 0xFFFFFFFFFFFFFFFF for k in ks], dtype=np.uint64)
            every = np.ones(len(ks), dtype=bool)
            # The lane's own CTA (shared) and lane (local): `lanes` maps each value to it.
            arr, flat, init, bad, _ = self.mem.locate(space, where, nbytes, every,
                                                      np.full(len(ks), lane, dtype=np.int64))
            bad = np.zeros(len(ks), bool) if bad is None else bad.copy()
            bad |= where % np.uint64(align or nbytes) != 0
            given = values if isinstance(values, dict) else {}
            tests = {}
            for k in ks:
                t = given.get(k)
                tests[k] = t if t is not None else off == z3.BitVecVal(k, off.size())
            # (a histogram's lane has a place per bin: built as plain tuples, in one pass)
            conds = list(tests.values()) if _concrete(c) else \
                [_CONJUNCTION(Conjunction, (c, t)) for t in tests.values()]
            for j in np.nonzero(bad)[0].tolist():
                self.obligations.append(ShapeObligation(
                    "invalid address", f"'{x.form.name}' may access no buffer or a "
                    f"misaligned address {int(where[j]):#x} ({x.thread_name(lane)})",
                    x.ins.loc, condition_term(conds[j])))
            if kind != "r" and arr is not None:
                hit, name = self.mem.written_read_only(arr, flat, ~bad)
                for j in np.nonzero(hit)[0].tolist():
                    self.obligations.append(ShapeObligation(
                        "read-only buffer", f"'{x.form.name}' may write into buffer '{name}', "
                        f"which the launch declares read-only ({x.thread_name(lane)})",
                        x.ins.loc, condition_term(conds[j])))
                bad = bad | hit
            good = np.nonzero(~bad)[0]
            if arr is None or not good.size:
                out.append(_SplitLane(lane, off, c, [], {}))
                continue
            good_conds = [conds[j] for j in good.tolist()]
            if self.indexed is not None and arr is self.mem.g:
                self.indexed.guard(x, kind, where[good].tolist())
            if self.limits and arr is self.mem.g:
                self._bounds(x, where[good], nbytes, np.ones(good.size, bool), good_conds)
            if self.races is not None:
                self.races.access(x, self._region(arr), flat[good], nbytes,
                                  [lane] * good.size, kind, good_conds)
            tracked = init if init is not None and init is not self.mem.g_init else None
            at = flat.tolist()
            places = list(zip(ks, repeat(arr), at, conds, repeat(tracked))) \
                if good.size == len(ks) else \
                [(ks[j], arr, at[j], conds[j], tracked) for j in good.tolist()]
            out.append(_SplitLane(lane, off, c, places, tests))
        return out

    def _writable(self, x, arr, flat, a, certain, maybe, cond) -> None:
        """A write into a buffer the launch declares read-only: a fault where a lane certainly
        writes, an obligation of the symbolic launch where it may."""
        self.checker.check_writable(x, arr, flat, certain, a)
        hit, name = self.mem.written_read_only(arr, flat, maybe & ~certain)
        if not hit.any():
            return
        lanes = np.nonzero(hit)[0].tolist()
        if self.exists_of_lane is None:
            raise ShapeMachineryNeeded(f"'{x.form.name}' may write into read-only buffer "
                                       f"'{name}' under a data-dependent condition", x.ins.loc)
        self.obligations.append(ShapeObligation(
            "read-only buffer", f"'{x.form.name}' may write into buffer '{name}', which the "
            f"launch declares read-only (first: {x.thread_name(lanes[0])})", x.ins.loc,
            z3.Or([_bool(cond[i]) for i in lanes])))

    def _region(self, arr) -> str:
        if arr is self.mem.g:
            return "global"
        if arr is self.mem.shared or arr.base is self.mem.shared:
            return "shared"
        return "other"

    def _bounds(self, x, a: np.ndarray, nbytes: int, maybe: np.ndarray, cond: list) -> None:
        """Obligations: no lane reads or writes past its buffer's symbolic length."""
        for base, end, name, length in self.limits:
            if _concrete(length):
                continue          # the maximal layout already checks a fixed length
            inside = maybe & (a >= np.uint64(base)) & (a < np.uint64(end))
            lanes = np.nonzero(inside)[0].tolist()
            if not lanes:
                continue
            # One condition per distinct end offset: lanes reaching the same byte share it.
            by_end: dict[int, list] = {}
            for i in lanes:
                by_end.setdefault(int(a[i]) - base + nbytes, []).append(condition_term(cond[i]))
            first = lanes[0]
            self.obligations.append(ShapeObligation(
                "out of bounds", f"'{x.form.name}' may access '{name}' past its length "
                f"(e.g. {x.thread_name(first)})", x.ins.loc, length=length,
                reaches=tuple((tuple(cs), e) for e, cs in sorted(by_end.items()))))

    def _read(self, arr, flat: int, nbytes: int):
        region = _region(arr)
        key = self.bytes.get((region, flat))
        if key is not None and key[1] == 0:
            wkey = key[0]
            if wkey[2] == nbytes and all(self.bytes.get((region, flat + i)) == (wkey, i)
                                         for i in range(nbytes)):
                return self._word(wkey)
        parts = []          # (value, bits), low first: a run of one word's bytes is one piece
        run = None          # (wkey, first byte, bytes) of the symbolic run being read
        for i in range(nbytes):
            ref = self.bytes.get((region, flat + i))
            if ref is not None and run is not None and ref == (run[0], run[1] + run[2]):
                run = (run[0], run[1], run[2] + 1)
                continue
            if run is not None:
                parts.append(self._piece(*run))
                run = None
            if ref is None:
                parts.append((int(arr[flat + i]), 8))
            elif _concrete(self._word(ref[0])):
                parts.append(((self._word(ref[0]) >> (8 * ref[1])) & 0xFF, 8))
            else:
                run = (ref[0], ref[1], 1)
        if run is not None:
            parts.append(self._piece(*run))
        if all(_concrete(p) for p, _ in parts):
            out, at = 0, 0
            for p, w in parts:
                out, at = out | (int(p) << at), at + w
            return out
        terms = [p if not _concrete(p) else z3.BitVecVal(int(p), w) for p, w in parts]
        # (whole runs of a word's bytes, so that a half of a packed register reads back as
        # that half's term: Extract(31, 16, Concat(hi, lo)) is hi, not hi's bytes apart)
        return z3.simplify(z3.Concat(*reversed(terms)) if len(terms) > 1 else terms[0])

    def _piece(self, wkey, first: int, count: int) -> tuple:
        """Bytes first..first+count-1 of the symbolic word `wkey`, as one term and its width."""
        v = self._word(wkey)
        if first == 0 and count * 8 == v.size():
            return v, v.size()
        return z3.Extract(8 * (first + count) - 1, 8 * first, v), 8 * count

    def _word(self, wkey):
        v = self.words[wkey]
        if isinstance(v, PendingSum):
            v = self.words[wkey] = v.term(self.sums)
        return v

    def _add(self, arr, flat: int, nbytes: int, increment, w: int,
             parts: tuple | None = None) -> None:
        """Add the term `increment` to the word at `flat` (see `PendingSum`); `parts`: (test,
        step, other) when it is `If(test, step, other)`."""
        region = _region(arr)
        wkey = (region, flat, nbytes)
        pending = self.words.get(wkey)
        if isinstance(pending, PendingSum):
            # No byte of it overwritten since: no write to the region at all (a histogram's
            # increments in a row), or each byte still its own.
            gen = self.writes.get(region, 0)
            if pending.gen == gen or all(self.bytes.get((region, flat + i)) == (wkey, i)
                                         for i in range(nbytes)):
                pending.gen = gen
                pending.add(increment, parts)
                return
        pending = PendingSum(_term(self._read(arr, flat, nbytes), w))
        pending.add(increment, parts)
        self._write(arr, flat, nbytes, pending)
        pending.gen = self.writes[region]

    def _add_at_each(self, places: list, tests: dict, step, zero, nbytes: int, w: int) -> None:
        """`_add` of `If(tests[k], step, zero)` at each place `(k, arr, flat, ...)`: a
        histogram lane's increment of every bin, 131,072 per kernel. The common case, a
        word already summing with no write to its region since, is taken here."""
        words, writes, mk = self.words, self.writes, z3raw.If
        region = arr = None
        for k, arr_k, f, _, _ in places:
            if arr_k is not arr:
                arr, region = arr_k, _region(arr_k)
            test = tests[k]
            increment = mk(test, step, zero)
            pending = words.get((region, f, nbytes))
            if type(pending) is PendingSum and pending.gen == writes.get(region, 0):
                pending.add(increment, (test, step, zero))
            else:
                self._add(arr, f, nbytes, increment, w, (test, step, zero))

    def _write(self, arr, flat: int, nbytes: int, value) -> None:
        region = _region(arr)
        self.writes[region] = self.writes.get(region, 0) + 1
        if _concrete(value):
            # Concrete values live in the array itself: the emulator's representation.
            v = int(value)
            for i in range(nbytes):
                arr[flat + i] = (v >> (8 * i)) & 0xFF
                self.bytes.pop((region, flat + i), None)
            return
        wkey = (region, flat, nbytes)
        self.words[wkey] = value
        for i in range(nbytes):
            self.bytes[(region, flat + i)] = (wkey, i)

    # -- the port ----------------------------------------------------------------------------
    def fence(self, x, lanes) -> None:
        """A fence (`lanes`: those certain to run it; the race log takes every lane that may,
        with its condition): handoffs through atomics (`semantics.machine.symbolic_handoffs`)."""
        if self.races is not None:
            self.races.fence(x)

    def warp_sync(self, x, lanes, whole_warp: bool) -> None:
        """`bar.warp.sync` by one group of a warp's lanes: the race log orders their accesses
        (a whole warp's through the executor's warp epochs)."""
        if self.races is not None and not whole_warp:
            self.races.warp_group(x, lanes)

    def complete_async(self, x, serial: int, lanes) -> None:
        """A `cp.async` completes for `lanes` (`semantics.machine.async_copies`)."""
        if self.races is not None:
            self.races.complete(x, serial, lanes)

    def load(self, x, space, addr, nbytes, mask, align=None):
        arr, flat, maybe, init, cond = self._places(x, space, addr, nbytes, mask, align)
        if self.symbolic_lanes or self.indexed_loaded or \
                self.mem.others_may_write(arr, flat, maybe):
            self.shared_reads += 1
        out = [0] * len(addr)
        for lane, v in self.indexed_loaded.items():
            out[lane] = v
        for lane in np.nonzero(maybe)[0].tolist():
            f = int(flat[lane])
            if init is not None and not init[f:f + nbytes].all():
                out[lane] = self._read_unwritten(x, arr, init, f, nbytes,
                                                 self._own(cond[lane], lane), lane)
            else:
                out[lane] = self._read(arr, f, nbytes)
        for s in self.symbolic_lanes:
            if not s.places:
                continue
            w = nbytes * 8
            words = {k: _term(self._read_place(x, arr_k, f, nbytes, ck, init_k, s.lane), w)
                     for k, arr_k, f, ck, init_k in s.places}
            out[s.lane] = self._chain(s.off, s.tests, [k for k, *_ in s.places], words)
        return out

    def _chain(self, off, tests: dict, ks: list[int], words: dict[int, Any]):
        """The word at `off`: If(off == k0, word k0, If(off == k1, ...)) (each test as the
        resolver stated it), the last word where no test holds (the resolver listed every
        value `off` takes)."""
        last = words[ks[-1]]
        chain = last
        for k in reversed(ks[:-1]):
            chain = z3raw.If(tests[k], words[k], chain)
        if len(ks) > 1:
            self.chains[chain.get_id()] = (chain, off, words, last)
        return chain

    def own_condition(self, cond, lane: int):
        """`cond` of `lane` where its CTA exists (`_own`), for the executor's obligations."""
        return self._own(cond, lane)

    def _own(self, cond, lane: int):
        """The lane's condition with its CTA's existence: a CTA that is not launched reads
        nothing (shared-memory accesses do not carry it, see `_places`)."""
        if self.exists_of_lane is None:
            return cond
        return _and(cond, self.exists_of_lane[lane])

    def _written(self, arr, init, f: int, nbytes: int, cond) -> bool:
        """Have stores under symbolic conditions written bytes [f, f + nbytes) wherever a
        read under `cond` happens? (`possible` decides `cond and not written`: by evaluation
        at every shape when both mention only shape scalars, else by a solver; an unknown
        answer counts as possible, so the read stays flagged.)"""
        if self.possible is None:
            return False
        region = _region(arr)
        written = []
        for i in range(nbytes):
            if init[f + i]:
                continue
            w = self.init_conds.get((region, f + i))
            if w is None:
                return False
            written.append(w)
        w = written[0] if len(set(t.get_id() for t in written)) == 1 else z3.And(written)
        return not self.possible(z3.And(_bool(cond), z3.Not(w)))

    def _read_place(self, x, arr, f: int, nbytes: int, cond, init, lane: int):
        """The word at one place a split access may reach (`_read`, or `_read_unwritten`
        where some byte may be unwritten)."""
        if init is not None and not init[f:f + nbytes].all():
            return self._read_unwritten(x, arr, init, f, nbytes,
                                        self._own(condition_term(cond), lane), lane)
        return self._read(arr, f, nbytes)

    def _read_unwritten(self, x, arr, init, f: int, nbytes: int, cond, lane: int):
        """A read of shared or local memory some byte of which no store has certainly
        written: such a byte holds an unspecified value fixed at launch (PTX ISA: the
        contents of never-written memory are unknown but constant), one constant per CTA
        (shared) or thread (local) and byte offset, the same at every read. A byte written
        under symbolic conditions is that value where none of them held, unless `possible`
        shows that no such read happens. The emulator's fill policy (`Choices`) gives these
        bytes their values on a replay."""
        current = self._read(arr, f, nbytes)
        if self._written(arr, init, f, nbytes, cond):
            return current             # (every byte written wherever this read happens)
        region = _region(arr)
        space = KeySpace.CTA if arr is self.mem.shared or arr.base is self.mem.shared \
            else KeySpace.THREAD
        what = "shared" if space is KeySpace.CTA else "local"
        size = self.mem.shared.shape[1] if space is KeySpace.CTA else self.mem.local.shape[1]
        key = x.lane_key_name(space, lane)
        parts = []
        for i in range(nbytes):
            byte = ((current >> (8 * i)) & 0xFF) if _concrete(current) else \
                z3.Extract(8 * i + 7, 8 * i, current)
            if init[f + i]:
                parts.append(byte)
                continue
            launch = z3.BitVec(constant_name(f"{x.tag}/{what}/{(f + i) % size}", key), 8)
            written = self.init_conds.get((region, f + i))
            if written is None:
                parts.append(launch)
            elif self.possible is not None and \
                    not self.possible(z3.And(_bool(cond), z3.Not(written))):
                parts.append(byte)
            else:
                parts.append(z3.If(written, _term(byte, 8), launch))
        terms = [_term(b, 8) for b in parts]
        return z3.simplify(z3.Concat(*reversed(terms))) if nbytes > 1 else terms[0]

    def store(self, x, space, addr, nbytes, value, mask, align=None):
        arr, flat, maybe, init, mask = self._places(x, space, addr, nbytes, mask, align, "w",
                                                    value)
        w = nbytes * 8
        for lane in np.nonzero(maybe)[0].tolist():
            f = int(flat[lane])
            m = mask[lane]
            if init is not None:
                if _concrete(m):
                    init[f:f + nbytes] = True
                else:
                    self._written_under(arr, init, f, nbytes, m)
            v = value[lane]
            if not _concrete(m):      # a store under a data-dependent condition
                # Registers written under this condition are If(cond, new, old): what is
                # stored where the condition holds is `new` (keeps both kernels' terms alike).
                # With indexed buffers the stored terms are compared by evaluation, and
                # simplifying would rewrite the `Select` offsets the bounds stage evaluated.
                v = _assuming(v, m) if self.indexed is None else _merged_new(v, m)
                old = self._read(arr, f, nbytes)
                v = z3.If(m, v if not _concrete(v) else z3.BitVecVal(int(v), w),
                          old if not _concrete(old) else z3.BitVecVal(int(old), w))
            self._write(arr, f, nbytes, v)
        for split in self.symbolic_lanes:
            lane, off, places = split.lane, split.off, split.places
            chains = self._chains_in(value[lane], off)
            for k, arr_k, f, ck, init_k in places:
                ck = condition_term(ck)
                # One substitution for both: `value` where the lane runs and `off == k`
                # (a load chain through the same offset is its word for `k`).
                picked = tuple((c, words.get(k, last)) for c, words, last in chains)
                v = _term(_assuming(value[lane], ck,
                                    ((off, z3.BitVecVal(k, off.size())),) + picked), w)
                if init_k is not None:
                    self._written_under(arr_k, init_k, f, nbytes, _bool(ck))
                self._write(arr_k, f, nbytes,
                            z3raw.If(ck, v, _term(self._read(arr_k, f, nbytes), w)))

    def _written_under(self, arr, init, f: int, nbytes: int, m) -> None:
        region = _region(arr)
        for i in range(nbytes):
            if not init[f + i]:
                prev = self.init_conds.get((region, f + i))
                self.init_conds[(region, f + i)] = m if prev is None else z3raw.Or(prev, m)

    def _chains_in(self, value, off, budget: int = 256) -> list:
        """The load chains through offset `off` inside `value`, found without descending
        into them; [] when there are none or the term is too large to search cheaply."""
        if _concrete(value) or not self.chains:
            return []
        found, seen, stack = [], set(), [value]
        while stack:
            e = stack.pop()
            key = e.get_id()
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > budget:
                return []
            hit = self.chains.get(key)
            if hit is not None and hit[0].eq(e):
                if hit[1].eq(off):
                    found.append((hit[0], hit[2], hit[3]))
                continue
            stack.extend(e.children())
        return found

    def atomic(self, x, space, addr, nbytes, update, mask):
        """`update(domain, old, lanes) -> new` per lane, in lane order (a legal serialization;
        the emulator's). A lane with a symbolic address updates each place it may reach under
        that place's condition and gets back the old word of the place it reached."""
        self.atomics_done += 1
        arr, flat, maybe, init, mask = self._places(x, space, addr, nbytes, mask, None, "a")
        out = [0] * len(addr)
        w = nbytes * 8
        split_of = {s.lane: s for s in self.symbolic_lanes}
        plain = [lane for lane in np.nonzero(maybe)[0].tolist() if lane not in split_of]
        ordered = self._in_some_order(x, arr, flat, plain, nbytes, update, mask, init, w, out)
        if split_of and not (x.atomic_unread and (getattr(update, "order_free", False) or (
                x.choices.target.real_floats and getattr(update, "float_add", False)))):
            if len(split_of) + len(plain) > 1:
                raise UnsupportedError(
                    f"'{x.form.name}' at data-dependent addresses whose outcome depends on the "
                    f"order contending threads take effect in: not modelled", x.ins.loc)
        for lane in sorted(set(plain) - ordered | set(split_of)):
            if lane not in split_of:
                f = int(flat[lane])
                old = self._read_place(x, arr, f, nbytes, mask[lane], init, lane)
                self._track_atomic(init, f, nbytes)
                new = update(SymbolicDomain(1), [old], [lane])[0]
                m = mask[lane]
                delta = None if _concrete(m) else self._delta(update, lane, w)
                self._write(arr, f, nbytes, _guarded(m, new, old, delta, w))
                out[lane] = old
                continue
            split = split_of[lane]
            if not split.places:
                continue
            # Every place is the same update under its own test: the increment (when the
            # update is one) and the lane's condition less `delta != 0` are found once. The
            # increment at place k is If(tests[k], If(c, delta, 0), 0): the inner selection
            # is shared by every place (`verifier.guarded_sums` reads the pair as one
            # guarded increment).
            delta = self._delta(update, lane, w)
            if delta is not None:
                c = split.cond if _concrete(split.cond) else _unless_zero(split.cond, delta)
                step = delta if _concrete(c) else z3raw.If(c, delta, _zero(w))
            olds = {}
            tests, zero, unread = split.tests, _zero(w), x.atomic_unread
            if delta is not None and unread and all(
                    init_k is None or init_k[f:f + nbytes].all()
                    for _, _, f, _, init_k in split.places):
                self._add_at_each(split.places, tests, step, zero, nbytes, w)
                continue
            for k, arr_k, f, ck, init_k in split.places:
                if delta is not None:
                    increment = z3raw.If(tests[k], step, zero)
                old = _term(self._read_place(x, arr_k, f, nbytes, ck, init_k, lane), w)
                self._track_atomic(init_k, f, nbytes)
                if delta is None:
                    new = update(SymbolicDomain(1), [old], [lane])[0]
                    self._write(arr_k, f, nbytes,
                                z3raw.If(condition_term(ck), _term(new, w), old))
                else:
                    self._write(arr_k, f, nbytes, z3raw.BvAdd(old, increment))
                olds[k] = old
            if not x.atomic_unread:
                # (a chain over every place: built only when some instruction reads it)
                out[lane] = self._chain(split.off, split.tests, [k for k, *_ in split.places],
                                        olds)
        return out

    def _in_some_order(self, x, arr, flat, lanes: list, nbytes: int, update, mask, init,
                       w: int, out: list) -> set:
        """Lanes of this atomic that contend for one address where their order matters (the
        old values are read, or the update does not commute): their old values and the
        final word for every order (`semantics.machine.atomic_order`), the order keys
        named as `x.atomic_site` names them. Returns the lanes so handled; the others go in
        lane order (a single lane, or updates whose order cannot show)."""
        if x.atomic_unread and (getattr(update, "order_free", False) or (
                x.choices.target.real_floats and getattr(update, "float_add", False))):
            return set()
        by_place: dict[int, list[int]] = {}
        for lane in lanes:
            by_place.setdefault(int(flat[lane]), []).append(lane)
        groups = [g for g in by_place.values() if len(g) > 1]
        if not groups:
            return set()
        name, keys = x.atomic_site
        contending = np.zeros(x.geom.lanes, dtype=bool)
        for g in groups:
            contending[g] = True
        order = x.d.unspecified(name, 32, keys, x.choices, only=contending)
        done: set = set()
        for g in groups:
            f = int(flat[g[0]])
            base = self._read_place(x, arr, f, nbytes, mask[g[0]], init, g[0])
            deltas = [self._delta(update, lane, w) for lane in g]
            olds, final = contended(
                base, [lambda v, lane=lane: update(SymbolicDomain(1), [v], [lane])[0]
                       for lane in g], [mask[lane] for lane in g], [order[lane] for lane in g],
                None if any(dl is None for dl in deltas) else deltas, w, x.ins.loc)
            for lane, old in zip(g, olds):
                out[lane] = old
            if self.races is not None:
                self.races.contending(x, g, [mask[lane] for lane in g],
                                      [order[lane] for lane in g])
            self._track_atomic(init, f, nbytes)
            self._write(arr, f, nbytes, z3.simplify(final))
            done.update(g)
        return done

    @staticmethod
    def _track_atomic(init, f: int, nbytes: int) -> None:
        """An atomic writes back a word built from the old one as `_read_place` read it (the
        launch constants of never-written bytes included), whether or not its lane's
        condition holds: from here on the stored word is the whole truth. (Left unmarked, a
        later read took the launch value alone and lost the atomic's effect.)"""
        if init is not None:
            init[f:f + nbytes] = True

    @staticmethod
    def _delta(update, lane: int, w: int):
        """`d` when `update(old) == old + d` for every old (d not mentioning old), else None.
        The update is applied to two fresh constants, `p` and `q`, and the difference read
        off each (`_difference`): when both are the very same term it mentions neither
        constant, since z3 hash-conses and a term built from `p` that mentions `p` is not
        one built from `q` (no walk over the difference, which for a histogram's merge is
        a sum over every lane of its block)."""
        p, q = _probes(w)
        d = _difference(update(SymbolicDomain(1), [p], [lane])[0], p)
        if d is None:
            return None
        e = _difference(update(SymbolicDomain(1), [q], [lane])[0], q)
        return d if e is not None and e.eq(d) else None

    def preset(self, space: str, address: int, nbytes: int, value) -> None:
        """Place a (symbolic) word in memory before a run, e.g. a symbolic input element."""
        a = np.array([address], dtype=np.uint64)
        arr, flat, _, bad, reason = self.mem.locate(space, a, nbytes, np.array([True]))
        if bad.any():
            raise ValueError(f"preset outside memory: {reason}")
        self._write(arr, int(flat[0]), nbytes, value)
        if arr is self.mem.g:
            self.presets[int(flat[0])] = (nbytes, value)

    def initial_word(self, flat: int, nbytes: int):
        """The word of global memory at `flat` before the launch (a preset), or None when no
        preset gave exactly these bytes (spin waits: `semantics.machine.symbolic_spins`)."""
        preset = self.presets.get(flat)
        return preset[1] if preset is not None and preset[0] == nbytes else None
