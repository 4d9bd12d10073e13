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
from typing import Any

import numpy as np
import z3

from semantics.domains import z3raw
from semantics.domains.symbolic import SymbolicDomain
from semantics.errors import UnsupportedError
from semantics.machine.concrete_port import ConcretePort
from semantics.machine.memory import ConcreteMemory
from semantics.machine.symbolic_races import SymbolicRaceLog


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

    kind: str            # "invalid address" | "out of bounds"
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


def _region(arr: np.ndarray) -> int:
    """A stable key for a memory region: `locate` may hand out a fresh view of the same
    array (shared memory is reshaped per call), so key by the array that owns the bytes."""
    return id(arr.base if arr.base is not None else arr)


def _concrete(x) -> bool:
    return isinstance(x, (int, bool, np.integer, np.bool_))


_PER_CTA_SPACES = ("shared", "local", "param", "const")


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


def _conjuncts(m) -> list:
    out, stack = [], [m]
    while stack:
        t = stack.pop()
        if z3.is_and(t):
            stack.extend(t.children())
        else:
            out.append(t)
    return out


def _assuming(value, mask, extra: tuple = ()):
    """`value` where the lane's `mask` holds (and the `extra` substitutions, e.g. a symbolic
    address offset := one of its values): registers written under a symbolic condition are
    `If(cond, new, old)`, and an access under that very condition uses `new`. Returns an int
    when that makes the value concrete (else the term). Sound because the access only happens
    where `mask` holds."""
    if _concrete(value):
        return value
    if _concrete(mask):
        lits = []
    else:
        lits = _conjuncts(mask)
        # The common case, a register merged at this very mask: If(lit, new, old) is `new`.
        while z3.is_app_of(value, z3.Z3_OP_ITE) and any(value.arg(0).eq(l) for l in lits):
            value = value.arg(1)
            if z3.is_bv_value(value):
                return value.as_long()
    subst = list(extra)
    # A concrete mask assumes nothing (an inactive lane's value is never used).
    for lit in lits:
        if z3.is_true(lit):
            continue
        if z3.is_not(lit):
            subst.append((lit.arg(0), z3.BoolVal(False)))
        subst.append((lit, z3.BoolVal(True)))
    if not subst:
        return value
    t = z3.simplify(z3.substitute(value, *subst))
    return t.as_long() if z3.is_bv_value(t) else t


def _and(m, e):
    """Conjunction that keeps concrete operands concrete."""
    if _concrete(m):
        return e if bool(m) else False
    if _concrete(e):
        return m if bool(e) else False
    return z3raw.And(m, e)


class SymbolicPort:
    RESOLVE_BUDGET = 8192      # values of symbolic addresses, summed over one access's lanes
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

    def use_shape(self, shape: LaunchShape, cta_of_lane: np.ndarray,
                  allocs: dict[str, Any]) -> None:
        self.exists_of_lane = [shape.exists[c] for c in cta_of_lane.tolist()]
        for name, length in shape.limits.items():
            a = allocs[name]
            self.limits.append((a.base, a.base + a.size, name, length))

    # -- addressing ------------------------------------------------------------------------
    def _places(self, x, space, addr, nbytes, mask, align, kind="r", value=None):
        """Where each lane accesses, and under which condition: (arr, flat, maybe lanes,
        shared-memory init map or None, per-lane condition)."""
        self.symbolic_lanes = []
        if not all(_concrete(a) for a in addr):
            addr = [a if _concrete(a) or (_concrete(m) and not m) else _assuming(a, m)
                    for a, m in zip(addr, mask)]
        cond = list(mask)
        if self.exists_of_lane is not None and space not in _PER_CTA_SPACES:
            # Only global memory outlives a CTA: a CTA that is not launched must leave no
            # trace there, while its shared memory is its own (and concrete masks keep the
            # shared-memory initialization tracking exact).
            cond = [_and(m, e) for m, e in zip(cond, self.exists_of_lane)]
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
                    raise UnsupportedError(f"'{x.form.name}' may access invalid memory under a "
                                           f"data-dependent condition", x.ins.loc)
                lanes = np.nonzero(bad)[0].tolist()
                self.obligations.append(ShapeObligation(
                    "invalid address", f"'{x.form.name}' accesses no buffer "
                    f"(first: {x.thread_name(lanes[0])}, address {int(a[lanes[0]]):#x})",
                    x.ins.loc, z3.Or([cond[i] for i in lanes])))
                maybe &= ~bad
            arr, flat, init = self.checker._locate(x, space, a, nbytes, maybe, align)
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
        shape), under `cond and offset == k`. Returns [(lane, offset term, [(k, arr, flat,
        condition)])]; the offset term is the address less its constant part, so a load and a
        store indexed alike share it (see `_collapse`)."""
        if self.resolver is None:
            raise UnsupportedError(f"'{x.form.name}' uses a data-dependent (symbolic) address",
                                   x.ins.loc)
        out = []
        budget = self.RESOLVE_BUDGET
        for lane in lanes:
            c = cond[lane]
            if _concrete(c) and not bool(c):
                continue
            base, off = _split_address(addr[lane])
            values = self.resolver(off, c)
            if values is None:
                raise UnsupportedError(f"'{x.form.name}' uses an address that depends on input "
                                       f"data or takes too many values ({x.thread_name(lane)})",
                                       x.ins.loc)
            budget -= len(values)
            if budget < 0:
                raise UnsupportedError(f"'{x.form.name}' uses symbolic addresses that take more "
                                       f"than {self.RESOLVE_BUDGET} values over its lanes",
                                       x.ins.loc)
            places = []
            for k in sorted(values):
                where = (base + k) & 0xFFFFFFFFFFFFFFFF
                ck = z3.And(_bool(c), off == z3.BitVecVal(k, off.size()))
                a1 = np.array([where], dtype=np.uint64)
                arr, flat, _, bad, _ = self.mem.locate(space, a1, nbytes, np.array([True]))
                if (bad is not None and bad.any()) or where % (align or nbytes):
                    self.obligations.append(ShapeObligation(
                        "invalid address", f"'{x.form.name}' may access no buffer or a "
                        f"misaligned address {where:#x} ({x.thread_name(lane)})", x.ins.loc, ck))
                    continue
                if self.limits and arr is self.mem.g:
                    self._bounds(x, a1, nbytes, np.array([True]), [ck])
                if self.races is not None:
                    self.races.access(x, self._region(arr), flat, nbytes, [lane], kind, [ck])
                places.append((k, arr, int(flat[0]), ck))
            out.append((lane, off, places))
        return out

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
                by_end.setdefault(int(a[i]) - base + nbytes, []).append(cond[i])
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
                return self.words[wkey]
        parts = []
        for i in range(nbytes):
            ref = self.bytes.get((region, flat + i))
            if ref is None:
                parts.append(int(arr[flat + i]))
            else:
                (wkey, k) = ref
                v = self.words[wkey]
                parts.append(((v >> (8 * k)) & 0xFF) if _concrete(v)
                             else z3.Extract(8 * k + 7, 8 * k, v))
        if all(_concrete(p) for p in parts):
            return sum(int(p) << (8 * i) for i, p in enumerate(parts))
        terms = [p if not _concrete(p) else z3.BitVecVal(int(p), 8) for p in parts]
        return z3.simplify(z3.Concat(*reversed(terms)))

    def _write(self, arr, flat: int, nbytes: int, value) -> None:
        region = _region(arr)
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
    def load(self, x, space, addr, nbytes, mask, align=None):
        arr, flat, maybe, init, _ = self._places(x, space, addr, nbytes, mask, align)
        out = [0] * len(addr)
        for lane in np.nonzero(maybe)[0].tolist():
            f = int(flat[lane])
            if init is not None and not init[f:f + nbytes].all():
                # The emulator's zeros are not what silicon holds: a result that depends on
                # this read is not determined by the kernel's inputs.
                x.effect("uninitialized", f"read of never-written shared memory by "
                                          f"{x.thread_name(lane)}")
            out[lane] = self._read(arr, f, nbytes)
        for lane, off, places in self.symbolic_lanes:
            if not places:
                continue
            w = nbytes * 8
            words = {k: _term(self._read(arr_k, f, nbytes), w) for k, arr_k, f, _ in places}
            last = words[places[-1][0]]
            chain = last
            for k, _, _, _ in reversed(places[:-1]):
                chain = z3raw.If(off == z3.BitVecVal(k, off.size()), words[k], chain)
            if len(places) > 1:
                self.chains[chain.get_id()] = (chain, off, words, last)
            out[lane] = chain
        return out

    def store(self, x, space, addr, nbytes, value, mask, align=None):
        arr, flat, maybe, init, mask = self._places(x, space, addr, nbytes, mask, align, "w",
                                                    value)
        w = nbytes * 8
        for lane in np.nonzero(maybe)[0].tolist():
            f = int(flat[lane])
            if init is not None and _concrete(mask[lane]):
                init[f:f + nbytes] = True
            v = value[lane]
            m = mask[lane]
            if not _concrete(m):      # a store under a data-dependent condition
                # Registers written under this condition are If(cond, new, old): what is
                # stored where the condition holds is `new` (keeps both kernels' terms alike).
                v = _assuming(v, m)
                old = self._read(arr, f, nbytes)
                v = z3.If(m, v if not _concrete(v) else z3.BitVecVal(int(v), w),
                          old if not _concrete(old) else z3.BitVecVal(int(old), w))
            self._write(arr, f, nbytes, v)
        for lane, off, places in self.symbolic_lanes:
            chains = self._chains_in(value[lane], off)
            for k, arr_k, f, ck in places:
                # One substitution for both: `value` where the lane runs and `off == k`
                # (a load chain through the same offset is its word for `k`).
                picked = tuple((c, words.get(k, last)) for c, words, last in chains)
                v = _term(_assuming(value[lane], ck,
                                    ((off, z3.BitVecVal(k, off.size())),) + picked), w)
                self._write(arr_k, f, nbytes,
                            z3raw.If(ck, v, _term(self._read(arr_k, f, nbytes), w)))

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
        arr, flat, maybe, init, mask = self._places(x, space, addr, nbytes, mask, None, "a")
        if self.symbolic_lanes:
            raise UnsupportedError(f"'{x.form.name}' is an atomic at a symbolic address",
                                   x.ins.loc)
        out = [0] * len(addr)
        w = nbytes * 8
        for lane in np.nonzero(maybe)[0].tolist():       # lane order: a legal serialization
            f = int(flat[lane])
            old = self._read(arr, f, nbytes)
            new = update(SymbolicDomain(1), [old], [lane])[0]
            m = mask[lane]
            if not _concrete(m):
                new = z3.If(m, SymbolicDomain._term(new, w), SymbolicDomain._term(old, w))
            self._write(arr, f, nbytes, new)
            out[lane] = old
        return out

    def preset(self, space: str, address: int, nbytes: int, value) -> None:
        """Place a (symbolic) word in memory before a run, e.g. a symbolic input element."""
        a = np.array([address], dtype=np.uint64)
        arr, flat, _, bad, reason = self.mem.locate(space, a, nbytes, np.array([True]))
        if bad.any():
            raise ValueError(f"preset outside memory: {reason}")
        self._write(arr, int(flat[0]), nbytes, value)
