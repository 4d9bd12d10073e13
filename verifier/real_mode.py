"""`mode = "real"`: floating-point results read as real arithmetic.

The claim "equal modulo rounding" is checked by translating each output term that the
bit-precise semantics produced into real arithmetic: an IEEE `fp.add` becomes `+`, `fp.mul`
`*`, `fp.fma` `a*b + c`, `fp.div` `/`, a float-to-float conversion the identity (a rounding),
each input element a real variable, and the canonical-NaN wrapper around a result its non-NaN
branch (the claim is for finite values: a NaN test is false). A tensor-core mma is the sum of
its products; `ex2.approx`, libdevice `expf`'s scaling by 2^j, `max.f32` and `min.f32` read
as the exponential, maximum and minimum of `verifier.real_exp` (with the identities it
applies, and the assumptions the claim prints); `neg` (a sign flip) as negation; roots and
the other approximations as the functions of `verifier.real_functions`. Anything else (other
bit operations on float bits, comparisons, integer conversions) has no faithful real reading
and raises `NotReal`, which the verifier reports as Inconclusive.

This is exactly the reading a reordered reduction or an `fma` contraction needs: both kernels
compute the same real polynomial, so they agree up to rounding.
"""

from __future__ import annotations

import struct

import z3

from semantics.choices import CONSTANT_PREFIX, FUNCTION_PREFIX
from semantics.domains.nan_wrappers import is_nan_pattern, is_nan_test, wrapped_value
from verifier.real_functions import ABS, APPROXIMATIONS, SQRT
from verifier.real_libdevice import range_reduced, rounds_to_integer, shifted_into_exponent
from verifier.real_poly import Normalizer
from verifier.real_exp import (E2, EXP_ASSUMPTION, LOWEST, MAGIC, MAX_ASSUMPTION, MIN_ASSUMPTION,
                               Maxima, Minima, exp2, plus, times)
from verifier.terms import TermMemo, any_subterm, free_constants

CANONICAL_NAN = {32: 0x7FFFFFFF, 64: 0x7FFFFFFFFFFFFFFF, 16: 0x7FFF}   # bits, by width

# What a verdict in mode real assumes (every stage that reads floats as reals adds it).
ASSUMPTION = ("mode real: the results are equal as real numbers, so the kernels agree modulo "
              "rounding, for finite values (no NaN or infinity)")


# What a verdict that reads a tensor-core instruction as reals assumes besides (`_tensor`).
TENSOR_ASSUMPTION = ("mode real: a tensor-core mma/wmma is the exact sum of its products and "
                     "C (the datapath's alignment and rounding are rounding)")


class NotReal(Exception):
    """The term has no faithful real-arithmetic reading."""


def _half(bits: int) -> float:
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def _bfloat(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


# tensor-core element formats with a real reading of their bits
_ELEMENT_FORMATS = {"f16": _half, "bf16": _bfloat, "tf32": lambda b: _float_of_bits(b, 32),
                    "f32": lambda b: _float_of_bits(b, 32), "f64": lambda b: _float_of_bits(b, 64)}
_TENSOR_PREFIXES = (f"{FUNCTION_PREFIX}mma.", f"{FUNCTION_PREFIX}wmma.")


def _float_of_bits(bits: int, width: int) -> float:
    if width == 32:
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if width == 64:
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    raise NotReal(f"{width}-bit float constants")


def _ordered(x, y) -> tuple:
    """Operands of a commutative real operation in a canonical order (z3's structural hash),
    so that `a*x + y` read from an fma and `y + a*x` read from an add are one term."""
    if x.eq(y):
        return x, y                    # (a square: printing both to compare them is slow)
    kx, ky = x.hash(), y.hash()
    return (y, x) if kx > ky or (kx == ky and x.sexpr() > y.sexpr()) else (x, y)


def _add(x, y):
    summed = plus(x, y)
    if summed is not None:
        return summed
    a, b = _ordered(x, y)
    return a + b


def _mul(x, y):
    merged = times(x, y)
    if merged is not None:
        return merged
    a, b = _ordered(x, y)
    return a * b


def _only_when_equal(extra, lt) -> bool:
    """Is the second disjunct of a `max.f32` condition true only where its two operands are
    equal as reals (the semantics' `both zeros and x negative`, ordering -0 below +0)? Asked
    of z3 with the operands' bits as fresh variables: it must mention nothing else."""
    xb, yb = lt.arg(0).arg(0), lt.arg(1).arg(0)
    u, v = z3.BitVec("keq!max!x", xb.size()), z3.BitVec("keq!max!y", yb.size())
    e = z3.substitute(extra, (xb, u), (yb, v))
    # (every max of one format gives the same `e`: one solver call each, not one per max)
    ebits, sbits = lt.arg(0).sort().ebits(), lt.arg(0).sort().sbits()
    key = (e.get_id(), ebits, sbits)
    hit = _EQUAL_ONLY.get(key)
    if hit is not None:
        return hit[0]
    answer = _asked_only_when_equal(e, ebits, sbits, u, v)
    _EQUAL_ONLY[key] = (answer, e)
    return answer


# (term id, float format) -> (answer, the term: kept alive so that its id stays its own)
_EQUAL_ONLY: dict[tuple[int, int, int], tuple[bool, z3.ExprRef]] = {}


def _asked_only_when_equal(e, ebits: int, sbits: int, u, v) -> bool:
    fu, fv = z3.fpBVToFP(u, z3.FPSort(ebits, sbits)), z3.fpBVToFP(v, z3.FPSort(ebits, sbits))
    s = z3.Solver()
    s.set("timeout", 30_000)     # (a small query, asked once per format: never cut short)
    s.add(e, z3.Not(z3.fpEQ(fu, fv)))
    return s.check() == z3.unsat and all(
        str(c) in ("keq!max!x", "keq!max!y") for c in free_constants(e))


def _is_float_op(e) -> bool:
    """A floating-point operation, or a reinterpretation of float bits."""
    return z3.is_fp(e) or e.decl().kind() == z3.Z3_OP_FPA_TO_IEEE_BV


_FLUSH_MASKS = {16: (0x7C00, 0x03FF, 0x8000), 32: (0x7F800000, 0x007FFFFF, 0x80000000),
                64: (0x7FF0000000000000, 0x000FFFFFFFFFFFFF, 0x8000000000000000)}


def _masked(t, x, mask: int) -> bool:
    """Is `t` the term `x & mask` (either operand order)?"""
    if not (z3.is_app(t) and t.decl().kind() == z3.Z3_OP_BAND and t.num_args() == 2):
        return False
    u, v = t.arg(0), t.arg(1)
    return (u.eq(x) and z3.is_bv_value(v) and v.as_long() == mask) or \
        (v.eq(x) and z3.is_bv_value(u) and u.as_long() == mask)


def _is_zero_test(t, x, mask: int) -> bool:
    """Is `t` the test `x & mask == 0` (either operand order)?"""
    if not (z3.is_app(t) and t.decl().kind() == z3.Z3_OP_EQ):
        return False
    u, v = t.arg(0), t.arg(1)
    return (_masked(u, x, mask) and z3.is_bv_value(v) and v.as_long() == 0) or \
        (_masked(v, x, mask) and z3.is_bv_value(u) and u.as_long() == 0)


def _is_flush(c, then, other) -> bool:
    """`ite(c, then, other)` is `.ftz`'s flush of `other` (`semantics.ops.common.flush`):
    c = (exponent bits 0 and mantissa bits not 0), then = other & sign."""
    masks = _FLUSH_MASKS.get(other.size()) if z3.is_bv(other) else None
    if masks is None or not _masked(then, other, masks[2]):
        return False
    if not (z3.is_app(c) and c.decl().kind() == z3.Z3_OP_AND and c.num_args() == 2):
        return False
    exp, mant = c.arg(0), c.arg(1)
    if not (z3.is_app(mant) and mant.decl().kind() == z3.Z3_OP_NOT):
        return False
    return _is_zero_test(exp, other, masks[0]) and _is_zero_test(mant.arg(0), other, masks[1])


def _unspecified_bytes(t) -> bool:
    """Is `t` a concatenation of `keq!u!` byte constants (a word no store wrote)?"""
    return all(z3.is_const(a) and a.decl().kind() == z3.Z3_OP_UNINTERPRETED
               and a.size() == 8 and a.decl().name().startswith(CONSTANT_PREFIX)
               for a in t.children())


def unspecified_choices(tr: "RealTranslator", real_value) -> dict[str, int]:
    """The `keq!u!` constants' values behind a real-mode model: each unspecified word's
    real value as the float's bits, split into its bytes. `real_value(name) -> float`."""
    out: dict[str, int] = {}
    for name, (parts, width) in tr.unspecified.items():
        bits = bits_of_real(real_value(name), width)
        if len(parts) == 1:
            out[parts[0]] = bits
            continue
        for j, part in enumerate(reversed(parts)):       # (least significant first)
            out[part] = (bits >> (8 * j)) & 0xFF
    return out


def bits_of_real(f: float, width: int) -> int:
    import numpy as np
    dtype = {16: np.float16, 32: np.float32, 64: np.float64}[width]
    return int(np.array([f], dtype=dtype).view(f"u{width // 8}")[0])


class RealTranslator:
    """Memoized translation of bit-precise output terms to z3 reals."""

    def __init__(self, float_free=None, loads=None) -> None:
        """`float_free(term) -> bool`: a cheap test that may say a condition certainly
        mentions no float (the verifier's shape-only test); the full walk decides the rest.
        `loads(term) -> str | None`: the name of the input element a load term reads at
        every point (an indexed buffer's `Select`, `verifier.indexed.real_look`), read as
        that element's real value, like an input's own term."""
        self.float_free = float_free
        self.loads = loads
        self.no_float: TermMemo[bool] = TermMemo()     # float-free subterms seen
        self.memo: TermMemo[z3.ArithRef] = TermMemo()
        self.variables: dict[str, z3.ArithRef] = {}
        # Real variables standing for values the ISA leaves unspecified (never-written
        # registers or memory): name -> (its `keq!u!` constants, most significant first;
        # the width of the float they form), to turn a model back into replay choices.
        self.unspecified: dict[str, tuple[tuple[str, ...], int]] = {}
        # Integer selection conditions kept exact: they must not read a float input's bits
        # (that input is a real here; `mixed_inputs` says when one is read both ways).
        self.condition_terms: list = []
        # Assumptions the readings used besides ASSUMPTION (a tensor core's sum as reals).
        self.notes: set[str] = set()
        self.maxima = Maxima()
        self.minima = Minima()
        self.poly = Normalizer()         # arguments of opaque atoms: one term per polynomial
        # libdevice's range-reduction integers: atom name -> the float term it stands for
        # (`verifier.real_check` evaluates it to confirm a difference)
        self.integers: dict[str, z3.ExprRef] = {}

    def mixed_inputs(self) -> set[str]:
        from verifier.counterexample import variables_in
        return variables_in(self.condition_terms) & set(self.variables)

    def facts(self, terms) -> list:
        """What is true of the opaque atoms in `terms` by their definitions: a `Max` atom is
        one of its members and no member is above it (a `Min` likewise), and 2^x > 0.
        Adding them to a real-arithmetic query is sound both ways (they hold of the true
        functions); `verifier.outputs` asks with them when the plain query is sat."""
        out = []
        for sets, above in ((self.maxima, True), (self.minima, False)):
            for name, members in sets.members.items():
                m = z3.Real(name)
                vals = [sets.terms[k] for k in sorted(members)]
                out.append(z3.Or([m == v for v in vals]))
                out += [m >= v if above else m <= v for v in vals]
        seen: set[int] = set()
        todo = [t for t in terms if not isinstance(t, (int, float))]
        while todo:
            t = todo.pop()
            if t.get_id() in seen:
                continue
            seen.add(t.get_id())
            if z3.is_app(t) and t.decl().eq(E2):
                out.append(t > 0)
            todo.extend(t.children())
        return out

    def value(self, t, width: int) -> z3.ArithRef:
        """A bit-vector output element (int or term) of a float buffer of `width` bits."""
        if isinstance(t, int):
            return self._const(t, width)
        return self._bv(t)

    def _const(self, bits: int, width: int) -> z3.ArithRef:
        f = _float_of_bits(bits, width)
        if f != f or f in (float("inf"), float("-inf")):
            raise NotReal("a NaN or infinite constant")
        return z3.Q(*f.as_integer_ratio())          # (a rational value, not a division)

    def _bv(self, t) -> z3.ArithRef:
        hit = self.memo.get(t)
        if hit is not None:
            return hit
        return self.memo.put(t, self._bv_uncached(t))

    def _bv_uncached(self, t) -> z3.ArithRef:
        k = t.decl().kind()
        if z3.is_bv_value(t):
            return self._const(t.as_long(), t.size())
        if k == z3.Z3_OP_UNINTERPRETED and t.num_args() == 0:
            name = str(t)
            v = self.variables.get(name)
            if v is None:
                v = self.variables[name] = z3.Real(name)
                if name.startswith(CONSTANT_PREFIX):
                    self.unspecified[name] = ((name,), t.size())
            return v
        if k == z3.Z3_OP_SELECT and self.loads is not None:
            name = self.loads(t)
            if name is not None:
                v = self.variables.get(name)
                if v is None:
                    v = self.variables[name] = z3.Real(name)
                return v
        if k == z3.Z3_OP_CONCAT and _unspecified_bytes(t):
            # A word of never-written memory: unspecified bytes read as one float, an
            # arbitrary value like an input (finite, as every input is in this mode).
            parts = tuple(str(t.arg(i)) for i in range(t.num_args()))
            name = f"{CONSTANT_PREFIX}real!{parts[-1]}!{len(parts)}"
            v = self.variables.get(name)
            if v is None:
                v = self.variables[name] = z3.Real(name)
                self.unspecified[name] = (parts, t.size())
            return v
        if k == z3.Z3_OP_FPA_TO_IEEE_BV:
            return self._fp(t.arg(0))
        if k == z3.Z3_OP_UNINTERPRETED and t.decl().name().startswith(_TENSOR_PREFIXES):
            return self._tensor(t)
        if k == z3.Z3_OP_UNINTERPRETED and ".approx." in t.decl().name():
            return self._approximation(t)
        if k == z3.Z3_OP_BXOR and t.num_args() == 2 and t.size() in (16, 32, 64):
            # `neg`: the sign bit flipped
            sign = 1 << (t.size() - 1)
            for v, other in ((t.arg(0), t.arg(1)), (t.arg(1), t.arg(0))):
                if z3.is_bv_value(v) and v.as_long() == sign:
                    return -self._bv(other)
        if k == z3.Z3_OP_BAND and t.num_args() == 2 and t.size() in (16, 32, 64):
            # `abs`: the sign bit cleared
            sign = 1 << (t.size() - 1)
            for v, other in ((t.arg(0), t.arg(1)), (t.arg(1), t.arg(0))):
                if z3.is_bv_value(v) and v.as_long() == sign - 1:
                    return ABS(self.poly.normal(self._bv(other)))
        j = range_reduced(shifted_into_exponent(t))
        if j is not None:
            self.notes.add(EXP_ASSUMPTION)            # libdevice expf's 2^j
            return exp2(self._fp(j) - MAGIC)
        if k == z3.Z3_OP_EXTRACT or k == z3.Z3_OP_CONCAT:
            simpler = z3.simplify(t)          # a half of a word the kernel packed: the half
            if not simpler.eq(t):
                return self._bv(simpler)
        if k == z3.Z3_OP_ITE:
            c, a, b = t.arg(0), t.arg(1), t.arg(2)
            # The canonicalizing wrapper ite(isNaN(bits(r)), NaN, bits(r)): for finite values
            # the result is r.
            # (also an unspecified NaN `u | EXP | QUIET`, what a conversion of a NaN gives)
            if (z3.is_bv_value(a) and a.as_long() == CANONICAL_NAN.get(a.size())) or \
                    is_nan_pattern(a.as_ast(), a.size()):
                return self._bv(b)
            inner = wrapped_value(t)       # (a result's NaN wrapper, whichever NaN it gives)
            if inner is not None:
                return self._bv(inner)
            # .ftz: ite(subnormal(x), x & sign, x) is x but for a subnormal, which flushes to
            # a zero: a change below the smallest normal, rounding for this mode.
            if _is_flush(c, a, b):
                return self._bv(b)
            # (finite values: a NaN test is false; `max.f32`'s comparison is the real max)
            if is_nan_test(c):
                return self._bv(b)
            picked = self._max_or_min(c, a, b)
            if picked is not None:
                return picked
            # A selection on integers only (a launch shape's `i < n`, an index test) keeps
            # its exact bit-vector condition; only its float branches become reals.
            if (self.float_free is not None and self.float_free(c)) or \
                    not any_subterm(_is_float_op, c, self.no_float):
                self.condition_terms.append(c)
                return z3.If(c, self._bv(a), self._bv(b))
            raise NotReal(f"a data-dependent selection ({t.decl().name()})")
        raise NotReal(f"the operation '{t.decl().name()}' on float bits")

    def _approximation(self, t) -> z3.ArithRef:
        """An approximate instruction (`semantics.ops.float_arith._approx`: the function
        `<name>[.ftz].approx.<fmt>`) as the real function it approximates."""
        name = t.decl().name().split(".")[0]
        args = [self._bv(t.arg(i)) for i in range(t.num_args())]
        if name == "ex2" and len(args) == 1:
            self.notes.add(EXP_ASSUMPTION)
            return exp2(self.poly.normal(args[0]))
        reading = APPROXIMATIONS.get(name)
        if reading is None:
            raise NotReal(f"the approximation '{t.decl().name()}'")
        read, assumption = reading
        self.notes.add(assumption)
        return read(*[self.poly.normal(a) for a in args])

    def _max_or_min(self, c, a, b):
        """`ite(lt(x, y) or (both zeros, x negative), a, b)` of `max.f32`/`min.f32`
        (`semantics.ops.float_arith`; z3 drops the zeros test against a constant): max when
        it picks y, the larger; min when it picks x, the smaller."""
        lt = c.arg(0) if z3.is_or(c) and c.num_args() == 2 else c
        if lt is not c and not _only_when_equal(c.arg(1), lt):
            return None
        if not (z3.is_app(lt) and lt.decl().kind() == z3.Z3_OP_FPA_LT):
            return None
        x, y = lt.arg(0), lt.arg(1)
        if not all(z3.is_app(v) and v.decl().kind() == z3.Z3_OP_FPA_TO_FP and v.num_args() == 1
                   for v in (x, y)):
            return None
        xb, yb = x.arg(0), y.arg(0)
        if a.eq(yb) and b.eq(xb):                   # the larger: max
            self.notes.add(MAX_ASSUMPTION)
            return self.maxima.of(self._member(xb, 0xFF800000), self._member(yb, 0xFF800000))
        if a.eq(xb) and b.eq(yb):                   # the smaller: min
            self.notes.add(MIN_ASSUMPTION)
            return self.minima.of(self._member(xb, 0x7F800000), self._member(yb, 0x7F800000))
        return None

    def _member(self, bits, never_wins: int):
        """A max's or min's argument as a real (in polynomial normal form: the set's key).
        The infinity no finite value loses to (`never_wins`: -inf for max, +inf for min)
        reads as -FLT_MAX or FLT_MAX, which the set drops; the other infinity would win,
        an infinite value this mode has no reading for."""
        if z3.is_bv_value(bits) and bits.size() == 32 and bits.as_long() in (0xFF800000,
                                                                             0x7F800000):
            if bits.as_long() != never_wins:
                raise NotReal("a max or min with an infinity that wins")
            return z3.RealVal(LOWEST if never_wins == 0xFF800000 else -LOWEST)
        return self.poly.normal(self._bv(bits))

    def _tensor(self, t) -> z3.ArithRef:
        """`keq!uf!<mma|wmma>.<shape>...<d>.<a>.<b>.<c>(a_0..a_K-1, b_0..b_K-1, c)`
        (`semantics.ops.mma_float`, `wmma`): sum a_k * b_k + c as reals."""
        fmt = t.decl().name().split(".")[-4:]
        a_fmt, b_fmt, c_fmt = fmt[1], fmt[2], fmt[3]
        n = t.num_args()
        k = (n - 1) // 2
        if a_fmt not in _ELEMENT_FORMATS or b_fmt not in _ELEMENT_FORMATS:
            raise NotReal(f"the tensor-core form {t.decl().name()}")
        total = self._element(t.arg(n - 1), c_fmt)
        for j in range(k):
            total = _add(total, _mul(self._element(t.arg(j), a_fmt),
                                     self._element(t.arg(k + j), b_fmt)))
        self.notes.add(TENSOR_ASSUMPTION)
        return total

    def _element(self, t, fmt: str) -> z3.ArithRef:
        """A tensor-core operand of format `fmt` as a real (tf32: its f32 pattern's value;
        the ignored low bits are rounding)."""
        if z3.is_bv_value(t):
            f = _ELEMENT_FORMATS[fmt](t.as_long())
            if f != f or f in (float("inf"), float("-inf")):
                raise NotReal("a NaN or infinite constant")
            return z3.Q(*f.as_integer_ratio())
        return self._bv(t)

    def _fp(self, e) -> z3.ArithRef:
        hit = self.memo.get(e)
        if hit is not None:
            return hit
        k = e.decl().kind()
        args = [e.arg(i) for i in range(e.num_args())]
        if k == z3.Z3_OP_FPA_TO_FP and len(args) == 1:          # bits -> float
            out = self._bv(args[0])
        elif k == z3.Z3_OP_FPA_TO_FP and len(args) == 2 and z3.is_fp(args[1]):
            out = self._fp(args[1])                               # float -> float: a rounding
        elif k in (z3.Z3_OP_FPA_TO_FP, z3.Z3_OP_FPA_TO_FP_UNSIGNED) and len(args) == 2 and \
                z3.is_bv_value(args[1]):
            # a constant integer -> float that rounds (`real_exactness.rounded_conversions`):
            # read as the integer (a symbolic integer has no reading yet)
            n = args[1].as_long()
            if k == z3.Z3_OP_FPA_TO_FP and n >> (args[1].size() - 1):
                n -= 1 << args[1].size()
            out = z3.RealVal(n)
        elif k == z3.Z3_OP_FPA_ADD:
            out = _add(self._fp(args[1]), self._fp(args[2]))
        elif k == z3.Z3_OP_FPA_SUB:
            out = self._fp(args[1]) - self._fp(args[2])
        elif k == z3.Z3_OP_FPA_MUL:
            out = _mul(self._fp(args[1]), self._fp(args[2]))
        elif k == z3.Z3_OP_FPA_DIV:
            out = self._fp(args[1]) / self._fp(args[2])
        elif k == z3.Z3_OP_FPA_FMA and rounds_to_integer(args):
            # libdevice's range reduction: J = fma.rm(t, 252, 12582913), an integer
            out = z3.Real(f"keq!int!{e.get_id()}")
            self.integers[str(out)] = e
        elif k == z3.Z3_OP_FPA_FMA:
            out = _add(_mul(self._fp(args[1]), self._fp(args[2])), self._fp(args[3]))
        elif k == z3.Z3_OP_FPA_SQRT:
            out = SQRT(self.poly.normal(self._fp(args[1])))
        elif k == z3.Z3_OP_FPA_NEG:
            out = -self._fp(args[0])
        elif z3.is_fp_value(e):
            if e.isNaN() or e.isInf():
                raise NotReal("a NaN or infinite constant")
            out = z3.simplify(z3.fpToReal(e))
        else:
            raise NotReal(f"the floating-point operation '{e.decl().name()}'")
        return self.memo.put(e, out)
