"""The NaN wrapper around a floating-point result's bits, recognized where it cannot matter.

Every arithmetic result is `If(is_nan(r), N, r)` on its bits (`semantics.ops.common`): N is
the NaN pattern the hardware returns (a constant, or an unspecified quiet NaN
`u | EXP | QUIET`, `semantics.ops.nan_results`). When those bits are read back as a float
of the same format, the wrapper changes nothing: z3's floating-point sorts have one NaN, and
both N and r are NaNs exactly when the test holds. So `FromBits(If(is_nan(r), N, r))` is
`FromBits(r)`, and a chain of float operations is the same term whichever NaN each step
returns; only bits that leave as bits (a store, an integer reinterpretation) keep it.

The semantics build terms as they are (the structural comparisons of the verifier walk
them); `float_view` rewrites a finished term this way, for the final comparison of two
outputs and the obligations that follow it.
"""

from __future__ import annotations

import z3

from semantics.domains import z3raw

R = z3raw.read
_CTX = z3.main_ctx()

# per format: (exponent mask, mantissa mask, quiet bit)
MASKS = {"f16": (0x7C00, 0x03FF, 0x0200), "bf16": (0x7F80, 0x007F, 0x0040),
         "f32": (0x7F800000, 0x007FFFFF, 0x00400000),
         "f64": (0x7FF0000000000000, 0x000FFFFFFFFFFFFF, 0x0008000000000000)}


def _numeral(ctx, t) -> int | None:
    if R.ast_kind(ctx, t) != z3.Z3_NUMERAL_AST:
        return None
    return int(R.numeral(ctx, t))


def _masked(ctx, t, x, mask: int) -> bool:
    """Is raw `t` the term `x & mask` (either operand order)?"""
    if z3raw.app_kind(ctx, t) != z3.Z3_OP_BAND or R.num_args(ctx, t) != 2:
        return False
    u, v = R.app_arg(ctx, t, 0), R.app_arg(ctx, t, 1)
    xid = R.ast_id(ctx, x)
    return (R.ast_id(ctx, u) == xid and _numeral(ctx, v) == mask) or \
        (R.ast_id(ctx, v) == xid and _numeral(ctx, u) == mask)


def _field(ctx, t, x, mask: int) -> bool:
    """Is raw `t` `Extract(hi, lo, x)` of exactly the bits of `mask` (z3's simplified form of
    `x & mask` in a comparison)?"""
    if z3raw.app_kind(ctx, t) != z3.Z3_OP_EXTRACT or R.num_args(ctx, t) != 1 or \
            R.ast_id(ctx, R.app_arg(ctx, t, 0)) != R.ast_id(ctx, x):
        return False
    d = R.app_decl(ctx, t)
    hi, lo = R.decl_int(ctx, d, 0), R.decl_int(ctx, d, 1)
    return mask == ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)


def _equals(ctx, t, x, mask: int, value: int) -> bool:
    """Is raw `t` the test `x & mask == value`, or its simplified form on the bits of
    `mask` (either operand order)?"""
    if z3raw.app_kind(ctx, t) != z3.Z3_OP_EQ:
        return False
    u, v = R.app_arg(ctx, t, 0), R.app_arg(ctx, t, 1)
    for a, b in ((u, v), (v, u)):
        if _masked(ctx, a, x, mask) and _numeral(ctx, b) == value:
            return True
        if _field(ctx, a, x, mask) and _numeral(ctx, b) is not None:
            lo = (mask & -mask).bit_length() - 1
            if _numeral(ctx, b) << lo == value:
                return True
    return False


def _is_nan_test(ctx, c, x, exp: int, mant: int) -> bool:
    """Is raw `c` `x & exp == exp and not (x & mant == 0)` (`common.is_nan`)?"""
    if z3raw.app_kind(ctx, c) != z3.Z3_OP_AND or R.num_args(ctx, c) != 2:
        return False
    a, b = R.app_arg(ctx, c, 0), R.app_arg(ctx, c, 1)
    if z3raw.app_kind(ctx, b) != z3.Z3_OP_NOT:
        return False
    return _equals(ctx, a, x, exp, exp) and _equals(ctx, R.app_arg(ctx, b, 0), x, mant, 0)


def _is_a_nan(ctx, t, exp: int, mant: int, quiet: int) -> bool:
    """Is raw `t` certainly a NaN pattern: a NaN numeral, or `u | C` with C holding every
    exponent bit and the quiet bit?"""
    n = _numeral(ctx, t)
    if n is not None:
        return n & exp == exp and n & mant != 0
    if z3raw.app_kind(ctx, t) != z3.Z3_OP_BOR:
        return False
    for i in range(R.num_args(ctx, t)):
        c = _numeral(ctx, R.app_arg(ctx, t, i))
        if c is not None and c & (exp | quiet) == exp | quiet:
            return True
    return False


def unwrapped(x, fmt: str):
    """`r` when the bit-vector term `x` is `If(is_nan(r), N, r)` with N a NaN pattern of
    `fmt` (see the module docstring), else `x` itself."""
    if not isinstance(x, z3.BitVecRef):
        return x
    ctx = _CTX.ref()
    raw = x.as_ast()
    if z3raw.app_kind(ctx, raw) != z3.Z3_OP_ITE:
        return x
    c, n, r = (R.app_arg(ctx, raw, i) for i in range(3))
    exp, mant, quiet = MASKS[fmt]
    if _is_a_nan(ctx, n, exp, mant, quiet) and _is_nan_test(ctx, c, r, exp, mant):
        return z3raw.wrap(r, x)
    return x


_FORMATS = {(5, 11): "f16", (8, 8): "bf16", (8, 24): "f32", (11, 53): "f64"}


def float_view(t):
    """`t` with every `FromBits(If(is_nan(r), N, r))` rewritten to `FromBits(r)` (see the
    module docstring), bottom-up over its DAG; `t` itself when there is none."""
    if not isinstance(t, z3.ExprRef):
        return t
    memo: dict[int, z3.ExprRef] = {}
    stack: list[tuple[z3.ExprRef, bool]] = [(t, False)]
    while stack:
        e, ready = stack.pop()
        key = e.get_id()
        if key in memo:
            continue
        kids = e.children() if z3.is_app(e) else []
        if not ready:
            stack.append((e, True))
            stack.extend((c, False) for c in kids if c.get_id() not in memo)
            continue
        new = [memo[c.get_id()] for c in kids]
        if z3.is_fp(e) and e.decl().kind() == z3.Z3_OP_FPA_TO_FP and len(kids) == 1 \
                and z3.is_bv(kids[0]):
            fmt = _FORMATS.get((e.sort().ebits(), e.sort().sbits()))
            inner = unwrapped(new[0], fmt) if fmt else new[0]
            memo[key] = z3.fpBVToFP(inner, e.sort())
        elif any(not a.eq(b) for a, b in zip(new, kids)):
            memo[key] = e.decl()(*new)
        else:
            memo[key] = e
    return memo[t.get_id()]


__all__ = ["unwrapped", "float_view", "MASKS"]
