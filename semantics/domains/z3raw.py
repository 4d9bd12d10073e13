"""The few z3 constructors the symbolic domain calls per lane, built through z3's C API.

z3's Python constructors spend most of their time coercing and checking arguments (about
20 us for an `If`, against 3.7 us here). These build the very same hash-consed ASTs for
arguments that are already z3 terms of matching sorts, which is all the symbolic domain
passes. They call libz3 directly (`_Raw`): z3core's wrappers convert each argument in Python
and ask for the error state after every call, 2.9 of an `If`'s 6.6 us. A failed constructor
(a sort mismatch) returns no term, and wrapping no term raises `z3.Z3Exception` with libz3's
message (`_Counted`), so a mismatch still raises as through z3core.
"""

from __future__ import annotations

import ctypes

import z3
from z3 import z3core as _C

_CTX = z3.main_ctx()
_REF = _CTX.ref()       # (the main context's handle: fixed for the life of the process)


def _unchecked(wrapper):
    """libz3's function behind a z3core wrapper, without the wrapper's error check (the
    wrapper itself if z3core is laid out differently: slower, same answers)."""
    elems = (wrapper.__defaults__ or (None,))[-1]
    return getattr(elems, "f", wrapper)


def _direct(wrapper):
    """libz3's function behind a z3core wrapper, called with no conversion of its arguments
    (every one must be a ctypes object: a term's `as_ast()`, `_REF`, an array; a Python int
    would be passed as a C int) and no error check (see `_Counted`); the unchecked function
    itself if z3core is laid out differently."""
    f = _unchecked(wrapper)
    if f is wrapper or not isinstance(f, ctypes._CFuncPtr):
        return f
    direct = type(f)(ctypes.cast(f, ctypes.c_void_p).value)
    direct.restype, direct.argtypes = f.restype, None
    return direct


class _Raw:
    """libz3's functions by name, called directly (`_direct`): `_L.Z3_mk_ite(_REF, ...)`."""

    def __getattr__(self, name: str):
        f = _direct(getattr(_C, name))
        setattr(self, name, f)
        return f


_L = _Raw()
_INC_REF = _L.Z3_inc_ref
_DEC_REF = _L.Z3_dec_ref


def _no_term(ctx) -> z3.Z3Exception:
    """The error of the libz3 call that just returned no term (z3core's own message)."""
    ref = ctx.ref()
    message = _L.Z3_get_error_msg(ref, _L.Z3_get_error_code(ref))
    return z3.Z3Exception(message.decode() if isinstance(message, bytes) else str(message))


class _Counted:
    """The Python side of a term built here: z3's own wrapper classes, with their reference
    counting through direct calls into libz3 (`_direct`; a term exists, so counting cannot
    fail). z3's `AstRef.__init__` and `__del__` check the error state after each, two more
    foreign calls per term; the symbolic domain builds about a million terms for a matmul.
    `ast` is a ctypes AST handle, never a Python int (see `_direct`)."""

    def __init__(self, ast, ctx=_CTX):
        if not ast:                     # a constructor that failed (see the module's doc)
            self.ast = None
            raise _no_term(ctx)
        self.ast = ast
        self.ctx = ctx
        _INC_REF(ctx.ctx, ast)

    def __del__(self):
        # (at interpreter exit the context or this module may already be gone; an exception
        # such as `--time-limit`'s may interrupt __init__ before `ast` is set)
        if getattr(self, "ast", None) is not None and self.ctx.ctx is not None and _DEC_REF is not None:
            _DEC_REF(self.ctx.ctx, self.ast)
            self.ast = None


class _BitVec(_Counted, z3.BitVecRef):
    pass


class _Bool(_Counted, z3.BoolRef):
    pass


class _Float(_Counted, z3.FPRef):
    pass


def _wrap(ast, like):
    if isinstance(like, z3.BitVecRef):
        return _BitVec(ast)
    if isinstance(like, z3.BoolRef):
        return _Bool(ast)
    if not ast:
        raise _no_term(_CTX)
    return z3.z3._to_expr_ref(ast, _CTX)


def If(c: z3.BoolRef, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
    return _wrap(_L.Z3_mk_ite(_REF, c.as_ast(), a.as_ast(), b.as_ast()), a)


# One argument array for the binary And/Or: z3 copies the arguments into the new term, and
# keq builds terms on one thread (the parallel mode forks processes).
_PAIR = (z3.Ast * 2)()


def And(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    _PAIR[0], _PAIR[1] = a.as_ast(), b.as_ast()
    return _Bool(_L.Z3_mk_and(_REF, 2, _PAIR), _CTX)


def Or(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    _PAIR[0], _PAIR[1] = a.as_ast(), b.as_ast()
    return _Bool(_L.Z3_mk_or(_REF, 2, _PAIR), _CTX)


def Not(a: z3.BoolRef) -> z3.BoolRef:
    return _Bool(_L.Z3_mk_not(_REF, a.as_ast()), _CTX)


def Eq(a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
    return _Bool(_L.Z3_mk_eq(_REF, a.as_ast(), b.as_ast()), _CTX)


def BvAnd(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    return _BitVec(_L.Z3_mk_bvand(_REF, a.as_ast(), b.as_ast()), _CTX)


def BvAdd(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    return _BitVec(_L.Z3_mk_bvadd(_REF, a.as_ast(), b.as_ast()), _CTX)


def _binary_bv(name: str):
    """A bit-vector operation on two terms of one width: libz3's constructor `name`."""
    mk = getattr(_L, name)

    def build(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
        return _BitVec(mk(_REF, a.as_ast(), b.as_ast()), _CTX)
    build.__name__ = name
    return build


def _binary_pred(name: str):
    """A comparison of two bit-vector terms of one width: libz3's constructor `name`."""
    mk = getattr(_L, name)

    def build(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BoolRef:
        return _Bool(mk(_REF, a.as_ast(), b.as_ast()), _CTX)
    build.__name__ = name
    return build


# The C constructors z3's operators call (`x - y` is Z3_mk_bvsub, `x >> y` Z3_mk_bvashr, ...),
# without the operators' coercion, which was a third of an indexed matmul's address
# arithmetic. One difference: for `x <= c` with a numeral `c`, Python asks `c.__ge__(x)`
# first (BitVecNumRef derives from BitVecRef), so z3's operators build the mirrored
# `bvsge(c, x)`; these build the comparison asked for, in the order given.
BvSub = _binary_bv("Z3_mk_bvsub")
BvMul = _binary_bv("Z3_mk_bvmul")
BvOr = _binary_bv("Z3_mk_bvor")
BvXor = _binary_bv("Z3_mk_bvxor")
BvShl = _binary_bv("Z3_mk_bvshl")
BvLShr = _binary_bv("Z3_mk_bvlshr")
BvAShr = _binary_bv("Z3_mk_bvashr")
ULT = _binary_pred("Z3_mk_bvult")
ULE = _binary_pred("Z3_mk_bvule")
SLT = _binary_pred("Z3_mk_bvslt")
SLE = _binary_pred("Z3_mk_bvsle")


def Select(a: z3.ArrayRef, i: z3.BitVecRef) -> z3.BitVecRef:
    """An element of an array of bit-vectors."""
    return _BitVec(_L.Z3_mk_select(_REF, a.as_ast(), i.as_ast()), _CTX)


_BVADD_DECLS: dict[int, object] = {}


def BvSum(terms: list) -> z3.BitVecRef:
    """One n-ary bit-vector addition of `terms` (two or more, one width), in their order: the
    node `a + b + c` that z3's own simplifier builds, where nested `BvAdd`s make a chain of
    binary nodes, one per addend."""
    w = terms[0].size()
    decl = _BVADD_DECLS.get(w)
    if decl is None:
        x = z3.BitVec("_keq_sum_width", w)
        decl = _BVADD_DECLS[w] = z3.FuncDeclRef(
            _C.Z3_get_app_decl(_REF, (x + x).as_ast()), _CTX)     # (kept alive here)
    args = (z3.Ast * len(terms))(*[t.as_ast() for t in terms])
    return _BitVec(_L.Z3_mk_app(_REF, decl.ast, len(terms), args), _CTX)


# -- floating point ------------------------------------------------------------------------------

_ROUNDING = {"rn": z3.RNE, "rz": z3.RTZ, "rm": z3.RTN, "rp": z3.RTP, "rna": z3.RNA}
_RM_TERMS: dict[str, z3.FPRMRef] = {}
_FP_SORTS: dict[tuple[int, int], z3.FPSortRef] = {}


def rounding(rm: str) -> z3.FPRMRef:
    t = _RM_TERMS.get(rm)
    if t is None:
        t = _RM_TERMS[rm] = _ROUNDING[rm]()
    return t


def fp_sort(ebits: int, sbits: int) -> z3.FPSortRef:
    s = _FP_SORTS.get((ebits, sbits))
    if s is None:
        s = _FP_SORTS[(ebits, sbits)] = z3.FPSort(ebits, sbits)
    return s


def FromBits(bits: z3.BitVecRef, sort: z3.FPSortRef) -> z3.FPRef:
    return _Float(_L.Z3_mk_fpa_to_fp_bv(_REF, bits.as_ast(), sort.ast), _CTX)


def ToBits(x: z3.FPRef) -> z3.BitVecRef:
    return _BitVec(_L.Z3_mk_fpa_to_ieee_bv(_REF, x.as_ast()), _CTX)


def _fp(ast) -> z3.FPRef:
    return _Float(ast)


def FpAdd(rm, a, b) -> z3.FPRef:
    return _fp(_L.Z3_mk_fpa_add(_REF, rm.as_ast(), a.as_ast(), b.as_ast()))


def FpSub(rm, a, b) -> z3.FPRef:
    return _fp(_L.Z3_mk_fpa_sub(_REF, rm.as_ast(), a.as_ast(), b.as_ast()))


def FpMul(rm, a, b) -> z3.FPRef:
    return _fp(_L.Z3_mk_fpa_mul(_REF, rm.as_ast(), a.as_ast(), b.as_ast()))


def FpDiv(rm, a, b) -> z3.FPRef:
    return _fp(_L.Z3_mk_fpa_div(_REF, rm.as_ast(), a.as_ast(), b.as_ast()))


def FpFMA(rm, a, b, c) -> z3.FPRef:
    return _fp(_L.Z3_mk_fpa_fma(_REF, rm.as_ast(), a.as_ast(), b.as_ast(), c.as_ast()))


def FpSqrt(rm, a) -> z3.FPRef:
    return _fp(_L.Z3_mk_fpa_sqrt(_REF, rm.as_ast(), a.as_ast()))


# -- reading terms --------------------------------------------------------------------------------

class read:
    """Getters on raw ASTs for walks over large terms, called directly (`_direct`: z3core's
    wrappers convert each argument in Python and check the error state after each call,
    about half its cost). Only for terms that exist, which these getters cannot fail on."""

    ast_id = staticmethod(_direct(_C.Z3_get_ast_id))
    ast_hash = staticmethod(_direct(_C.Z3_get_ast_hash))
    ast_kind = staticmethod(_direct(_C.Z3_get_ast_kind))
    decl_kind = staticmethod(_direct(_C.Z3_get_decl_kind))
    app_decl = staticmethod(_direct(_C.Z3_get_app_decl))
    app_arg = staticmethod(_direct(_C.Z3_get_app_arg))
    num_args = staticmethod(_direct(_C.Z3_get_app_num_args))
    sort = staticmethod(_direct(_C.Z3_get_sort))
    sort_kind = staticmethod(_direct(_C.Z3_get_sort_kind))
    bv_size = staticmethod(_direct(_C.Z3_get_bv_sort_size))
    numeral = staticmethod(_direct(_C.Z3_get_numeral_string))       # bytes
    decl_name = staticmethod(_direct(_C.Z3_get_decl_name))
    symbol = staticmethod(_direct(_C.Z3_get_symbol_string))          # bytes
    decl_int = staticmethod(_direct(_C.Z3_get_decl_int_parameter))


# -- where a condition holds -----------------------------------------------------------------

_TRUE, _FALSE = z3.BoolVal(True), z3.BoolVal(False)


def conjuncts(cond, memo: dict) -> list:
    """(raw term, negated) for each conjunct of the raw Boolean `cond`: nested `And`s
    flattened, `Not(Or(..))` as the negations of its disjuncts, `True` dropped. Memoized per
    node in `memo`, which the caller keeps only as long as `cond` lives (a lane's condition
    is the last one's and one more conjunct)."""
    return _conjuncts(cond, memo, _CTX.ref())


def app_kind(ctx, c):
    """The declaration kind of raw `c` (`z3.Z3_OP_AND`, ...), None when it is no application."""
    return read.decl_kind(ctx, read.app_decl(ctx, c)) \
        if read.ast_kind(ctx, c) == z3.Z3_APP_AST else None



def _conjuncts(c, memo: dict, ctx) -> list:
    # (module level, not a recursive closure: that would be a reference cycle keeping
    # `memo` alive until Python's next full collection)
    R = read
    key = R.ast_id(ctx, c)
    hit = memo.get(key)
    if hit is not None:
        return hit
    k = app_kind(ctx, c)
    if k == z3.Z3_OP_AND:
        out = [p for j in range(R.num_args(ctx, c))
               for p in _conjuncts(R.app_arg(ctx, c, j), memo, ctx)]
    elif k == z3.Z3_OP_NOT and app_kind(ctx, R.app_arg(ctx, c, 0)) == z3.Z3_OP_OR:
        inner = R.app_arg(ctx, c, 0)
        out = [(R.app_arg(ctx, inner, j), True) for j in range(R.num_args(ctx, inner))]
    elif k == z3.Z3_OP_TRUE:
        out = []
    else:
        out = [(c, False)]
    memo[key] = out
    return out


def literals(cond, memo: dict) -> list:
    """(raw literal, raw truth value) pairs that hold wherever the raw Boolean `cond` holds:
    each conjunct true (a negated one's term false), and for a conjunct `Not(x)` also `x`
    false (`conjuncts`, whose memo `memo` is)."""
    ctx, R = _CTX.ref(), read
    t, f = _TRUE.as_ast(), _FALSE.as_ast()
    out = []
    for c, negated in conjuncts(cond, memo):
        if negated:
            out.append((c, f))
            continue
        out.append((c, t))
        if R.ast_kind(ctx, c) == z3.Z3_APP_AST and \
                R.decl_kind(ctx, R.app_decl(ctx, c)) == z3.Z3_OP_NOT:
            out.append((R.app_arg(ctx, c, 0), f))
    return out


class Substitution:
    """(raw term, raw value) pairs laid out once for z3's substitution, to apply to many
    terms: a lane's condition is the same for every access it makes in one step."""

    __slots__ = ("n", "src", "dst")

    def __init__(self, pairs: list) -> None:
        n = self.n = len(pairs)
        self.src, self.dst = (z3.Ast * n)(), (z3.Ast * n)()
        for j, (a, b) in enumerate(pairs):
            self.src[j], self.dst[j] = a, b

    def apply(self, t: z3.ExprRef) -> z3.ExprRef:
        """`t` with each term replaced by its value: z3's own substitution, in C, without
        simplifying; the result has `t`'s sort, so `t`'s wrapper class."""
        return _wrap(_L.Z3_substitute(_REF, t.as_ast(), self.n, self.src, self.dst), t)


def wrap(raw, like: z3.ExprRef) -> z3.ExprRef:
    """A raw AST of `like`'s sort as a Python term (reference counted)."""
    if not isinstance(raw, ctypes.c_void_p):
        raise TypeError(f"not a raw z3 AST: {raw!r}")   # (an int would reach libz3 cut short)
    return _wrap(raw, like)


def substitute_raw(raw, pairs: list):
    """Raw AST `raw` with each (raw term, raw value) of `pairs` replaced, as a raw AST (z3's
    own substitution, in C, without simplifying; kept alive by the caller's next use)."""
    s = Substitution(pairs)
    return _C.Z3_substitute(_CTX.ref(), raw, s.n, s.src, s.dst)


def simplify_raw(raw):
    """z3's simplifier with its default parameters (`z3.simplify(t)`), on a raw AST."""
    return _C.Z3_simplify(_CTX.ref(), raw)


def substitute(raw, pairs: list) -> z3.ExprRef:
    """Raw AST `raw` with each (raw term, raw value) of `pairs` replaced: z3's own
    substitution, in C, without simplifying."""
    s = Substitution(pairs)
    return z3.z3._to_expr_ref(_C.Z3_substitute(_CTX.ref(), raw, s.n, s.src, s.dst), _CTX)
