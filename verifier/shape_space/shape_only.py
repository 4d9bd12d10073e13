"""Does a term mention no constant but the shape scalars? (`ShapeOnly`, asked of every lane
condition, offset and selection before it is evaluated over the grid of shapes.)"""

from __future__ import annotations

import z3

from semantics.domains import z3raw
from verifier.terms import RawTermMemo


class ShapeOnly:
    """Does a term mention no constant but the shape scalars `names`? Memoized per node in a
    `RawTermMemo` (which keeps each node it answers for alive)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.memo: RawTermMemo[bool] = RawTermMemo()
        self.ctx = z3.main_ctx().ref()

    def __call__(self, t) -> bool:
        """Does `t` mention no constant but the shape scalars? (Memoized.)"""
        return self.ast(t.as_ast())

    def ast(self, root) -> bool:
        """`shape_only` of a raw AST. A memoized depth-first walk on raw ASTs (no Python
        wrapper per node: this walk runs over every condition) that stops at the first other
        constant: every term on the path to it mentions it too, so a mask over a large
        data-dependent count is answered after a few nodes."""
        memo = self.memo
        ctx = self.ctx
        R = z3raw.read
        hit = memo.get(root)
        if hit is not None:
            return hit
        v = self._leaf(root)
        if v is not None:
            return memo.put(root, v)
        # (path entries: [term, next argument, number of arguments]; arguments are fetched
        # one at a time, as a walk that stops early needs only the first few)
        path = [[root, 0, R.num_args(ctx, root)]]
        while path:
            top = path[-1]
            if top[1] == top[2]:
                memo.put(top[0], True)
                path.pop()
                continue
            x = R.app_arg(ctx, top[0], top[1])
            top[1] += 1
            v = memo.get(x)
            if v is None:
                v = self._leaf(x)
                if v is None:
                    path.append([x, 0, R.num_args(ctx, x)])
                    continue
                memo.put(x, v)
            if not v:
                for node in path:        # each mentions x, so each mentions that constant
                    memo.put(node[0], False)
                return False
        return memo.get(root)

    def _leaf(self, x) -> bool | None:
        """A leaf's `shape_only` answer; None for an application with arguments."""
        ctx = self.ctx
        R = z3raw.read
        kind = R.ast_kind(ctx, x)
        if kind != z3.Z3_APP_AST:
            return kind == z3.Z3_NUMERAL_AST
        if R.num_args(ctx, x):
            return None
        d = R.app_decl(ctx, x)
        return (R.decl_kind(ctx, d) != z3.Z3_OP_UNINTERPRETED or
                z3.z3core.Z3_get_symbol_string(ctx, z3.z3core.Z3_get_decl_name(ctx, d))
                in self.names)


__all__ = ["ShapeOnly"]
