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

import ctypes

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
    """Is raw `t` certainly a NaN pattern: a NaN numeral, or a term whose exponent bits and
    quiet bit are all known to be set (`u | C`, or z3's simplified form of it, a `Concat`
    of pieces of `u` around a constant run of ones)?"""
    n = _numeral(ctx, t)
    if n is not None:
        return n & exp == exp and n & mant != 0
    return _known_ones(ctx, t) & (exp | quiet) == exp | quiet


def _known_ones(ctx, t) -> int:
    """The bits of raw bit-vector `t` known to be 1 from its shape (numerals, `|`,
    `Concat`); 0 where nothing is known."""
    n = _numeral(ctx, t)
    if n is not None:
        return n
    kind = z3raw.app_kind(ctx, t)
    args = [R.app_arg(ctx, t, i) for i in range(R.num_args(ctx, t))] if kind else []
    if kind == z3.Z3_OP_BOR:
        ones = 0
        for a in args:
            ones |= _known_ones(ctx, a)
        return ones
    if kind == z3.Z3_OP_CONCAT:
        ones = 0
        for a in args:                        # most significant first
            ones = (ones << R.bv_size(ctx, R.sort(ctx, a))) | _known_ones(ctx, a)
        return ones
    return 0


def is_nan_test(c) -> bool:
    """Is the z3 Boolean `c` the test `is_nan(x)` of `semantics.ops.common` for some `x` of
    some float format (`x & EXP == EXP and not (x & MANT == 0)`)?"""
    if not z3.is_and(c) or c.num_args() != 2:
        return False
    first = c.arg(0)
    if not z3.is_eq(first):
        return False
    ctx = _CTX.ref()
    for side in first.children():
        if z3.is_app_of(side, z3.Z3_OP_BAND) or z3.is_app_of(side, z3.Z3_OP_EXTRACT):
            for x in side.children():
                if z3.is_bv_value(x):
                    continue
                for f, w in _WIDTH.items():
                    if x.size() == w and _is_nan_test(ctx, c.as_ast(), x.as_ast(), *MASKS[f][:2]):
                        return True
    return False


def is_nan_pattern(raw, width: int) -> bool:
    """Is raw `raw` (a bit-vector of `width` bits) certainly a NaN pattern of some format of
    that width (a NaN numeral, or an unspecified NaN `u | EXP | QUIET`)?"""
    ctx = _CTX.ref()
    return any(_is_a_nan(ctx, raw, *MASKS[f]) for f in MASKS if _WIDTH[f] == width)


def wrapped_value(t):
    """`r` when the term `t` is a NaN wrapper `If(is_nan(r), N, r)` of any format of its
    width (N a NaN pattern), else None."""
    if not isinstance(t, z3.BitVecRef):
        return None
    for fmt, w in _WIDTH.items():
        if w == t.size():
            r = unwrapped(t, fmt)
            if r is not t:
                return r
    return None


_WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def unwrapped(x, fmt: str):
    """`r` when the bit-vector term `x` is `If(is_nan(r), N, r)` with N a NaN pattern of
    `fmt` (see the module docstring), else `x` itself."""
    if not isinstance(x, z3.BitVecRef):
        return x
    raw = x.as_ast()
    r = _unwrapped_raw(_CTX.ref(), raw, fmt)
    return x if r is raw else z3raw.wrap(r, x)


def _unwrapped_raw(ctx, raw, fmt: str):
    """`unwrapped` on a raw AST: the raw `r`, or `raw` itself (the same object)."""
    if z3raw.app_kind(ctx, raw) != z3.Z3_OP_ITE:
        return raw
    c, n, r = (R.app_arg(ctx, raw, i) for i in range(3))
    exp, mant, quiet = MASKS[fmt]
    if _is_a_nan(ctx, n, exp, mant, quiet) and _is_nan_test(ctx, c, r, exp, mant):
        return r
    return raw


_FORMATS = {(5, 11): "f16", (8, 8): "bf16", (8, 24): "f32", (11, 53): "f64"}
_L = z3raw._L


def float_view(t, memo: dict | None = None):
    """`t` with every `FromBits(If(is_nan(r), N, r))` rewritten to `FromBits(r)` (see the
    module docstring), bottom-up over its DAG; `t` itself when there is none. `memo`, shared
    by calls on terms with common subterms (an output's elements), walks each node once.

    The walk reads raw ASTs (`z3raw.read`; no Python wrapper per node: the DAGs of a softmax
    have hundreds of thousands). The memo maps a node's id to its rewrite, raw; a rewrite
    that is a new term is kept alive by its Python wrapper in the memo, and so is every root
    walked, whose subterms are the other nodes the memo names (so no id is reused while it
    lives)."""
    if not isinstance(t, z3.ExprRef):
        return t
    memo = {} if memo is None else memo
    memo.setdefault("roots", []).append(t)
    ctx = _CTX.ref()
    root = t.as_ast()
    stack = [(root, False)]
    while stack:
        e, ready = stack.pop()
        key = R.ast_id(ctx, e)
        if key in memo:
            continue
        n = R.num_args(ctx, e) if R.ast_kind(ctx, e) == z3.Z3_APP_AST else 0
        kids = [R.app_arg(ctx, e, i) for i in range(n)]
        if not ready:
            stack.append((e, True))
            stack.extend((c, False) for c in kids if R.ast_id(ctx, c) not in memo)
            continue
        new = [memo[R.ast_id(ctx, c)][0] for c in kids]
        memo[key] = _rewritten(ctx, e, kids, new)
    out = memo[R.ast_id(ctx, root)][0]
    return t if out is root else z3.z3._to_expr_ref(out, _CTX)


def _rewritten(ctx, e, kids: list, new: list) -> tuple:
    """(the rewrite of raw `e` given its children's rewrites `new`, its keep-alive or None)."""
    if len(kids) == 1 and z3raw.app_kind(ctx, e) == z3.Z3_OP_FPA_TO_FP:
        sort = R.sort(ctx, e)
        if R.sort_kind(ctx, R.sort(ctx, kids[0])) == z3.Z3_BV_SORT:
            fmt = _FORMATS.get((_L.Z3_fpa_get_ebits(ctx, sort), _L.Z3_fpa_get_sbits(ctx, sort)))
            inner = _unwrapped_raw(ctx, new[0], fmt) if fmt else new[0]
            if R.ast_id(ctx, inner) == R.ast_id(ctx, kids[0]):
                return (e, None)
            return _kept(_L.Z3_mk_fpa_to_fp_bv(ctx, inner, sort))
    if any(R.ast_id(ctx, a) != R.ast_id(ctx, b) for a, b in zip(new, kids)):
        args = (z3.Ast * len(new))(*new)
        return _kept(_L.Z3_update_term(ctx, e, ctypes.c_uint(len(new)), args))
    return (e, None)


def _kept(raw) -> tuple:
    """A new raw term and the Python wrapper that keeps it alive."""
    term = z3.z3._to_expr_ref(raw, _CTX)
    return (term.as_ast(), term)


__all__ = ["unwrapped", "float_view", "MASKS", "is_nan_pattern", "wrapped_value"]
