"""The concrete domain: numpy arrays over lanes.

A bit-vector value of width w <= 64 is a `uint64` array holding the pattern zero-extended; a
predicate is a `bool` array. Every primitive is one or a few whole-array numpy operations, so
the emulator runs a whole CTA (or batch of CTAs) per call with no per-thread Python loop.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import numpy as np

from semantics.domains import fp_numpy as fp
from semantics.domains.base import fp_width

U64 = np.uint64
_ONE = U64(1)


def _mask(w: int) -> np.uint64:
    return U64((1 << w) - 1)


def _signed(a: np.ndarray, w: int) -> np.ndarray:
    """Patterns -> int64 values of the signed w-bit interpretation."""
    if w == 64:
        return a.view(np.int64)
    sign = U64(1 << (w - 1))
    return (a.astype(np.int64) ^ np.int64(sign)) - np.int64(sign)


def _from_signed(x: np.ndarray, w: int) -> np.ndarray:
    return x.astype(np.int64).view(U64) & _mask(w)


def _negative(a: np.ndarray, w: int) -> np.ndarray:
    return (a >> U64(w - 1)) & _ONE == _ONE


def _negate(a: np.ndarray, w: int) -> np.ndarray:
    """Two's complement negation of w-bit patterns."""
    return (~a + _ONE) & _mask(w)


def _magnitude(a: np.ndarray, w: int) -> np.ndarray:
    """|a| of signed w-bit patterns, as uint64 (exact: 2^(w-1) for INT_MIN)."""
    return np.where(_negative(a, w), _negate(a, w), a)


class ConcreteDomain:
    """Primitive operations on numpy lane vectors. See `semantics.domains.base`."""

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes

    # -- construction and lanes -----------------------------------------------------------
    def const(self, value: int, w: int) -> np.ndarray:
        return np.full(self.lanes, value & ((1 << w) - 1), dtype=U64)

    def pconst(self, value: bool) -> np.ndarray:
        return np.full(self.lanes, bool(value))

    def lane_index(self, w: int) -> np.ndarray:
        return np.arange(self.lanes, dtype=U64)

    def splat(self, value, w: int) -> np.ndarray:
        return self.const(int(value), w)

    def from_ints(self, arr, w: int) -> np.ndarray:
        """Per-lane integers (any numpy int array) as a w-bit value, wrapped."""
        return np.asarray(arr).astype(np.int64).view(U64) & _mask(w)

    def take(self, v, lanes) -> np.ndarray:
        return v[np.asarray(lanes, dtype=np.int64)]

    def gather(self, v: np.ndarray, index, w: int) -> np.ndarray:
        return v[np.asarray(index, dtype=np.int64)]

    def same_values(self, values: list, lanes: list[int], group) -> bool:
        """Does each of `lanes` hold, in every one of `values`, what lane `group[lane]` holds
        in the first (one value per group: a warp-uniform fragment)?"""
        idx = np.asarray(lanes, dtype=np.int64)
        ref = np.asarray(values[0])[np.asarray(group, dtype=np.int64)[idx]]
        return all(np.array_equal(np.asarray(v)[idx], ref) for v in values)

    def is_value(self, x) -> bool:
        return isinstance(x, np.ndarray)

    # -- bit-vectors -------------------------------------------------------------------------
    def add(self, a, b, w):
        return (a + b) & _mask(w)

    def sub(self, a, b, w):
        return (a - b) & _mask(w)

    def mul(self, a, b, w):
        return (a * b) & _mask(w)

    def mulhi(self, a, b, w, signed):
        if w <= 32:
            if signed:
                p = _signed(a, w) * _signed(b, w)
                return _from_signed(p >> np.int64(w), w)
            return ((a * b) >> U64(w)) & _mask(w)
        # 64-bit: split into 32-bit halves (exact schoolbook), then fix up the sign.
        lo32 = U64(0xFFFFFFFF)
        a0, a1 = a & lo32, a >> U64(32)
        b0, b1 = b & lo32, b >> U64(32)
        p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
        mid = (p00 >> U64(32)) + (p01 & lo32) + (p10 & lo32)
        hi = p11 + (p01 >> U64(32)) + (p10 >> U64(32)) + (mid >> U64(32))
        if signed:
            hi = hi - np.where(a >> U64(63) == 1, b, U64(0)) - np.where(b >> U64(63) == 1, a, U64(0))
        return hi

    def udiv(self, a, b, w):
        zero = b == 0
        q = a // np.where(zero, _ONE, b)
        return np.where(zero, _mask(w), q)

    def urem(self, a, b, w):
        zero = b == 0
        r = a % np.where(zero, _ONE, b)
        return np.where(zero, a, r)

    def sdiv(self, a, b, w):
        # Truncating division on unsigned magnitudes (|INT_MIN| = 2^(w-1) is exact in uint64;
        # np.abs on int64 would overflow it for w == 64); wraparound matches bvsdiv.
        na, nb = _negative(a, w), _negative(b, w)
        zero = b == 0
        q = _magnitude(a, w) // np.where(zero, _ONE, _magnitude(b, w))
        q = np.where(na != nb, _negate(q, w), q)
        # SMT-LIB: x / 0 is -1 (all ones) for x >= 0 and 1 for x < 0.
        return np.where(zero, np.where(na, _ONE, _mask(w)), q)

    def srem(self, a, b, w):
        na = _negative(a, w)
        zero = b == 0
        r = _magnitude(a, w) % np.where(zero, _ONE, _magnitude(b, w))
        r = np.where(na, _negate(r, w), r)    # the remainder takes the dividend's sign
        return np.where(zero, a, r)

    def band(self, a, b, w):
        return a & b

    def bor(self, a, b, w):
        return a | b

    def bxor(self, a, b, w):
        return a ^ b

    def bnot(self, a, w):
        return ~a & _mask(w)

    def shl(self, a, s, w):
        big = s >= U64(w)
        return np.where(big, U64(0), (a << np.minimum(s, U64(63))) & _mask(w))

    def lshr(self, a, s, w):
        big = s >= U64(w)
        return np.where(big, U64(0), a >> np.minimum(s, U64(63)))

    def ashr(self, a, s, w):
        amount = np.minimum(s, U64(w - 1)).astype(np.int64)
        return _from_signed(_signed(a, w) >> amount, w)

    def zext(self, a, w, to):
        return a

    def sext(self, a, w, to):
        return _from_signed(_signed(a, w), to)

    def extract(self, a, hi, lo, w):
        return (a >> U64(lo)) & _mask(hi - lo + 1)

    def concat(self, hi, lo, w_hi, w_lo):
        if w_hi + w_lo > 64:
            raise ValueError("values wider than 64 bits are not supported by the concrete domain")
        return (hi << U64(w_lo)) | lo

    def eq(self, a, b, w):
        return a == b

    def ult(self, a, b, w):
        return a < b

    def ule(self, a, b, w):
        return a <= b

    def slt(self, a, b, w):
        return _signed(a, w) < _signed(b, w)

    def sle(self, a, b, w):
        return _signed(a, w) <= _signed(b, w)

    def lanewise(self, key, fn, a, w):
        """`fn(domain, a)`: (the symbolic domain builds it once per `key` and substitutes)."""
        return fn(self, a)

    def lanewise_n(self, key, fn, vecs, widths):
        """`fn(domain, *vecs)` (the symbolic domain builds it once per `key`)."""
        return fn(self, *vecs)

    def ite(self, c, a, b, w):
        return np.where(c, a, b)

    # -- predicates --------------------------------------------------------------------------
    def pand(self, a, b):
        return a & b

    def por(self, a, b):
        return a | b

    def pxor(self, a, b):
        return a ^ b

    def pnot(self, a):
        return ~a

    def pite(self, c, a, b):
        return np.where(c, a, b)

    def bool_to_bv(self, p, w):
        return p.astype(U64)

    # -- floating point ----------------------------------------------------------------------
    def fadd(self, fmt, rm, a, b):
        x, y = fp.to_f64(fmt, a), fp.to_f64(fmt, b)
        return self._add(fmt, rm, x, y)

    def fsub(self, fmt, rm, a, b):
        x, y = fp.to_f64(fmt, a), fp.to_f64(fmt, b)
        return self._add(fmt, rm, x, -y)

    def _add(self, fmt, rm, x, y):
        s, err = fp.two_sum(x, y)
        c = fp.round_to(fmt, rm, s, err=err)
        # An exact zero sum of operands of opposite signs is -0 under rm, +0 otherwise.
        exact_zero = (s == 0) & (err == 0)
        if rm == "rm":
            c = np.where(exact_zero & ~(np.signbit(x) & np.signbit(y)) & (np.signbit(x) != np.signbit(y)), -0.0, c)
        if fmt == "f64" and rm in ("rz", "rm", "rp"):
            # The f64 sum itself overflowed to ±inf; directed modes may round it to ±max.
            ovf = np.isinf(s) & np.isfinite(x) & np.isfinite(y)
            to_inf = (s > 0) if rm == "rp" else (s < 0) if rm == "rm" else np.zeros(s.shape, bool)
            c = np.where(ovf & ~to_inf, np.copysign(np.finfo(np.float64).max, s), c)
        return fp.from_f64(fmt, c)

    def fmul(self, fmt, rm, a, b):
        x, y = fp.to_f64(fmt, a), fp.to_f64(fmt, b)
        if fmt == "f64" and rm != "rn":
            c = fp.exact_lanes(lambda p, q: (Fraction(p) * Fraction(q), _neg(p) != _neg(q)),
                               fmt, rm, x, y)
            with np.errstate(invalid="ignore", over="ignore"):
                c = np.where(np.isfinite(x) & np.isfinite(y), c, x * y)
            return fp.from_f64(fmt, c)
        with np.errstate(invalid="ignore", over="ignore"):
            s = x * y                                  # exact for p <= 26
        return fp.from_f64(fmt, fp.round_to(fmt, rm, s))

    def fdiv(self, fmt, rm, a, b):
        x, y = fp.to_f64(fmt, a), fp.to_f64(fmt, b)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            s = x / y
        if fmt == "f64":
            if rm == "rn":
                return fp.from_f64(fmt, s)
            safe_y = np.where(y == 0, 1.0, y)
            c = fp.exact_lanes(lambda p, q: (Fraction(p) / Fraction(q), _neg(p) != _neg(q)),
                               fmt, rm, x, safe_y)
            ok = np.isfinite(x) & np.isfinite(y) & (y != 0)
            return fp.from_f64(fmt, np.where(ok, c, s))

        def side(c):
            with np.errstate(invalid="ignore", over="ignore"):
                d = np.sign(c * y - x) * np.sign(y)
            return np.where(np.isfinite(d), d, 0).astype(np.int8)

        ok = np.isfinite(s) & (y != 0)
        c = fp.round_to(fmt, rm, s, side=side)
        return fp.from_f64(fmt, np.where(ok, c, fp.round_to(fmt, "rn", s)))

    def fsqrt(self, fmt, rm, a):
        x = fp.to_f64(fmt, a)
        with np.errstate(invalid="ignore"):
            s = np.sqrt(x)
        if fmt == "f64":
            if rm == "rn":
                return fp.from_f64(fmt, s)
            ok = np.isfinite(x) & (x > 0)
            c = np.array([_sqrt_directed(v, rm) if k else np.nan
                          for v, k in zip(x.tolist(), ok.tolist())], dtype=np.float64)
            return fp.from_f64(fmt, np.where(ok, c, s))

        def side(c):
            with np.errstate(invalid="ignore", over="ignore"):
                d = np.sign(c * c - x)
            return np.where(np.isfinite(d), d, 0).astype(np.int8)

        ok = np.isfinite(s) & (x > 0)
        c = fp.round_to(fmt, rm, s, side=side)
        return fp.from_f64(fmt, np.where(ok, c, s))

    def ffma(self, fmt, rm, a, b, c):
        x, y, z = fp.to_f64(fmt, a), fp.to_f64(fmt, b), fp.to_f64(fmt, c)
        if fmt == "f64":
            with np.errstate(invalid="ignore", over="ignore"):
                naive = x * y + z
            r = fp.exact_lanes(
                lambda p, q, t: (Fraction(p) * Fraction(q) + Fraction(t),
                                 _fma_zero_sign(_neg(p) != _neg(q), _neg(t), rm)),
                fmt, rm, x, y, z)
            ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
            return fp.from_f64(fmt, np.where(ok, r, naive))
        with np.errstate(invalid="ignore", over="ignore"):
            p = x * y                                   # exact
        s, err = fp.two_sum(p, z)
        r = fp.round_to(fmt, rm, s, err=err)
        exact_zero = (s == 0) & (err == 0)
        negative = _fma_zero_sign(np.signbit(p), np.signbit(z), rm)
        r = np.where(exact_zero, np.where(negative, -0.0, 0.0), r)
        return fp.from_f64(fmt, r)

    def fround(self, fmt, rm, a):
        x = fp.to_f64(fmt, a)
        f = {"rn": np.rint, "rz": np.trunc, "rm": np.floor, "rp": np.ceil}.get(rm)
        with np.errstate(invalid="ignore"):      # NaN lanes stay NaN
            if f is None:  # rna: ties away from zero
                r = np.where(np.abs(x - np.trunc(x)) == 0.5, x + np.copysign(0.5, x),
                             np.rint(x))
            else:
                r = f(x)
        r = np.copysign(r, x)  # IEEE roundToIntegral keeps the sign of zero results
        return fp.from_f64(fmt, r)

    def fcvt(self, src, dst, rm, a):
        x = fp.to_f64(src, a)
        if src == "f64" and dst == "f64":
            return a
        return fp.from_f64(dst, fp.round_to(dst, rm, x))

    def f2int(self, fmt, rm, a, w, signed):
        r = fp.to_f64(fmt, self.fround(fmt, rm, a))
        r = np.where(np.isfinite(r), r, 0.0)
        if signed:
            lim = float(2 ** (w - 1))
            r = np.clip(r, -lim, lim - 1 if w < 53 else np.nextafter(lim, 0))
            return _from_signed(r.astype(np.int64), w)
        lim = float(2 ** w)
        r = np.clip(r, 0.0, lim - 1 if w < 53 else np.nextafter(lim, 0))
        return r.astype(U64) & _mask(w)

    def int2f(self, w, signed, fmt, rm, a):
        if signed:
            v = _signed(a, w)
            hi = (v >> np.int64(32)).astype(np.float64) * 4294967296.0
            lo = (v & np.int64(0xFFFFFFFF)).astype(np.float64)
        else:
            hi = (a >> U64(32)).astype(np.float64) * 4294967296.0
            lo = (a & U64(0xFFFFFFFF)).astype(np.float64)
        s, err = fp.two_sum(hi, lo)
        return fp.from_f64(fmt, fp.round_to(fmt, rm, s, err=err))

    def flt(self, fmt, a, b):
        return fp.to_f64(fmt, a) < fp.to_f64(fmt, b)

    def feq(self, fmt, a, b):
        return fp.to_f64(fmt, a) == fp.to_f64(fmt, b)

    def fisnan(self, fmt, a):
        return np.isnan(fp.to_f64(fmt, a))

    def approx(self, name, fmt, args):
        xs = [fp.to_f64(fmt, a) for a in args]
        with np.errstate(all="ignore"):
            f = _APPROX[name.split(".")[0]]   # "div.full", "ex2.ftz": the same host function
            r = f(*xs)
        return fp.from_f64(fmt, fp.round_to(fmt, "rn", r))

    # -- what the ISA leaves open (semantics.choices) --------------------------------
    def unspecified(self, name: str, w: int, keys, choices, natural=None, only=None):
        """Each lane's value of what the ISA leaves open at `name`: the choices' (a model's
        value, else the fill policy's; `natural` stands for the zero fill)."""
        return choices.lanes(name, w, keys, natural)

    def unspecified_fn(self, name: str, w: int, args, default, choices, widths=None):
        """A value the ISA leaves open as a function of `args` (per lane): `default`, the
        emulator's model of the GPU, unless the fill policy says otherwise."""
        return choices.function(name, w, args, default)

    def tensor_fn(self, name: str, w: int, args, widths, model, choices):
        """`model` (keq's model of the hardware, on numpy lane arrays) of `args`, unless the
        fill policy says otherwise (as `unspecified_fn`)."""
        return choices.function(name, w, args, model(*args))

    # -- questions about predicates ------------------------------------------------------------
    def is_concrete(self, p) -> bool:
        return True

    def may_any(self, p) -> bool:
        return bool(p.any())

    def must_all(self, p) -> bool:
        return bool(p.all())

    def where(self, p, v):
        return v

    def to_ints(self, v) -> list[int]:
        return [int(x) for x in v]


_APPROX = {
    "ex2": np.exp2,
    "lg2": np.log2,
    "rcp": lambda x: 1.0 / x,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "div": lambda x, y: x / y,
}


def _neg(x: float) -> bool:
    return math.copysign(1.0, x) < 0


def _fma_zero_sign(product_negative, addend_negative, rm: str):
    """Sign of an exactly-zero sum p + z (IEEE 754 6.3): -0 when both are negative, and under
    round-toward-negative whenever they are not both positive."""
    if rm == "rm":
        return product_negative | addend_negative
    return product_negative & addend_negative


def _sqrt_directed(x: float, rm: str) -> float:
    """sqrt of a positive finite f64, rounded to f64 in a directed mode, exactly: an integer
    square root at twice the needed precision decides which side of each candidate it is."""
    c = math.sqrt(x)                                  # correctly rounded to nearest
    q = Fraction(x)
    below, above = math.nextafter(c, 0.0), math.nextafter(c, math.inf)
    cq = Fraction(c)
    if cq * cq == q:
        return c
    true_above_c = cq * cq < q
    if rm in ("rz", "rm"):
        return c if true_above_c else below
    return above if true_above_c else c
