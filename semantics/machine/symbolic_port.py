"""Memory port of the symbolic domain.

Addresses stay concrete in a bounded launch (DESIGN.md), so memory is a map from concrete byte
locations to byte values that may be z3 terms. A word stored and loaded back at the same place
and size comes back as the very term stored (no extract/concat noise for the solver). Bounds
and alignment are checked by the concrete memory's address map, the same code the emulator
uses, so both domains fault on exactly the same accesses.

Refused by name, not approximated: a symbolic address, and an access whose lane is active only
under a symbolic condition while its address is invalid (the verifier turns such cases into
proof obligations; the executor alone cannot decide them).
"""

from __future__ import annotations

import numpy as np
import z3

from semantics.domains.symbolic import SymbolicDomain
from semantics.errors import UnsupportedError
from semantics.machine.concrete_port import ConcretePort
from semantics.machine.memory import ConcreteMemory


def _region(arr: np.ndarray) -> int:
    """A stable key for a memory region: `locate` may hand out a fresh view of the same
    array (shared memory is reshaped per call), so key by the array that owns the bytes."""
    return id(arr.base if arr.base is not None else arr)


def _concrete(x) -> bool:
    return isinstance(x, (int, bool, np.integer, np.bool_))


class SymbolicPort:
    def __init__(self, mem: ConcreteMemory) -> None:
        self.mem = mem
        self.checker = ConcretePort(mem, track_uninitialized=False)
        # (region id, flat offset) -> (word key, byte index); word key -> (nbytes, value)
        self.bytes: dict[tuple[int, int], tuple[tuple[int, int, int], int]] = {}
        self.words: dict[tuple[int, int, int], object] = {}

    # -- addressing ------------------------------------------------------------------------
    def _places(self, x, space, addr, nbytes, mask, align):
        if not all(_concrete(a) for a in addr):
            raise UnsupportedError(f"'{x.form.name}' uses a data-dependent (symbolic) address",
                                   x.ins.loc)
        a = np.array([int(v) for v in addr], dtype=np.uint64)
        certain = np.array([bool(m) if _concrete(m) else False for m in mask], dtype=bool)
        maybe = np.array([(not _concrete(m)) or bool(m) for m in mask], dtype=bool)
        # Faults are decided on lanes that certainly execute; lanes active only under a
        # symbolic condition must have valid addresses too, or we cannot go on soundly.
        arr, flat, init = self.checker._locate(x, space, a, nbytes, certain, align)
        if (maybe & ~certain).any():
            _, _, _, bad, _ = self.mem.locate(space, a, nbytes, maybe)
            if bad is not None and bad.any():
                raise UnsupportedError(f"'{x.form.name}' may access invalid memory under a "
                                       f"data-dependent condition", x.ins.loc)
            arr, flat, init = self.checker._locate(x, space, a, nbytes, maybe, align)
        return arr, flat, maybe, (init if init is not None and init is not self.mem.g_init
                                  else None)

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
        arr, flat, maybe, init = self._places(x, space, addr, nbytes, mask, align)
        out = [0] * len(addr)
        for lane in np.nonzero(maybe)[0].tolist():
            f = int(flat[lane])
            if init is not None and not init[f:f + nbytes].all():
                # The emulator's zeros are not what silicon holds: a result that depends on
                # this read is not determined by the kernel's inputs.
                x.effect("uninitialized", f"read of never-written shared memory by "
                                          f"{x.thread_name(lane)}")
            out[lane] = self._read(arr, f, nbytes)
        return out

    def store(self, x, space, addr, nbytes, value, mask, align=None):
        arr, flat, maybe, init = self._places(x, space, addr, nbytes, mask, align)
        w = nbytes * 8
        for lane in np.nonzero(maybe)[0].tolist():
            f = int(flat[lane])
            if init is not None and _concrete(mask[lane]):
                init[f:f + nbytes] = True
            v = value[lane]
            m = mask[lane]
            if not _concrete(m):      # a store under a data-dependent condition
                old = self._read(arr, f, nbytes)
                v = z3.If(m, v if not _concrete(v) else z3.BitVecVal(int(v), w),
                          old if not _concrete(old) else z3.BitVecVal(int(old), w))
            self._write(arr, f, nbytes, v)

    def atomic(self, x, space, addr, nbytes, update, mask):
        arr, flat, maybe, init = self._places(x, space, addr, nbytes, mask, None)
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
