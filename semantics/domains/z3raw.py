"""The few z3 constructors the symbolic domain calls per lane, built through z3's C API.

z3's Python constructors spend most of their time coercing and checking arguments (about
20 us for an `If`, against 3.5 us through the C API). These build the very same hash-consed
ASTs for arguments that are already z3 terms of matching sorts, which is all the symbolic
domain passes; a sort mismatch still raises `z3.Z3Exception` (z3core checks every call).
"""

from __future__ import annotations

import z3
from z3 import z3core as _C

_CTX = z3.main_ctx()


def _wrap(ast, like):
    if isinstance(like, z3.BitVecRef):
        return z3.BitVecRef(ast, _CTX)
    if isinstance(like, z3.BoolRef):
        return z3.BoolRef(ast, _CTX)
    return z3._to_expr_ref(ast, _CTX)


def If(c: z3.BoolRef, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
    return _wrap(_C.Z3_mk_ite(_CTX.ref(), c.as_ast(), a.as_ast(), b.as_ast()), a)


def And(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    args = (z3.Ast * 2)(a.as_ast(), b.as_ast())
    return z3.BoolRef(_C.Z3_mk_and(_CTX.ref(), 2, args), _CTX)


def Or(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    args = (z3.Ast * 2)(a.as_ast(), b.as_ast())
    return z3.BoolRef(_C.Z3_mk_or(_CTX.ref(), 2, args), _CTX)


def Not(a: z3.BoolRef) -> z3.BoolRef:
    return z3.BoolRef(_C.Z3_mk_not(_CTX.ref(), a.as_ast()), _CTX)


def Eq(a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
    return z3.BoolRef(_C.Z3_mk_eq(_CTX.ref(), a.as_ast(), b.as_ast()), _CTX)


def BvAnd(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    return z3.BitVecRef(_C.Z3_mk_bvand(_CTX.ref(), a.as_ast(), b.as_ast()), _CTX)
