"""Indexed buffers over symbolic launch shapes: bounds and outputs decided shape by shape.

When splitting symbolic addresses by value is too costly (a transpose's `y * cols + x` over
symbolic `rows` and `cols`), the maximal launch runs again with the spec's `in` and `out`
buffers *indexed* (`semantics.machine.indexed_buffers`): loads from an `in` buffer are
`Select(A, offset)`, stores to an `out` buffer go to a write log. This module decides, by
evaluating the logged terms at every allowed shape with numpy (exact: the plan lists every
shape):

- bounds: every logged access is inside its buffer's length and aligned wherever its
  condition holds (`violation`);
- outputs: replaying each kernel's write log gives, per shape and element, a *code* for the
  term the kernel leaves there: the id of the input element a `Select` reads at that shape
  (the same id as that element's own term, which loads at concrete addresses return), the
  id of any other term, or the id of the element's initial contents when no store writes it.
  Equal codes at every shape where the element exists prove the element (the same term
  denotes the same function of the inputs); a shape where they differ, or where two threads
  write one element, is handed back (`Differs`) to be checked on its own, which either
  refutes it with a replayed counterexample or names a race.

Nothing here is approximate: a condition, offset or selection that depends on input data
cannot be evaluated and raises `NotIndexable` (the caller then says Inconclusive).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import z3

from semantics.machine.indexed_buffers import IndexedAccess, array_buffer
from verifier.spec import type_bits


class NotIndexable(Exception):
    """The logged accesses cannot be decided by evaluation (the message says why)."""


@dataclass(frozen=True)
class Differs:
    """At shape `shape` (an index into the plan's shapes) the kernels may differ: `why`."""

    shape: int
    why: str


@dataclass(frozen=True)
class IndexedBuffer:
    """What the verifier knows of one indexed buffer: its element size, the ids of its
    elements' input terms (maximal length) and its length in bytes at every shape."""

    name: str
    elem_bytes: int
    ids: np.ndarray
    length_bytes: np.ndarray


Evaluate = Callable[[Any], "np.ndarray | None"]


def _at(at_shapes: Evaluate, t, count: int, what: str) -> np.ndarray:
    if isinstance(t, (bool, np.bool_)):
        return np.full(count, bool(t))
    if isinstance(t, (int, np.integer)):
        return np.full(count, int(t) & 0xFFFF_FFFF_FFFF_FFFF, dtype=np.uint64)
    v = at_shapes(t)
    if v is None:
        raise NotIndexable(f"{what} depends on input data")
    return v


def violation(at_shapes: Evaluate, count: int, buffers: dict[str, IndexedBuffer],
              accesses: tuple[IndexedAccess, ...]) -> tuple[int, IndexedAccess] | None:
    """(a shape, the access) where a logged access is out of its buffer or misaligned; None
    when every access is inside at every shape where it happens."""
    for a in accesses:
        cond = _at(at_shapes, a.cond, count, f"the condition of {a.what}")
        if not cond.any():
            continue
        off = _at(at_shapes, a.offset, count, f"the offset of {a.what}")
        length = buffers[a.buffer].length_bytes
        bad = cond & ((off >= np.uint64(1 << 62)) | (off + np.uint64(a.nbytes) > length)
                      | (off % np.uint64(a.align) != 0))
        if bad.any():
            return int(np.argmax(bad)), a
    return None


class _Codes:
    """Per shape, the code of the term a value selects (see the module docstring)."""

    def __init__(self, at_shapes: Evaluate, count: int,
                 buffers: dict[str, IndexedBuffer]) -> None:
        self.at_shapes, self.count, self.buffers = at_shapes, count, buffers
        self.memo: dict[int, np.ndarray] = {}
        self.pinned: list = []

    def of(self, t, width: int) -> np.ndarray:
        if isinstance(t, (int, np.integer)):
            t = z3.BitVecVal(int(t), width)      # hash-consed: one id per value and width
        self.pinned.append(t)
        return self._walk(t)

    def _walk(self, e) -> np.ndarray:
        key = e.get_id()
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        out = None
        if z3.is_app_of(e, z3.Z3_OP_ITE):
            c = self.at_shapes(e.arg(0))
            if c is not None:
                out = np.where(c, self._walk(e.arg(1)), self._walk(e.arg(2)))
        elif z3.is_select(e) and z3.is_const(e.arg(0)):
            out = self._selected(e, key)
        if out is None:
            out = np.full(self.count, key, dtype=np.int64)
        self.memo[key] = out
        return out

    def _selected(self, e, key: int) -> np.ndarray | None:
        """The input element `Select(A, offset)` reads at each shape: its term's id."""
        named = array_buffer(e.arg(0).decl().name())
        if named is None or named[0] not in self.buffers:
            return None
        b = self.buffers[named[0]]
        off = self.at_shapes(e.arg(1))
        if named[1] != b.elem_bytes or off is None:
            return None           # a part of an element, or a data-dependent offset: opaque
        esz = np.uint64(b.elem_bytes)
        ok = (off % esz == 0) & (off // esz < np.uint64(b.ids.size))
        idx = np.where(ok, off // esz, 0).astype(np.int64)
        # Where the offset is no element, the read is out of bounds (bounds refute it where
        # the access happens); elsewhere the value is never used: its own code.
        return np.where(ok, b.ids[idx], -key)


def replay_log(codes: _Codes, at_shapes: Evaluate, b: IndexedBuffer, width: int,
               initial: np.ndarray, accesses: tuple[IndexedAccess, ...], role: str
               ) -> tuple[np.ndarray, Differs | None]:
    """The codes `role` leaves in `b` at every shape (shapes x elements), replaying its
    write log in program order; with a `Differs` when two threads write one element."""
    count = codes.count
    out = np.broadcast_to(initial, (count, initial.size)).copy()
    writer = np.full((count, initial.size), -1, dtype=np.int64)
    esz = np.uint64(b.elem_bytes)
    for a in accesses:
        if a.kind != "w" or a.buffer != b.name:
            continue
        cond = _at(at_shapes, a.cond, count, f"the condition of {a.what}")
        shapes = np.nonzero(cond)[0]
        if not shapes.size:
            continue
        if a.nbytes != b.elem_bytes:
            raise NotIndexable(f"{a.what} writes part of an element of '{b.name}'")
        off = _at(at_shapes, a.offset, count, f"the offset of {a.what}")
        elems = (off[shapes] // esz).astype(np.int64)     # inside and aligned: bounds passed
        prev = writer[shapes, elems]
        clash = (prev >= 0) & (prev != a.lane)
        if clash.any():
            j = int(np.argmax(clash))
            return out, Differs(int(shapes[j]), f"two threads of the {role} may write element "
                                                f"{int(elems[j])} of '{b.name}' ({a.what})")
        out[shapes, elems] = codes.of(a.value, width)[shapes]
        writer[shapes, elems] = a.lane
    return out, None


def compare(at_shapes: Evaluate, count: int, buffers: dict[str, IndexedBuffer],
            widths: dict[str, int], initial: dict[str, np.ndarray],
            logs: dict[str, tuple[IndexedAccess, ...]]) -> tuple[int, Differs | None]:
    """(elements compared, the first shape where the kernels may differ or None)."""
    codes = _Codes(at_shapes, count, buffers)
    compared = 0
    for name, init in initial.items():
        b = buffers[name]
        left = {}
        for role, log in logs.items():
            left[role], clash = replay_log(codes, at_shapes, b, widths[name], init, log, role)
            if clash is not None:
                return compared, clash
        live = np.arange(init.size, dtype=np.uint64)[None, :] * np.uint64(b.elem_bytes) \
            < b.length_bytes[:, None]
        differ = (left["reference"] != left["candidate"]) & live
        compared += int(live.sum())
        if differ.any():
            s, e = np.argwhere(differ)[0].tolist()
            return compared, Differs(s, f"element {e} of '{name}' is not shown to be the same "
                                        f"term in both kernels")
    return compared, None


def indexed_params(spec, role: str, ptx_params) -> dict[str, tuple[str, str]]:
    """PTX parameter -> (access, spec name) for the `role`'s `in` and `out` buffers."""
    side = spec.side(role)
    out = {}
    for name, kp in zip(side.arg_names, ptx_params):
        p = spec.param(name)
        if p.is_buffer and p.access in ("in", "out"):
            out[kp.name] = (p.access, p.name)
    return out


def buffer_info(spec, values: dict, length_term: Callable[[Any], Any], at_shapes: Evaluate,
                count: int) -> dict[str, IndexedBuffer]:
    """The verifier's view of every `in` and `out` buffer: `values[name].values` are its
    elements' terms, `length_term(param)` its length in elements (an int or a term)."""
    out = {}
    for p in spec.params:
        if p.is_buffer and p.access in ("in", "out"):
            esz = type_bits(p.type) // 8
            ids = np.array([t.get_id() for t in values[p.name].values], dtype=np.int64)
            n = length_term(p)
            length = np.full(count, n, dtype=np.uint64) if isinstance(n, int) else at_shapes(n)
            if length is None:
                raise NotIndexable(f"the length of '{p.name}' depends on more than the shape")
            out[p.name] = IndexedBuffer(p.name, esz, ids, length.astype(np.uint64) * np.uint64(esz))
    return out


def two_dimensional(spec, names) -> bool:
    """Index the in/out buffers from the start when one is two-dimensional (`rows * cols`):
    its offsets take a value per shape, too many to split (splitting only finds that out
    after running the launch up to the first such access). Either mode is exact."""
    return any(p.is_buffer and p.access in ("in", "out") and len(p.length.names & set(names)) >= 2
               for p in spec.params)


CELLS = 1 << 24     # shapes x elements of one out buffer compared as codes (int64)


def size_check(spec, count: int, lengths: dict[str, int]) -> None:
    """Indexed outputs are compared as a shapes x elements table per out buffer: refused by
    name past CELLS (128 MiB a table), before anything runs."""
    for p in spec.buffers:
        if p.access == "out" and count * lengths[p.name] > CELLS:
            raise NotIndexable(f"{count} shapes x {lengths[p.name]} elements of '{p.name}' to "
                               f"compare, more than {CELLS}")
