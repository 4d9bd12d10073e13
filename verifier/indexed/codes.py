"""The code of the term a stored value selects at each shape (`Codes`): the id of the input
element a `Select` reads there, or the id of any other term (see `verifier.indexed`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import z3

from semantics.domains import z3raw
from semantics.machine.indexed_buffers import array_buffer
from verifier.indexed_buffer import IndexedBuffer
from verifier.shape_space import ShapeValues
from verifier.terms import RawTermMemo, TermMemo, raw_id

_UNSEEN = object()


class Codes:
    """The code of the term a value selects at given shapes (see `verifier.indexed`).

    `of(value, width, shapes)` is the codes of `value` at `shapes`. They are found over the
    grid of shapes first (`verifier.shape_space`), each node of the value once: a selection
    on a condition of the shape alone is `np.where` of its branches' codes, a `Select` on an
    input buffer at an offset of the shape alone the ids of the elements it reads, any other
    term its own id. A loop's exits `If(k < K, ..)` vary along K alone, so a matmul lane's
    32 nested selections are 32 small arrays, where splitting each write's shapes at every
    selection cost a pass over them per level; the codes at the shapes are then one gather.

    Codes are z3 ids (`raw_id`: an input element's code is the `term_id` its buffer lists);
    the memos (`verifier.terms`) keep every term they hold a code of alive."""

    def __init__(self, values: ShapeValues, buffers: dict[str, IndexedBuffer]) -> None:
        # (terms over the grid of shapes: a value's subterms are evaluated where they occur)
        self.at_grid, self.space, self.buffers = values.subterm_grid, values.space, buffers
        self.values = values
        self.ctx = z3.main_ctx().ref()
        self.count = values.space.count
        self.arrays: TermMemo[tuple[str, int] | None] = TermMemo()
        self.compact: RawTermMemo[Any] = RawTermMemo()     # node -> its codes over the grid

    def of(self, t, width: int, shapes: np.ndarray) -> np.ndarray:
        if isinstance(t, (int, np.integer)):
            t = z3.BitVecVal(int(t), width)      # hash-consed: one id per value and width
        code = self._grid_codes(t.as_ast())
        if np.ndim(code) == 0:
            return np.full(shapes.size, code, dtype=np.int64)
        return self.space.full(code)[shapes]

    def _grid_codes(self, root):
        """The codes of a raw term over the grid (compact int64), post-order on raw ASTs
        (a matmul's 512 writes hold thousands of selections)."""
        ref, R, memo = self.ctx, z3raw.read, self.compact
        # [node, its selection's condition over the grid while its branches wait, or _UNSEEN]
        stack: list[list] = [[root, _UNSEEN]]
        while stack:
            top = stack[-1]
            e = top[0]
            if e in memo:
                stack.pop()
                continue
            code: Any = np.int64(raw_id(ref, e))
            kind = R.decl_kind(ref, R.app_decl(ref, e)) \
                if R.ast_kind(ref, e) == z3.Z3_APP_AST else None
            if kind == z3.Z3_OP_ITE:
                c = top[1] if top[1] is not _UNSEEN else self.at_grid(R.app_arg(ref, e, 0))
                if c is not None:
                    branches = [R.app_arg(ref, e, 1), R.app_arg(ref, e, 2)]
                    todo = [b for b in branches if b not in memo]
                    if todo:
                        top[1] = c
                        stack.extend([b, _UNSEEN] for b in todo)
                        continue
                    code = np.where(c, memo.get(branches[0]), memo.get(branches[1]))
            elif kind == z3.Z3_OP_SELECT:
                code = self._select_codes(z3.z3._to_expr_ref(e, z3.main_ctx()), code)
            memo.put(e, code)
            stack.pop()
        return memo.get(root)

    def _select_codes(self, e, own):
        """The ids of the input elements a `Select` reads over the grid; `own` (its own
        code) when it is not one of ours, reads part of an element or at a data-dependent
        offset, and where its offset is no element (the read is out of bounds there, which
        bounds refute where the access happens; elsewhere the value is never used)."""
        arr = e.arg(0)
        if not z3.is_const(arr):
            return own
        named = self.arrays.get(arr, _UNSEEN)
        if named is _UNSEEN:
            named = self.arrays.put(arr, array_buffer(arr.decl().name()))
        if named is None or named[0] not in self.buffers:
            return own
        b = self.buffers[named[0]]
        off = self.values.grid(e.arg(1))
        if named[1] != b.elem_bytes or off is None:
            return own
        off = np.asarray(off).astype(np.uint64)
        esz = np.uint64(b.elem_bytes)
        idx = off // esz
        ok = (off % esz == 0) & (idx < np.uint64(b.ids.size))
        return np.where(ok, b.ids[np.where(ok, idx, 0).astype(np.int64)], own)


__all__ = ["Codes"]
